// Kernels that two autocast-listed composites reach on vkml: prelu (_prelu_kernel and its
// backward) and the math scaled_dot_product_attention (isneginf, for fully masked rows).
// Built from elementwise ops: a few dispatches each, no host work.
#include <ATen/native/Resize.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <limits>
#include <tuple>

#include "elementwise_bridge.h"

namespace torch_vkml {

namespace {

using ew::Promote;
using vkml::ops::BinaryOp;

// isneginf / isposinf: x == -inf / +inf; integers and bool never are.
template <bool kNegative>
at::Tensor& isinf_sign_out(const at::Tensor& x, at::Tensor& out) {
  const char* name = kNegative ? "isneginf" : "isposinf";
  TORCH_CHECK(!x.is_complex(), name, " does not support complex inputs.");
  TORCH_CHECK(out.scalar_type() == at::kBool, name, " does not support non-boolean outputs.");
  at::native::resize_output(out, x.sizes());
  if (!at::isFloatingType(x.scalar_type())) return out.fill_(false);
  const double inf = std::numeric_limits<double>::infinity();
  ew::binary(BinaryOp::kEq, Promote::kBoolOut, x, ew::wrap_scalar(kNegative ? -inf : inf), 1, out);
  return out;
}

// prelu's kernel: x > 0 ? x : w * x, with w already broadcastable to x (prelu reshapes it).
at::Tensor prelu_kernel(const at::Tensor& x, const at::Tensor& w) {
  at::Tensor positive = ew::binary(BinaryOp::kGt, Promote::kBoolOut, x, ew::wrap_scalar(0), 1, {});
  at::Tensor scaled = ew::binary(BinaryOp::kMul, Promote::kSame, w, x, 1, {});
  return at::where(positive, x, scaled);
}

// d/dx = x > 0 ? 1 : w; d/dw = x > 0 ? 0 : x (per element; prelu's autograd sums over w's
// broadcast dims).
std::tuple<at::Tensor, at::Tensor> prelu_kernel_backward(const at::Tensor& grad,
                                                         const at::Tensor& x, const at::Tensor& w) {
  at::Tensor positive = ew::binary(BinaryOp::kGt, Promote::kBoolOut, x, ew::wrap_scalar(0), 1, {});
  at::Tensor grad_w_scaled = ew::binary(BinaryOp::kMul, Promote::kSame, w, grad, 1, {});
  at::Tensor grad_x = at::where(positive, grad, grad_w_scaled);
  // min(x, 0) is x where x <= 0 (NaN included) and 0 elsewhere.
  at::Tensor x_nonpositive =
      ew::binary(BinaryOp::kMinimum, Promote::kSame, x, ew::wrap_scalar(0), 1, {});
  at::Tensor grad_weight = ew::binary(BinaryOp::kMul, Promote::kSame, x_nonpositive, grad, 1, {});
  return {grad_x, grad_weight};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("isneginf.out", isinf_sign_out<true>);
  m.impl("isposinf.out", isinf_sign_out<false>);
  m.impl("_prelu_kernel", prelu_kernel);
  m.impl("_prelu_kernel_backward", prelu_kernel_backward);
}

}  // namespace torch_vkml
