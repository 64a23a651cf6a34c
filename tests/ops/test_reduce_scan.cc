// Reduce family, scans: cumsum / cumprod / cummax / cummin / logcumsumexp against a sequential
// CPU reference (double / exact int64), in both thread layouts and with blocked long lines.
#include <cmath>

#include "ops/reduce_test_util.h"
#include "vkml/reduce.h"

namespace vkml::testing {
namespace {

using ops::ScanOp;

struct ScanCase {
  ScanOp op = ScanOp::kCumSum;
  DType src = DType::kF32, compute = DType::kF32, out = DType::kF32;
  std::vector<int64_t> sizes, strides;
  int dim = 0;
  ops::ScanOverride force;
  std::vector<std::pair<int64_t, double>> plant;
  double lo = -50, hi = 50;
};

double tolerance(DType t) {
  switch (t) {
    case DType::kF32: return 3e-6;
    case DType::kF16: return 2e-3;
    case DType::kBF16: return 1.6e-2;
    case DType::kF64: return 1e-13;
    default: return 0;
  }
}

int run_scan(Device& dev, const ScanCase& c) {
  TestTensor in(dev, c.src, c.sizes, c.strides);
  in.fill_random(7, c.lo, c.hi);
  for (auto [i, v] : c.plant) in.set(i, v);
  in.upload();
  TestTensor out(dev, c.out, c.sizes), idx(dev, DType::kI64, c.sizes);
  ops::ScanArgs a;
  a.op = c.op;
  a.src = in.desc();
  a.dim = c.dim;
  a.out0 = out.desc();
  a.out1 = idx.desc();
  a.compute = c.compute;
  ops::scan(dev, a, c.force);
  out.download();
  idx.download();

  bool extreme = c.op == ScanOp::kCumMax || c.op == ScanOp::kCumMin;
  int64_t nd = static_cast<int64_t>(c.sizes.size());
  int64_t len = nd ? c.sizes[c.dim] : 1;
  int64_t inner = 1;
  for (int64_t d = c.dim + 1; d < nd; ++d) inner *= c.sizes[d];
  int64_t numel = in.numel();
  int failures = 0;
  for (int64_t line_start = 0; line_start < numel; ++line_start) {
    // Logical index of the line's first element: coordinate 0 along dim.
    if ((line_start / inner) % len != 0) continue;
    double acc = c.op == ScanOp::kCumProd ? 1 : c.op == ScanOp::kLogCumSumExp ? -INFINITY : 0;
    double abs_acc = 0;
    uint64_t iacc = c.op == ScanOp::kCumProd ? 1 : 0;
    int64_t best = -1;
    for (int64_t k = 0; k < len; ++k) {
      int64_t i = line_start + k * inner;
      double x = in.value(i);
      int64_t xi = in.ivalue(i);
      if (c.compute != c.src) {
        x = round_to(c.compute, x);
        xi = static_cast<int64_t>(x);
      }
      abs_acc += std::abs(x);
      if (c.op == ScanOp::kCumSum) {
        acc += x;
        iacc += static_cast<uint64_t>(xi);
      } else if (c.op == ScanOp::kCumProd) {
        acc *= x;
        iacc *= static_cast<uint64_t>(xi);
      } else if (c.op == ScanOp::kLogCumSumExp) {
        double lo = std::min(acc, x), hi = std::max(acc, x);
        if (std::isnan(x) || std::isnan(acc)) {
          acc = NAN;
        } else if (lo != hi || std::isfinite(lo)) {
          acc = std::log1p(std::exp(lo - hi)) + hi;
        }
      } else {
        double b = best < 0 ? 0 : in.value(line_start + best * inner);
        bool ge = c.op == ScanOp::kCumMax ? x >= b : x <= b;
        if (best < 0 || std::isnan(x) || (!std::isnan(b) && ge)) best = k;
      }
      double want = extreme ? in.value(line_start + best * inner) : acc;
      bool ok;
      if (dtype_is_float(c.out)) {
        double scale = c.op == ScanOp::kCumSum ? abs_acc : std::abs(want);
        double tol = std::max(tolerance(c.out), tolerance(c.compute));
        ok = close(out.value(i), round_to(c.out, want), tol, scale);
      } else {
        int64_t wi = extreme ? in.ivalue(line_start + best * inner) : static_cast<int64_t>(iacc);
        if (c.out == DType::kBool) wi = wi != 0;
        ok = out.ivalue(i) == wi;
      }
      if (extreme) ok = ok && idx.ivalue(i) == best;
      if (!ok && failures++ < 5) {
        ADD_FAILURE() << "element " << i << ": got " << out.value(i) << " idx "
                      << (extreme ? idx.ivalue(i) : 0) << ", want " << want << " idx " << best;
      }
    }
  }
  return failures;
}

using ScanTest = DeviceTest;

TEST_F(ScanTest, CumsumEveryLayout) {
  struct Shape {
    std::vector<int64_t> sizes, strides;
    int dim;
  };
  std::vector<Shape> shapes = {{{2500}, {}, 0},       {{7, 1100}, {}, 1},   {{1100, 7}, {}, 0},
                               {{30, 40}, {1, 30}, 1}, {{5, 6, 300}, {}, 2}, {{3, 9}, {}, 0},
                               {{}, {}, 0}};
  std::vector<ops::ScanOverride> forces = {{}, {1, 0}, {0, 0}, {0, 3}, {1, 0, true}, {0, 2, true}};
  for (const Shape& s : shapes) {
    for (const auto& f : forces) {
      ScanCase c;
      c.sizes = s.sizes;
      c.strides = s.strides;
      c.dim = s.dim;
      c.force = f;
      SCOPED_TRACE(::testing::Message() << s.sizes.size() << "d dim " << s.dim << " per_thread "
                                        << f.per_thread << " splits " << f.splits);
      EXPECT_EQ(run_scan(dev(), c), 0);
    }
  }
}

TEST_F(ScanTest, DtypesAndOps) {
  struct D {
    ScanOp op;
    DType src, compute, out;
  };
  std::vector<D> list = {
      {ScanOp::kCumSum, DType::kI32, DType::kI64, DType::kI64},
      {ScanOp::kCumSum, DType::kBool, DType::kI64, DType::kI64},
      {ScanOp::kCumSum, DType::kF16, DType::kF16, DType::kF16},
      {ScanOp::kCumSum, DType::kBF16, DType::kBF16, DType::kBF16},
      {ScanOp::kCumSum, DType::kF64, DType::kF64, DType::kF64},
      {ScanOp::kCumSum, DType::kI64, DType::kF32, DType::kF32},
      {ScanOp::kCumProd, DType::kI16, DType::kI64, DType::kI64},
      {ScanOp::kCumMax, DType::kF32, DType::kF32, DType::kF32},
      {ScanOp::kCumMin, DType::kF16, DType::kF16, DType::kF16},
      {ScanOp::kCumMax, DType::kI8, DType::kI8, DType::kI8},
      {ScanOp::kCumMin, DType::kBool, DType::kBool, DType::kBool},
      {ScanOp::kCumMax, DType::kF64, DType::kF64, DType::kF64},
      {ScanOp::kLogCumSumExp, DType::kF32, DType::kF32, DType::kF32},
      {ScanOp::kLogCumSumExp, DType::kF64, DType::kF64, DType::kF64},
  };
  for (const D& d : list) {
    for (const auto& f : {ops::ScanOverride{1, 0}, ops::ScanOverride{0, 2}}) {
      ScanCase c;
      c.op = d.op;
      c.src = d.src;
      c.compute = d.compute;
      c.out = d.out;
      c.sizes = {3, d.op == ScanOp::kCumProd ? 30 : 2100};
      c.dim = 1;
      c.force = f;
      if (d.op == ScanOp::kCumProd) c.lo = -3, c.hi = 3;
      if (d.op == ScanOp::kCumMax && d.src == DType::kF32) {
        c.plant = {{40, NAN}, {1000, NAN}, {2200, 99.0}, {2300, 99.0}};  // last NaN, last tie
      }
      SCOPED_TRACE(::testing::Message() << "op " << int(d.op) << " " << dtype_name(d.src)
                                        << " per_thread " << f.per_thread);
      EXPECT_EQ(run_scan(dev(), c), 0);
    }
  }
}

TEST_F(ScanTest, LogCumSumExpInfinities) {
  ScanCase c;
  c.op = ScanOp::kLogCumSumExp;
  c.sizes = {2, 50};
  c.dim = 1;
  c.force.per_thread = 0;
  for (int i = 0; i < 10; ++i) c.plant.push_back({i, -INFINITY});  // leading -inf stays -inf
  c.plant.push_back({70, INFINITY});
  c.plant.push_back({80, 60.0});
  EXPECT_EQ(run_scan(dev(), c), 0);
}

TEST_F(ScanTest, BadArgumentsThrow) {
  TestTensor in(dev(), DType::kF32, {4, 5});
  TestTensor out(dev(), DType::kF32, {4, 6});
  ops::ScanArgs a;
  a.src = in.desc();
  a.out0 = in.desc();
  a.dim = 2;
  EXPECT_THROW(ops::scan(dev(), a), InvalidArgument);
  a.dim = 1;
  a.out0 = out.desc();
  EXPECT_THROW(ops::scan(dev(), a), InvalidArgument);
}

}  // namespace
}  // namespace vkml::testing
