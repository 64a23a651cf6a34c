// The fft family: complex transforms along the last dimension against a double-precision DFT,
// for smooth (Stockham) and other (Bluestein) lengths, batched, strided, both directions, with
// scales, complex128, and the error cases.
#include <cmath>
#include <complex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/shader_registry.h"
#include "test_util.h"
#include "vkml/errors.h"
#include "vkml/fft.h"

namespace vkml::testing {

namespace {

using cd = std::complex<double>;

std::vector<cd> random_complex(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist;
  std::vector<cd> v(n);
  for (auto& x : v) x = {dist(rng), dist(rng)};
  return v;
}

// The DFT of rows of n in double (direct sums with exactly reduced angles).
std::vector<cd> dft_ref(const std::vector<cd>& x, int64_t n, bool inverse, double scale) {
  std::vector<cd> y(x.size());
  const double sign = inverse ? 1.0 : -1.0;
  for (size_t b = 0; b < x.size() / n; ++b) {
    for (int64_t k = 0; k < n; ++k) {
      cd acc = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double ang = sign * 2.0 * M_PI * static_cast<double>((j * k) % n) / n;
        acc += x[b * n + j] * cd(std::cos(ang), std::sin(ang));
      }
      y[b * n + k] = acc * scale;
    }
  }
  return y;
}

double rel_error(const std::vector<cd>& got, const std::vector<cd>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += std::norm(got[i] - want[i]);
    den += std::norm(want[i]);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Runs one transform of `batch` rows of n (input rows `in_row` apart, elements `in_elem`) and
// returns the relative error against the reference.
double run_case(Device& dev, DType dt, int64_t batch, int64_t n, int64_t in_row, int64_t in_elem,
                bool inverse, double scale, uint32_t seed) {
  const bool f64 = dt == DType::kC128;
  const size_t esz = f64 ? 16 : 8;
  const int64_t in_count = (batch - 1) * in_row + (n - 1) * in_elem + 1;
  DeviceBuffer in_buf(dev, in_count * esz), out_buf(dev, batch * n * esz);
  std::vector<cd> values = random_complex(batch * n, seed), host_in(in_count);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < n; ++j) host_in[b * in_row + j * in_elem] = values[b * n + j];
  }
  if (f64) {
    dev.stream().upload(host_in.data(), in_buf.address, in_count * esz);
  } else {
    std::vector<std::complex<float>> f(host_in.begin(), host_in.end());
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t j = 0; j < n; ++j) {
        values[b * n + j] = cd(f[b * in_row + j * in_elem]);  // the reference sees the rounding
      }
    }
    dev.stream().upload(f.data(), in_buf.address, in_count * esz);
  }
  ops::fft_c2c(dev, desc(out_buf.address, dt, {batch, n}),
               desc(in_buf.address, dt, {batch, n}, {in_row, in_elem}), inverse, scale);
  std::vector<cd> got(batch * n);
  if (f64) {
    got = download<cd>(dev, out_buf.address, batch * n);
  } else {
    auto f = download<std::complex<float>>(dev, out_buf.address, batch * n);
    got.assign(f.begin(), f.end());
  }
  return rel_error(got, dft_ref(values, n, inverse, scale));
}

}  // namespace

using FftTest = DeviceTest;

TEST_F(FftTest, SmoothAndBluesteinLengths) {
  for (int64_t n = 1; n <= 160; ++n) {
    const double err = run_case(dev(), DType::kC64, 2, n, n, 1, false, 1.0, 7 + n);
    // float32 rounding grows like log(n); pocketfft's float32 error stays below 1e-6 here.
    EXPECT_LT(err, 1e-6) << "n = " << n << (ops::fft_is_smooth(n) ? " (smooth)" : " (Bluestein)");
  }
}

TEST_F(FftTest, InverseScaledStridedBatched) {
  EXPECT_LT(run_case(dev(), DType::kC64, 3, 60, 200, 3, true, 1.0 / 60, 1), 1e-6);
  EXPECT_LT(run_case(dev(), DType::kC64, 4, 37, 1, 4, false, 0.5, 2), 1e-6);
  EXPECT_LT(run_case(dev(), DType::kC64, 5, 1024, 1024, 1, true, 1.0, 3), 1e-6);
  EXPECT_LT(run_case(dev(), DType::kC64, 1, 1009, 1009, 1, true, 1.0, 4), 2e-6);
}

TEST_F(FftTest, Complex128) {
  if (!dev().caps().supports_dtype(DType::kC128)) GTEST_SKIP() << "no fp64 on this device";
  EXPECT_LT(run_case(dev(), DType::kC128, 2, 210, 210, 1, false, 1.0, 5), 1e-13);
  EXPECT_LT(run_case(dev(), DType::kC128, 2, 101, 101, 1, true, 1.0, 6), 1e-13);
}

TEST_F(FftTest, RejectsRealAndMismatchedDescriptors) {
  DeviceBuffer a(dev(), 256), b(dev(), 256);
  EXPECT_THROW(ops::fft_c2c(dev(), desc(a.address, DType::kF32, {8}),
                            desc(b.address, DType::kF32, {8}), false, 1.0),
               InvalidArgument);
  EXPECT_THROW(ops::fft_c2c(dev(), desc(a.address, DType::kC64, {8}),
                            desc(b.address, DType::kC64, {4}), false, 1.0),
               InvalidArgument);
}

// Whether an embedded SPIR-V module declares the Float64 capability (OpCapability = 17,
// Float64 = 10): a device without shaderFloat64 cannot create such a pipeline.
bool declares_float64(const char* shader) {
  const EmbeddedShader* s = find_embedded_shader(shader);
  if (s == nullptr) throw std::runtime_error(std::string("no embedded shader ") + shader);
  const size_t words = s->bytes / 4;
  for (size_t i = 5; i < words;) {
    const uint32_t op = s->code[i] & 0xFFFFu, len = s->code[i] >> 16;
    if (op == 17 && i + 1 < words && s->code[i + 1] == 10) return true;
    if (len == 0) break;
    i += len;
  }
  return false;
}

// complex64 transforms and complex functions run on GPUs without fp64: only the complex128
// variants may need it.
TEST(ComplexShaders, OnlyDoubleVariantsNeedFloat64) {
  EXPECT_FALSE(declares_float64("fft"));
  EXPECT_TRUE(declares_float64("fft_f64"));
  EXPECT_FALSE(declares_float64("complex_math"));
  EXPECT_TRUE(declares_float64("complex_math_f64"));
}

}  // namespace vkml::testing
