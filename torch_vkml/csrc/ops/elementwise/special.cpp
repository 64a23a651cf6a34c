// Special functions on vkml (lgamma, digamma, polygamma, erfinv, Bessel I/J/Y/K and their scaled
// forms, Airy Ai, ndtri, log_ndtr, erfcx, entr, sinc, zeta, igamma, orthogonal polynomials):
// elementwise rows of the special groups. Integers and bool compute in the default float type,
// as on the CPU.
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include <cmath>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_special {

using ew::Params;
using ew::Promote;
using vkml::ops::BinaryOp;
using vkml::ops::UnaryOp;

// The CPU has no f16/bf16 kernel for ndtri, log_ndtr and erfcx (AT_DISPATCH_FLOATING_TYPES).
template <UnaryOp kOp, bool kHalf>
void check_dtype(const at::Tensor& x) {
  if (kHalf) return;
  at::ScalarType t = x.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kHalf && t != at::kBFloat16, "\"",
                              vkml::ops::op_info(kOp).name.data(), "_cpu\" not implemented for '",
                              c10::toString(t), "'");
}

template <UnaryOp kOp, bool kHalf>
at::Tensor fn(const at::Tensor& x) {
  check_dtype<kOp, kHalf>(x);
  return ew::unary(kOp, Promote::kIntToFloat, x, {});
}
template <UnaryOp kOp, bool kHalf>
at::Tensor& inplace(at::Tensor& x) {
  check_dtype<kOp, kHalf>(x);
  ew::unary(kOp, Promote::kIntToFloat, x, x, true);
  return x;
}
template <UnaryOp kOp, bool kHalf>
at::Tensor& out(const at::Tensor& x, at::Tensor& o) {
  check_dtype<kOp, kHalf>(x);
  ew::unary(kOp, Promote::kIntToFloat, x, o);
  return o;
}

// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2 (n! in double, as the CPU).
Params polygamma_params(int64_t n) {
  TORCH_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  double factorial = std::exp(std::lgamma(static_cast<double>(n) + 1.0));
  return {static_cast<double>(n), (n % 2 == 1 ? 1.0 : -1.0) * factorial};
}
at::Tensor polygamma(int64_t n, const at::Tensor& x) {
  return ew::unary(UnaryOp::kPolygamma, Promote::kIntToFloat, x, {}, false, polygamma_params(n));
}
at::Tensor& polygamma_(at::Tensor& x, int64_t n) {
  ew::unary(UnaryOp::kPolygamma, Promote::kIntToFloat, x, x, true, polygamma_params(n));
  return x;
}
at::Tensor& polygamma_out(int64_t n, const at::Tensor& x, at::Tensor& o) {
  ew::unary(UnaryOp::kPolygamma, Promote::kIntToFloat, x, o, false, polygamma_params(n));
  return o;
}

// Binary special functions the CPU computes in float and double only (torch.special's
// polynomials, zeta): f16/bf16 raise NotImplementedError as there.
void check_no_half(const char* name, const at::Tensor& a, const at::Tensor& b) {
  at::ScalarType t = at::result_type(a, b);
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kHalf && t != at::kBFloat16, "\"", name,
                              "_cpu\" not implemented for '", c10::toString(t), "'");
}
template <BinaryOp kOp>
at::Tensor binary_fn(const at::Tensor& a, const at::Tensor& b) {
  check_no_half(vkml::ops::op_info(kOp).name.data(), a, b);
  return ew::binary(kOp, Promote::kIntToFloat, a, b, 1, {});
}
template <BinaryOp kOp>
at::Tensor& binary_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& o) {
  check_no_half(vkml::ops::op_info(kOp).name.data(), a, b);
  ew::binary(kOp, Promote::kIntToFloat, a, b, 1, o);
  return o;
}

#define VKML_SPECIAL_BINARY(name, op)         \
  m.impl(name, binary_fn<BinaryOp::op>);      \
  m.impl(name ".out", binary_out<BinaryOp::op>);
#define VKML_IGAMMA(name, op)                     \
  m.impl(name, ew::binary_fn<BinaryOp::op, Promote::kFloating>);          \
  m.impl(name "_", ew::binary_inplace<BinaryOp::op, Promote::kFloating>); \
  m.impl(name ".out", ew::binary_out<BinaryOp::op, Promote::kFloating>);

#define VKML_SPECIAL3(name, op, half)          \
  m.impl(name, fn<UnaryOp::op, half>);         \
  m.impl(name "_", inplace<UnaryOp::op, half>); \
  m.impl(name ".out", out<UnaryOp::op, half>);
#define VKML_SPECIAL2(name, op, half)  \
  m.impl(name, fn<UnaryOp::op, half>); \
  m.impl(name ".out", out<UnaryOp::op, half>);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  VKML_SPECIAL3("lgamma", kLgamma, true)
  VKML_SPECIAL3("digamma", kDigamma, true)
  VKML_SPECIAL3("erfinv", kErfinv, true)
  VKML_SPECIAL3("i0", kI0, true)
  VKML_SPECIAL3("sinc", kSinc, true)
  VKML_SPECIAL2("special_i0e", kI0e, true)
  VKML_SPECIAL2("special_i1", kI1, true)
  VKML_SPECIAL2("special_i1e", kI1e, true)
  VKML_SPECIAL2("special_entr", kEntr, true)
  VKML_SPECIAL2("special_erfcx", kErfcx, false)
  VKML_SPECIAL2("special_ndtri", kNdtri, false)
  VKML_SPECIAL2("special_log_ndtr", kLogNdtr, false)
  VKML_SPECIAL2("special_modified_bessel_i0", kI0, false)
  VKML_SPECIAL2("special_modified_bessel_i1", kI1, false)
  VKML_SPECIAL2("special_modified_bessel_k0", kBesselK0, false)
  VKML_SPECIAL2("special_modified_bessel_k1", kBesselK1, false)
  VKML_SPECIAL2("special_scaled_modified_bessel_k0", kBesselK0e, false)
  VKML_SPECIAL2("special_scaled_modified_bessel_k1", kBesselK1e, false)
  VKML_SPECIAL2("special_bessel_j0", kBesselJ0, false)
  VKML_SPECIAL2("special_bessel_j1", kBesselJ1, false)
  VKML_SPECIAL2("special_bessel_y0", kBesselY0, false)
  VKML_SPECIAL2("special_bessel_y1", kBesselY1, false)
  VKML_SPECIAL2("special_spherical_bessel_j0", kSphericalBesselJ0, false)
  VKML_SPECIAL2("special_airy_ai", kAiryAi, false)
  VKML_SPECIAL_BINARY("special_chebyshev_polynomial_t", kChebyshevT)
  VKML_SPECIAL_BINARY("special_chebyshev_polynomial_u", kChebyshevU)
  VKML_SPECIAL_BINARY("special_chebyshev_polynomial_v", kChebyshevV)
  VKML_SPECIAL_BINARY("special_chebyshev_polynomial_w", kChebyshevW)
  VKML_SPECIAL_BINARY("special_shifted_chebyshev_polynomial_t", kShiftedChebyshevT)
  VKML_SPECIAL_BINARY("special_shifted_chebyshev_polynomial_u", kShiftedChebyshevU)
  VKML_SPECIAL_BINARY("special_shifted_chebyshev_polynomial_v", kShiftedChebyshevV)
  VKML_SPECIAL_BINARY("special_shifted_chebyshev_polynomial_w", kShiftedChebyshevW)
  VKML_SPECIAL_BINARY("special_hermite_polynomial_h", kHermiteH)
  VKML_SPECIAL_BINARY("special_hermite_polynomial_he", kHermiteHe)
  VKML_SPECIAL_BINARY("special_laguerre_polynomial_l", kLaguerreL)
  VKML_SPECIAL_BINARY("special_legendre_polynomial_p", kLegendreP)
  VKML_SPECIAL_BINARY("special_zeta", kZeta)
  VKML_IGAMMA("igamma", kIgamma)
  VKML_IGAMMA("igammac", kIgammac)
  m.impl("polygamma", polygamma);
  m.impl("polygamma_", polygamma_);
  m.impl("polygamma.out", polygamma_out);
}

#undef VKML_SPECIAL_BINARY
#undef VKML_IGAMMA
#undef VKML_SPECIAL3
#undef VKML_SPECIAL2

}  // namespace torch_vkml::ops_special
