// Statistical reductions: std/var (and std_mean/var_mean) with correction, norms
// (norm, linalg_vector_norm) and logsumexp, each one vkml::ops::reduce call. Complex inputs: the
// variance and 2-norm reduce the (real, imaginary) float pairs, other norms the magnitudes, and
// logsumexp is the CPU's composite of complex exp, sum and log.
#include <ATen/core/ATen_fwd.h>  // the per-op meta headers below need it first
#include <ATen/ops/abs.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/linalg_vector_norm_meta.h>
#include <ATen/ops/norm_meta.h>
#include <ATen/ops/real.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DefaultDtype.h>
#include <torch/library.h>

#include <limits>

#include "ops/reduce/reduce_bridge.h"

namespace torch_vkml::ops_std_var_norm {

using at::native::DimMask;
using reduce::Mode;
using reduce::Structured;
using vkml::ops::ReduceOp;

void check_std_var_input(const char* what, const at::Tensor& self) {
  TORCH_CHECK(self.layout() == at::Layout::Strided, what, " only supports strided layout, got: ",
              self.layout());
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()),
              what, " only support floating point and complex dtypes");
}

// std and var of complex values are real.
at::TensorOptions real_options(const at::Tensor& self) {
  return self.options().dtype(c10::toRealValueType(self.scalar_type()));
}

void warn_degrees_of_freedom(const char* fname, const at::Tensor& self, const at::Tensor& out,
                             double correction) {
  int64_t per_output = out.numel() == 0 ? 0 : self.numel() / out.numel();
  if (per_output - correction <= 0) {
    TORCH_WARN(fname, "(): degrees of freedom is <= 0. Correction should be strictly less than "
                      "the reduction factor (input numel divided by output numel).");
  }
}

// The variance of complex values, the mean of |x - mean|^2, is the variance of the real parts
// plus that of the imaginary parts: one reduction over the (real, imaginary) pairs gives both
// (and the complex mean into `mean` if defined); their sum (its root for std) goes to `result`.
void complex_std_var(bool take_sqrt, const at::Tensor& self, DimMask mask, bool keepdim,
                     double correction, const at::Tensor& result, const at::Tensor& mean) {
  if (result.numel() == 0) return;
  const at::ScalarType real = c10::toRealValueType(result.scalar_type());
  at::Tensor pairs = at::view_as_real(self.resolve_conj().resolve_neg());
  mask.reset(static_cast<size_t>(self.dim()));  // the pair stays
  at::Tensor parts =
      at::empty(at::native::shape_from_dim_mask(pairs, mask, keepdim), self.options().dtype(real));
  reduce::ReduceCall call{ReduceOp::kVar, real};
  call.correction = correction;
  reduce::run(call, pairs, mask, keepdim, parts,
              mean.defined() ? at::view_as_real(mean) : at::Tensor());
  at::Tensor total = parts.sum(-1);
  if (take_sqrt) total.sqrt_();
  result.copy_(total);
}

// std/var into `result` (any floating dtype self can be cast to), mean into `mean` if defined.
void std_var(const char* fname, bool take_sqrt, const at::Tensor& self,
             at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction_opt,
             bool keepdim, at::Tensor& result, at::Tensor mean = {}) {
  double correction = correction_opt.value_or(1).toDouble();
  at::ScalarType dtype = result.scalar_type();
  reduce::check_same_device(self, result);
  DimMask mask = at::native::make_dim_mask(dim, self.dim());
  at::native::resize_reduction_result(result, self, mask, keepdim, dtype);
  if (mean.defined()) {
    reduce::check_same_device(self, mean);
    at::native::resize_reduction_result(mean, self, mask, keepdim, mean.scalar_type());
  }
  // Complex values are judged by their parts, as the CPU's std/var of real(self) and imag(self).
  const at::ScalarType from = c10::toRealValueType(self.scalar_type());
  const at::ScalarType to = self.is_complex() ? c10::toRealValueType(dtype) : dtype;
  TORCH_CHECK(at::canCast(from, to), "result type ", from, " can't be cast to the desired output "
              "type ", to);
  warn_degrees_of_freedom(fname, self, result, correction);
  if (self.is_complex()) {
    return complex_std_var(take_sqrt, self, mask, keepdim, correction, result, mean);
  }
  reduce::ReduceCall call{take_sqrt ? ReduceOp::kStd : ReduceOp::kVar, dtype};
  call.correction = correction;
  reduce::run(call, self, mask, keepdim, result, mean);
}

at::Tensor std_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim) {
  check_std_var_input("std and var", self);
  at::Tensor result = at::empty({0}, real_options(self));
  std_var("std", true, self, dim, correction, keepdim, result);
  return result;
}

at::Tensor& std_correction_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                               const std::optional<at::Scalar>& correction, bool keepdim,
                               at::Tensor& result) {
  check_std_var_input("std and var", self);
  std_var("std", true, self, dim, correction, keepdim, result);
  return result;
}

at::Tensor var_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim) {
  check_std_var_input("std and var", self);
  at::Tensor result = at::empty({0}, real_options(self));
  std_var("var", false, self, dim, correction, keepdim, result);
  return result;
}

at::Tensor& var_correction_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                               const std::optional<at::Scalar>& correction, bool keepdim,
                               at::Tensor& result) {
  check_std_var_input("std and var", self);
  std_var("var", false, self, dim, correction, keepdim, result);
  return result;
}

std::tuple<at::Tensor, at::Tensor> std_mean_correction(const at::Tensor& self,
                                                       at::OptionalIntArrayRef dim,
                                                       const std::optional<at::Scalar>& correction,
                                                       bool keepdim) {
  check_std_var_input("std_mean", self);
  at::Tensor result = at::empty({0}, real_options(self)), mean = at::empty({0}, self.options());
  std_var("std_mean", true, self, dim, correction, keepdim, result, mean);
  return {result, mean};
}

std::tuple<at::Tensor, at::Tensor> var_mean_correction(const at::Tensor& self,
                                                       at::OptionalIntArrayRef dim,
                                                       const std::optional<at::Scalar>& correction,
                                                       bool keepdim) {
  check_std_var_input("var_mean", self);
  at::Tensor result = at::empty({0}, real_options(self)), mean = at::empty({0}, self.options());
  std_var("var_mean", false, self, dim, correction, keepdim, result, mean);
  return {result, mean};
}

// ---- norms -----------------------------------------------------------------------------------

// The norm of complex values is that of their magnitudes: the 2-norm reduces the (real,
// imaginary) pairs in one pass, other orders reduce abs(self).
void vector_norm_impl(const at::Tensor& self, double ord, at::OptionalIntArrayRef dim,
                      bool keepdim, const at::Tensor& result) {
  reduce::ReduceCall call{ReduceOp::kNorm, result.scalar_type()};
  call.p = ord;
  DimMask mask = at::native::make_dim_mask(dim.value_or(at::IntArrayRef{}), self.dim());
  if (self.is_complex() && result.numel() > 0) {
    if (ord != 2.0) {
      // Magnitudes in the result's precision (dtype=complex128 on complex64 input).
      at::Tensor z = self.to(c10::toComplexType(result.scalar_type()));
      return reduce::run(call, at::abs(z), mask, keepdim, result);
    }
    mask.set(static_cast<size_t>(self.dim()));  // the pair is reduced too
    at::Tensor pairs = at::view_as_real(self.resolve_conj().resolve_neg());
    return reduce::run(call, pairs, mask, keepdim, keepdim ? result.unsqueeze(-1) : result);
  }
  reduce::run(call, self, mask, keepdim, result);
}

at::Tensor linalg_vector_norm(const at::Tensor& self, const at::Scalar& ord,
                              at::OptionalIntArrayRef dim, bool keepdim,
                              std::optional<at::ScalarType> dtype) {
  Structured<at::meta::structured_linalg_vector_norm> op(Mode::kFunctional);
  op.meta(self, ord, dim, keepdim, dtype);
  vector_norm_impl(self, ord.toDouble(), dim, keepdim, op.output(0));
  return op.output(0);
}

at::Tensor& linalg_vector_norm_out(const at::Tensor& self, const at::Scalar& ord,
                                   at::OptionalIntArrayRef dim, bool keepdim,
                                   std::optional<at::ScalarType> dtype, at::Tensor& out) {
  Structured<at::meta::structured_linalg_vector_norm> op(Mode::kOut, {out});
  op.meta(self, ord, dim, keepdim, dtype);
  vector_norm_impl(self, ord.toDouble(), dim, keepdim, out);
  return out;
}

// norm.* redispatch to linalg_vector_norm exactly as PyTorch's norm_out does.
// The dispatcher passes optional<Scalar>; the meta functions take OptionalScalarRef.
at::Scalar norm_order(const std::optional<at::Scalar>& p) { return p.value_or(at::Scalar(2.0)); }
at::OptionalScalarRef scalar_ref(const std::optional<at::Scalar>& p) {
  return p.has_value() ? at::OptionalScalarRef(&p.value()) : at::OptionalScalarRef();
}

at::Tensor norm_dim(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                    bool keepdim) {
  Structured<at::meta::structured_norm_ScalarOpt_dim> op(Mode::kFunctional);
  op.meta(self, scalar_ref(p), dim, keepdim);
  at::Tensor result = op.output(0);
  at::linalg_vector_norm_out(result, self, norm_order(p), dim, keepdim, std::nullopt);
  return result;
}

at::Tensor& norm_dim_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                         at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  Structured<at::meta::structured_norm_ScalarOpt_dim> op(Mode::kOut, {out});
  op.meta(self, scalar_ref(p), dim, keepdim);
  at::linalg_vector_norm_out(out, self, norm_order(p), dim, keepdim, std::nullopt);
  return out;
}

at::Tensor norm_dim_dtype(const at::Tensor& self, const std::optional<at::Scalar>& p,
                          at::IntArrayRef dim, bool keepdim, at::ScalarType dtype) {
  Structured<at::meta::structured_norm_ScalarOpt_dim_dtype> op(Mode::kFunctional);
  op.meta(self, scalar_ref(p), dim, keepdim, dtype);
  at::Tensor result = op.output(0);
  at::linalg_vector_norm_out(result, self, norm_order(p), dim, keepdim, dtype);
  return result;
}

at::Tensor& norm_dim_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                               at::IntArrayRef dim, bool keepdim, at::ScalarType dtype,
                               at::Tensor& out) {
  Structured<at::meta::structured_norm_ScalarOpt_dim_dtype> op(Mode::kOut, {out});
  op.meta(self, scalar_ref(p), dim, keepdim, dtype);
  at::linalg_vector_norm_out(out, self, norm_order(p), dim, keepdim, dtype);
  return out;
}

// ---- logsumexp -------------------------------------------------------------------------------

// logsumexp of complex values as the CPU computes it: the largest real part (0 where it is
// infinite) is taken out before the exponentials and added back after the log.
at::Tensor& complex_logsumexp(const at::Tensor& self, at::IntArrayRef dims, bool keepdim,
                              at::Tensor& result) {
  if (self.numel() == 0) {
    at::sum_out(result, at::exp(self), dims, keepdim);
    result.log_();
    return result;
  }
  at::Tensor maxes = at::amax(at::real(self), dims, /*keepdim=*/true);
  maxes.masked_fill_(at::eq(at::abs(maxes), std::numeric_limits<double>::infinity()), 0);
  at::sum_out(result, at::exp(at::sub(self, maxes)), dims, keepdim);
  result.log_().add_(maxes.reshape(result.sizes()));
  return result;
}

at::Tensor& logsumexp_out(const at::Tensor& self, at::IntArrayRef dims, bool keepdim,
                          at::Tensor& result) {
  TORCH_CHECK(at::isFloatingType(result.scalar_type()) || at::isComplexType(result.scalar_type()),
              "logsumexp(): Expected floating point type for result tensor, but got: ",
              result.scalar_type());
  reduce::check_same_device(self, result);
  // PyTorch's composite adds the keepdim maxes back into a squeezed result, which cannot
  // broadcast when dims is empty and keepdim is false: the same error is raised here.
  if (dims.empty() && !keepdim && self.dim() > 0) {
    TORCH_CHECK(false, "output with shape [] doesn't match the broadcast shape ",
                std::vector<int64_t>(self.dim(), 1));
  }
  if (self.is_complex()) return complex_logsumexp(self, dims, keepdim, result);
  DimMask mask = at::native::make_dim_mask(dims, self.dim());
  at::native::resize_reduction_result(result, self, mask, keepdim, result.scalar_type());
  reduce::run({ReduceOp::kLogSumExp, result.scalar_type()}, self, mask, keepdim, result);
  return result;
}

at::Tensor logsumexp(const at::Tensor& self, at::IntArrayRef dims, bool keepdim) {
  at::ScalarType dtype = at::isIntegralType(self.scalar_type(), /*includeBool=*/true)
                             ? c10::typeMetaToScalarType(c10::get_default_dtype())
                             : self.scalar_type();
  at::Tensor result = at::empty({0}, self.options().dtype(dtype));
  return logsumexp_out(self, dims, keepdim, result);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("std.correction", std_correction);
  m.impl("std.correction_out", std_correction_out);
  m.impl("var.correction", var_correction);
  m.impl("var.correction_out", var_correction_out);
  m.impl("std_mean.correction", std_mean_correction);
  m.impl("var_mean.correction", var_mean_correction);
  m.impl("linalg_vector_norm", linalg_vector_norm);
  m.impl("linalg_vector_norm.out", linalg_vector_norm_out);
  m.impl("norm.ScalarOpt_dim", norm_dim);
  m.impl("norm.out", norm_dim_out);
  m.impl("norm.ScalarOpt_dim_dtype", norm_dim_dtype);
  m.impl("norm.dtype_out", norm_dim_dtype_out);
  m.impl("logsumexp", logsumexp);
  m.impl("logsumexp.out", logsumexp_out);
}

}  // namespace torch_vkml::ops_std_var_norm
