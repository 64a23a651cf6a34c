// Elementwise functions of complex tensors (complex64 in float math, complex128 in double):
// exponentials, logarithms, roots, trigonometric and hyperbolic functions and their inverses,
// reciprocal, sigmoid and pow, with PyTorch's CPU results at infinities, NaNs and signed zeros.
#pragma once
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

enum class ComplexFn : uint32_t {
  kExp, kExp2, kExpm1, kLog, kLog2, kLog10, kLog1p, kSqrt, kRsqrt, kReciprocal, kSigmoid,
  kSin, kCos, kTan, kSinh, kCosh, kTanh, kAsin, kAcos, kAtan, kAsinh, kAcosh, kAtanh,
  kPow,  // binary: a^b = exp(b log a)
};

// out = fn(a). `out` and `a`: kC64, or kC128 where the device has fp64; the same sizes, any
// strides (a may broadcast with stride 0); out must not overlap a unless they are the same view.
void complex_unary(Device& dev, ComplexFn fn, const TensorDesc& out, const TensorDesc& a);

// out = fn(a, b) for the binary functions (kPow); a and b have out's sizes (broadcast as stride 0).
void complex_binary(Device& dev, ComplexFn fn, const TensorDesc& out, const TensorDesc& a,
                    const TensorDesc& b);

}  // namespace vkml::ops
