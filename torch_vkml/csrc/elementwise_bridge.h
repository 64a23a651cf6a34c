// Shared pieces of the elementwise kernels: PyTorch's type promotion and broadcasting, CPU 0-dim
// tensors and Python numbers as scalars, and functional / in-place / out= handling.
#pragma once
#include <ATen/core/Tensor.h>

#include "bridge.h"
#include "vkml/elementwise.h"

namespace torch_vkml::ew {

// How an op chooses its compute dtype from PyTorch's promoted type.
enum class Promote {
  kSame,        // the promoted type (add, mul, maximum, ...)
  kIntToFloat,  // integers and bool compute in the default float type (div, sqrt, exp, ...)
  kBoolOut,     // compute in the promoted type, result is bool (comparisons, logical ops)
  kIntegral,    // integers and bool only (bitwise ops, shifts)
};

// out = op(a, b) following PyTorch: result_type promotion, broadcasting, CPU scalars.
// `out` undefined: allocate (functional). `out` defined: in-place or out= (resized as out=).
at::Tensor binary(vkml::ops::BinaryOp op, Promote promote, const at::Tensor& a,
                  const at::Tensor& b, const at::Scalar& alpha, at::Tensor out,
                  bool inplace = false);

// out = op(x). Same conventions.
at::Tensor unary(vkml::ops::UnaryOp op, Promote promote, const at::Tensor& x, at::Tensor out,
                 bool inplace = false);

// A Python number as the 0-dim CPU "wrapped number" tensor result_type() expects.
at::Tensor wrap_scalar(const at::Scalar& s);

}  // namespace torch_vkml::ew
