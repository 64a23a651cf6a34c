// Reduce family, reductions: every op against a CPU reference in double / exact int64, over
// strided inputs, every thread layout (forced), one- and two-pass plans, and each dtype.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ops/reduce_test_util.h"
#include "vkml/reduce.h"

namespace vkml::testing {
namespace {

using ops::ReduceOp;

struct Case {
  ReduceOp op = ReduceOp::kSum;
  DType src = DType::kF32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // empty: contiguous
  int64_t offset = 0;            // src's first element in its storage, in elements
  std::vector<int> dims;
  DType compute = DType::kF32;
  DType out0 = DType::kF32;
  bool want_out0 = true;
  DType out1 = DType::kI64;
  bool want_out1 = false;
  double p = 2.0;
  double correction = 1.0;
  ops::ReduceOverride force;
  uint32_t seed = 1;
  // Values planted in the input after the random fill: (logical index, value).
  std::vector<std::pair<int64_t, double>> plant;
};

struct Expected {
  double v0 = 0, v1 = 0;
  int64_t i0 = 0, i1 = 0;  // exact integer results
  double scale = 1;        // magnitude the error is measured against
};

bool is_int(DType t) { return !dtype_is_float(t); }

Expected reference(const Case& c, std::vector<double> x, std::vector<int64_t> xi) {
  Expected e;
  size_t n = x.size();
  bool sum_like = c.op == ReduceOp::kSum || c.op == ReduceOp::kNanSum ||
                  c.op == ReduceOp::kProd || c.op == ReduceOp::kMean;
  if (sum_like && c.compute != c.src) {
    for (size_t i = 0; i < n; ++i) {
      x[i] = round_to(c.compute, x[i]);
      xi[i] = static_cast<int64_t>(x[i]);
    }
  }
  double abs_sum = 0;
  for (double v : x) abs_sum += std::isnan(v) ? 0 : std::abs(v);
  e.scale = abs_sum;
  auto first_extreme = [&](bool want_max) {
    int64_t best = -1;
    for (size_t i = 0; i < n; ++i) {
      if (best < 0) { best = i; continue; }
      double a = x[i], b = x[best];
      if (std::isnan(b)) continue;
      if (std::isnan(a) || (want_max ? a > b : a < b)) best = i;
    }
    return best;
  };
  switch (c.op) {
    case ReduceOp::kSum:
    case ReduceOp::kNanSum:
    case ReduceOp::kMean: {
      double s = 0;
      uint64_t si = 0;
      for (size_t i = 0; i < n; ++i) {
        if (c.op == ReduceOp::kNanSum && std::isnan(x[i])) continue;
        s += x[i];
        si += static_cast<uint64_t>(xi[i]);
      }
      e.v0 = c.op == ReduceOp::kMean ? (n ? s / n : NAN) : s;
      e.i0 = static_cast<int64_t>(si);
      if (c.op == ReduceOp::kMean) e.scale = n ? abs_sum / n : 1;
      break;
    }
    case ReduceOp::kProd: {
      double s = 1;
      uint64_t si = 1;
      for (size_t i = 0; i < n; ++i) {
        s *= x[i];
        si *= static_cast<uint64_t>(xi[i]);
      }
      e.v0 = s;
      e.i0 = static_cast<int64_t>(si);
      e.scale = std::abs(s);
      break;
    }
    case ReduceOp::kMax: case ReduceOp::kMin: case ReduceOp::kArgMax: case ReduceOp::kArgMin: {
      bool want_max = c.op == ReduceOp::kMax || c.op == ReduceOp::kArgMax;
      int64_t best = first_extreme(want_max);
      e.v0 = x[best];
      e.i0 = xi[best];
      e.i1 = best;
      e.scale = 0;
      break;
    }
    case ReduceOp::kAminmax: {
      e.v0 = x[first_extreme(false)];
      e.v1 = x[first_extreme(true)];
      e.i0 = xi[first_extreme(false)];
      e.i1 = xi[first_extreme(true)];
      e.scale = 0;
      break;
    }
    case ReduceOp::kAll: case ReduceOp::kAny: {
      bool all = true, any = false;
      for (double v : x) {
        bool nz = std::isnan(v) || v != 0;
        all = all && nz;
        any = any || nz;
      }
      e.i0 = c.op == ReduceOp::kAll ? all : any;
      e.v0 = static_cast<double>(e.i0);
      break;
    }
    case ReduceOp::kCountNonzero: {
      for (double v : x) e.i0 += (std::isnan(v) || v != 0) ? 1 : 0;
      e.v0 = static_cast<double>(e.i0);
      break;
    }
    case ReduceOp::kVar: case ReduceOp::kStd: {
      double mean = 0;
      for (double v : x) mean += v;
      mean /= n;
      double m2 = 0;
      for (double v : x) m2 += (v - mean) * (v - mean);
      double var = m2 / std::max(0.0, n - c.correction);
      e.v0 = c.op == ReduceOp::kStd ? std::sqrt(var) : var;
      e.v1 = mean;
      e.scale = std::abs(e.v0) + std::abs(mean);
      break;
    }
    case ReduceOp::kNorm: {
      double s = 0;
      if (std::isinf(c.p)) {
        s = c.p > 0 ? 0 : INFINITY;
        for (double v : x) {
          s = std::isnan(s) || std::isnan(v) ? NAN
              : c.p > 0                      ? std::max(s, std::abs(v))
                                             : std::min(s, std::abs(v));
        }
      } else if (c.p == 0) {
        for (double v : x) s += v != 0;
      } else {
        for (double v : x) s += std::pow(std::abs(v), c.p);
        s = std::pow(s, 1.0 / c.p);
      }
      e.v0 = s;
      e.scale = s;
      break;
    }
    case ReduceOp::kLogSumExp: {
      double m = -INFINITY;
      for (double v : x) m = std::max(m, v);
      double s = 0;
      for (double v : x) s += std::exp(v - m);
      e.v0 = std::isinf(m) ? m : m + std::log(s);
      e.scale = std::abs(e.v0);
      break;
    }
  }
  return e;
}

double tolerance(DType t) {
  switch (t) {
    case DType::kF32: return 2e-6;
    case DType::kF16: return 2e-3;
    case DType::kBF16: return 1.6e-2;
    case DType::kF64: return 1e-13;
    default: return 0;
  }
}

// Runs one case and compares every output against the reference. Returns failures.
int run_case(Device& dev, const Case& c) {
  TestTensor in(dev, c.src, c.sizes, c.strides, c.offset);
  in.fill_random(c.seed);
  for (auto [i, v] : c.plant) in.set(i, v);
  in.upload();
  std::vector<int64_t> out_sizes = c.sizes;
  std::vector<bool> reduced(c.sizes.size(), false);
  for (int d : c.dims) {
    reduced[d] = true;
    out_sizes[d] = 1;
  }
  TestTensor out0(dev, c.out0, out_sizes), out1(dev, c.out1, out_sizes);
  ops::ReduceArgs a;
  a.op = c.op;
  a.src = in.desc();
  a.dims = c.dims;
  a.out0 = out0.desc();
  a.out1 = out1.desc();
  if (!c.want_out0) a.out0.address = 0;
  if (!c.want_out1) a.out1.address = 0;
  a.compute = c.compute;
  a.p = c.p;
  a.correction = c.correction;
  ops::reduce(dev, a, c.force);
  out0.download();
  out1.download();

  int64_t nout = out0.numel();
  int failures = 0;
  for (int64_t o = 0; o < nout; ++o) {
    // Output coordinates, then every input element of this output in logical order.
    std::vector<int64_t> coord(c.sizes.size());
    int64_t rem = o;
    for (int d = static_cast<int>(c.sizes.size()) - 1; d >= 0; --d) {
      coord[d] = rem % out_sizes[d];
      rem /= out_sizes[d];
    }
    std::vector<double> x;
    std::vector<int64_t> xi;
    for (int64_t i = 0; i < in.numel(); ++i) {
      int64_t r = i;
      bool match = true;
      for (int d = static_cast<int>(c.sizes.size()) - 1; d >= 0; --d) {
        int64_t cd = r % c.sizes[d];
        r /= c.sizes[d];
        if (!reduced[d] && cd != coord[d]) match = false;
      }
      if (match) {
        x.push_back(in.value(i));
        xi.push_back(in.ivalue(i));
      }
    }
    Expected e = reference(c, x, xi);
    auto check = [&](const TestTensor& out, double want, int64_t want_i, const char* what) {
      if (is_int(out.dtype)) {
        int64_t got = out.ivalue(o);
        int64_t expect = is_int(c.compute) || c.op == ReduceOp::kCountNonzero ||
                                 c.op == ReduceOp::kAll || c.op == ReduceOp::kAny ||
                                 ((c.op == ReduceOp::kMax || c.op == ReduceOp::kMin ||
                                   c.op == ReduceOp::kAminmax) && is_int(c.src))
                             ? want_i
                             : static_cast<int64_t>(want);
        if (out.dtype == DType::kBool) expect = expect != 0;
        if (got != expect && failures++ < 5) {
          ADD_FAILURE() << what << " output " << o << ": got " << got << ", want " << expect;
        }
        return;
      }
      double got = out.value(o);
      double want_r = round_to(out.dtype, want);
      double tol = std::max(tolerance(out.dtype), tolerance(c.compute));
      double scale = std::max(e.scale, std::abs(want));
      if (!close(got, want_r, tol, scale) && failures++ < 5) {
        ADD_FAILURE() << what << " output " << o << ": got " << got << ", want " << want_r
                      << " (tol " << tol << " x " << scale << ")";
      }
    };
    if (c.want_out0) check(out0, e.v0, e.i0, "out0");
    if (c.want_out1) {
      bool idx = c.op == ReduceOp::kArgMax || c.op == ReduceOp::kArgMin;
      check(out1, idx ? static_cast<double>(e.i1) : e.v1, e.i1, "out1");
    }
  }
  return failures;
}

using ReduceTest = DeviceTest;

TEST_F(ReduceTest, SumEveryLayoutAndDimSet) {
  struct Shape {
    std::vector<int64_t> sizes, strides;
    std::vector<int> dims;
  };
  std::vector<Shape> shapes = {
      {{37, 53}, {}, {0}},       {{37, 53}, {}, {1}},           {{37, 53}, {}, {0, 1}},
      {{5, 7, 9}, {}, {0, 2}},   {{5, 7, 9}, {}, {1}},          {{53, 37}, {1, 53}, {0}},
      {{53, 37}, {1, 53}, {1}},  {{6, 10}, {20, 2}, {1}},       {{3, 1, 300}, {}, {2}},
      {{300}, {}, {0}},          {{4, 5, 6, 7}, {}, {1, 3}},    {{2, 3}, {0, 1}, {0}},
  };
  std::vector<ops::ReduceOverride> forces = {{},           {0, 0, 0},       {8, 1, 0},
                                             {3, 1, 0},    {2, 0, 3},       {-1, -1, 0, true},
                                             {1, 0, 2, true}};
  for (const Shape& s : shapes) {
    for (const auto& f : forces) {
      Case c;
      c.sizes = s.sizes;
      c.strides = s.strides;
      c.dims = s.dims;
      c.force = f;
      SCOPED_TRACE(::testing::Message() << "shape " << s.sizes.size() << "d " << s.sizes[0]
                                        << " ox_log2 " << f.ox_log2 << " splits " << f.splits);
      EXPECT_EQ(run_case(dev(), c), 0);
    }
  }
}

TEST_F(ReduceTest, LargeFullSumUsesTwoPassesWithinTolerance) {
  ops::ReducePlan plan = ops::plan_reduce(1, 100000, 1, 0, dev().caps());
  EXPECT_GT(plan.splits, 1u);
  Case c;
  c.sizes = {100000};
  c.dims = {0};
  EXPECT_EQ(run_case(dev(), c), 0);
  c.op = ReduceOp::kMean;
  c.sizes = {250, 400};
  c.dims = {0, 1};
  EXPECT_EQ(run_case(dev(), c), 0);
}

TEST_F(ReduceTest, DtypesAndComputeDtypes) {
  struct D {
    ReduceOp op;
    DType src, compute, out;
  };
  std::vector<D> list = {
      {ReduceOp::kSum, DType::kF16, DType::kF16, DType::kF16},
      {ReduceOp::kSum, DType::kBF16, DType::kBF16, DType::kBF16},
      {ReduceOp::kSum, DType::kF64, DType::kF64, DType::kF64},
      {ReduceOp::kSum, DType::kI32, DType::kI64, DType::kI64},
      {ReduceOp::kSum, DType::kBool, DType::kI64, DType::kI64},
      {ReduceOp::kSum, DType::kU8, DType::kI64, DType::kI64},
      {ReduceOp::kSum, DType::kI8, DType::kI32, DType::kI32},
      {ReduceOp::kSum, DType::kF32, DType::kF16, DType::kF16},
      {ReduceOp::kSum, DType::kI16, DType::kF32, DType::kF32},
      {ReduceOp::kSum, DType::kF32, DType::kF64, DType::kF64},
      {ReduceOp::kMean, DType::kF16, DType::kF16, DType::kF16},
      {ReduceOp::kMean, DType::kBF16, DType::kF32, DType::kF32},
      {ReduceOp::kMean, DType::kF64, DType::kF64, DType::kF64},
      {ReduceOp::kProd, DType::kI64, DType::kI64, DType::kI64},
      {ReduceOp::kProd, DType::kF64, DType::kF64, DType::kF64},
      {ReduceOp::kNanSum, DType::kF32, DType::kF32, DType::kF32},
  };
  for (const D& d : list) {
    for (std::vector<int> dims : {std::vector<int>{1}, std::vector<int>{0, 1}}) {
      Case c;
      c.op = d.op;
      c.src = d.src;
      c.compute = d.compute;
      c.out0 = d.out;
      c.sizes = {9, d.op == ReduceOp::kProd ? 7 : 301};
      c.dims = dims;
      if (d.op == ReduceOp::kNanSum) c.plant = {{3, NAN}, {400, NAN}};
      SCOPED_TRACE(::testing::Message() << "op " << int(d.op) << " " << dtype_name(d.src) << "->"
                                        << dtype_name(d.compute) << " dims " << dims.size());
      EXPECT_EQ(run_case(dev(), c), 0);
    }
  }
}

TEST_F(ReduceTest, ProdOfIntegersWrapsLikeInt64) {
  Case c;
  c.op = ReduceOp::kProd;
  c.src = DType::kI32;
  c.compute = c.out0 = DType::kI64;
  c.sizes = {3, 40};
  c.dims = {1};
  c.force.splits = 3;
  EXPECT_EQ(run_case(dev(), c), 0);
}

TEST_F(ReduceTest, MaxMinArgFirstOccurrenceAndNan) {
  for (ReduceOp op : {ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kArgMax, ReduceOp::kArgMin}) {
    for (DType t : {DType::kF32, DType::kF16, DType::kI32, DType::kU8, DType::kBool, DType::kF64}) {
      for (uint32_t splits : {0u, 4u}) {
        Case c;
        c.op = op;
        c.src = c.compute = c.out0 = t;
        c.want_out1 = op == ReduceOp::kArgMax || op == ReduceOp::kArgMin;
        c.sizes = {6, 700};
        c.dims = {1};
        c.force.splits = splits;
        // Repeated extremes: the first one must win (small integer range gives many ties).
        if (dtype_is_float(t)) {
          c.plant = {{20, 9.0}, {90, 9.0}, {30, -9.0}, {95, -9.0},  // row 0
                     {800, NAN}, {1300, NAN}, {1000, 9.0}};          // row 1 NaN, first wins
        }
        SCOPED_TRACE(::testing::Message() << "op " << int(op) << " " << dtype_name(t));
        EXPECT_EQ(run_case(dev(), c), 0);
      }
    }
  }
}

TEST_F(ReduceTest, ArgMaxOverAllDimsOfTransposedInputUsesLogicalOrder) {
  Case c;
  c.op = ReduceOp::kArgMax;
  c.src = c.compute = c.out0 = DType::kI16;
  c.sizes = {40, 30};
  c.strides = {1, 40};
  c.dims = {0, 1};
  c.want_out1 = true;
  EXPECT_EQ(run_case(dev(), c), 0);
}

TEST_F(ReduceTest, AllAnyCountNonzero) {
  for (ReduceOp op : {ReduceOp::kAll, ReduceOp::kAny, ReduceOp::kCountNonzero}) {
    for (DType t : {DType::kF32, DType::kBool, DType::kU8, DType::kI64, DType::kF64}) {
      Case c;
      c.op = op;
      c.src = c.compute = t;
      c.out0 = op == ReduceOp::kCountNonzero ? DType::kI64 : DType::kBool;
      c.sizes = {5, 64};
      c.dims = {1};
      c.plant = {{64, 0}, {200, 0}};
      if (t == DType::kBool || t == DType::kU8) {
        c.plant.clear();
        for (int i = 0; i < 64; ++i) c.plant.push_back({128 + i, 1});  // row 2: all true
        for (int i = 0; i < 64; ++i) c.plant.push_back({192 + i, 0});  // row 3: all false
      }
      if (t == DType::kF32) c.plant.push_back({5, NAN});
      SCOPED_TRACE(::testing::Message() << "op " << int(op) << " " << dtype_name(t));
      EXPECT_EQ(run_case(dev(), c), 0);
    }
  }
}

TEST_F(ReduceTest, VarStdWithMeanAndCorrection) {
  for (ReduceOp op : {ReduceOp::kVar, ReduceOp::kStd}) {
    for (DType t : {DType::kF32, DType::kF16, DType::kF64}) {
      for (double corr : {0.0, 1.0, 2.5}) {
        for (uint32_t splits : {0u, 5u}) {
          Case c;
          c.op = op;
          c.src = c.compute = c.out0 = c.out1 = t;
          c.want_out1 = true;
          c.correction = corr;
          c.sizes = {4, 333};
          c.dims = {1};
          c.force.splits = splits;
          SCOPED_TRACE(::testing::Message() << "op " << int(op) << " " << dtype_name(t) << " c "
                                            << corr << " splits " << splits);
          EXPECT_EQ(run_case(dev(), c), 0);
        }
      }
    }
  }
}

TEST_F(ReduceTest, VarianceOfOneElementIsNanOrZero) {
  TestTensor in(dev(), DType::kF32, {3, 1});
  in.fill_random(5);
  in.upload();
  TestTensor out(dev(), DType::kF32, {3, 1});
  ops::ReduceArgs a;
  a.op = ReduceOp::kVar;
  a.src = in.desc();
  a.dims = {1};
  a.out0 = out.desc();
  ops::reduce(dev(), a);
  out.download();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(out.value(i)));
  a.correction = 0;
  ops::reduce(dev(), a);
  out.download();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out.value(i), 0.0);
}

TEST_F(ReduceTest, NormsEveryOrder) {
  for (double p : {2.0, 1.0, 0.0, 3.0, 0.5, double(INFINITY), -double(INFINITY)}) {
    for (DType t : {DType::kF32, DType::kBF16, DType::kF64}) {
      Case c;
      c.op = ReduceOp::kNorm;
      c.src = c.compute = c.out0 = t;
      c.p = p;
      c.sizes = {7, 129};
      c.dims = {0, 1};
      c.plant = {{10, 0.0}};
      SCOPED_TRACE(::testing::Message() << "p " << p << " " << dtype_name(t));
      EXPECT_EQ(run_case(dev(), c), 0);
    }
  }
}

TEST_F(ReduceTest, LogSumExpIncludingInfinities) {
  for (DType t : {DType::kF32, DType::kF64, DType::kF16}) {
    Case c;
    c.op = ReduceOp::kLogSumExp;
    c.src = c.compute = c.out0 = t;
    c.sizes = {5, 200};
    c.dims = {1};
    c.force.splits = 3;
    c.plant = {{3, 80.0}};  // exp overflows without the max shift
    for (int i = 0; i < 200; ++i) c.plant.push_back({200 + i, -INFINITY});  // row 1: all -inf
    c.plant.push_back({450, INFINITY});                                      // row 2: +inf
    SCOPED_TRACE(dtype_name(t));
    EXPECT_EQ(run_case(dev(), c), 0);
  }
}

TEST_F(ReduceTest, AminmaxBothOutputs) {
  Case c;
  c.op = ReduceOp::kAminmax;
  c.src = c.compute = c.out0 = c.out1 = DType::kF32;
  c.want_out1 = true;
  c.sizes = {12, 77};
  c.strides = {1, 12};
  c.dims = {1};
  EXPECT_EQ(run_case(dev(), c), 0);
}

TEST_F(ReduceTest, EmptyReductionsGiveIdentities) {
  TestTensor in(dev(), DType::kF32, {3, 0});
  TestTensor out(dev(), DType::kF32, {3, 1});
  ops::ReduceArgs a;
  a.src = in.desc();
  a.dims = {1};
  a.out0 = out.desc();
  std::vector<std::pair<ReduceOp, double>> expect = {
      {ReduceOp::kSum, 0.0}, {ReduceOp::kProd, 1.0}, {ReduceOp::kMean, NAN},
      {ReduceOp::kVar, NAN}, {ReduceOp::kLogSumExp, -INFINITY}, {ReduceOp::kNorm, 0.0}};
  for (auto [op, want] : expect) {
    a.op = op;
    ops::reduce(dev(), a);
    out.download();
    for (int i = 0; i < 3; ++i) {
      double got = out.value(i);
      EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << int(op) << ": " << got;
    }
  }
  a.op = ReduceOp::kMax;
  EXPECT_THROW(ops::reduce(dev(), a), InvalidArgument);
}

// Column layout (several adjacent outputs per thread, 16-byte loads where aligned): every op over
// leading dims, odd column counts, rows that are not all 16-byte aligned, misaligned starts, and
// one pass or several splits.
TEST_F(ReduceTest, ColumnLayoutEveryOpAndLayout) {
  struct Shape {
    std::vector<int64_t> sizes, strides;
    int64_t offset;
    std::vector<int> dims;
  };
  std::vector<Shape> shapes = {
      {{90, 37}, {}, 0, {0}},           // odd column count: a partial block per line
      {{40, 64}, {}, 1, {0}},           // every row misaligned
      {{45, 21}, {38, 1}, 0, {0}},      // padded rows, every other one aligned
      {{6, 5, 24}, {}, 0, {0, 1}},      // leading dims of a 3-d tensor
      {{7, 3, 18}, {}, 0, {0}},         // two kept dims, the inner one contiguous
  };
  struct O {
    ReduceOp op;
    bool out1;
    double p;
  };
  std::vector<O> ops_list = {{ReduceOp::kSum, false, 2},    {ReduceOp::kMean, false, 2},
                             {ReduceOp::kMax, false, 2},    {ReduceOp::kMin, false, 2},
                             {ReduceOp::kArgMax, true, 2},  {ReduceOp::kArgMin, true, 2},
                             {ReduceOp::kAminmax, true, 2}, {ReduceOp::kVar, true, 2},
                             {ReduceOp::kStd, false, 2},    {ReduceOp::kNorm, false, 3},
                             {ReduceOp::kNorm, false, INFINITY}, {ReduceOp::kLogSumExp, false, 2},
                             {ReduceOp::kNanSum, false, 2}, {ReduceOp::kCountNonzero, false, 2},
                             {ReduceOp::kAny, false, 2},    {ReduceOp::kProd, false, 2}};
  std::vector<ops::ReduceOverride> forces(3);
  forces[1].splits = 3;
  forces[2].ox_log2 = 1;  // two blocks per workgroup, 128 threads share the rows
  forces[2].splits = 2;
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (size_t oi = 0; oi < ops_list.size(); ++oi) {
      const O& o = ops_list[oi];
      // f16/bf16 share the f32 code but for the 8-wide loads: a subset keeps compile time down.
      bool narrow_subset = o.op == ReduceOp::kSum || o.op == ReduceOp::kArgMax ||
                           o.op == ReduceOp::kAminmax || o.op == ReduceOp::kVar ||
                           (o.op == ReduceOp::kNorm && o.p == 3) || o.op == ReduceOp::kLogSumExp;
      if (t != DType::kF32 && !narrow_subset) continue;
      for (size_t si = 0; si < shapes.size(); ++si) {
        const Shape& sh = shapes[si];
        Case c;
        c.op = o.op;
        c.src = c.compute = t;
        c.out0 = o.op == ReduceOp::kCountNonzero ? DType::kI64
                 : o.op == ReduceOp::kAny        ? DType::kBool
                                                 : t;
        c.out1 = o.op == ReduceOp::kArgMax || o.op == ReduceOp::kArgMin ? DType::kI64 : t;
        c.want_out1 = o.out1;
        c.p = o.p;
        c.sizes = sh.sizes;
        if (o.op == ReduceOp::kProd) c.sizes[0] = 4;  // a product of few factors stays finite
        c.strides = sh.strides;
        c.offset = sh.offset;
        c.dims = sh.dims;
        c.seed = static_cast<uint32_t>(si + 7);
        // NaN in column 2 and ties of the extreme in column 3 (first index must win).
        int64_t line = c.sizes.back();
        if (o.op != ReduceOp::kProd) {
          c.plant = {{2 * line + 2, NAN}, {line + 3, 9.0}, {3 * line + 3, 9.0},
                     {line + 5, -9.0}, {2 * line + 5, -9.0}, {4, 0.0}};
        }
        // Every (shape, layout) pair meets every op across the dtypes, at a third of the cost.
        size_t fi = (si + oi + static_cast<size_t>(t)) % forces.size();
        {
          c.force = forces[fi];
          SCOPED_TRACE(::testing::Message() << "op " << int(o.op) << " p " << o.p << " "
                                            << dtype_name(t) << " shape " << si << " force " << fi);
          EXPECT_EQ(run_case(dev(), c), 0);
        }
      }
    }
  }
}

TEST_F(ReduceTest, ColumnLayoutOfF64AndIntegers) {
  // Two (f64, i64), four (i32) or eight (i16) outputs per thread; odd widths, a misaligned start.
  struct Shape {
    std::vector<int64_t> sizes;
    int64_t offset;
    std::vector<int> dims;
  };
  std::vector<Shape> shapes = {{{70, 13}, 0, {0}}, {{33, 18}, 1, {0}}, {{5, 9, 11}, 0, {0, 1}}};
  std::vector<ReduceOp> ops_list = {ReduceOp::kSum,    ReduceOp::kMax,     ReduceOp::kArgMin,
                                    ReduceOp::kAminmax, ReduceOp::kProd,   ReduceOp::kAll,
                                    ReduceOp::kVar,    ReduceOp::kLogSumExp};
  for (DType t : {DType::kF64, DType::kI64, DType::kI32, DType::kI16}) {
    for (ReduceOp op : ops_list) {
      bool float_op = op == ReduceOp::kVar || op == ReduceOp::kLogSumExp;
      if (float_op && t != DType::kF64) continue;
      for (size_t si = 0; si < shapes.size(); ++si) {
        Case c;
        c.op = op;
        c.src = t;
        bool widen = !dtype_is_float(t) && (op == ReduceOp::kSum || op == ReduceOp::kProd);
        c.compute = widen ? DType::kI64 : t;
        c.out0 = op == ReduceOp::kAll ? DType::kBool : c.compute;
        c.out1 = op == ReduceOp::kArgMin ? DType::kI64 : t;
        c.want_out1 = op == ReduceOp::kArgMin || op == ReduceOp::kAminmax;
        c.sizes = shapes[si].sizes;
        if (op == ReduceOp::kProd) c.sizes[0] = 3;
        c.offset = shapes[si].offset;
        c.dims = shapes[si].dims;
        c.seed = static_cast<uint32_t>(si + 3);
        c.force.splits = si == 1 ? 0 : static_cast<uint32_t>(si + 2);
        if (op == ReduceOp::kAll) c.plant = {{1, 0.0}};
        SCOPED_TRACE(::testing::Message() << "op " << int(op) << " " << dtype_name(t) << " shape "
                                          << si);
        EXPECT_EQ(run_case(dev(), c), 0);
      }
    }
  }
}

TEST_F(ReduceTest, ColumnLayoutSplitsDoNotChangeExactResults) {
  // argmax (first index on ties) and max over the same columns: one pass, 2 and 7 splits.
  for (ReduceOp op : {ReduceOp::kArgMax, ReduceOp::kMax}) {
    for (uint32_t splits : {1u, 2u, 7u}) {
      Case c;
      c.op = op;
      c.src = c.compute = c.out0 = DType::kBF16;  // few distinct values: many ties
      c.want_out1 = op == ReduceOp::kArgMax;
      c.sizes = {300, 29};
      c.dims = {0};
      c.force.splits = splits;
      SCOPED_TRACE(::testing::Message() << "op " << int(op) << " splits " << splits);
      EXPECT_EQ(run_case(dev(), c), 0);
    }
  }
}

TEST_F(ReduceTest, BadArgumentsThrow) {
  TestTensor in(dev(), DType::kI32, {4, 5});
  TestTensor out(dev(), DType::kF32, {4, 1});
  ops::ReduceArgs a;
  a.src = in.desc();
  a.dims = {1};
  a.out0 = out.desc();
  a.op = ReduceOp::kMean;
  a.compute = DType::kI64;
  EXPECT_THROW(ops::reduce(dev(), a), InvalidArgument);  // mean of integers
  a.op = ReduceOp::kSum;
  a.dims = {2};
  EXPECT_THROW(ops::reduce(dev(), a), InvalidArgument);  // dim out of range
  a.dims = {0};
  EXPECT_THROW(ops::reduce(dev(), a), InvalidArgument);  // output shape does not match
}

TEST(ReducePlanTest, LayoutsFollowTheShape) {
  DeviceCaps gpu;
  gpu.kind = DeviceKind::kDiscrete;
  // Row reduction: threads share an output.
  ops::ReducePlan row = ops::plan_reduce(1000, 4096, 1, 4096, gpu);
  EXPECT_FALSE(row.ox_fast);
  EXPECT_EQ(row.ox_log2, 0u);
  // Column reduction: neighbouring threads take neighbouring outputs.
  ops::ReducePlan col = ops::plan_reduce(4096, 1000, 4096, 1, gpu);
  EXPECT_TRUE(col.ox_fast);
  EXPECT_GE(col.ox_log2, 5u);
  // Tiny reductions: one thread per output, one pass.
  ops::ReducePlan tiny = ops::plan_reduce(100000, 2, 1, 2, gpu);
  EXPECT_EQ(tiny.ox_log2, 8u);
  EXPECT_EQ(tiny.splits, 1u);
  // A full reduction of many elements is split over many workgroups.
  ops::ReducePlan full = ops::plan_reduce(1, 1 << 24, 1, 0, gpu);
  EXPECT_GE(full.splits, 256u);
  EXPECT_GE(full.chunk * full.splits, int64_t{1} << 24);
}

TEST(ReducePlanTest, ColumnLayoutFillsTheGpu) {
  DeviceCaps gpu, cpu;  // the reduce policy keys on the device class
  gpu.kind = DeviceKind::kDiscrete;
  cpu.kind = DeviceKind::kCpu;
  cpu.device_class = DeviceClass::kCpu;
  // amax over dim 0 of 4096x65536 f32: four columns per thread, the rows split so that at least
  // 2048 workgroups run, and every split still reads several rows per thread.
  ops::ReducePlan big = ops::plan_reduce(65536, 4096, 65536, 1, gpu, 4, 65536);
  EXPECT_EQ(big.col_w, 4u);
  EXPECT_TRUE(big.ox_fast);
  int64_t groups = (65536 / 4) >> big.ox_log2;
  EXPECT_GE(groups * big.splits, 2048);
  EXPECT_GE(big.chunk * big.splits, 4096);
  EXPECT_GE(big.chunk >> (8 - big.ox_log2), 8);
  // Few wide columns (channels-last statistics): many splits, each thread still 8 rows or more.
  ops::ReducePlan tall = ops::plan_reduce(64, 65536, 64, 1, gpu, 4, 64);
  EXPECT_GE(tall.splits, 256u);
  EXPECT_GE(tall.chunk >> (8 - tall.ox_log2), 8);
  // A mid-sized bias gradient: splits of 128 rows or more keep the partial states small.
  ops::ReducePlan mid = ops::plan_reduce(1024, 1024, 1024, 1, gpu, 4, 1024);
  EXPECT_GT(mid.splits, 1u);
  EXPECT_GE(mid.chunk, 128);
  // A small bias gradient stays one pass; f16 takes eight columns.
  ops::ReducePlan small = ops::plan_reduce(512, 32, 512, 1, gpu, 8, 512);
  EXPECT_EQ(small.col_w, 8u);
  EXPECT_EQ(small.splits, 1u);
  // The sizes the lavapipe tests use take the layout too; long ones are split.
  ops::ReducePlan lp = ops::plan_reduce(37, 3000, 37, 1, cpu, 4, 37);
  EXPECT_EQ(lp.col_w, 4u);
  EXPECT_GT(lp.splits, 1u);
  EXPECT_EQ(ops::plan_reduce(130, 1025, 130, 1, cpu, 4, 130).col_w, 4u);
  // Not for rows, transposed views (kept dim strided) or dtypes without a width.
  EXPECT_EQ(ops::plan_reduce(1000, 4096, 1, 4096, gpu, 4, 1000).col_w, 0u);
  EXPECT_EQ(ops::plan_reduce(1000, 4096, 1000, 4096, gpu, 4, 1000).col_w, 0u);
  EXPECT_EQ(ops::plan_reduce(65536, 4096, 65536, 1, gpu, 0, 65536).col_w, 0u);
}

}  // namespace
}  // namespace vkml::testing
