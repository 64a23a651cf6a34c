// Ops on device tensors. Each validates its descriptors, picks a shader variant from the
// descriptors and DeviceCaps, and records work on the device's stream (never waits).
#pragma once
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml {

// A scalar operand: floats travel as double, integers (and bool) as int64.
struct Scalar {
  bool is_float = true;
  double f = 0.0;
  int64_t i = 0;
  double im = 0.0;  // imaginary part, read only where the dtype is complex
  static Scalar from_double(double v) { return {true, v, 0, 0.0}; }
  static Scalar from_int(int64_t v) { return {false, 0.0, v, 0.0}; }
  static Scalar from_complex(double re, double imag) { return {true, re, 0, imag}; }
};

namespace ops {

// dst = src, converting dtype like a C++ static_cast as PyTorch does. src may broadcast
// (stride 0) and both may be arbitrarily strided. Same device.
void copy(Device& dev, const TensorDesc& dst, const TensorDesc& src);

// Byte copy between device addresses of one device, at full device bandwidth.
void copy_bytes(Device& dev, uint64_t dst, uint64_t src, uint64_t bytes);

// Every element of dst = value converted to dst's dtype.
void fill(Device& dev, const TensorDesc& dst, Scalar value);

// The bit pattern of `value` as one element of `t` (host side, same rules as the GPU casts).
uint64_t scalar_bits(DType t, Scalar value);

}  // namespace ops
}  // namespace vkml
