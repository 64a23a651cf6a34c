// Per-tensor kernels that PyTorch's _foreach_* ops (the optimizers' default path) and gradient
// clipping reach on vkml and that no other family registers: clamp_min / clamp_max with a tensor
// bound, which is how _foreach_maximum_ / _foreach_minimum_ (Adam's amsgrad, Adamax) and
// _foreach_clamp_* loop. (isnan, once here, is registered with the other predicates in
// elementwise_param_ops.cpp.)
#include <torch/library.h>

#include "elementwise_bridge.h"

namespace torch_vkml {

namespace {

using ew::Promote;
using vkml::ops::BinaryOp;

// clamp_min(x, t) is maximum(x, t) (NaN in either propagates, as on CPU and CUDA); clamp_max is
// minimum. Promotion and broadcasting follow PyTorch's structured clamp_min.Tensor.
template <BinaryOp kOp>
at::Tensor clamp_bound(const at::Tensor& x, const at::Tensor& bound) {
  return ew::binary(kOp, Promote::kSame, x, bound, 1, {});
}
template <BinaryOp kOp>
at::Tensor& clamp_bound_(at::Tensor& x, const at::Tensor& bound) {
  ew::binary(kOp, Promote::kSame, x, bound, 1, x, true);
  return x;
}
template <BinaryOp kOp>
at::Tensor& clamp_bound_out(const at::Tensor& x, const at::Tensor& bound, at::Tensor& out) {
  ew::binary(kOp, Promote::kSame, x, bound, 1, out);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("clamp_min.Tensor", clamp_bound<BinaryOp::kMaximum>);
  m.impl("clamp_min_.Tensor", clamp_bound_<BinaryOp::kMaximum>);
  m.impl("clamp_min.Tensor_out", clamp_bound_out<BinaryOp::kMaximum>);
  m.impl("clamp_max.Tensor", clamp_bound<BinaryOp::kMinimum>);
  m.impl("clamp_max_.Tensor", clamp_bound_<BinaryOp::kMinimum>);
  m.impl("clamp_max.Tensor_out", clamp_bound_out<BinaryOp::kMinimum>);
}

}  // namespace torch_vkml
