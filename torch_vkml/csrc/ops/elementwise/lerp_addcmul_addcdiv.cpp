// lerp, addcmul and addcdiv on vkml (functional, in-place, out=): three-operand rows, so
// f16/bf16 compute the whole expression in fp32 and round once, as the CPU does.
#include <torch/library.h>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_lerp_addcmul_addcdiv {

using vkml::ops::BinaryOp;
using ew::Promote;

// For helpers that serve functional and out= forms: a functional call passes an undefined `o`.
at::Tensor& assign(at::Tensor& o, at::Tensor result) {
  if (!o.defined()) o = std::move(result);
  return o;
}

// lerp, addcmul and addcdiv: one three-operand dispatch, so f16/bf16 compute the whole
// expression in fp32 and round once, as the CPU does.
at::Tensor& lerp_scalar_out(const at::Tensor& x, const at::Tensor& end, const at::Scalar& w,
                            at::Tensor& o) {
  TORCH_CHECK(x.scalar_type() == end.scalar_type(), "expected dtype ", x.scalar_type(),
              " for `end` but got dtype ", end.scalar_type());
  return assign(o, ew::binary(BinaryOp::kLerpScalar, Promote::kFloating, x, end, w, o,
                              o.is_same(x)));
}
at::Tensor lerp_scalar(const at::Tensor& x, const at::Tensor& end, const at::Scalar& w) {
  at::Tensor o;
  return lerp_scalar_out(x, end, w, o);
}
at::Tensor& lerp_scalar_(at::Tensor& x, const at::Tensor& end, const at::Scalar& w) {
  return lerp_scalar_out(x, end, w, x);
}
at::Tensor& lerp_tensor_out(const at::Tensor& x, const at::Tensor& end, const at::Tensor& w,
                            at::Tensor& o) {
  TORCH_CHECK(x.scalar_type() == end.scalar_type(), "expected dtype ", x.scalar_type(),
              " for `end` but got dtype ", end.scalar_type());
  TORCH_CHECK(x.scalar_type() == w.scalar_type(), "expected dtype ", x.scalar_type(),
              " for `weight` but got dtype ", w.scalar_type());
  return assign(o, ew::ternary(BinaryOp::kLerp, Promote::kFloating, x, end, w, 1, o,
                               o.is_same(x)));
}
at::Tensor lerp_tensor(const at::Tensor& x, const at::Tensor& end, const at::Tensor& w) {
  at::Tensor o;
  return lerp_tensor_out(x, end, w, o);
}
at::Tensor& lerp_tensor_(at::Tensor& x, const at::Tensor& end, const at::Tensor& w) {
  return lerp_tensor_out(x, end, w, x);
}

// addcmul / addcdiv: self + value * t1 * t2 and self + value * t1 / t2.
template <BinaryOp kOp>
at::Tensor& addc_out(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                     const at::Scalar& value, at::Tensor& o) {
  if (kOp == BinaryOp::kAddcdiv) {
    TORCH_CHECK(!at::isIntegralType(t1.scalar_type(), true) ||
                    !at::isIntegralType(t2.scalar_type(), true),
                "Integer division with addcdiv is no longer supported, and in a future release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  }
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool || kOp != BinaryOp::kAddcmul,
                              "\"addcmul_cpu_out\" not implemented for 'Bool'");
  Promote p = kOp == BinaryOp::kAddcdiv ? Promote::kFloating : Promote::kSame;
  return assign(o, ew::ternary(kOp, p, self, t1, t2, value, o, o.is_same(self)));
}
template <BinaryOp kOp>
at::Tensor addc(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                const at::Scalar& value) {
  at::Tensor o;
  return addc_out<kOp>(self, t1, t2, value, o);
}
template <BinaryOp kOp>
at::Tensor& addc_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                  const at::Scalar& value) {
  return addc_out<kOp>(self, t1, t2, value, self);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("lerp.Scalar", lerp_scalar);
  m.impl("lerp_.Scalar", lerp_scalar_);
  m.impl("lerp.Scalar_out", lerp_scalar_out);
  m.impl("lerp.Tensor", lerp_tensor);
  m.impl("lerp_.Tensor", lerp_tensor_);
  m.impl("lerp.Tensor_out", lerp_tensor_out);
  m.impl("addcmul", addc<BinaryOp::kAddcmul>);
  m.impl("addcmul_", addc_<BinaryOp::kAddcmul>);
  m.impl("addcmul.out", addc_out<BinaryOp::kAddcmul>);
  m.impl("addcdiv", addc<BinaryOp::kAddcdiv>);
  m.impl("addcdiv_", addc_<BinaryOp::kAddcdiv>);
  m.impl("addcdiv.out", addc_out<BinaryOp::kAddcdiv>);
}

}  // namespace torch_vkml::ops_lerp_addcmul_addcdiv
