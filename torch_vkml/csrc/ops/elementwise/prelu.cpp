// prelu on vkml: _prelu_kernel and its backward (which the autocast-listed composite prelu
// reaches), built from elementwise ops: a few dispatches each, no host work.
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <tuple>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_prelu {

using ew::Promote;
using vkml::ops::BinaryOp;

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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_prelu_kernel", prelu_kernel);
  m.impl("_prelu_kernel_backward", prelu_kernel_backward);
}

}  // namespace torch_vkml::ops_prelu
