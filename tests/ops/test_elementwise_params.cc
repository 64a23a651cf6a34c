// Elementwise rows with a third tensor (ternary: addcmul, addcdiv, lerp) and with parameters
// (unary hardtanh/threshold/nan_to_num, binary elu_backward), on the strided path and the flat one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/elementwise/elementwise_plan.h"
#include "test_util.h"
#include "vkml/elementwise.h"
#include "vkml/errors.h"

namespace vkml::testing {
namespace {

using ops::BinaryOp;
using ops::UnaryOp;
using ElementwiseParamsTest = DeviceTest;

std::vector<float> values(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(ElementwisePlanParams, TernaryModeAndCoalescing) {
  TensorDesc out = desc(0x1000, DType::kF32, {6, 10});
  TensorDesc a = desc(0x2000, DType::kF32, {6, 10});
  TensorDesc c_row = desc(0x3000, DType::kF32, {6, 10}, {0, 1});  // broadcast row
  auto plan = ops::plan_elementwise(ops::EwKind::kBinary, uint32_t(BinaryOp::kAddcmul),
                                    ops::op_info(BinaryOp::kAddcmul), out, {&a}, {&a},
                                    Scalar::from_double(2.0), &c_row);
  EXPECT_EQ(plan.mode, VKML_EW_HAS_C | VKML_EW_INDEX32);  // c's zero stride keeps two dims
  EXPECT_EQ(plan.params.ndim, 2u);
  EXPECT_EQ(plan.params.c, 0x3000u);
  EXPECT_EQ(plan.reads.size(), 3u);
  TensorDesc c = desc(0x3000, DType::kF32, {6, 10});
  plan = ops::plan_elementwise(ops::EwKind::kBinary, uint32_t(BinaryOp::kAddcmul),
                               ops::op_info(BinaryOp::kAddcmul), out, {&a}, {&a},
                               Scalar::from_double(2.0), &c);
  EXPECT_EQ(plan.mode, VKML_EW_HAS_C | VKML_EW_FLAT);
  TensorDesc c16 = desc(0x3000, DType::kF16, {6, 10});
  EXPECT_THROW(ops::plan_elementwise(ops::EwKind::kBinary, uint32_t(BinaryOp::kAddcmul),
                                     ops::op_info(BinaryOp::kAddcmul), out, {&a}, {&a},
                                     Scalar::from_double(1.0), &c16),
               InvalidArgument);
  EXPECT_THROW(ops::plan_elementwise(ops::EwKind::kUnary, uint32_t(UnaryOp::kNeg),
                                     ops::op_info(UnaryOp::kNeg), out, {&a}, {},
                                     Scalar::from_double(1.0), &c),
               InvalidArgument);
}

TEST_F(ElementwiseParamsTest, TernaryStridedAndBroadcast) {
  // out [37, 29] contiguous; a transposed; b contiguous; c a broadcast column: strided path.
  const int64_t R = 37, C = 29, n = R * C;
  auto ha = values(n, 1, -3, 3), hb = values(n, 2, -3, 3), hc = values(R, 3, 0.5f, 2);
  DeviceBuffer a(dev(), n * 4), b(dev(), n * 4), c(dev(), R * 4), o(dev(), n * 4);
  dev().stream().upload(ha.data(), a.address, n * 4);
  dev().stream().upload(hb.data(), b.address, n * 4);
  dev().stream().upload(hc.data(), c.address, R * 4);
  TensorDesc od = desc(o.address, DType::kF32, {R, C});
  TensorDesc ad = desc(a.address, DType::kF32, {R, C}, {1, R});
  TensorDesc bd = desc(b.address, DType::kF32, {R, C});
  TensorDesc cd = desc(c.address, DType::kF32, {R, C}, {1, 0});
  for (BinaryOp op : {BinaryOp::kAddcmul, BinaryOp::kAddcdiv, BinaryOp::kLerp}) {
    ops::ternary(dev(), op, od, ad, bd, cd, Scalar::from_double(0.75));
    auto got = download<float>(dev(), o.address, n);
    for (int64_t i = 0; i < R; ++i) {
      for (int64_t j = 0; j < C; ++j) {
        float x = ha[j * R + i], y = hb[i * C + j], w = hc[i];
        float want = op == BinaryOp::kAddcmul   ? x + 0.75f * y * w
                     : op == BinaryOp::kAddcdiv ? x + 0.75f * y / w
                     : std::abs(w) < 0.5f       ? x + w * (y - x)
                                                : y - (y - x) * (1.0f - w);
        ASSERT_NEAR(got[i * C + j], want, 1e-5f * (1 + std::abs(want))) << int(op) << " " << i
                                                                          << "," << j;
      }
    }
  }
}

TEST_F(ElementwiseParamsTest, UnaryAndBinaryParameters) {
  const int64_t n = 1000;  // several workgroups
  std::vector<int32_t> hi(n);
  for (int64_t i = 0; i < n; ++i) hi[i] = int32_t(i % 41) - 20;
  DeviceBuffer x(dev(), n * 4), o(dev(), n * 4);
  dev().stream().upload(hi.data(), x.address, n * 4);
  TensorDesc xd = desc(x.address, DType::kI32, {n}), od = desc(o.address, DType::kI32, {n});
  ops::unary(dev(), UnaryOp::kHardtanh, od, xd, Scalar::from_int(-3), Scalar::from_int(7));
  auto got = download<int32_t>(dev(), o.address, n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], std::min(std::max(hi[i], -3), 7)) << i;
  ops::unary(dev(), UnaryOp::kThreshold, od, xd, Scalar::from_int(2), Scalar::from_int(-9));
  got = download<int32_t>(dev(), o.address, n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], hi[i] <= 2 ? -9 : hi[i]) << i;

  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> hf = {std::nanf(""), inf, -inf, 1.5f, -0.0f};
  DeviceBuffer f(dev(), 20), fo(dev(), 20), g(dev(), 20);
  dev().stream().upload(hf.data(), f.address, 20);
  TensorDesc fd = desc(f.address, DType::kF32, {5}), fod = desc(fo.address, DType::kF32, {5});
  ops::unary(dev(), UnaryOp::kNanToNum, fod, fd, Scalar::from_double(7), Scalar::from_double(8),
             Scalar::from_double(-9));
  auto vf = download<float>(dev(), fo.address, 5);
  EXPECT_EQ(vf, (std::vector<float>{7, 8, -9, 1.5f, -0.0f}));
  // elu_backward with alpha 2, scale 3, input scale 0.5 at x = -2 and 1, gradient 1.
  std::vector<float> grad = {1, 1}, xs = {-2, 1};
  dev().stream().upload(grad.data(), g.address, 8);
  dev().stream().upload(xs.data(), f.address, 8);
  ops::binary_params(dev(), BinaryOp::kEluBackward, desc(fo.address, DType::kF32, {2}),
                     desc(g.address, DType::kF32, {2}), desc(f.address, DType::kF32, {2}),
                     Scalar::from_double(2), Scalar::from_double(3), Scalar::from_double(0.5));
  vf = download<float>(dev(), fo.address, 2);
  EXPECT_NEAR(vf[0], 0.5 * 2 * 3 * std::exp(-1.0), 1e-6);
  EXPECT_EQ(vf[1], 3.0f);
}

}  // namespace
}  // namespace vkml::testing
