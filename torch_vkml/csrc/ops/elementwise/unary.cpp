// Unary elementwise aten ops on vkml (functional, in-place, out=): the unary rows of
// elementwise_ops.def that map one to one onto aten ops, plus relu and gelu.
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_unary {

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
}

#undef VKML_UNARY3

}  // namespace torch_vkml::ops_unary
