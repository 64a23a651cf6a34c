// Helpers for the neural-network family tests: host tensors of doubles uploaded as any floating
// dtype with any strides, read back as doubles, and per-dtype tolerances.
#pragma once
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "test_util.h"

namespace vkml::testing {

inline uint16_t to_half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7FFFFFFFu;
  if (mag >= 0x7F800000u)
    return static_cast<uint16_t>(sign | (mag > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (mag >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (mag < 0x38800000u) {
    float af;
    std::memcpy(&af, &mag, 4);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(af * 16777216.0f)));
  }
  uint32_t r = mag + 0xFFFu + ((mag >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((r - 0x38000000u) >> 13));
}

inline float from_half_bits(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  float f;
  if (e == 0) {
    f = std::ldexp(static_cast<float>(m), -24);
    return sign ? -f : f;
  }
  uint32_t bits = sign | ((e == 31 ? 255 : e + 112) << 23) | (m << 13);
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float from_bf16_bits(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Value after a round trip through dtype t (what the device sees).
inline double round_to(DType t, double v) {
  switch (t) {
    case DType::kF32:
      return static_cast<float>(v);
    case DType::kF16:
      return from_half_bits(to_half_bits(static_cast<float>(v)));
    case DType::kBF16:
      return from_bf16_bits(to_bf16_bits(static_cast<float>(v)));
    default:
      return v;
  }
}

// Relative tolerance of results in dtype t computed from inputs in t.
inline double tol_for(DType t) {
  switch (t) {
    case DType::kF32:
      return 2e-5;
    case DType::kF16:
      return 3e-3;
    case DType::kBF16:
      return 2e-2;
    default:
      return 1e-10;
  }
}

// A device tensor with its own allocation, laid out with explicit strides over a buffer of
// `storage` elements (so transposed or sliced layouts can be tested).
struct DevTensor {
  DeviceBuffer buf;
  TensorDesc d;
  DevTensor(Device& dev, DType t, std::vector<int64_t> sizes, std::vector<int64_t> strides = {},
            int64_t storage = -1)
      : buf(dev, bytes_for(t, sizes, strides, storage)), d(desc(buf.address, t, sizes, strides)) {}

  static uint64_t bytes_for(DType t, const std::vector<int64_t>& sizes,
                            const std::vector<int64_t>& strides, int64_t storage) {
    TensorDesc tmp = desc(0, t, sizes, strides);
    uint64_t span = tmp.span_bytes();
    if (storage >= 0) span = std::max<uint64_t>(span, storage * dtype_size(t));
    return std::max<uint64_t>(span, 16);
  }

  // Linear (row-major over sizes) element i -> element offset.
  int64_t offset(int64_t i) const {
    int64_t off = 0;
    for (int k = d.ndim() - 1; k >= 0; --k) {
      off += (i % d.sizes[k]) * d.strides[k];
      i /= d.sizes[k];
    }
    return off;
  }

  // Uploads values (row-major over sizes) converted to the dtype; returns what the device holds.
  std::vector<double> upload(Device& dev, const std::vector<double>& v) {
    size_t esz = dtype_size(d.dtype);
    std::vector<uint8_t> host(buf.bytes, 0);
    std::vector<double> seen(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      uint8_t* p = host.data() + offset(static_cast<int64_t>(i)) * esz;
      seen[i] = round_to(d.dtype, v[i]);
      store(p, v[i]);
    }
    dev.stream().upload(host.data(), buf.address, buf.bytes);
    return seen;
  }

  std::vector<double> read(Device& dev) const {
    std::vector<uint8_t> host(buf.bytes);
    dev.stream().download(buf.address, host.data(), buf.bytes);
    std::vector<double> out(d.numel());
    size_t esz = dtype_size(d.dtype);
    for (int64_t i = 0; i < d.numel(); ++i) out[i] = load(host.data() + offset(i) * esz);
    return out;
  }

 private:
  void store(uint8_t* p, double v) const {
    switch (d.dtype) {
      case DType::kF32: {
        float f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
        break;
      }
      case DType::kF64:
        std::memcpy(p, &v, 8);
        break;
      case DType::kF16: {
        uint16_t h = to_half_bits(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kBF16: {
        uint16_t h = to_bf16_bits(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kI64: {
        int64_t x = static_cast<int64_t>(v);
        std::memcpy(p, &x, 8);
        break;
      }
      case DType::kI32: {
        int32_t x = static_cast<int32_t>(v);
        std::memcpy(p, &x, 4);
        break;
      }
      case DType::kU8:
      case DType::kBool:
        *p = static_cast<uint8_t>(v);
        break;
      case DType::kI8:
        *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(v);
        break;
      case DType::kI16: {
        int16_t x = static_cast<int16_t>(v);
        std::memcpy(p, &x, 2);
        break;
      }
      default:
        FAIL() << "unsupported dtype in test";
    }
  }
  double load(const uint8_t* p) const {
    switch (d.dtype) {
      case DType::kF32: {
        float f;
        std::memcpy(&f, p, 4);
        return f;
      }
      case DType::kF64: {
        double x;
        std::memcpy(&x, p, 8);
        return x;
      }
      case DType::kF16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        return from_half_bits(h);
      }
      case DType::kBF16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        return from_bf16_bits(h);
      }
      case DType::kI64: {
        int64_t x;
        std::memcpy(&x, p, 8);
        return static_cast<double>(x);
      }
      case DType::kI32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        return x;
      }
      case DType::kU8:
      case DType::kBool:
        return *p;
      case DType::kI8:
        return *reinterpret_cast<const int8_t*>(p);
      case DType::kI16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        return x;
      }
      default:
        return NAN;
    }
  }
};

inline std::vector<double> random_values(size_t n, uint32_t seed, double lo = -2.0,
                                         double hi = 2.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Max of |got - want| / (atol + |want|) style check with a readable failure.
inline void expect_close(const std::vector<double>& got, const std::vector<double>& want,
                         double rtol, double atol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]";
      continue;
    }
    ASSERT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << what << " [" << i << "]";
  }
}

}  // namespace vkml::testing
