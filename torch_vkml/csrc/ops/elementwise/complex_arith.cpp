// Complex paths of the elementwise ops: arithmetic on complex64 / complex128 values as (real,
// imaginary) float pairs through view_as_real, computed with the real rows (formulas follow
// c10::complex, so infinities, NaNs and signed zeros come out as on the CPU); exponentials,
// logarithms, roots, trigonometric functions and pow through the complex family's kernels
// (vkml/complex_math.h). Also conj_physical, view_as_real, view_as_complex and polar / complex.
#include <optional>

#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "device/fallback.h"
#include "ops/elementwise/elementwise_bridge.h"
#include "vkml/complex_math.h"

namespace torch_vkml::ops_complex_arith {

using vkml::ops::BinaryOp;
using vkml::ops::UnaryOp;

at::Tensor re(const at::Tensor& r) { return r.select(-1, 0); }
at::Tensor im(const at::Tensor& r) { return r.select(-1, 1); }

// `t` on `device` as dtype `type`, expanded to `shape`, with its conj / neg bits applied. A CPU
// operand (a wrapped Python scalar, float64 or complex128) takes the dtype before it moves: a
// device without fp64 holds complex64 but not complex128.
at::Tensor operand(const at::Tensor& t, at::Device device, at::ScalarType type,
                   at::IntArrayRef shape) {
  at::Tensor x = t.to(type).to(device);
  if (x.is_conj() || x.is_neg()) x = x.resolve_conj().resolve_neg();
  return x.expand(shape);
}

// num / den as c10::complex divides (Smith's scaling; both parts of den zero give inf / nan).
void divide(const at::Tensor& rr, const at::Tensor& ra, const at::Tensor& rb) {
  at::Tensor a = re(ra), b = im(ra), c = re(rb), d = im(rb);
  at::Tensor ac = c.abs(), ad = d.abs();
  at::Tensor big_c = at::ge(ac, ad);
  at::Tensor rat = at::where(big_c, d / c, c / d);
  at::Tensor scl = at::reciprocal(at::where(big_c, c + d * rat, d + c * rat));
  at::Tensor real = at::where(big_c, a + b * rat, a * rat + b) * scl;
  at::Tensor imag = at::where(big_c, b - a * rat, b * rat - a) * scl;
  at::Tensor zero = at::logical_and(at::eq(ac, 0), at::eq(ad, 0));
  at::Tensor out_re = re(rr), out_im = im(rr);
  at::where_out(out_re, zero, a / ac, real);
  at::where_out(out_im, zero, b / ad, imag);
}

// A row without a complex path runs as the aten op of its name on the CPU, through the fallback
// (counted, or refused under VKML_FALLBACK=error), so complex inputs never meet a dtype error
// the CPU would not raise. `overloads` are tried in order; arguments past `args` take their
// defaults.
at::Tensor on_cpu(const std::string& name, std::initializer_list<const char*> overloads,
                  std::vector<at::Tensor> args) {
  for (const char* overload : overloads) {
    auto op = c10::Dispatcher::singleton().findSchema({"aten::" + name, overload});
    if (!op) continue;
    const auto& params = op->schema().arguments();
    if (params.size() < args.size() || op->schema().returns().size() != 1) continue;
    bool fits = true;
    torch::jit::Stack stack;
    for (size_t i = 0; i < params.size() && fits; ++i) {
      if (i < args.size()) {
        fits = params[i].type()->kind() == c10::TypeKind::TensorType;
        stack.emplace_back(args[i]);
      } else if (params[i].default_value()) {
        stack.push_back(*params[i].default_value());
      } else {
        fits = false;
      }
    }
    if (!fits) continue;
    run_cpu_fallback(*op, &stack);
    return stack.back().toTensor();
  }
  TORCH_CHECK_NOT_IMPLEMENTED(false, "vkml: \"", name, "\" has no vkml kernel for ",
                              args.front().scalar_type());
}

// The complex family's function for a unary row, or nullopt where the row has none.
std::optional<vkml::ops::ComplexFn> complex_fn(UnaryOp op) {
  using F = vkml::ops::ComplexFn;
  switch (op) {
    case UnaryOp::kExp: return F::kExp;
    case UnaryOp::kExp2: return F::kExp2;
    case UnaryOp::kExpm1: return F::kExpm1;
    case UnaryOp::kLog: return F::kLog;
    case UnaryOp::kLog2: return F::kLog2;
    case UnaryOp::kLog10: return F::kLog10;
    case UnaryOp::kLog1p: return F::kLog1p;
    case UnaryOp::kSqrt: return F::kSqrt;
    case UnaryOp::kRsqrt: return F::kRsqrt;
    case UnaryOp::kReciprocal: return F::kReciprocal;
    case UnaryOp::kSigmoid: return F::kSigmoid;
    case UnaryOp::kSin: return F::kSin;
    case UnaryOp::kCos: return F::kCos;
    case UnaryOp::kTan: return F::kTan;
    case UnaryOp::kSinh: return F::kSinh;
    case UnaryOp::kCosh: return F::kCosh;
    case UnaryOp::kTanh: return F::kTanh;
    case UnaryOp::kAsin: return F::kAsin;
    case UnaryOp::kAcos: return F::kAcos;
    case UnaryOp::kAtan: return F::kAtan;
    case UnaryOp::kAsinh: return F::kAsinh;
    case UnaryOp::kAcosh: return F::kAcosh;
    case UnaryOp::kAtanh: return F::kAtanh;
    default: return std::nullopt;
  }
}

// fn(x) for complex x on the device (conj / neg bits resolved first), a new tensor.
at::Tensor native_unary(vkml::ops::ComplexFn fn, const at::Tensor& x) {
  at::Tensor src = x.resolve_conj().resolve_neg();
  at::Tensor res = at::empty(x.sizes(), x.options());
  if (res.numel() == 0) return res;
  vkml::Device& dev = core_device(x);
  translate_errors(
      [&] { vkml::ops::complex_unary(dev, fn, to_complex_desc(res), to_complex_desc(src)); });
  return res;
}

// a^b on the device, both complex of dtype `type`, broadcast to `shape`. A CPU scalar exponent
// takes the CPU's shortcuts: 0 and 1 exactly, 0.5, -0.5 and -1 as sqrt, rsqrt and reciprocal,
// 2, 3 and -2 as products (so pow(z, 2) is z * z there, not exp(2 log z)).
at::Tensor native_pow(const at::Tensor& a, const at::Tensor& b, at::Device device,
                      at::ScalarType type, at::IntArrayRef shape) {
  using F = vkml::ops::ComplexFn;
  at::Tensor base = operand(a, device, type, shape);
  if (b.device().is_cpu() && b.dim() == 0) {
    c10::complex<double> e = b.item().toComplexDouble();
    if (e.imag() == 0) {
      const double v = e.real();
      if (v == 0) return at::ones(shape, base.options());
      if (v == 1) return base.clone();
      if (v == 0.5) return native_unary(F::kSqrt, base);
      if (v == -0.5) return native_unary(F::kRsqrt, base);
      if (v == -1) return native_unary(F::kReciprocal, base);
      if (v == 2) return at::mul(base, base);
      if (v == 3) return at::mul(at::mul(base, base), base);
      if (v == -2) return native_unary(F::kReciprocal, at::mul(base, base));
    }
  }
  at::Tensor exponent = operand(b, device, type, shape);
  at::Tensor res = at::empty(shape, base.options());
  if (res.numel() == 0) return res;
  vkml::Device& dev = core_device(res);
  translate_errors([&] {
    vkml::ops::complex_binary(dev, F::kPow, to_complex_desc(res), to_complex_desc(base),
                              to_complex_desc(exponent));
  });
  return res;
}

// The result into `out` (in-place or out=) where one is given.
at::Tensor finish(const at::Tensor& res, at::Tensor& out, bool inplace, at::IntArrayRef shape) {
  if (!out.defined()) return res;
  TORCH_CHECK(c10::canCast(res.scalar_type(), out.scalar_type()), "result type ",
              res.scalar_type(), " can't be cast to the desired output type ", out.scalar_type());
  if (!inplace) at::native::resize_output(out, shape);
  out.copy_(res);
  return out;
}

}  // namespace torch_vkml::ops_complex_arith

namespace torch_vkml::ew {

at::Tensor complex_binary(vkml::ops::BinaryOp op, const at::Tensor& a, const at::Tensor& b,
                          const at::Scalar& alpha, at::Tensor out, bool inplace) {
  using namespace ops_complex_arith;
  using vkml::ops::BinaryOp;
  using vkml::ops::UnaryOp;
  const at::Tensor& dev = a.device().type() == kVkml ? a : b;
  at::ScalarType type = at::result_type(a, b);
  std::vector<int64_t> shape = at::infer_size(a.sizes(), b.sizes());
  c10::DeviceGuard guard(dev.device());
  const bool to_bool = op == BinaryOp::kEq || op == BinaryOp::kNe;
  if (op == BinaryOp::kPow) {
    return finish(native_pow(a, b, dev.device(), type, shape), out, inplace, shape);
  }
  if (auto res = complex_binary_composite(op, a, b, alpha, dev.device(), type, shape)) {
    return finish(*res, out, inplace, shape);
  }
  if (!(op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul ||
        op == BinaryOp::kDiv || to_bool)) {
    at::Tensor res = on_cpu(std::string(vkml::ops::op_info(op).name),
                            {"", "Tensor", "Tensor_Tensor"}, {a, b});
    return finish(res, out, inplace, shape);
  }
  at::ScalarType result = to_bool ? at::kBool : type;
  if (out.defined()) {
    TORCH_CHECK(c10::canCast(result, out.scalar_type()), "result type ", result,
                " can't be cast to the desired output type ", out.scalar_type());
    if (inplace) {
      TORCH_CHECK(out.sizes() == at::IntArrayRef(shape), "output with shape ", out.sizes(),
                  " doesn't match the broadcast shape ", shape);
    }
  }
  at::Tensor res = at::empty(shape, dev.options().dtype(result));
  if (res.numel() > 0) {
    at::Tensor ra = at::view_as_real(operand(a, dev.device(), type, shape));
    at::Tensor rb = at::view_as_real(operand(b, dev.device(), type, shape));
    if (to_bool) {
      if (op == BinaryOp::kEq) {
        at::logical_and_out(res, at::eq(re(ra), re(rb)), at::eq(im(ra), im(rb)));
      } else {
        at::logical_or_out(res, at::ne(re(ra), re(rb)), at::ne(im(ra), im(rb)));
      }
    } else {
      at::Tensor rr = at::view_as_real(res), out_re = re(rr), out_im = im(rr);
      if (op == BinaryOp::kAdd || op == BinaryOp::kSub) {
        // a + s b with s b as a complex product even for s = 1, as the CPU computes it (so an
        // infinite imaginary part of b makes the real part NaN there too).
        c10::complex<double> s = alpha.toComplexDouble();
        if (op == BinaryOp::kSub) s = -s;
        at::mul_out(out_re, re(rb), wrap_scalar(s.real())).sub_(im(rb) * s.imag()).add_(re(ra));
        at::mul_out(out_im, im(rb), wrap_scalar(s.real())).add_(re(rb) * s.imag()).add_(im(ra));
      } else if (op == BinaryOp::kMul) {
        at::mul_out(out_re, re(ra), re(rb)).addcmul_(im(ra), im(rb), -1);
        at::mul_out(out_im, re(ra), im(rb)).addcmul_(im(ra), re(rb), 1);
      } else {
        divide(rr, ra, rb);
      }
    }
  }
  if (!out.defined()) return res;
  if (!inplace) at::native::resize_output(out, shape);
  out.copy_(res);
  return out;
}

at::Tensor complex_unary(vkml::ops::UnaryOp op, const at::Tensor& x, at::Tensor out, bool inplace) {
  using namespace ops_complex_arith;
  using vkml::ops::BinaryOp;
  using vkml::ops::UnaryOp;
  const bool to_real = op == UnaryOp::kAbs;
  c10::DeviceGuard guard(x.device());
  if (auto fn = complex_fn(op)) return finish(native_unary(*fn, x), out, inplace, x.sizes());
  if (auto res = complex_unary_composite(op, x)) return finish(*res, out, inplace, x.sizes());
  if (!(op == UnaryOp::kNeg || op == UnaryOp::kAbs || op == UnaryOp::kSign)) {
    at::Tensor res = on_cpu(std::string(vkml::ops::op_info(op).name), {""}, {x});
    return finish(res, out, inplace, x.sizes());
  }
  at::ScalarType result = to_real ? c10::toRealValueType(x.scalar_type()) : x.scalar_type();
  if (out.defined()) {
    TORCH_CHECK(c10::canCast(result, out.scalar_type()), "result type ", result,
                " can't be cast to the desired output type ", out.scalar_type());
  }
  at::Tensor res = at::empty(x.sizes(), x.options().dtype(result));
  if (res.numel() > 0) {
    at::Tensor rx = at::view_as_real(operand(x, x.device(), x.scalar_type(), x.sizes()));
    if (op == UnaryOp::kNeg) {
      at::Tensor rr = at::view_as_real(res);
      at::neg_out(rr, rx);
    } else if (op == UnaryOp::kAbs) {
      at::hypot_out(res, re(rx), im(rx));
    } else {
      // sgn: z / |z|, and 0 where z == 0.
      at::Tensor m = at::hypot(re(rx), im(rx)).unsqueeze(-1);
      at::Tensor rr = at::view_as_real(res);
      at::where_out(rr, at::eq(m, 0), at::scalar_tensor(0, rx.options()), rx / m);
    }
  }
  if (!out.defined()) return res;
  if (!inplace) at::native::resize_output(out, x.sizes());
  out.copy_(res);
  return out;
}

at::Tensor& complex_angle_out(const at::Tensor& x, at::Tensor& out) {
  using namespace ops_complex_arith;
  at::ScalarType result = c10::toRealValueType(x.scalar_type());
  TORCH_CHECK(out.scalar_type() == result, "angle: expected out of dtype ", result, " but got ",
              out.scalar_type());
  at::native::resize_output(out, x.sizes());
  if (x.numel() == 0) return out;
  at::Tensor rx = at::view_as_real(operand(x, x.device(), x.scalar_type(), x.sizes()));
  at::atan2_out(out, im(rx), re(rx));
  return out;
}

}  // namespace torch_vkml::ew

namespace torch_vkml::ops_complex_arith {

at::Tensor& conj_physical_out(const at::Tensor& x, at::Tensor& out) {
  at::native::resize_output(out, x.sizes());
  if (!x.is_complex()) return out.copy_(x);
  // Copying from conj(x) flips the conjugate bit; the copy writes the conjugated values.
  return out.copy_(x.conj());
}

at::Tensor conj_physical(const at::Tensor& x) {
  at::Tensor out = at::empty({0}, x.options());
  return conj_physical_out(x, out);
}

at::Tensor& conj_physical_(at::Tensor& x) {
  if (!x.is_complex()) return x;
  TORCH_CHECK(!x.is_conj(), "conj_physical_ on a tensor with the conjugate bit");
  at::Tensor r = at::view_as_real(x.is_neg() ? x._neg_view() : x);
  r.select(-1, 1).neg_();
  return x;
}

// complex(real, imag) and polar(abs, angle) into a complex out.
at::Tensor& complex_out(const at::Tensor& real, const at::Tensor& imag, at::Tensor& out) {
  TORCH_CHECK(real.scalar_type() == imag.scalar_type(), "Expected object of scalar type ",
              real.scalar_type(), " but got scalar type ", imag.scalar_type(),
              " for second argument");
  TORCH_CHECK(at::isFloatingType(real.scalar_type()),
              "Expected both inputs to be Half, Float or Double tensors but got ",
              real.scalar_type(), " and ", imag.scalar_type());
  TORCH_CHECK(out.scalar_type() == c10::toComplexType(real.scalar_type()),
              "Expected object of scalar type ", c10::toComplexType(real.scalar_type()),
              " but got scalar type ", out.scalar_type(), " for argument 'out'");
  std::vector<int64_t> shape = at::infer_size(real.sizes(), imag.sizes());
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  at::Tensor ro = at::view_as_real(out);
  re(ro).copy_(real.expand(shape));
  im(ro).copy_(imag.expand(shape));
  return out;
}

at::Tensor& polar_out(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  TORCH_CHECK(abs.scalar_type() == angle.scalar_type(), "Expected object of scalar type ",
              abs.scalar_type(), " but got scalar type ", angle.scalar_type(),
              " for second argument");
  TORCH_CHECK(at::isFloatingType(abs.scalar_type()),
              "Expected both inputs to be Half, Float or Double tensors but got ",
              abs.scalar_type(), " and ", angle.scalar_type());
  TORCH_CHECK(out.scalar_type() == c10::toComplexType(abs.scalar_type()),
              "Expected object of scalar type ", c10::toComplexType(abs.scalar_type()),
              " but got scalar type ", out.scalar_type(), " for argument 'out'");
  std::vector<int64_t> shape = at::infer_size(abs.sizes(), angle.sizes());
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  at::Tensor ro = at::view_as_real(out), out_re = re(ro), out_im = im(ro);
  at::mul_out(out_re, abs, at::cos(angle));
  at::mul_out(out_im, abs, at::sin(angle));
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("conj_physical.out", conj_physical_out);
  m.impl("_conj_physical", conj_physical);
  m.impl("conj_physical_", conj_physical_);
  m.impl("complex.out", complex_out);
  m.impl("polar.out", polar_out);
}

}  // namespace torch_vkml::ops_complex_arith
