// Elementwise predicates and decompositions of floats on vkml: isnan, isneginf, isposinf,
// signbit, frexp and angle (of real tensors), plus _efficientzerotensor, which the backward of
// sgn and abs asks for.
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/where.h>
#include <c10/core/DefaultDtype.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_isnan_signbit_frexp {

using ew::Promote;
using vkml::ops::UnaryOp;

at::Tensor isnan(const at::Tensor& x) {
  return ew::unary(UnaryOp::kIsnan, Promote::kBoolOut, x, {});
}
at::Tensor& isnan_out(const at::Tensor& x, at::Tensor& out) {
  ew::unary(UnaryOp::kIsnan, Promote::kBoolOut, x, out);
  return out;
}

template <UnaryOp kOp>
at::Tensor& isinf_sign_out(const at::Tensor& x, at::Tensor& out) {
  const char* name = kOp == UnaryOp::kIsneginf ? "isneginf" : "isposinf";
  TORCH_CHECK(!x.is_complex(), name, " does not support complex inputs.");
  TORCH_CHECK(out.scalar_type() == at::kBool, name, " does not support non-boolean outputs.");
  ew::unary(kOp, Promote::kBoolOut, x, out);
  return out;
}
template <UnaryOp kOp>
at::Tensor isinf_sign(const at::Tensor& x) {
  at::Tensor out = at::empty({0}, x.options().dtype(at::kBool));
  return isinf_sign_out<kOp>(x, out);
}

at::Tensor& signbit_out(const at::Tensor& x, at::Tensor& out) {
  TORCH_CHECK(!x.is_complex(), "signbit is not implemented for complex tensors.");
  TORCH_CHECK(out.scalar_type() == at::kBool, "signbit does not support non-boolean outputs.");
  ew::unary(UnaryOp::kSignbit, Promote::kBoolOut, x, out);
  return out;
}
at::Tensor signbit(const at::Tensor& x) {
  at::Tensor out = at::empty({0}, x.options().dtype(at::kBool));
  return signbit_out(x, out);
}

// frexp: the mantissa row, and the exponent row (a float value) copied into the int32 output.
std::tuple<at::Tensor&, at::Tensor&> frexp_out(const at::Tensor& x, at::Tensor& mantissa,
                                               at::Tensor& exponent) {
  TORCH_CHECK(at::isFloatingType(x.scalar_type()),
              "torch.frexp() only supports floating-point dtypes");
  TORCH_CHECK(mantissa.dtype() == x.dtype(), "torch.frexp() expects mantissa to have dtype ",
              x.dtype(), " but got ", mantissa.dtype());
  TORCH_CHECK(exponent.dtype() == at::kInt,
              "torch.frexp() expects exponent to have int dtype but got ", exponent.dtype());
  ew::unary(UnaryOp::kFrexpMantissa, Promote::kFloating, x, mantissa);
  at::native::resize_output(exponent, x.sizes());
  if (x.numel() > 0) {
    exponent.copy_(ew::unary(UnaryOp::kFrexpExponent, Promote::kFloating, x, {}));
  }
  return {mantissa, exponent};
}
std::tuple<at::Tensor, at::Tensor> frexp(const at::Tensor& x) {
  at::Tensor mantissa = at::empty({0}, x.options());
  at::Tensor exponent = at::empty({0}, x.options().dtype(at::kInt));
  frexp_out(x, mantissa, exponent);
  return {mantissa, exponent};
}

// sgn's and abs's backward on real tensors ask for an "efficient zero tensor"; a plain zero
// tensor has the same values (ZeroTensor only spares the kernels that would read it).
at::Tensor efficient_zero_tensor(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                                 std::optional<at::Layout> layout,
                                 std::optional<at::Device> device,
                                 std::optional<bool> pin_memory) {
  at::TensorOptions options =
      at::TensorOptions().dtype(dtype).layout(layout).device(device).pinned_memory(pin_memory);
  return at::empty(size, options).zero_();
}

// angle of a real tensor: pi below zero, 0 elsewhere, NaN kept (integers give floats).
at::Tensor& angle_out(const at::Tensor& x, at::Tensor& out) {
  if (x.is_complex()) return ew::complex_angle_out(x, out);
  at::ScalarType result = at::isIntegralType(x.scalar_type(), /*includeBool=*/true)
                              ? c10::typeMetaToScalarType(c10::get_default_dtype())
                              : x.scalar_type();
  TORCH_CHECK(out.scalar_type() == result, "angle: expected out of dtype ", result, " but got ",
              out.scalar_type());
  at::native::resize_output(out, x.sizes());
  at::TensorOptions options = x.options().dtype(result);
  at::Tensor half_turn = at::where(at::lt(x, 0), at::scalar_tensor(M_PI, options),
                                   at::scalar_tensor(0.0, options));
  at::where_out(out, at::isnan(x), x.to(result), half_turn);
  return out;
}

at::Tensor angle(const at::Tensor& x) {
  at::ScalarType result = at::isIntegralType(x.scalar_type(), /*includeBool=*/true)
                              ? c10::typeMetaToScalarType(c10::get_default_dtype())
                              : c10::toRealValueType(x.scalar_type());
  at::Tensor out = at::empty({0}, x.options().dtype(result));
  return angle_out(x, out);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("isnan", isnan);
  m.impl("isnan.out", isnan_out);
  m.impl("isneginf", isinf_sign<UnaryOp::kIsneginf>);
  m.impl("isneginf.out", isinf_sign_out<UnaryOp::kIsneginf>);
  m.impl("isposinf", isinf_sign<UnaryOp::kIsposinf>);
  m.impl("isposinf.out", isinf_sign_out<UnaryOp::kIsposinf>);
  m.impl("_efficientzerotensor", efficient_zero_tensor);
  m.impl("frexp.Tensor", frexp);
  m.impl("frexp.Tensor_out", frexp_out);
  m.impl("signbit", signbit);
  m.impl("signbit.out", signbit_out);
  m.impl("angle", angle);
  m.impl("angle.out", angle_out);
}

}  // namespace torch_vkml::ops_isnan_signbit_frexp
