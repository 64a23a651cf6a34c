// Softmax family: forward and backward along every dimension, strided layouts, row and thread
// variants, mixed dtypes, against a double-precision CPU reference.
#include <cmath>

#include "nn_test_util.h"
#include "ops/nn_util.h"
#include "vkml/softmax.h"

namespace vkml::testing {

namespace {

// Reference over a row-major tensor of `sizes` along `dim`.
std::vector<double> ref_softmax(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                int dim, bool log) {
  int64_t n = sizes[dim], inner = 1, outer = 1;
  for (size_t d = dim + 1; d < sizes.size(); ++d) inner *= sizes[d];
  for (int d = 0; d < dim; ++d) outer *= sizes[d];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * n + j) * inner + i; };
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, x[at(j)]);
      for (int64_t j = 0; j < n; ++j) s += std::exp(x[at(j)] - m);
      for (int64_t j = 0; j < n; ++j) {
        y[at(j)] = log ? x[at(j)] - m - std::log(s) : std::exp(x[at(j)] - m) / s;
      }
    }
  }
  return y;
}

std::vector<double> ref_backward(const std::vector<double>& g, const std::vector<double>& y,
                                 const std::vector<int64_t>& sizes, int dim, bool log) {
  int64_t n = sizes[dim], inner = 1, outer = 1;
  for (size_t d = dim + 1; d < sizes.size(); ++d) inner *= sizes[d];
  for (int d = 0; d < dim; ++d) outer *= sizes[d];
  std::vector<double> dx(g.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * n + j) * inner + i; };
      double s = 0;
      for (int64_t j = 0; j < n; ++j) s += log ? g[at(j)] : g[at(j)] * y[at(j)];
      for (int64_t j = 0; j < n; ++j) {
        dx[at(j)] = log ? g[at(j)] - std::exp(y[at(j)]) * s : y[at(j)] * (g[at(j)] - s);
      }
    }
  }
  return dx;
}

// Strides of a tensor stored transposed in its last two dimensions.
std::vector<int64_t> transposed_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> perm = sizes;
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  std::vector<int64_t> st(sizes.size());
  int64_t s = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    st[i] = s;
    s *= perm[i];
  }
  std::swap(st[st.size() - 1], st[st.size() - 2]);
  return st;
}

struct Case {
  std::vector<int64_t> sizes;
  int dim;
  DType in, out;
  bool transposed_input;
};

void check_case(Device& dev, const Case& c, bool log, uint32_t seed) {
  int64_t n = 1;
  for (int64_t s : c.sizes) n *= s;
  DevTensor x(dev, c.in, c.sizes,
              c.transposed_input ? transposed_strides(c.sizes) : std::vector<int64_t>{});
  DevTensor y(dev, c.out, c.sizes);
  auto xs = x.upload(dev, random_values(n, seed, -4, 4));
  ops::softmax(dev, y.d, x.d, c.dim, log);
  auto want = ref_softmax(xs, c.sizes, c.dim, log);
  double tol = std::max(tol_for(c.in), tol_for(c.out));
  expect_close(y.read(dev), want, tol, tol * 0.1, log ? "log_softmax" : "softmax");

  // Backward from the reference output rounded to the output dtype.
  DevTensor g(dev, c.in, c.sizes), yy(dev, c.out, c.sizes), dx(dev, c.in, c.sizes);
  auto gs = g.upload(dev, random_values(n, seed + 1));
  auto ys = yy.upload(dev, want);
  ops::softmax_backward(dev, dx.d, g.d, yy.d, c.dim, log);
  auto want_dx = ref_backward(gs, ys, c.sizes, c.dim, log);
  double gmax = 0;
  for (double v : want_dx) gmax = std::max(gmax, std::fabs(v));
  expect_close(dx.read(dev), want_dx, tol, tol * gmax * 2, "softmax_backward");
}

}  // namespace

using SoftmaxTest = DeviceTest;

TEST_F(SoftmaxTest, EveryDimensionF32) {
  for (bool log : {false, true}) {
    for (int dim = 0; dim < 3; ++dim) {
      check_case(dev(), {{5, 37, 6}, dim, DType::kF32, DType::kF32, false}, log, 10 + dim);
    }
  }
}

TEST_F(SoftmaxTest, LongRowsUseWorkgroupsAndTransposedInput) {
  for (bool log : {false, true}) {
    check_case(dev(), {{3, 1000}, 1, DType::kF32, DType::kF32, false}, log, 1);
    check_case(dev(), {{3, 300, 5}, 1, DType::kF32, DType::kF32, true}, log, 2);
    check_case(dev(), {{67, 45}, 0, DType::kF32, DType::kF32, true}, log, 3);
  }
}

TEST_F(SoftmaxTest, SharedMemoryReductionsMatch) {
  ops::nn::force_tree_reductions(true);
  for (bool log : {false, true}) {
    check_case(dev(), {{3, 500}, 1, DType::kF32, DType::kF32, false}, log, 11);
    check_case(dev(), {{2, 100, 3}, 1, DType::kBF16, DType::kF32, true}, log, 12);
  }
  ops::nn::force_tree_reductions(false);
}

TEST_F(SoftmaxTest, HalfBfloatAndMixedDtypes) {
  for (bool log : {false, true}) {
    check_case(dev(), {{4, 77}, 1, DType::kF16, DType::kF16, false}, log, 4);
    check_case(dev(), {{4, 9, 3}, 1, DType::kBF16, DType::kBF16, false}, log, 5);
    check_case(dev(), {{6, 50}, 1, DType::kF16, DType::kF32, false}, log, 6);
  }
}

TEST_F(SoftmaxTest, DoublePrecision) {
  if (!dev().caps().supports_dtype(DType::kF64)) GTEST_SKIP() << "no float64 on this device";
  for (bool log : {false, true}) {
    check_case(dev(), {{3, 400}, 1, DType::kF64, DType::kF64, false}, log, 7);
    check_case(dev(), {{8, 5}, 1, DType::kF64, DType::kF64, true}, log, 8);
  }
}

TEST_F(SoftmaxTest, LargeMagnitudesStayFinite) {
  DevTensor x(dev(), DType::kF32, {2, 64}), y(dev(), DType::kF32, {2, 64});
  std::vector<double> v = random_values(128, 9, -1, 1);
  for (double& e : v) e = e * 50 + 1000;  // exp(x) alone would overflow
  auto xs = x.upload(dev(), v);
  ops::softmax(dev(), y.d, x.d, 1, false);
  expect_close(y.read(dev()), ref_softmax(xs, {2, 64}, 1, false), 1e-5, 1e-7, "stable");
}

TEST_F(SoftmaxTest, RejectsBadInput) {
  DevTensor x(dev(), DType::kF32, {4, 5}), y(dev(), DType::kF32, {4, 5});
  DevTensor xi(dev(), DType::kI32, {4, 5}), wrong(dev(), DType::kF32, {5, 4});
  EXPECT_THROW(ops::softmax(dev(), y.d, x.d, 2, false), InvalidArgument);
  EXPECT_THROW(ops::softmax(dev(), y.d, xi.d, 1, false), InvalidArgument);
  EXPECT_THROW(ops::softmax(dev(), wrong.d, x.d, 1, false), InvalidArgument);
}

}  // namespace vkml::testing
