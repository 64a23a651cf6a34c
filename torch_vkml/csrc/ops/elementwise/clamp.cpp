// clamp, clamp_min and clamp_max on vkml with Scalar and Tensor bounds (functional, in-place,
// out=), from the core's maximum / minimum rows. The Tensor-bound clamp_min / clamp_max are
// also what PyTorch's per-tensor _foreach_maximum_ / _foreach_minimum_ / _foreach_clamp_* loops
// call for the groups the multi-tensor kernels leave to them.
#include <torch/library.h>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_clamp {

using vkml::ops::BinaryOp;
using ew::Promote;

// clamp(x, lo, hi) = minimum(maximum(x, lo), hi): NaN in x propagates, lo > hi gives hi.
at::Tensor clamp_impl(const at::Tensor& x, const at::Tensor& lo, const at::Tensor& hi,
                      at::Tensor o, bool inplace) {
  TORCH_CHECK(lo.defined() || hi.defined(),
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  const at::Scalar one(1);
  if (lo.defined() && hi.defined()) {
    at::Tensor low = ew::binary(BinaryOp::kMaximum, Promote::kSame, x, lo, one, {});
    return ew::binary(BinaryOp::kMinimum, Promote::kSame, low, hi, one, o, inplace);
  }
  if (lo.defined()) return ew::binary(BinaryOp::kMaximum, Promote::kSame, x, lo, one, o, inplace);
  return ew::binary(BinaryOp::kMinimum, Promote::kSame, x, hi, one, o, inplace);
}
at::Tensor opt_scalar(const std::optional<at::Scalar>& s) {
  return s.has_value() ? ew::wrap_scalar(*s) : at::Tensor();
}
at::Tensor opt_tensor(const std::optional<at::Tensor>& t) {
  return t.has_value() ? *t : at::Tensor();
}
at::Tensor clamp(const at::Tensor& x, const std::optional<at::Scalar>& lo,
                 const std::optional<at::Scalar>& hi) {
  return clamp_impl(x, opt_scalar(lo), opt_scalar(hi), {}, false);
}
at::Tensor& clamp_(at::Tensor& x, const std::optional<at::Scalar>& lo,
                   const std::optional<at::Scalar>& hi) {
  clamp_impl(x, opt_scalar(lo), opt_scalar(hi), x, true);
  return x;
}
at::Tensor& clamp_out(const at::Tensor& x, const std::optional<at::Scalar>& lo,
                      const std::optional<at::Scalar>& hi, at::Tensor& o) {
  clamp_impl(x, opt_scalar(lo), opt_scalar(hi), o, false);
  return o;
}
at::Tensor clamp_t(const at::Tensor& x, const std::optional<at::Tensor>& lo,
                   const std::optional<at::Tensor>& hi) {
  return clamp_impl(x, opt_tensor(lo), opt_tensor(hi), {}, false);
}
at::Tensor& clamp_t_(at::Tensor& x, const std::optional<at::Tensor>& lo,
                     const std::optional<at::Tensor>& hi) {
  clamp_impl(x, opt_tensor(lo), opt_tensor(hi), x, true);
  return x;
}
at::Tensor& clamp_t_out(const at::Tensor& x, const std::optional<at::Tensor>& lo,
                        const std::optional<at::Tensor>& hi, at::Tensor& o) {
  clamp_impl(x, opt_tensor(lo), opt_tensor(hi), o, false);
  return o;
}
template <BinaryOp kOp>
at::Tensor clamp_one(const at::Tensor& x, const at::Scalar& v) {
  return ew::binary(kOp, Promote::kSame, x, ew::wrap_scalar(v), 1, {});
}
template <BinaryOp kOp>
at::Tensor& clamp_one_(at::Tensor& x, const at::Scalar& v) {
  ew::binary(kOp, Promote::kSame, x, ew::wrap_scalar(v), 1, x, true);
  return x;
}
template <BinaryOp kOp>
at::Tensor& clamp_one_out(const at::Tensor& x, const at::Scalar& v, at::Tensor& o) {
  ew::binary(kOp, Promote::kSame, x, ew::wrap_scalar(v), 1, o);
  return o;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("clamp", clamp);
  m.impl("clamp_", clamp_);
  m.impl("clamp.out", clamp_out);
  m.impl("clamp.Tensor", clamp_t);
  m.impl("clamp_.Tensor", clamp_t_);
  m.impl("clamp.Tensor_out", clamp_t_out);
  m.impl("clamp_min", clamp_one<BinaryOp::kMaximum>);
  m.impl("clamp_min_", clamp_one_<BinaryOp::kMaximum>);
  m.impl("clamp_min.out", clamp_one_out<BinaryOp::kMaximum>);
  m.impl("clamp_max", clamp_one<BinaryOp::kMinimum>);
  m.impl("clamp_max_", clamp_one_<BinaryOp::kMinimum>);
  m.impl("clamp_max.out", clamp_one_out<BinaryOp::kMinimum>);
  // clamp_min(x, t) is maximum(x, t) (NaN in either propagates, as on CPU and CUDA);
  // clamp_max is minimum. Promotion and broadcasting follow the structured clamp_min.Tensor.
  m.impl("clamp_min.Tensor", ew::binary_fn<BinaryOp::kMaximum, Promote::kSame>);
  m.impl("clamp_min_.Tensor", ew::binary_inplace<BinaryOp::kMaximum, Promote::kSame>);
  m.impl("clamp_min.Tensor_out", ew::binary_out<BinaryOp::kMaximum, Promote::kSame>);
  m.impl("clamp_max.Tensor", ew::binary_fn<BinaryOp::kMinimum, Promote::kSame>);
  m.impl("clamp_max_.Tensor", ew::binary_inplace<BinaryOp::kMinimum, Promote::kSame>);
  m.impl("clamp_max.Tensor_out", ew::binary_out<BinaryOp::kMinimum, Promote::kSame>);
}

}  // namespace torch_vkml::ops_clamp
