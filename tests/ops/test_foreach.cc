// Foreach family (multi-tensor _foreach_* ops and norms) against float64 host references: many
// groups (more than one dispatch's worth), mixed dtypes, odd and zero sizes, sizes over a
// workgroup, scalar and device-scalar operands, NaN propagation, and bad arguments.
#include <cmath>
#include <memory>

#include "float_buffers.h"
#include "test_util.h"
#include "vkml/errors.h"
#include "vkml/foreach.h"

namespace vkml::testing {

namespace {

// One group's tensors (out + 3 inputs) in one allocation, with host copies.
struct HostGroup {
  DType dtype;
  size_t n;
  std::vector<HostFloats> host;  // out, in0, in1, in2
  std::unique_ptr<DeviceBuffer> mem;
  HostGroup(Device& dev, DType t, size_t count, uint32_t seed) : dtype(t), n(count) {
    mem = std::make_unique<DeviceBuffer>(dev, 4 * bytes());
    for (int r = 0; r < 4; ++r) {
      host.emplace_back(t, n);
      host.back().randomize(seed * 7 + r);
      if (r == 3) {  // divisors away from zero
        for (size_t i = 0; i < n; ++i) host.back().set(i, host.back().get(i) + 2.0);
      }
      host.back().upload(dev, address(r));
    }
  }
  size_t bytes() const { return (std::max<size_t>(n, 1) * dtype_size(dtype) + 15) / 16 * 16; }
  uint64_t address(int r) const { return mem->address + r * bytes(); }
  TensorDesc tensor(int r) const { return desc(address(r), dtype, {static_cast<int64_t>(n)}); }
};

double tolerance(DType t) {
  return t == DType::kF64 ? 1e-13 : t == DType::kF32 ? 1e-6 : t == DType::kF16 ? 1e-3 : 8e-3;
}

double reference(ops::ForeachOp op, double x, double y, double z, double s, double alpha) {
  switch (op) {
    case ops::ForeachOp::kAdd:
      return x + alpha * y;
    case ops::ForeachOp::kMul:
      return x * y;
    case ops::ForeachOp::kDiv:
      return x / y;
    case ops::ForeachOp::kMaximum:
      return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
    case ops::ForeachOp::kMinimum:
      return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
    case ops::ForeachOp::kLerp:
      return x + s * (y - x);
    case ops::ForeachOp::kAddcmul:
      return x + s * y * z;
    case ops::ForeachOp::kAddcdiv:
      return x + s * y / z;
    case ops::ForeachOp::kSqrt:
      return std::sqrt(x);
    case ops::ForeachOp::kNeg:
      return -x;
    case ops::ForeachOp::kCopy:
      return x;
    case ops::ForeachOp::kFill:
      return s;
  }
  return NAN;
}

}  // namespace

class ForeachTest : public DeviceTest {
 protected:
  std::vector<DType> dtypes() {
    std::vector<DType> t{DType::kF32, DType::kF16, DType::kBF16};
    if (dev().caps().supports_dtype(DType::kF64)) t.push_back(DType::kF64);
    return t;
  }
  // Runs `op` over groups of every dtype and size (more than one dispatch's groups) with inputs
  // in[0..inputs) and out either separate or in[0]; checks every element.
  void check(ops::ForeachOp op, int inputs, bool scalar_operand, bool inplace,
             double device_scalar = NAN) {
    const size_t sizes[] = {1, 7, 0, 300, 1029};
    std::vector<std::unique_ptr<HostGroup>> hg;
    std::vector<ops::ForeachGroup> groups;
    uint32_t seed = 1;
    for (int rep = 0; rep < 30; ++rep) {
      for (DType t : dtypes()) {
        hg.push_back(std::make_unique<HostGroup>(dev(), t, sizes[rep % 5], seed++));
        if (rep == 3 && hg.back()->n > 1) {  // NaN must come through
          hg.back()->host[1].set(1, NAN);
          hg.back()->host[1].upload(dev(), hg.back()->address(1));
        }
        ops::ForeachGroup g;
        g.out = hg.back()->tensor(inplace ? 1 : 0);
        for (int k = 0; k < inputs; ++k) g.in[k] = hg.back()->tensor(1 + k);
        g.inputs = inputs;
        g.scalar = 0.25 * (rep % 7) - 0.5;
        groups.push_back(g);
      }
    }
    ops::ForeachConfig c;
    c.op = op;
    c.alpha = -0.75;
    c.scalar_operand = scalar_operand;
    DeviceBuffer scalar(dev(), 4);
    TensorDesc scalar_desc = desc(scalar.address, DType::kF32, {});
    if (!std::isnan(device_scalar)) {
      float v = static_cast<float>(device_scalar);
      dev().stream().upload(&v, scalar.address, 4);
      c.scalar_tensor = &scalar_desc;
    }
    ops::foreach_apply(dev(), c, groups);
    for (size_t k = 0; k < hg.size(); ++k) {
      const HostGroup& h = *hg[k];
      HostFloats got(h.dtype, h.n);
      got.download(dev(), h.address(inplace ? 1 : 0));
      for (size_t i = 0; i < h.n; ++i) {
        double s = groups[k].scalar;
        double x = inputs > 0 ? h.host[1].get(i) : 0.0;
        double y = scalar_operand ? (std::isnan(device_scalar) ? s : device_scalar)
                                  : (inputs > 1 ? h.host[2].get(i) : 0.0);
        if (scalar_operand && (h.dtype != DType::kF64 || !std::isnan(device_scalar))) {
          y = static_cast<float>(y);  // f32 group scalars, or the f32 device scalar
        }
        double z = inputs > 2 ? h.host[3].get(i) : 0.0;
        double want = reference(op, x, y, z, s, c.alpha);
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got.get(i)))
              << dtype_name(h.dtype) << " group " << k << " i " << i;
          continue;
        }
        if (std::isinf(want)) {
          ASSERT_EQ(got.get(i), want) << dtype_name(h.dtype) << " group " << k << " i " << i;
          continue;
        }
        ASSERT_NEAR(got.get(i), want, tolerance(h.dtype) * std::max(1.0, std::fabs(want)))
            << dtype_name(h.dtype) << " group " << k << " i " << i;
      }
    }
  }
};

TEST_F(ForeachTest, BinaryListOps) {
  for (auto op : {ops::ForeachOp::kAdd, ops::ForeachOp::kMul, ops::ForeachOp::kDiv,
                  ops::ForeachOp::kMaximum, ops::ForeachOp::kMinimum}) {
    check(op, 2, false, true);
    check(op, 2, false, false);
  }
}

TEST_F(ForeachTest, ScalarAndDeviceScalarOperands) {
  check(ops::ForeachOp::kAdd, 1, true, true);
  check(ops::ForeachOp::kMul, 1, true, false, 0.3);
  check(ops::ForeachOp::kDiv, 1, true, true, -1.7);
  check(ops::ForeachOp::kMaximum, 1, true, false);
}

TEST_F(ForeachTest, PointwiseUnaryCopyFill) {
  check(ops::ForeachOp::kLerp, 2, false, true);
  check(ops::ForeachOp::kAddcmul, 3, false, true);
  check(ops::ForeachOp::kAddcdiv, 3, false, false);
  check(ops::ForeachOp::kNeg, 1, false, false);
  check(ops::ForeachOp::kCopy, 1, false, false);
  check(ops::ForeachOp::kFill, 0, false, false);
}

TEST_F(ForeachTest, SqrtOfNonNegatives) {
  HostGroup h(dev(), DType::kF32, 1000, 5);
  for (size_t i = 0; i < h.n; ++i) h.host[1].set(i, std::fabs(h.host[1].get(i)) * 1e3);
  h.host[1].upload(dev(), h.address(1));
  ops::ForeachGroup g;
  g.out = h.tensor(0);
  g.in[0] = h.tensor(1);
  ops::foreach_apply(dev(), {ops::ForeachOp::kSqrt}, std::span(&g, 1));
  HostFloats got(h.dtype, h.n);
  got.download(dev(), h.address(0));
  for (size_t i = 0; i < h.n; ++i) {  // correctly rounded
    ASSERT_EQ(got.get(i), static_cast<double>(std::sqrt(static_cast<float>(h.host[1].get(i)))));
  }
}

TEST_F(ForeachTest, NormsOverChunksAndEmptyTensors) {
  const size_t sizes[] = {5000, 0, 1, 300, 9000};
  for (auto norm : {ops::ForeachNorm::kL1, ops::ForeachNorm::kL2, ops::ForeachNorm::kInf}) {
    std::vector<std::unique_ptr<HostGroup>> hg;
    std::vector<TensorDesc> in, out;
    uint32_t seed = 11;
    for (int rep = 0; rep < 140; ++rep) {  // two dispatches' worth
      for (DType t : dtypes()) {
        size_t n = sizes[rep % 5];
        if (norm == ops::ForeachNorm::kInf && n == 0) n = 3;
        hg.push_back(std::make_unique<HostGroup>(dev(), t, rep < 130 ? n % 41 : n, seed++));
        in.push_back(hg.back()->tensor(1));
        out.push_back(desc(hg.back()->address(0), t, {}));
      }
    }
    HostGroup& with_nan = *hg[2];  // bf16, 5000 % 41 elements: NaN propagates through every norm
    with_nan.host[1].set(1, NAN);
    with_nan.host[1].upload(dev(), with_nan.address(1));
    ops::foreach_norm(dev(), norm, in, out);
    for (const auto& h : hg) {
      double want = 0.0;
      for (size_t i = 0; i < h->n; ++i) {
        double v = std::fabs(h->host[1].get(i));
        if (norm == ops::ForeachNorm::kInf) {
          want = std::isnan(v) || std::isnan(want) ? NAN : std::max(want, v);
        } else {
          want += norm == ops::ForeachNorm::kL2 ? v * v : v;
        }
      }
      if (norm == ops::ForeachNorm::kL2) want = std::sqrt(want);
      HostFloats got(h->dtype, 1);
      got.download(dev(), h->address(0));
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got.get(0)));
        continue;
      }
      ASSERT_NEAR(got.get(0), want, 4 * tolerance(h->dtype) * std::max(1.0, want))
          << dtype_name(h->dtype) << " n " << h->n;
    }
  }
}

TEST_F(ForeachTest, RejectsBadArguments) {
  HostGroup a(dev(), DType::kF32, 10, 1), b(dev(), DType::kF16, 10, 2);
  ops::ForeachGroup g;
  g.out = a.tensor(0);
  g.in[0] = a.tensor(1);
  g.in[1] = b.tensor(1);  // dtype differs from the group's
  g.inputs = 2;
  auto add = [&] { ops::foreach_apply(dev(), {ops::ForeachOp::kAdd}, std::span(&g, 1)); };
  EXPECT_THROW(add(), InvalidArgument);
  g.in[1] = desc(a.address(2), DType::kF32, {5, 2}, {1, 5});  // not contiguous
  EXPECT_THROW(add(), InvalidArgument);
  g.in[1] = a.tensor(2);
  g.inputs = 1;  // add of two tensors reads two inputs
  EXPECT_THROW(add(), InvalidArgument);
  TensorDesc in = a.tensor(1), out = desc(a.address(0), DType::kF16, {});
  EXPECT_THROW(
      ops::foreach_norm(dev(), ops::ForeachNorm::kL2, std::span(&in, 1), std::span(&out, 1)),
      InvalidArgument);
}

}  // namespace vkml::testing
