// Host tensors for the reduce family's tests: random data of any dtype with arbitrary strides,
// read back as double (floats) or int64 (integers) for the CPU references.
#pragma once
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "test_util.h"

namespace vkml::testing {

inline double half_bits_to_double(uint16_t h) {
  int sign = (h >> 15) ? -1 : 1;
  int exp = (h >> 10) & 0x1F;
  int mant = h & 0x3FF;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  return sign * std::ldexp(mant + 1024, exp - 25);
}

inline double bits_to_double(DType t, uint64_t bits) {
  switch (t) {
    case DType::kF32: {
      float f;
      uint32_t b = static_cast<uint32_t>(bits);
      std::memcpy(&f, &b, 4);
      return f;
    }
    case DType::kF64: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    case DType::kF16: return half_bits_to_double(static_cast<uint16_t>(bits));
    case DType::kBF16: {
      uint32_t b = static_cast<uint32_t>(bits) << 16;
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    case DType::kI8: return static_cast<int8_t>(bits);
    case DType::kU8: return static_cast<uint8_t>(bits);
    case DType::kI16: return static_cast<int16_t>(bits);
    case DType::kI32: return static_cast<int32_t>(bits);
    case DType::kI64: return static_cast<double>(static_cast<int64_t>(bits));
    case DType::kBool: return bits & 0xFF ? 1.0 : 0.0;
    default: return 0;
  }
}

inline int64_t bits_to_int(DType t, uint64_t bits) {
  switch (t) {
    case DType::kI8: return static_cast<int8_t>(bits);
    case DType::kU8: return static_cast<uint8_t>(bits);
    case DType::kI16: return static_cast<int16_t>(bits);
    case DType::kI32: return static_cast<int32_t>(bits);
    case DType::kI64: return static_cast<int64_t>(bits);
    case DType::kBool: return bits & 0xFF ? 1 : 0;
    default: return static_cast<int64_t>(bits_to_double(t, bits));
  }
}

// Value of `v` after a round trip through dtype t (what the GPU sees after a cast).
inline double round_to(DType t, double v) {
  return bits_to_double(t, ops::scalar_bits(t, Scalar::from_double(v)));
}

// A device tensor with a host mirror. Elements live in a buffer of `storage` elements; the
// tensor views them with `sizes`/`strides` (element units) from `offset`.
struct TestTensor {
  Device& dev;
  DType dtype;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  int64_t storage = 0;
  std::vector<uint64_t> bits;  // host copy of the whole storage, one element per entry
  DeviceBuffer buf;

  TestTensor(Device& d, DType t, std::vector<int64_t> sz, std::vector<int64_t> st = {},
             int64_t off = 0)
      : dev(d), dtype(t), sizes(sz), strides(st), offset(off), storage(storage_for(sz, st, off)),
        buf(d, std::max<int64_t>(storage, 1) * dtype_size(t)) {
    if (strides.empty()) strides = contiguous(sizes);
    bits.assign(storage, 0);
  }

  static std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes) {
    std::vector<int64_t> st(sizes.size());
    int64_t s = 1;
    for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
      st[i] = s;
      s *= sizes[i];
    }
    return st;
  }
  static int64_t storage_for(const std::vector<int64_t>& sz, std::vector<int64_t> st, int64_t off) {
    if (st.empty()) st = contiguous(sz);
    int64_t last = off;
    for (size_t d = 0; d < sz.size(); ++d) {
      if (sz[d] == 0) return off;
      last += (sz[d] - 1) * st[d];
    }
    return last + 1;
  }

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  // Storage index of logical (row-major) element i.
  int64_t index_of(int64_t i) const {
    int64_t off = offset;
    for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
      off += (i % sizes[d]) * strides[d];
      i /= sizes[d];
    }
    return off;
  }
  double value(int64_t i) const { return bits_to_double(dtype, bits[index_of(i)]); }
  int64_t ivalue(int64_t i) const { return bits_to_int(dtype, bits[index_of(i)]); }
  void set(int64_t i, double v) {
    Scalar s = dtype_is_float(dtype) ? Scalar::from_double(v)
                                     : Scalar::from_int(static_cast<int64_t>(v));
    bits[index_of(i)] = ops::scalar_bits(dtype, s);
  }

  // Random data: normal floats, small integers in [lo, hi].
  void fill_random(uint32_t seed, double lo = -50, double hi = 50) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_int_distribution<int64_t> ints(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
    for (int64_t i = 0; i < storage; ++i) {
      Scalar s = dtype_is_float(dtype) ? Scalar::from_double(normal(rng))
                                       : Scalar::from_int(dtype == DType::kBool ? ints(rng) & 1
                                                                                : ints(rng));
      bits[i] = ops::scalar_bits(dtype, s);
    }
  }
  void upload() {
    std::vector<uint8_t> raw(storage * dtype_size(dtype));
    for (int64_t i = 0; i < storage; ++i) {
      std::memcpy(raw.data() + i * dtype_size(dtype), &bits[i], dtype_size(dtype));
    }
    if (!raw.empty()) dev.stream().upload(raw.data(), buf.address, raw.size());
  }
  void download() {
    std::vector<uint8_t> raw(storage * dtype_size(dtype));
    if (!raw.empty()) dev.stream().download(buf.address, raw.data(), raw.size());
    for (int64_t i = 0; i < storage; ++i) {
      bits[i] = 0;
      std::memcpy(&bits[i], raw.data() + i * dtype_size(dtype), dtype_size(dtype));
    }
  }
  TensorDesc desc() const {
    TensorDesc d;
    d.address = buf.address + offset * dtype_size(dtype);
    d.dtype = dtype;
    d.sizes = sizes;
    d.strides = strides;
    return d;
  }
};

// Relative-to-scale comparison: |got - want| <= tol * max(1, scale).
inline bool close(double got, double want, double tol, double scale = 1.0) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= tol * std::max(1.0, scale);
}

}  // namespace vkml::testing
