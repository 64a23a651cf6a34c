// Per-tensor kernels that PyTorch's _foreach_* ops reach on vkml for the groups the native
// multi-tensor kernels (foreach_ops.cpp) leave to the per-tensor loop (strided, mixed dtypes)
// and that no other family registers: clamp_min / clamp_max with a tensor bound, which is how
// _foreach_maximum_ / _foreach_minimum_ and _foreach_clamp_* loop. (isnan, once here, is registered with the other predicates in
// elementwise_param_ops.cpp.)
#include <torch/library.h>

#include "elementwise_bridge.h"

namespace torch_vkml {

using ew::Promote;
using vkml::ops::BinaryOp;

// clamp_min(x, t) is maximum(x, t) (NaN in either propagates, as on CPU and CUDA); clamp_max is
// minimum. Promotion and broadcasting follow PyTorch's structured clamp_min.Tensor.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("clamp_min.Tensor", ew::binary_fn<BinaryOp::kMaximum, Promote::kSame>);
  m.impl("clamp_min_.Tensor", ew::binary_inplace<BinaryOp::kMaximum, Promote::kSame>);
  m.impl("clamp_min.Tensor_out", ew::binary_out<BinaryOp::kMaximum, Promote::kSame>);
  m.impl("clamp_max.Tensor", ew::binary_fn<BinaryOp::kMinimum, Promote::kSame>);
  m.impl("clamp_max_.Tensor", ew::binary_inplace<BinaryOp::kMinimum, Promote::kSame>);
  m.impl("clamp_max.Tensor_out", ew::binary_out<BinaryOp::kMinimum, Promote::kSame>);
}

}  // namespace torch_vkml
