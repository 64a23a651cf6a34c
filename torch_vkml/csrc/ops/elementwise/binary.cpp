// Binary elementwise aten ops on vkml (arithmetic, comparisons, bitwise ops and shifts, pow,
// maximum/minimum, gcd/lcm, the activations' backward rows): functional, in-place and out=
// forms, Tensor and Scalar overloads where PyTorch has a kernel for them (other overloads are
// composite and route here).
#include <ATen/ops/result_type.h>
#include <optional>
#include <torch/library.h>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_binary {

using vkml::ops::BinaryOp;
using ew::Promote;

const at::Scalar kOne(1);

template <BinaryOp kOp, Promote kP>
at::Tensor fn_s(const at::Tensor& a, const at::Scalar& b) {
  return ew::binary(kOp, kP, a, ew::wrap_scalar(b), kOne, {});
}
template <BinaryOp kOp, Promote kP>
at::Tensor& inplace_s(at::Tensor& a, const at::Scalar& b) {
  ew::binary(kOp, kP, a, ew::wrap_scalar(b), kOne, a, true);
  return a;
}
template <BinaryOp kOp, Promote kP>
at::Tensor& out_s(const at::Tensor& a, const at::Scalar& b, at::Tensor& o) {
  ew::binary(kOp, kP, a, ew::wrap_scalar(b), kOne, o);
  return o;
}
// Scalar base (pow.Scalar, bitwise_*.Scalar_Tensor ...).
template <BinaryOp kOp, Promote kP>
at::Tensor fn_st(const at::Scalar& a, const at::Tensor& b) {
  return ew::binary(kOp, kP, ew::wrap_scalar(a), b, kOne, {});
}
template <BinaryOp kOp, Promote kP>
at::Tensor& out_st(const at::Scalar& a, const at::Tensor& b, at::Tensor& o) {
  ew::binary(kOp, kP, ew::wrap_scalar(a), b, kOne, o);
  return o;
}

// PyTorch's CPU computes a float, double or bfloat16 tensor to the power 0.5 as sqrt and to -0.5
// as rsqrt (not half): pow(-inf, 0.5) is NaN and pow(-0.0, 0.5) is -0.0 there, where C's pow
// gives inf and 0. Returns the unary op to use instead of pow, or nullopt.
std::optional<vkml::ops::UnaryOp> pow_as_root(const at::Tensor& a, const at::Scalar& e) {
  at::ScalarType t = a.scalar_type();
  bool rooted_type = t == at::kFloat || t == at::kDouble || t == at::kBFloat16;
  if (!rooted_type || e.isComplex() || e.isBoolean()) return std::nullopt;
  double v = e.toDouble();
  if (v == 0.5) return vkml::ops::UnaryOp::kSqrt;
  if (v == -0.5) return vkml::ops::UnaryOp::kRsqrt;
  return std::nullopt;
}
at::Tensor pow_s(const at::Tensor& a, const at::Scalar& e) {
  if (auto root = pow_as_root(a, e)) return ew::unary(*root, Promote::kIntToFloat, a, {});
  return fn_s<BinaryOp::kPow, Promote::kSame>(a, e);
}
at::Tensor& pow_s_(at::Tensor& a, const at::Scalar& e) {
  if (auto root = pow_as_root(a, e)) {
    ew::unary(*root, Promote::kIntToFloat, a, a, true);
    return a;
  }
  return inplace_s<BinaryOp::kPow, Promote::kSame>(a, e);
}
at::Tensor& pow_s_out(const at::Tensor& a, const at::Scalar& e, at::Tensor& o) {
  if (auto root = pow_as_root(a, e)) {
    ew::unary(*root, Promote::kIntToFloat, a, o);
    return o;
  }
  return out_s<BinaryOp::kPow, Promote::kSame>(a, e, o);
}

// sub and rsub refuse bool operands (tensors or Python bools), as the CPU does.
void check_sub(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.scalar_type() != at::kBool || b.scalar_type() != at::kBool,
              "Subtraction, the `-` operator, with two bool tensors is not supported. "
              "Use the `^` or `logical_xor()` operator instead.");
  TORCH_CHECK(a.scalar_type() != at::kBool && b.scalar_type() != at::kBool,
              "Subtraction, the `-` operator, with a bool tensor is not supported. "
              "If you are trying to invert a mask, use the `~` or `logical_not()` operator "
              "instead.");
}
// add / sub carry alpha.
template <BinaryOp kOp>
at::Tensor alpha_fn(const at::Tensor& a, const at::Tensor& b, const at::Scalar& alpha) {
  if constexpr (kOp == BinaryOp::kSub) check_sub(a, b);
  return ew::binary(kOp, Promote::kSame, a, b, alpha, {});
}
template <BinaryOp kOp>
at::Tensor& alpha_inplace(at::Tensor& a, const at::Tensor& b, const at::Scalar& alpha) {
  if constexpr (kOp == BinaryOp::kSub) check_sub(a, b);
  ew::binary(kOp, Promote::kSame, a, b, alpha, a, true);
  return a;
}
template <BinaryOp kOp>
at::Tensor& alpha_out(const at::Tensor& a, const at::Tensor& b, const at::Scalar& alpha,
                      at::Tensor& o) {
  if constexpr (kOp == BinaryOp::kSub) check_sub(a, b);
  ew::binary(kOp, Promote::kSame, a, b, alpha, o);
  return o;
}

BinaryOp div_mode_op(std::optional<c10::string_view> mode, Promote* promote) {
  if (!mode.has_value()) {
    *promote = Promote::kIntToFloat;
    return BinaryOp::kDiv;
  }
  *promote = Promote::kSame;
  if (*mode == "trunc") return BinaryOp::kDivTrunc;
  TORCH_CHECK(*mode == "floor", "div expected rounding_mode to be one of None, 'trunc', or "
              "'floor' but found '", *mode, "'");
  return BinaryOp::kDivFloor;
}
at::Tensor div_mode(const at::Tensor& a, const at::Tensor& b,
                    std::optional<c10::string_view> mode) {
  Promote p;
  BinaryOp op = div_mode_op(mode, &p);
  return ew::binary(op, p, a, b, kOne, {});
}
at::Tensor& div_mode_(at::Tensor& a, const at::Tensor& b, std::optional<c10::string_view> mode) {
  Promote p;
  BinaryOp op = div_mode_op(mode, &p);
  ew::binary(op, p, a, b, kOne, a, true);
  return a;
}
at::Tensor& div_mode_out(const at::Tensor& a, const at::Tensor& b,
                         std::optional<c10::string_view> mode, at::Tensor& o) {
  Promote p;
  BinaryOp op = div_mode_op(mode, &p);
  ew::binary(op, p, a, b, kOne, o);
  return o;
}

// Backward kernels: (grad_output, input-or-output) -> grad_input, with out=.
template <BinaryOp kOp>
at::Tensor& backward_out(const at::Tensor& grad, const at::Tensor& x, at::Tensor& o) {
  ew::binary(kOp, Promote::kSame, grad, x, kOne, o);
  return o;
}
template <BinaryOp kOp>
at::Tensor backward_fn(const at::Tensor& grad, const at::Tensor& x) {
  return ew::binary(kOp, Promote::kSame, grad, x, kOne, {});
}
at::Tensor threshold_backward(const at::Tensor& grad, const at::Tensor& x,
                              const at::Scalar& threshold) {
  return ew::binary(BinaryOp::kThresholdBackward, Promote::kSame, grad, x, threshold, {});
}
at::Tensor& threshold_backward_out(const at::Tensor& grad, const at::Tensor& x,
                                   const at::Scalar& threshold, at::Tensor& o) {
  ew::binary(BinaryOp::kThresholdBackward, Promote::kSame, grad, x, threshold, o);
  return o;
}
BinaryOp gelu_backward_op(c10::string_view approximate) {
  return approximate == "tanh" ? BinaryOp::kGeluTanhBackward : BinaryOp::kGeluBackward;
}
at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& x,
                         c10::string_view approximate) {
  return ew::binary(gelu_backward_op(approximate), Promote::kSame, grad, x, kOne, {});
}
at::Tensor& gelu_backward_out(const at::Tensor& grad, const at::Tensor& x,
                              c10::string_view approximate, at::Tensor& o) {
  ew::binary(gelu_backward_op(approximate), Promote::kSame, grad, x, kOne, o);
  return o;
}

// heaviside needs one dtype, as on the CPU.
void check_heaviside(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(!a.is_complex() && !b.is_complex(),
              "heaviside is not yet implemented for complex tensors.");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(),
              "heaviside is not yet implemented for tensors with different dtypes.");
}
at::Tensor heaviside(const at::Tensor& a, const at::Tensor& b) {
  check_heaviside(a, b);
  return ew::binary(BinaryOp::kHeaviside, Promote::kSame, a, b, kOne, {});
}
at::Tensor& heaviside_(at::Tensor& a, const at::Tensor& b) {
  check_heaviside(a, b);
  ew::binary(BinaryOp::kHeaviside, Promote::kSame, a, b, kOne, a, true);
  return a;
}
at::Tensor& heaviside_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& o) {
  check_heaviside(a, b);
  ew::binary(BinaryOp::kHeaviside, Promote::kSame, a, b, kOne, o);
  return o;
}

// gcd / lcm: integer dtypes without bool, like the CPU's AT_DISPATCH_INTEGRAL_TYPES.
template <BinaryOp kOp>
void check_integral(const at::Tensor& a, const at::Tensor& b) {
  at::ScalarType t = at::result_type(a, b);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(t, /*includeBool=*/false), "\"",
                              vkml::ops::op_info(kOp).name.data(), "_cpu\" not implemented for '",
                              c10::toString(t), "'");
}
template <BinaryOp kOp>
at::Tensor integral_fn(const at::Tensor& a, const at::Tensor& b) {
  check_integral<kOp>(a, b);
  return ew::binary(kOp, Promote::kSame, a, b, kOne, {});
}
template <BinaryOp kOp>
at::Tensor& integral_inplace(at::Tensor& a, const at::Tensor& b) {
  check_integral<kOp>(a, b);
  ew::binary(kOp, Promote::kSame, a, b, kOne, a, true);
  return a;
}
template <BinaryOp kOp>
at::Tensor& integral_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& o) {
  check_integral<kOp>(a, b);
  ew::binary(kOp, Promote::kSame, a, b, kOne, o);
  return o;
}

// rsub(self, other, alpha) = other - alpha * self, with sub's refusal of bool.
at::Tensor rsub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  check_sub(self, other);
  return ew::binary(BinaryOp::kSub, Promote::kSame, other, self, alpha, {});
}
at::Tensor& rsub_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha,
                     at::Tensor& o) {
  check_sub(self, other);
  ew::binary(BinaryOp::kSub, Promote::kSame, other, self, alpha, o);
  return o;
}

// floor_divide is div(rounding_mode='floor') and, like it, refuses bool.
void check_not_bool(const at::Tensor& a, const at::Tensor& b) {
  at::ScalarType t = at::result_type(a, b);
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool, "\"div_floor_cpu\" not implemented for 'Bool'");
}
at::Tensor floor_divide_tensors(const at::Tensor& a, const at::Tensor& b) {
  check_not_bool(a, b);
  return ew::binary(BinaryOp::kDivFloor, Promote::kSame, a, b, kOne, {});
}
at::Tensor& floor_divide_(at::Tensor& a, const at::Tensor& b) {
  check_not_bool(a, b);
  ew::binary(BinaryOp::kDivFloor, Promote::kSame, a, b, kOne, a, true);
  return a;
}
at::Tensor& floor_divide_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& o) {
  check_not_bool(a, b);
  ew::binary(BinaryOp::kDivFloor, Promote::kSame, a, b, kOne, o);
  return o;
}
at::Tensor floor_divide_s(const at::Tensor& a, const at::Scalar& b) {
  return floor_divide_tensors(a, ew::wrap_scalar(b));
}

#define VKML_BINARY3(name, op, p)                                  \
  m.impl(name ".Tensor", ew::binary_fn<BinaryOp::op, Promote::p>);            \
  m.impl(name "_.Tensor", ew::binary_inplace<BinaryOp::op, Promote::p>);      \
  m.impl(name ".out", ew::binary_out<BinaryOp::op, Promote::p>);
#define VKML_BINARY3_PLAIN(name, op, p)                            \
  m.impl(name, ew::binary_fn<BinaryOp::op, Promote::p>);                      \
  m.impl(name "_", ew::binary_inplace<BinaryOp::op, Promote::p>);             \
  m.impl(name ".out", ew::binary_out<BinaryOp::op, Promote::p>);
#define VKML_COMPARE(name, op)                                     \
  m.impl(name ".Tensor", ew::binary_fn<BinaryOp::op, Promote::kBoolOut>);     \
  m.impl(name "_.Tensor", ew::binary_inplace<BinaryOp::op, Promote::kBoolOut>); \
  m.impl(name ".Tensor_out", ew::binary_out<BinaryOp::op, Promote::kBoolOut>); \
  m.impl(name ".Scalar", fn_s<BinaryOp::op, Promote::kBoolOut>);   \
  m.impl(name "_.Scalar", inplace_s<BinaryOp::op, Promote::kBoolOut>); \
  m.impl(name ".Scalar_out", out_s<BinaryOp::op, Promote::kBoolOut>);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", alpha_fn<BinaryOp::kAdd>);
  m.impl("add_.Tensor", alpha_inplace<BinaryOp::kAdd>);
  m.impl("add.out", alpha_out<BinaryOp::kAdd>);
  m.impl("sub.Tensor", alpha_fn<BinaryOp::kSub>);
  m.impl("sub_.Tensor", alpha_inplace<BinaryOp::kSub>);
  m.impl("sub.out", alpha_out<BinaryOp::kSub>);
  VKML_BINARY3("mul", kMul, kSame)
  VKML_BINARY3("div", kDiv, kIntToFloat)
  m.impl("div.Tensor_mode", div_mode);
  m.impl("div_.Tensor_mode", div_mode_);
  m.impl("div.out_mode", div_mode_out);
  VKML_BINARY3("remainder", kRemainder, kSame)
  m.impl("remainder.Scalar_Tensor", fn_st<BinaryOp::kRemainder, Promote::kSame>);
  VKML_BINARY3("fmod", kFmod, kSame)
  m.impl("pow.Tensor_Tensor", ew::binary_fn<BinaryOp::kPow, Promote::kSame>);
  m.impl("pow_.Tensor", ew::binary_inplace<BinaryOp::kPow, Promote::kSame>);
  m.impl("pow.Tensor_Tensor_out", ew::binary_out<BinaryOp::kPow, Promote::kSame>);
  m.impl("pow.Tensor_Scalar", pow_s);
  m.impl("pow_.Scalar", pow_s_);
  m.impl("pow.Tensor_Scalar_out", pow_s_out);
  m.impl("pow.Scalar", fn_st<BinaryOp::kPow, Promote::kSame>);
  m.impl("pow.Scalar_out", out_st<BinaryOp::kPow, Promote::kSame>);
  m.impl("maximum", ew::binary_fn<BinaryOp::kMaximum, Promote::kSame>);
  m.impl("maximum.out", ew::binary_out<BinaryOp::kMaximum, Promote::kSame>);
  m.impl("minimum", ew::binary_fn<BinaryOp::kMinimum, Promote::kSame>);
  m.impl("minimum.out", ew::binary_out<BinaryOp::kMinimum, Promote::kSame>);
  m.impl("fmax", ew::binary_fn<BinaryOp::kFmax, Promote::kSame>);
  m.impl("fmax.out", ew::binary_out<BinaryOp::kFmax, Promote::kSame>);
  m.impl("fmin", ew::binary_fn<BinaryOp::kFmin, Promote::kSame>);
  m.impl("fmin.out", ew::binary_out<BinaryOp::kFmin, Promote::kSame>);
  VKML_BINARY3_PLAIN("atan2", kAtan2, kIntToFloat)
  VKML_BINARY3_PLAIN("hypot", kHypot, kIntToFloat)
  VKML_BINARY3("copysign", kCopysign, kIntToFloat)
  VKML_BINARY3("xlogy", kXlogy, kIntToFloat)
  m.impl("bitwise_and.Tensor", ew::binary_fn<BinaryOp::kBitwiseAnd, Promote::kIntegral>);
  m.impl("bitwise_and_.Tensor", ew::binary_inplace<BinaryOp::kBitwiseAnd, Promote::kIntegral>);
  m.impl("bitwise_and.Tensor_out", ew::binary_out<BinaryOp::kBitwiseAnd, Promote::kIntegral>);
  m.impl("bitwise_or.Tensor", ew::binary_fn<BinaryOp::kBitwiseOr, Promote::kIntegral>);
  m.impl("bitwise_or_.Tensor", ew::binary_inplace<BinaryOp::kBitwiseOr, Promote::kIntegral>);
  m.impl("bitwise_or.Tensor_out", ew::binary_out<BinaryOp::kBitwiseOr, Promote::kIntegral>);
  m.impl("bitwise_xor.Tensor", ew::binary_fn<BinaryOp::kBitwiseXor, Promote::kIntegral>);
  m.impl("bitwise_xor_.Tensor", ew::binary_inplace<BinaryOp::kBitwiseXor, Promote::kIntegral>);
  m.impl("bitwise_xor.Tensor_out", ew::binary_out<BinaryOp::kBitwiseXor, Promote::kIntegral>);
  m.impl("bitwise_left_shift.Tensor", ew::binary_fn<BinaryOp::kLshift, Promote::kIntegral>);
  m.impl("bitwise_left_shift_.Tensor", ew::binary_inplace<BinaryOp::kLshift, Promote::kIntegral>);
  m.impl("bitwise_left_shift.Tensor_out", ew::binary_out<BinaryOp::kLshift, Promote::kIntegral>);
  m.impl("bitwise_right_shift.Tensor", ew::binary_fn<BinaryOp::kRshift, Promote::kIntegral>);
  m.impl("bitwise_right_shift_.Tensor", ew::binary_inplace<BinaryOp::kRshift, Promote::kIntegral>);
  m.impl("bitwise_right_shift.Tensor_out", ew::binary_out<BinaryOp::kRshift, Promote::kIntegral>);
  m.impl("__lshift__.Tensor", ew::binary_fn<BinaryOp::kLshift, Promote::kIntegral>);
  m.impl("__lshift__.Scalar", fn_s<BinaryOp::kLshift, Promote::kIntegral>);
  m.impl("__rshift__.Tensor", ew::binary_fn<BinaryOp::kRshift, Promote::kIntegral>);
  m.impl("__rshift__.Scalar", fn_s<BinaryOp::kRshift, Promote::kIntegral>);
  VKML_BINARY3_PLAIN("logical_and", kLogicalAnd, kBoolOut)
  VKML_BINARY3_PLAIN("logical_or", kLogicalOr, kBoolOut)
  VKML_BINARY3_PLAIN("logical_xor", kLogicalXor, kBoolOut)
  VKML_COMPARE("eq", kEq)
  VKML_COMPARE("ne", kNe)
  VKML_COMPARE("lt", kLt)
  VKML_COMPARE("le", kLe)
  VKML_COMPARE("gt", kGt)
  VKML_COMPARE("ge", kGe)
  m.impl("sigmoid_backward", backward_fn<BinaryOp::kSigmoidBackward>);
  m.impl("sigmoid_backward.grad_input", backward_out<BinaryOp::kSigmoidBackward>);
  m.impl("tanh_backward", backward_fn<BinaryOp::kTanhBackward>);
  m.impl("tanh_backward.grad_input", backward_out<BinaryOp::kTanhBackward>);
  m.impl("silu_backward", backward_fn<BinaryOp::kSiluBackward>);
  m.impl("silu_backward.grad_input", backward_out<BinaryOp::kSiluBackward>);
  m.impl("threshold_backward", threshold_backward);
  m.impl("threshold_backward.grad_input", threshold_backward_out);
  m.impl("hardsigmoid_backward", backward_fn<BinaryOp::kHardsigmoidBackward>);
  m.impl("hardsigmoid_backward.grad_input", backward_out<BinaryOp::kHardsigmoidBackward>);
  m.impl("hardswish_backward", backward_fn<BinaryOp::kHardswishBackward>);
  m.impl("hardswish_backward.out", backward_out<BinaryOp::kHardswishBackward>);
  m.impl("mish_backward", backward_fn<BinaryOp::kMishBackward>);
  m.impl("logaddexp", ew::binary_fn<BinaryOp::kLogaddexp, Promote::kFloating>);
  m.impl("logaddexp.out", ew::binary_out<BinaryOp::kLogaddexp, Promote::kFloating>);
  m.impl("logaddexp2", ew::binary_fn<BinaryOp::kLogaddexp2, Promote::kFloating>);
  m.impl("logaddexp2.out", ew::binary_out<BinaryOp::kLogaddexp2, Promote::kFloating>);
  VKML_BINARY3_PLAIN("nextafter", kNextafter, kFloating)
  m.impl("special_xlog1py", ew::binary_fn<BinaryOp::kXlog1py, Promote::kIntToFloat>);
  m.impl("special_xlog1py.out", ew::binary_out<BinaryOp::kXlog1py, Promote::kIntToFloat>);
  m.impl("heaviside", heaviside);
  m.impl("heaviside_", heaviside_);
  m.impl("heaviside.out", heaviside_out);
  m.impl("gcd", integral_fn<BinaryOp::kGcd>);
  m.impl("gcd_", integral_inplace<BinaryOp::kGcd>);
  m.impl("gcd.out", integral_out<BinaryOp::kGcd>);
  m.impl("lcm", integral_fn<BinaryOp::kLcm>);
  m.impl("lcm_", integral_inplace<BinaryOp::kLcm>);
  m.impl("lcm.out", integral_out<BinaryOp::kLcm>);
  m.impl("rsub.Tensor", rsub);
  m.impl("rsub.Tensor_out", rsub_out);
  m.impl("floor_divide", floor_divide_tensors);
  m.impl("floor_divide_.Tensor", floor_divide_);
  m.impl("floor_divide.out", floor_divide_out);
  m.impl("floor_divide.Scalar", floor_divide_s);
  m.impl("gelu_backward", gelu_backward);
  m.impl("gelu_backward.grad_input", gelu_backward_out);
}

#undef VKML_BINARY3
#undef VKML_BINARY3_PLAIN
#undef VKML_COMPARE

}  // namespace torch_vkml::ops_binary
