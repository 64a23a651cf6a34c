// The complex elementwise family against std::complex<double> (C99 Annex G functions of the C
// library): random values over several scales, a strided input, a broadcast exponent, zero-size
// tensors and the argument checks.
#include <cmath>
#include <complex>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"
#include "vkml/complex_math.h"
#include "vkml/errors.h"

namespace vkml::testing {

namespace {

using cd = std::complex<double>;
using ops::ComplexFn;

struct Case {
  ComplexFn fn;
  const char* name;
  std::function<cd(cd)> ref;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {ComplexFn::kExp, "exp", [](cd z) { return std::exp(z); }},
      {ComplexFn::kExp2, "exp2", [](cd z) { return std::exp(z * std::log(2.0)); }},
      {ComplexFn::kExpm1, "expm1", [](cd z) { return std::exp(z) - 1.0; }},
      {ComplexFn::kLog, "log", [](cd z) { return std::log(z); }},
      {ComplexFn::kLog2, "log2", [](cd z) { return std::log(z) / std::log(2.0); }},
      {ComplexFn::kLog10, "log10", [](cd z) { return std::log10(z); }},
      {ComplexFn::kLog1p, "log1p", [](cd z) { return std::log(1.0 + z); }},
      {ComplexFn::kSqrt, "sqrt", [](cd z) { return std::sqrt(z); }},
      {ComplexFn::kRsqrt, "rsqrt", [](cd z) { return 1.0 / std::sqrt(z); }},
      {ComplexFn::kReciprocal, "reciprocal", [](cd z) { return 1.0 / z; }},
      {ComplexFn::kSigmoid, "sigmoid", [](cd z) { return 1.0 / (1.0 + std::exp(-z)); }},
      {ComplexFn::kSin, "sin", [](cd z) { return std::sin(z); }},
      {ComplexFn::kCos, "cos", [](cd z) { return std::cos(z); }},
      {ComplexFn::kTan, "tan", [](cd z) { return std::tan(z); }},
      {ComplexFn::kSinh, "sinh", [](cd z) { return std::sinh(z); }},
      {ComplexFn::kCosh, "cosh", [](cd z) { return std::cosh(z); }},
      {ComplexFn::kTanh, "tanh", [](cd z) { return std::tanh(z); }},
      {ComplexFn::kAsin, "asin", [](cd z) { return std::asin(z); }},
      {ComplexFn::kAcos, "acos", [](cd z) { return std::acos(z); }},
      {ComplexFn::kAtan, "atan", [](cd z) { return std::atan(z); }},
      {ComplexFn::kAsinh, "asinh", [](cd z) { return std::asinh(z); }},
      {ComplexFn::kAcosh, "acosh", [](cd z) { return std::acosh(z); }},
      {ComplexFn::kAtanh, "atanh", [](cd z) { return std::atanh(z); }},
  };
  return c;
}

std::vector<cd> random_values(size_t n, double scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<cd> v(n);
  for (auto& x : v) x = {dist(rng), dist(rng)};
  return v;
}

// Largest |got - want| / (1 + |want|) over the finite references.
double max_error(const std::vector<cd>& got, const std::vector<cd>& want) {
  double e = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(want[i].real()) || !std::isfinite(want[i].imag())) continue;
    e = std::max(e, std::abs(got[i] - want[i]) / (1.0 + std::abs(want[i])));
  }
  return e;
}

// Runs fn over `values` laid out with element stride `stride`; returns the dense results.
std::vector<cd> run_unary(Device& dev, ComplexFn fn, DType dt, const std::vector<cd>& values,
                          int64_t stride) {
  const bool f64 = dt == DType::kC128;
  const size_t esz = f64 ? 16 : 8, n = values.size();
  DeviceBuffer in(dev, n * stride * esz), out(dev, n * esz);
  if (f64) {
    std::vector<cd> host(n * stride);
    for (size_t i = 0; i < n; ++i) host[i * stride] = values[i];
    dev.stream().upload(host.data(), in.address, host.size() * esz);
  } else {
    std::vector<std::complex<float>> host(n * stride);
    for (size_t i = 0; i < n; ++i) host[i * stride] = std::complex<float>(values[i]);
    dev.stream().upload(host.data(), in.address, host.size() * esz);
  }
  const int64_t count = static_cast<int64_t>(n);
  ops::complex_unary(dev, fn, desc(out.address, dt, {count}), desc(in.address, dt, {count}, {stride}));
  if (f64) return download<cd>(dev, out.address, n);
  auto f = download<std::complex<float>>(dev, out.address, n);
  return {f.begin(), f.end()};
}

}  // namespace

using ComplexMathTest = DeviceTest;

TEST_F(ComplexMathTest, Complex64MatchesTheCLibrary) {
  for (const Case& c : cases()) {
    for (double scale : {0.05, 1.0, 5.0}) {
      std::vector<cd> v = random_values(301, scale, 11);
      for (auto& x : v) x = cd(std::complex<float>(x));  // the reference sees the rounding
      std::vector<cd> want(v.size());
      for (size_t i = 0; i < v.size(); ++i) want[i] = c.ref(v[i]);
      EXPECT_LT(max_error(run_unary(dev(), c.fn, DType::kC64, v, 3), want), 2e-6)
          << c.name << " at scale " << scale;
    }
  }
}

TEST_F(ComplexMathTest, Complex128MatchesTheCLibrary) {
  if (!dev().caps().supports_dtype(DType::kC128)) GTEST_SKIP() << "no fp64 on this device";
  for (const Case& c : cases()) {
    for (double scale : {0.05, 1.0, 5.0}) {
      std::vector<cd> v = random_values(301, scale, 12);
      std::vector<cd> want(v.size());
      for (size_t i = 0; i < v.size(); ++i) want[i] = c.ref(v[i]);
      EXPECT_LT(max_error(run_unary(dev(), c.fn, DType::kC128, v, 1), want), 1e-13)
          << c.name << " at scale " << scale;
    }
  }
}

TEST_F(ComplexMathTest, PowBroadcastsTheExponent) {
  const int64_t rows = 4, cols = 7;
  std::vector<cd> a = random_values(rows * cols, 2.0, 13), b = random_values(cols, 1.0, 14);
  std::vector<std::complex<float>> af(a.begin(), a.end()), bf(b.begin(), b.end());
  DeviceBuffer da(dev(), af.size() * 8), db(dev(), bf.size() * 8), dout(dev(), af.size() * 8);
  dev().stream().upload(af.data(), da.address, af.size() * 8);
  dev().stream().upload(bf.data(), db.address, bf.size() * 8);
  ops::complex_binary(dev(), ComplexFn::kPow, desc(dout.address, DType::kC64, {rows, cols}),
                      desc(da.address, DType::kC64, {rows, cols}),
                      desc(db.address, DType::kC64, {rows, cols}, {0, 1}));
  auto got = download<std::complex<float>>(dev(), dout.address, af.size());
  std::vector<cd> g(got.begin(), got.end()), want(af.size());
  for (int64_t i = 0; i < rows * cols; ++i) want[i] = std::pow(cd(af[i]), cd(bf[i % cols]));
  EXPECT_LT(max_error(g, want), 1e-5);
}

TEST_F(ComplexMathTest, ZeroSizeAndBadDescriptors) {
  DeviceBuffer a(dev(), 256), b(dev(), 256);
  ops::complex_unary(dev(), ComplexFn::kExp, desc(a.address, DType::kC64, {0, 3}),
                     desc(b.address, DType::kC64, {0, 3}));
  EXPECT_THROW(ops::complex_unary(dev(), ComplexFn::kExp, desc(a.address, DType::kF32, {8}),
                                  desc(b.address, DType::kF32, {8})),
               InvalidArgument);
  EXPECT_THROW(ops::complex_unary(dev(), ComplexFn::kExp, desc(a.address, DType::kC64, {8}),
                                  desc(b.address, DType::kC64, {4})),
               InvalidArgument);
  EXPECT_THROW(ops::complex_unary(dev(), ComplexFn::kExp, desc(a.address, DType::kC64, {8}),
                                  desc(b.address, DType::kC128, {8})),
               InvalidArgument);
  EXPECT_THROW(ops::complex_unary(dev(), ComplexFn::kPow, desc(a.address, DType::kC64, {8}),
                                  desc(b.address, DType::kC64, {8})),
               InvalidArgument);
}

}  // namespace vkml::testing
