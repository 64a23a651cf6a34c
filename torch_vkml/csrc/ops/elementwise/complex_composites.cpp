// Complex rows composed of native vkml ops, each as the CPU's complex kernel computes it:
// logical and / or / xor / not (a complex value is true where either part is nonzero), isnan,
// logaddexp (the CPU's _log_add_exp_helper), sinc, silu, lerp, addcmul and addcdiv.
#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <c10/core/DeviceGuard.h>

#include <cmath>
#include <limits>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_complex_composites {

using vkml::ops::BinaryOp;
using vkml::ops::UnaryOp;

// Where either part of a complex tensor is nonzero (NaN counts as nonzero); other tensors are
// returned as they are, for the logical ops to judge.
at::Tensor truth(const at::Tensor& t) {
  if (!t.is_complex()) return t;
  return at::any(at::view_as_real(t.resolve_conj().resolve_neg()), -1);
}

// Where either part is NaN.
at::Tensor has_nan(const at::Tensor& z) { return at::ne(z, z); }

// `t` on `device` as complex dtype `type`, expanded to `shape`, with its conj / neg bits applied.
at::Tensor operand(const at::Tensor& t, at::Device device, at::ScalarType type,
                   at::IntArrayRef shape) {
  return t.to(type).to(device).resolve_conj().resolve_neg().expand(shape);
}

// Componentwise sum and difference, as c10::complex's + and - in the CPU's kernels (at::add's
// a + alpha * b multiplies b by alpha as a complex product, which turns an infinite part of b
// into NaN in the other part).
at::Tensor plus(const at::Tensor& a, const at::Tensor& b) {
  return at::view_as_complex(at::add(at::view_as_real(a), at::view_as_real(b)));
}
at::Tensor minus(const at::Tensor& a, const at::Tensor& b) {
  return at::view_as_complex(at::sub(at::view_as_real(a), at::view_as_real(b)));
}

// log(exp(x) + exp(y)) as the CPU's _log_add_exp_helper: NaN in either operand gives NaN in both
// parts; both real parts -inf give the smaller operand (the one of y on ties), both +inf the
// direct formula; elsewhere log1p(exp(min - max)) + max, ordered by real part.
at::Tensor complex_logaddexp(const at::Tensor& x, const at::Tensor& y) {
  at::Tensor xr = at::real(x), yr = at::real(y);
  at::Tensor x_nan = has_nan(x), y_nan = has_nan(y);
  at::Tensor x_smaller = at::lt(xr, yr);
  at::Tensor min = at::where(x_smaller, x, y), max = at::where(x_smaller, y, x);
  at::Tensor general = plus(at::log1p(at::exp(minus(min, max))), max);
  at::Tensor min_r = at::real(min);
  at::Tensor both_infinite = at::logical_and(at::isinf(min_r), at::eq(min_r, at::real(max)));
  at::Tensor infinite =
      at::where(at::lt(min_r, 0), min, at::log(plus(at::exp(min), at::exp(max))));
  at::Tensor res = at::where(both_infinite, infinite, general);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  at::Tensor nans = at::full({}, c10::complex<double>(nan, nan), x.options());
  return at::where(at::logical_or(x_nan, y_nan), nans, res);
}

// sin(pi x) / (pi x), 1 at 0; pi x is the complex product (pi, 0) * x, as in the CPU's kernel.
at::Tensor complex_sinc(const at::Tensor& x) {
  at::Tensor product = at::mul(ew::wrap_scalar(c10::complex<double>(M_PI, 0.0)), x);
  at::Tensor q = at::div(at::sin(product), product);
  return at::where(at::eq(x, 0), at::ones({}, q.options()), q);
}

// x / (1 + exp(-x)), the CPU's complex silu.
at::Tensor complex_silu(const at::Tensor& x) {
  return at::div(x, plus(at::ones({}, x.options()), at::exp(at::neg(x))));
}

// The CPU's lerp: self + w (end - self) where |w| < 0.5, else end - (end - self) (1 - w).
at::Tensor complex_lerp(const at::Tensor& self, const at::Tensor& end, const at::Tensor& w) {
  at::Tensor diff = minus(end, self);
  at::Tensor small = plus(self, at::mul(w, diff));
  at::Tensor large = minus(end, at::mul(diff, minus(at::ones({}, w.options()), w)));
  return at::where(at::lt(at::abs(w), 0.5), small, large);
}

at::Tensor complex_lerp_scalar(const at::Tensor& self, const at::Tensor& end,
                               const at::Scalar& w) {
  c10::complex<double> weight = w.toComplexDouble();
  at::Tensor diff = minus(end, self);
  if (std::hypot(weight.real(), weight.imag()) < 0.5) {
    return plus(self, at::mul(ew::wrap_scalar(w), diff));
  }
  return minus(end, at::mul(diff, ew::wrap_scalar(c10::complex<double>(1.0) - weight)));
}

// The result of a composite into `out` (in-place or out=) where one is given, with
// TensorIterator's checks.
at::Tensor finish(const at::Tensor& res, at::Tensor& out, bool inplace, at::IntArrayRef shape) {
  if (!out.defined()) return res;
  TORCH_CHECK(c10::canCast(res.scalar_type(), out.scalar_type()), "result type ",
              res.scalar_type(), " can't be cast to the desired output type ", out.scalar_type());
  if (inplace) {
    TORCH_CHECK(out.sizes() == shape, "output with shape ", out.sizes(),
                " doesn't match the broadcast shape ", shape);
  } else {
    at::native::resize_output(out, shape);
  }
  out.copy_(res);
  return out;
}

}  // namespace torch_vkml::ops_complex_composites

namespace torch_vkml::ew {

std::optional<at::Tensor> complex_binary_composite(vkml::ops::BinaryOp op, const at::Tensor& a,
                                                   const at::Tensor& b, const at::Scalar& alpha,
                                                   at::Device device, at::ScalarType type,
                                                   at::IntArrayRef shape) {
  using namespace ops_complex_composites;
  switch (op) {
    case BinaryOp::kLogicalAnd: return at::logical_and(truth(a), truth(b));
    case BinaryOp::kLogicalOr: return at::logical_or(truth(a), truth(b));
    case BinaryOp::kLogicalXor: return at::logical_xor(truth(a), truth(b));
    case BinaryOp::kLogaddexp:
      return complex_logaddexp(operand(a, device, type, shape), operand(b, device, type, shape));
    case BinaryOp::kLerpScalar:
      return complex_lerp_scalar(operand(a, device, type, shape), operand(b, device, type, shape),
                                 alpha);
    default: return std::nullopt;
  }
}

std::optional<at::Tensor> complex_unary_composite(vkml::ops::UnaryOp op, const at::Tensor& x) {
  using namespace ops_complex_composites;
  at::Tensor z = x.resolve_conj().resolve_neg();
  switch (op) {
    case UnaryOp::kIsnan: return has_nan(z);
    case UnaryOp::kLogicalNot: return at::logical_not(truth(z));
    case UnaryOp::kSinc: return complex_sinc(z);
    case UnaryOp::kSilu: return complex_silu(z);
    default: return std::nullopt;
  }
}

at::Tensor complex_ternary(vkml::ops::BinaryOp op, const at::Tensor& a, const at::Tensor& b,
                           const at::Tensor& c, const at::Scalar& alpha, at::Tensor out,
                           bool inplace) {
  using namespace ops_complex_composites;
  const at::Tensor* dev = &a;
  for (const at::Tensor* t : {&a, &b, &c}) {
    if (t->device().type() == kVkml) dev = t;
  }
  at::native::ResultTypeState state = {};
  for (const at::Tensor* t : {&a, &b, &c}) state = at::native::update_result_type_state(*t, state);
  const at::ScalarType type = at::native::result_type(state);
  std::vector<int64_t> shape = at::infer_size(at::infer_size(a.sizes(), b.sizes()), c.sizes());
  c10::DeviceGuard guard(dev->device());
  at::Tensor x = operand(a, dev->device(), type, shape);
  at::Tensor y = operand(b, dev->device(), type, shape);
  at::Tensor z = operand(c, dev->device(), type, shape);
  at::Tensor res;
  if (op == BinaryOp::kLerp) {
    res = complex_lerp(x, y, z);
  } else if (op == BinaryOp::kAddcmul) {
    res = plus(x, at::mul(at::mul(wrap_scalar(alpha), y), z));
  } else if (op == BinaryOp::kAddcdiv) {
    res = plus(x, at::div(at::mul(wrap_scalar(alpha), y), z));
  } else {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "\"", std::string(vkml::ops::op_info(op).name),
                                "\" not implemented for '", c10::toString(type), "'");
  }
  return finish(res, out, inplace, shape);
}

}  // namespace torch_vkml::ew
