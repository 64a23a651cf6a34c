// Shared pieces of the elementwise kernels: PyTorch's type promotion and broadcasting, CPU 0-dim
// tensors and Python numbers as scalars, and functional / in-place / out= handling.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>

#include "common/bridge.h"
#include "vkml/elementwise.h"

namespace torch_vkml::ew {

// How an op chooses its compute dtype from PyTorch's promoted type.
enum class Promote {
  kSame,        // the promoted type (add, mul, maximum, ...)
  kIntToFloat,  // integers and bool compute in the default float type (div, sqrt, exp, ...)
  kBoolOut,     // compute in the promoted type, result is bool (comparisons, logical ops)
  kIntegral,    // integers and bool only (bitwise ops, shifts)
  kFloating,    // floating types only; others raise NotImplementedError as the CPU does
};

// A row's parameters besides alpha's use as add's multiplier (see elementwise_ops.def).
struct Params {
  at::Scalar alpha = 1;
  at::Scalar beta = 0;
  at::Scalar gamma = 0;
};

// out = op(a, b) following PyTorch: result_type promotion, broadcasting, CPU scalars.
// `out` undefined: allocate (functional). `out` defined: in-place or out= (resized as out=).
at::Tensor binary(vkml::ops::BinaryOp op, Promote promote, const at::Tensor& a,
                  const at::Tensor& b, const at::Scalar& alpha, at::Tensor out,
                  bool inplace = false);

// out = op(a, b, c): three tensors promoted together and broadcast (addcmul, lerp, ...). Every
// operand must be on the device except 0-dim CPU tensors, which are copied there.
at::Tensor ternary(vkml::ops::BinaryOp op, Promote promote, const at::Tensor& a,
                   const at::Tensor& b, const at::Tensor& c, const at::Scalar& alpha,
                   at::Tensor out, bool inplace = false);

// out = op(a, b) with all three row parameters (backward rows of parametrised activations).
at::Tensor binary_params(vkml::ops::BinaryOp op, Promote promote, const at::Tensor& a,
                         const at::Tensor& b, const Params& params, at::Tensor out);

// out = op(x). Same conventions; `params` are the row's parameters.
at::Tensor unary(vkml::ops::UnaryOp op, Promote promote, const at::Tensor& x, at::Tensor out,
                 bool inplace = false, const Params& params = {});

// Complex paths (complex_arith.cpp), taken by binary / unary when the promoted type is complex:
// add, sub, mul, div, eq, ne, pow; neg, abs, sgn, the complex family's functions; the
// composites below; and angle. Other rows run on the CPU through the fallback.
at::Tensor complex_binary(vkml::ops::BinaryOp op, const at::Tensor& a, const at::Tensor& b,
                          const at::Scalar& alpha, at::Tensor out, bool inplace);
at::Tensor complex_unary(vkml::ops::UnaryOp op, const at::Tensor& x, at::Tensor out,
                         bool inplace);
at::Tensor& complex_angle_out(const at::Tensor& x, at::Tensor& out);

// Complex rows composed of native ops (complex_composites.cpp), as the CPU computes them: logical
// and / or / xor, logaddexp and lerp with a scalar weight (operands promoted to `type` and
// broadcast to `shape` on `device`); isnan, logical_not, sinc and silu; nullopt for other rows.
std::optional<at::Tensor> complex_binary_composite(vkml::ops::BinaryOp op, const at::Tensor& a,
                                                   const at::Tensor& b, const at::Scalar& alpha,
                                                   at::Device device, at::ScalarType type,
                                                   at::IntArrayRef shape);
std::optional<at::Tensor> complex_unary_composite(vkml::ops::UnaryOp op, const at::Tensor& x);
// lerp, addcmul and addcdiv where the three operands promote to a complex type.
at::Tensor complex_ternary(vkml::ops::BinaryOp op, const at::Tensor& a, const at::Tensor& b,
                           const at::Tensor& c, const at::Scalar& alpha, at::Tensor out,
                           bool inplace);

// A Python number as the 0-dim CPU "wrapped number" tensor result_type() expects.
at::Tensor wrap_scalar(const at::Scalar& s);

// The functional, in-place and out= forms of a binary Tensor-Tensor op, for m.impl.
template <vkml::ops::BinaryOp kOp, Promote kP>
at::Tensor binary_fn(const at::Tensor& a, const at::Tensor& b) {
  return binary(kOp, kP, a, b, 1, {});
}
template <vkml::ops::BinaryOp kOp, Promote kP>
at::Tensor& binary_inplace(at::Tensor& a, const at::Tensor& b) {
  binary(kOp, kP, a, b, 1, a, true);
  return a;
}
template <vkml::ops::BinaryOp kOp, Promote kP>
at::Tensor& binary_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& o) {
  binary(kOp, kP, a, b, 1, o);
  return o;
}

}  // namespace torch_vkml::ew
