// Unary elementwise aten ops and activations on vkml (functional, in-place, out=), plus
// clamp (from the core's binary ops), lerp, addcmul and addcdiv (three-operand rows).
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "elementwise_bridge.h"

namespace torch_vkml {

namespace {

using vkml::ops::BinaryOp;
using vkml::ops::UnaryOp;
using ew::Promote;

// The CPU refuses bool inputs for these ops; raise the same exception types.
template <UnaryOp kOp>
void check_bool_input(const at::Tensor& x) {
  if (x.scalar_type() != at::kBool) return;
  if constexpr (kOp == UnaryOp::kNeg) {
    TORCH_CHECK(false, "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                       "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  } else if constexpr (kOp == UnaryOp::kRelu) {
    TORCH_CHECK(false, "Boolean inputs not supported for relu");
  } else if constexpr (kOp == UnaryOp::kAbs || kOp == UnaryOp::kFloor || kOp == UnaryOp::kCeil ||
                       kOp == UnaryOp::kRound || kOp == UnaryOp::kTrunc || kOp == UnaryOp::kFrac) {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "\"", std::string(vkml::ops::op_info(kOp).name),
                                "\" not implemented for 'Bool'");
  }
}

template <UnaryOp kOp, Promote kP>
at::Tensor fn(const at::Tensor& x) {
  check_bool_input<kOp>(x);
  return ew::unary(kOp, kP, x, {});
}
template <UnaryOp kOp, Promote kP>
at::Tensor& inplace(at::Tensor& x) {
  check_bool_input<kOp>(x);
  ew::unary(kOp, kP, x, x, true);
  return x;
}
template <UnaryOp kOp, Promote kP>
at::Tensor& out(const at::Tensor& x, at::Tensor& o) {
  check_bool_input<kOp>(x);
  ew::unary(kOp, kP, x, o);
  return o;
}

UnaryOp gelu_op(c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh",
              "approximate argument must be either none or tanh.");
  return approximate == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGelu;
}
at::Tensor gelu(const at::Tensor& x, c10::string_view approximate) {
  return ew::unary(gelu_op(approximate), Promote::kSame, x, {});
}
at::Tensor& gelu_(at::Tensor& x, c10::string_view approximate) {
  ew::unary(gelu_op(approximate), Promote::kSame, x, x, true);
  return x;
}
at::Tensor& gelu_out(const at::Tensor& x, c10::string_view approximate, at::Tensor& o) {
  ew::unary(gelu_op(approximate), Promote::kSame, x, o);
  return o;
}

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

}  // namespace

#define VKML_UNARY3(name, op, p)                            \
  m.impl(name, fn<UnaryOp::op, Promote::p>);                \
  m.impl(name "_", inplace<UnaryOp::op, Promote::p>);       \
  m.impl(name ".out", out<UnaryOp::op, Promote::p>);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  VKML_UNARY3("neg", kNeg, kSame)
  VKML_UNARY3("abs", kAbs, kSame)
  VKML_UNARY3("sign", kSign, kSame)
  VKML_UNARY3("reciprocal", kReciprocal, kIntToFloat)
  VKML_UNARY3("sqrt", kSqrt, kIntToFloat)
  VKML_UNARY3("rsqrt", kRsqrt, kIntToFloat)
  VKML_UNARY3("exp", kExp, kIntToFloat)
  VKML_UNARY3("exp2", kExp2, kIntToFloat)
  VKML_UNARY3("expm1", kExpm1, kIntToFloat)
  VKML_UNARY3("log", kLog, kIntToFloat)
  VKML_UNARY3("log2", kLog2, kIntToFloat)
  VKML_UNARY3("log10", kLog10, kIntToFloat)
  VKML_UNARY3("log1p", kLog1p, kIntToFloat)
  VKML_UNARY3("sin", kSin, kIntToFloat)
  VKML_UNARY3("cos", kCos, kIntToFloat)
  VKML_UNARY3("tan", kTan, kIntToFloat)
  VKML_UNARY3("asin", kAsin, kIntToFloat)
  VKML_UNARY3("acos", kAcos, kIntToFloat)
  VKML_UNARY3("atan", kAtan, kIntToFloat)
  VKML_UNARY3("sinh", kSinh, kIntToFloat)
  VKML_UNARY3("cosh", kCosh, kIntToFloat)
  VKML_UNARY3("tanh", kTanh, kIntToFloat)
  VKML_UNARY3("asinh", kAsinh, kIntToFloat)
  VKML_UNARY3("acosh", kAcosh, kIntToFloat)
  VKML_UNARY3("atanh", kAtanh, kIntToFloat)
  VKML_UNARY3("erf", kErf, kIntToFloat)
  VKML_UNARY3("erfc", kErfc, kIntToFloat)
  VKML_UNARY3("floor", kFloor, kSame)
  VKML_UNARY3("ceil", kCeil, kSame)
  VKML_UNARY3("round", kRound, kSame)
  VKML_UNARY3("trunc", kTrunc, kSame)
  VKML_UNARY3("frac", kFrac, kSame)
  VKML_UNARY3("sigmoid", kSigmoid, kIntToFloat)
  VKML_UNARY3("silu", kSilu, kSame)
  VKML_UNARY3("mish", kMish, kSame)
  VKML_UNARY3("hardsigmoid", kHardsigmoid, kSame)
  VKML_UNARY3("hardswish", kHardswish, kSame)
  VKML_UNARY3("logical_not", kLogicalNot, kBoolOut)
  VKML_UNARY3("bitwise_not", kBitwiseNot, kIntegral)
  VKML_UNARY3("sgn", kSign, kSame)
  m.impl("relu", fn<UnaryOp::kRelu, Promote::kSame>);
  m.impl("relu_", inplace<UnaryOp::kRelu, Promote::kSame>);
  m.impl("gelu", gelu);
  m.impl("gelu_", gelu_);
  m.impl("gelu.out", gelu_out);
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

}  // namespace torch_vkml
