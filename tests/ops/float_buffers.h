// Host buffers of floating-point dtypes for the gemm and conv suites: random fill, encode, decode.
#pragma once
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "test_util.h"

namespace vkml::testing {

inline double decode_float(DType t, const uint8_t* p) {
  switch (t) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::kF64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      uint32_t bits = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      int exp = (h >> 10) & 0x1F, man = h & 0x3FF;
      double v = exp == 0    ? std::ldexp(man, -24)
                 : exp == 31 ? (man ? NAN : INFINITY)
                             : std::ldexp(man | 0x400, exp - 25);
      return (h & 0x8000) ? -v : v;
    }
    default:
      return NAN;
  }
}

// A host copy of one device allocation holding elements of a floating dtype.
struct HostFloats {
  DType dtype;
  std::vector<uint8_t> bytes;
  HostFloats(DType t, size_t n) : dtype(t), bytes(n * dtype_size(t)) {}
  size_t size() const { return bytes.size() / dtype_size(dtype); }
  double get(size_t i) const { return decode_float(dtype, bytes.data() + i * dtype_size(dtype)); }
  void set(size_t i, double v) {
    uint64_t bits = ops::scalar_bits(dtype, Scalar::from_double(v));
    std::memcpy(bytes.data() + i * dtype_size(dtype), &bits, dtype_size(dtype));
  }
  // Uniform values in [-1, 1); half dtypes get values they hold exactly (multiples of 1/64).
  void randomize(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (size_t i = 0; i < size(); ++i) {
      double v = u(rng);
      if (dtype == DType::kF16 || dtype == DType::kBF16) v = std::round(v * 64) / 64;
      set(i, v);
    }
  }
  void upload(Device& dev, uint64_t address) const {
    dev.stream().upload(bytes.data(), address, bytes.size());
  }
  void download(Device& dev, uint64_t address) {
    dev.stream().download(address, bytes.data(), bytes.size());
  }
};

// Tolerance of a result stored in dtype t, relative to the result's magnitude.
inline double rel_tolerance(DType t) {
  switch (t) {
    case DType::kF64:
      return 1e-10;
    case DType::kF32:
      return 1e-4;
    default:
      return 1e-2;
  }
}

}  // namespace vkml::testing
