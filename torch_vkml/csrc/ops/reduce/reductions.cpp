// Reductions: sum, mean, prod, nansum, amax/amin, max/min (full and .dim), argmax/argmin,
// all/any, aminmax, count_nonzero, trace. Structured ops run PyTorch's own meta functions, so
// output shapes, dtypes and errors are PyTorch's; the work is one vkml::ops::reduce call
// (all/any/count_nonzero of complex values reduce their truth, a bool tensor).
// equal is all(eq(a, b)), read back because its result is a Python bool.
#include <ATen/core/ATen_fwd.h>  // the per-op meta headers below need it first
#include <ATen/ops/all_meta.h>
#include <ATen/ops/amax_meta.h>
#include <ATen/ops/amin_meta.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/aminmax_meta.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/any.h>
#include <ATen/ops/any_meta.h>
#include <ATen/ops/argmax_meta.h>
#include <ATen/ops/argmin_meta.h>
#include <ATen/ops/max_meta.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/min_meta.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/prod_meta.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/sum_meta.h>
#include <ATen/ops/view_as_real.h>
#include <torch/library.h>

#include "ops/reduce/reduce_bridge.h"

namespace torch_vkml::ops_reductions {

using at::native::DimMask;
using reduce::Mode;
using reduce::ReduceCall;
using reduce::Structured;
using vkml::ops::ReduceOp;

DimMask mask_of(const at::Tensor& self, at::OptionalIntArrayRef dims, bool allow_empty = false) {
  return at::native::make_dim_mask(dims, self.dim(), allow_empty);
}

DimMask mask_of_dim(const at::Tensor& self, std::optional<int64_t> dim) {
  if (!dim.has_value()) return DimMask().flip();
  return at::native::make_dim_mask(at::IntArrayRef(*dim), self.dim());
}

// Runs a structured op: meta (PyTorch's checks and output), then `impl` on the outputs.
template <class Meta, size_t N = 1, class MetaFn, class ImplFn>
std::array<at::Tensor, N> structured(Mode mode, std::array<at::Tensor, N> given, MetaFn meta,
                                     ImplFn impl) {
  Structured<Meta, N> op(mode, std::move(given));
  auto precomputed = meta(op);
  std::array<at::Tensor, N> outs;
  for (size_t i = 0; i < N; ++i) outs[i] = op.output(i);
  impl(outs, precomputed);
  return outs;
}

// ---- sum / mean / prod / nansum --------------------------------------------------------------

// Sum and mean of complex values: the same reduction over the (real, imaginary) float pairs.
void complex_impl(ReduceOp op, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  const at::Tensor& out) {
  at::Tensor x = self.to(out.scalar_type()).resolve_conj().resolve_neg();
  DimMask mask = mask_of(self, dim);
  mask.reset(static_cast<size_t>(self.dim()));  // the (real, imaginary) pair stays
  at::Tensor outr = at::view_as_real(out);
  reduce::run({op, outr.scalar_type()}, at::view_as_real(x), mask, keepdim, outr);
}

void sum_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
              const at::Tensor& out) {
  if (out.is_complex()) return complex_impl(ReduceOp::kSum, self, dim, keepdim, out);
  reduce::run({ReduceOp::kSum, out.scalar_type()}, self, mask_of(self, dim), keepdim, out);
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  return structured<at::meta::structured_sum_dim_IntList>(
      Mode::kFunctional, {}, [&](auto& m) { m.meta(self, dim, keepdim, dtype); return 0; },
      [&](auto& o, int) { sum_impl(self, dim, keepdim, o[0]); })[0];
}

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, at::Tensor& out) {
  structured<at::meta::structured_sum_dim_IntList>(
      Mode::kOut, {out}, [&](auto& m) { m.meta(self, dim, keepdim, dtype); return 0; },
      [&](auto& o, int) { sum_impl(self, dim, keepdim, o[0]); });
  return out;
}

void mean_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
               const at::Tensor& out) {
  if (out.is_complex()) return complex_impl(ReduceOp::kMean, self, dim, keepdim, out);
  reduce::run({ReduceOp::kMean, out.scalar_type()}, self, mask_of(self, dim), keepdim, out);
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  return structured<at::meta::structured_mean_dim>(
      Mode::kFunctional, {}, [&](auto& m) { m.meta(self, dim, keepdim, dtype); return 0; },
      [&](auto& o, int) { mean_impl(self, dim, keepdim, o[0]); })[0];
}

at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  structured<at::meta::structured_mean_dim>(
      Mode::kOut, {out}, [&](auto& m) { m.meta(self, dim, keepdim, dtype); return 0; },
      [&](auto& o, int) { mean_impl(self, dim, keepdim, o[0]); });
  return out;
}

// Product of complex values over the `mask` dims: a tree of complex products that halves the
// reduced extent each step (the CPU's sequential order rounds differently, by a few ulp).
void complex_prod(const at::Tensor& self, const DimMask& mask, bool keepdim, const at::Tensor& out) {
  at::Tensor x = self.to(out.scalar_type()).resolve_conj().resolve_neg();
  std::vector<int64_t> perm, shape;
  int64_t n = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!mask.test(static_cast<size_t>(d))) {
      perm.push_back(d);
      shape.push_back(self.size(d));
    }
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (mask.test(static_cast<size_t>(d))) {
      perm.push_back(d);
      n *= self.size(d);
    }
  }
  shape.push_back(n);
  if (n == 0) {
    out.fill_(1);
    return;
  }
  x = x.permute(perm).reshape(shape);
  while (x.size(-1) > 1) {
    const int64_t m = x.size(-1), h = m / 2;
    at::Tensor p = at::mul(x.narrow(-1, 0, h), x.narrow(-1, h, h));
    x = m % 2 ? at::cat({p, x.narrow(-1, 2 * h, 1)}, -1) : p;
  }
  out.copy_(x.select(-1, 0).reshape(out.sizes()));
}

void prod_impl(const at::Tensor& self, const DimMask& mask, bool keepdim, const at::Tensor& out) {
  if (out.is_complex()) return complex_prod(self, mask, keepdim, out);
  reduce::run({ReduceOp::kProd, out.scalar_type()}, self, mask, keepdim, out);
}

at::Tensor prod_dim(const at::Tensor& self, int64_t dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  return structured<at::meta::structured_prod_dim_int>(
      Mode::kFunctional, {}, [&](auto& m) { m.meta(self, dim, keepdim, dtype); return 0; },
      [&](auto& o, int) { prod_impl(self, mask_of_dim(self, dim), keepdim, o[0]); })[0];
}

at::Tensor& prod_out(const at::Tensor& self, int64_t dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  structured<at::meta::structured_prod_dim_int>(
      Mode::kOut, {out}, [&](auto& m) { m.meta(self, dim, keepdim, dtype); return 0; },
      [&](auto& o, int) { prod_impl(self, mask_of_dim(self, dim), keepdim, o[0]); });
  return out;
}

at::Tensor prod_all(const at::Tensor& self, std::optional<at::ScalarType> opt_dtype) {
  at::ScalarType dtype = at::native::get_dtype_from_self(self, opt_dtype, true);
  at::Tensor result = at::empty({}, self.options().dtype(dtype));
  prod_impl(self, DimMask().flip(), false, result);
  return result;
}

at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> opt_dtype, at::Tensor& result) {
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "nansum does not support complex inputs");
  if (c10::isIntegralType(self.scalar_type(), /*includeBool=*/true)) {
    return at::sum_out(result, self, dim, keepdim, opt_dtype);  // integers have no NaN
  }
  at::ScalarType dtype = at::native::get_dtype_from_result(result, opt_dtype);
  TORCH_CHECK(result.scalar_type() == dtype,
              "nansum: provided dtype must match dtype of result. Got ", result.scalar_type(),
              " and ", dtype, ".");
  reduce::check_same_device(self, result);
  DimMask mask = mask_of(self, dim);
  at::native::resize_reduction_result(result, self, mask, keepdim, dtype);
  reduce::run({ReduceOp::kNanSum, dtype}, self, mask, keepdim, result);
  return result;
}

at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> opt_dtype) {
  at::ScalarType dtype = at::native::get_dtype_from_self(self, opt_dtype, true);
  at::Tensor result = at::native::create_reduction_result(self, dim, keepdim, dtype);
  return nansum_out(self, dim, keepdim, dtype, result);
}

// ---- amax / amin / max / min / argmax / argmin / aminmax -------------------------------------

template <class Meta>
at::Tensor amax_amin(ReduceOp op, Mode mode, const at::Tensor& self, at::IntArrayRef dim,
                     bool keepdim, const at::Tensor& out = {}) {
  return structured<Meta>(
      mode, {out}, [&](auto& m) { m.meta(self, dim, keepdim); return 0; },
      [&](auto& o, int) {
        reduce::run({op, self.scalar_type()}, self, mask_of(self, dim), keepdim, o[0]);
      })[0];
}

at::Tensor amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return amax_amin<at::meta::structured_amax>(ReduceOp::kMax, Mode::kFunctional, self, dim,
                                              keepdim);
}
at::Tensor& amax_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  amax_amin<at::meta::structured_amax>(ReduceOp::kMax, Mode::kOut, self, dim, keepdim, out);
  return out;
}
at::Tensor amin(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return amax_amin<at::meta::structured_amin>(ReduceOp::kMin, Mode::kFunctional, self, dim,
                                              keepdim);
}
at::Tensor& amin_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  amax_amin<at::meta::structured_amin>(ReduceOp::kMin, Mode::kOut, self, dim, keepdim, out);
  return out;
}

void check_full_extreme(const at::Tensor& self, const char* name) {
  TORCH_CHECK(self.numel() > 0, name,
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  TORCH_CHECK_TYPE(!self.is_complex(), name, "(): does not support complex input");
}

at::Tensor max_all(const at::Tensor& self) {
  check_full_extreme(self, "max");
  at::Tensor result = at::empty({}, self.options());
  reduce::run({ReduceOp::kMax, self.scalar_type()}, self, DimMask().flip(), false, result);
  return result;
}

at::Tensor min_all(const at::Tensor& self) {
  check_full_extreme(self, "min");
  at::Tensor result = at::empty({}, self.options());
  reduce::run({ReduceOp::kMin, self.scalar_type()}, self, DimMask().flip(), false, result);
  return result;
}

at::Tensor& extreme_unary_out(ReduceOp op, const char* name, const at::Tensor& self,
                              at::Tensor& out) {
  TORCH_CHECK(self.device() == out.device(), "Expected self.device() == out.device()");
  TORCH_CHECK(at::canCast(self.scalar_type(), out.scalar_type()), name,
              ": result type ", self.scalar_type(), " can't be cast to the desired output type ",
              out.scalar_type());
  check_full_extreme(self, name);
  at::native::resize_output(out, {});
  reduce::run({op, self.scalar_type()}, self, DimMask().flip(), false, out);
  return out;
}
at::Tensor& max_unary_out(const at::Tensor& self, at::Tensor& out) {
  return extreme_unary_out(ReduceOp::kMax, "max", self, out);
}
at::Tensor& min_unary_out(const at::Tensor& self, at::Tensor& out) {
  return extreme_unary_out(ReduceOp::kMin, "min", self, out);
}

// max.dim / min.dim: values and the index of the first extreme (NaN first).
template <class Meta>
std::array<at::Tensor, 2> extreme_dim(ReduceOp op, Mode mode, const at::Tensor& self, int64_t dim,
                                      bool keepdim, std::array<at::Tensor, 2> given = {}) {
  return structured<Meta, 2>(
      mode, std::move(given), [&](auto& m) { return m.meta(self, dim, keepdim); },
      [&](auto& o, auto pre) {
        if (self.numel() == 0) return;
        reduce::run({op, self.scalar_type()}, self, mask_of_dim(self, pre.dim), keepdim, o[0],
                    o[1]);
      });
}

std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  auto o = extreme_dim<at::meta::structured_max_dim>(ReduceOp::kArgMax, Mode::kFunctional, self,
                                                     dim, keepdim);
  return {o[0], o[1]};
}
std::tuple<at::Tensor&, at::Tensor&> max_dim_out(const at::Tensor& self, int64_t dim,
                                                 bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  extreme_dim<at::meta::structured_max_dim>(ReduceOp::kArgMax, Mode::kOut, self, dim, keepdim,
                                            {values, indices});
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  auto o = extreme_dim<at::meta::structured_min_dim>(ReduceOp::kArgMin, Mode::kFunctional, self,
                                                     dim, keepdim);
  return {o[0], o[1]};
}
std::tuple<at::Tensor&, at::Tensor&> min_dim_out(const at::Tensor& self, int64_t dim,
                                                 bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  extreme_dim<at::meta::structured_min_dim>(ReduceOp::kArgMin, Mode::kOut, self, dim, keepdim,
                                            {values, indices});
  return {values, indices};
}

template <class Meta>
at::Tensor arg_extreme(ReduceOp op, const char* name, Mode mode, const at::Tensor& self,
                       std::optional<int64_t> dim, bool keepdim, const at::Tensor& out = {}) {
  return structured<Meta>(
      mode, {out}, [&](auto& m) { m.meta(self, dim, keepdim); return 0; },
      [&](auto& o, int) {
        TORCH_CHECK(self.scalar_type() != at::kBool, name, "(): does not support bool input");
        reduce::run({op, self.scalar_type()}, self, mask_of_dim(self, dim), keepdim, {}, o[0]);
      })[0];
}

at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme<at::meta::structured_argmax>(ReduceOp::kArgMax, "argmax", Mode::kFunctional,
                                                  self, dim, keepdim);
}
at::Tensor& argmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                       at::Tensor& out) {
  arg_extreme<at::meta::structured_argmax>(ReduceOp::kArgMax, "argmax", Mode::kOut, self, dim,
                                           keepdim, out);
  return out;
}
at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme<at::meta::structured_argmin>(ReduceOp::kArgMin, "argmin", Mode::kFunctional,
                                                  self, dim, keepdim);
}
at::Tensor& argmin_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                       at::Tensor& out) {
  arg_extreme<at::meta::structured_argmin>(ReduceOp::kArgMin, "argmin", Mode::kOut, self, dim,
                                           keepdim, out);
  return out;
}

std::array<at::Tensor, 2> aminmax_impl(Mode mode, const at::Tensor& self,
                                       std::optional<int64_t> dim, bool keepdim,
                                       std::array<at::Tensor, 2> given = {}) {
  return structured<at::meta::structured_aminmax, 2>(
      mode, std::move(given), [&](auto& m) { m.meta(self, dim, keepdim); return 0; },
      [&](auto& o, int) {
        reduce::run({ReduceOp::kAminmax, self.scalar_type()}, self, mask_of_dim(self, dim),
                    keepdim, o[0], o[1]);
      });
}
std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim,
                                           bool keepdim) {
  auto o = aminmax_impl(Mode::kFunctional, self, dim, keepdim);
  return {o[0], o[1]};
}
std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self,
                                                 std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& min, at::Tensor& max) {
  aminmax_impl(Mode::kOut, self, dim, keepdim, {min, max});
  return {min, max};
}

// ---- all / any / count_nonzero ---------------------------------------------------------------

// A complex value is true where either part is nonzero (NaN included): `any` over the (real,
// imaginary) pairs, a bool tensor of self's shape. Other dtypes are returned as they are.
at::Tensor truth_of(const at::Tensor& self) {
  if (!self.is_complex()) return self;
  return at::any(at::view_as_real(self.resolve_conj().resolve_neg()), -1);
}

// all/any over `dims` (nullopt: every dim; [] for all.dims: none, an elementwise truth test).
template <class Meta, class MetaFn>
at::Tensor all_any(ReduceOp op, Mode mode, const at::Tensor& self, const DimMask& mask,
                   bool keepdim, const at::Tensor& out, MetaFn meta) {
  return structured<Meta>(
      mode, {out}, [&](auto& m) { meta(m); return 0; },
      [&](auto& o, int) {
        if (o[0].numel() == 0) return;
        at::Tensor src = truth_of(self);
        reduce::run({op, src.scalar_type()}, src, mask, keepdim, o[0]);
      })[0];
}

#define VKML_ALL_ANY(name, OP)                                                                    \
  at::Tensor name##_dim(const at::Tensor& self, int64_t dim, bool keepdim) {                      \
    return all_any<at::meta::structured_##name##_dim>(                                            \
        OP, Mode::kFunctional, self, mask_of_dim(self, dim), keepdim, {},                         \
        [&](auto& m) { m.meta(self, dim, keepdim); });                                            \
  }                                                                                               \
  at::Tensor& name##_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) { \
    all_any<at::meta::structured_##name##_dim>(OP, Mode::kOut, self, mask_of_dim(self, dim),     \
                                               keepdim, out,                                      \
                                               [&](auto& m) { m.meta(self, dim, keepdim); });    \
    return out;                                                                                   \
  }                                                                                               \
  at::Tensor name##_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {    \
    return all_any<at::meta::structured_##name##_dims>(                                           \
        OP, Mode::kFunctional, self, mask_of(self, dim, true), keepdim, {},                       \
        [&](auto& m) { m.meta(self, dim, keepdim); });                                            \
  }                                                                                               \
  at::Tensor& name##_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,  \
                              at::Tensor& out) {                                                  \
    all_any<at::meta::structured_##name##_dims>(OP, Mode::kOut, self, mask_of(self, dim, true),  \
                                                keepdim, out,                                     \
                                                [&](auto& m) { m.meta(self, dim, keepdim); });   \
    return out;                                                                                   \
  }                                                                                               \
  at::Tensor name##_all(const at::Tensor& self) {                                                 \
    return all_any<at::meta::structured_##name>(OP, Mode::kFunctional, self, DimMask().flip(),    \
                                                false, {}, [&](auto& m) { m.meta(self); });       \
  }                                                                                               \
  at::Tensor& name##_all_out(const at::Tensor& self, at::Tensor& out) {                           \
    all_any<at::meta::structured_##name>(OP, Mode::kOut, self, DimMask().flip(), false, out,      \
                                         [&](auto& m) { m.meta(self); });                         \
    return out;                                                                                   \
  }

VKML_ALL_ANY(all, ReduceOp::kAll)
VKML_ALL_ANY(any, ReduceOp::kAny)
#undef VKML_ALL_ANY

at::Tensor count_nonzero_dims(const at::Tensor& self, at::IntArrayRef dims) {
  DimMask mask = mask_of(self, dims);
  at::Tensor result = at::empty(at::native::shape_from_dim_mask(self, mask, false),
                                self.options().dtype(at::kLong));
  if (result.numel() == 0) return result;
  at::Tensor src = truth_of(self);
  reduce::run({ReduceOp::kCountNonzero, src.scalar_type()}, src, mask, false, result);
  return result;
}

// trace: the sum of the main diagonal (a strided view), integers summed into int64.
at::Tensor& trace_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  at::ScalarType dtype = at::native::get_dtype_from_self(self, std::nullopt, true);
  return at::sum_out(out, self.diagonal(), at::IntArrayRef{}, false, dtype);
}

at::Tensor trace(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  at::ScalarType dtype = at::native::get_dtype_from_self(self, std::nullopt, true);
  at::Tensor out = at::empty({}, self.options().dtype(dtype));
  return trace_out(self, out);
}

bool equal(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.device() == b.device(), "Cannot compare two tensors on different devices. Got: ",
              a.device(), " and ", b.device());
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "Expected object of scalar type ",
              a.scalar_type(), " but got scalar type ", b.scalar_type(),
              " for argument 'other'");
  if (!a.sizes().equals(b.sizes())) return false;
  if (a.numel() == 0) return true;
  return at::eq(a, b).all().item<bool>();
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum.dim_IntList", sum_dim);
  m.impl("sum.IntList_out", sum_out);
  m.impl("mean.dim", mean_dim);
  m.impl("mean.out", mean_out);
  m.impl("prod", prod_all);
  m.impl("prod.dim_int", prod_dim);
  m.impl("prod.int_out", prod_out);
  m.impl("nansum", nansum);
  m.impl("nansum.out", nansum_out);
  m.impl("amax", amax);
  m.impl("amax.out", amax_out);
  m.impl("amin", amin);
  m.impl("amin.out", amin_out);
  m.impl("max", max_all);
  m.impl("max.unary_out", max_unary_out);
  m.impl("min", min_all);
  m.impl("min.unary_out", min_unary_out);
  m.impl("max.dim", max_dim);
  m.impl("max.dim_max", max_dim_out);
  m.impl("min.dim", min_dim);
  m.impl("min.dim_min", min_dim_out);
  m.impl("argmax", argmax);
  m.impl("argmax.out", argmax_out);
  m.impl("argmin", argmin);
  m.impl("argmin.out", argmin_out);
  m.impl("aminmax", aminmax);
  m.impl("aminmax.out", aminmax_out);
  m.impl("all.dim", all_dim);
  m.impl("all.out", all_dim_out);
  m.impl("all.dims", all_dims);
  m.impl("all.dims_out", all_dims_out);
  m.impl("all", all_all);
  m.impl("all.all_out", all_all_out);
  m.impl("any.dim", any_dim);
  m.impl("any.out", any_dim_out);
  m.impl("any.dims", any_dims);
  m.impl("any.dims_out", any_dims_out);
  m.impl("any", any_all);
  m.impl("any.all_out", any_all_out);
  m.impl("count_nonzero.dim_IntList", count_nonzero_dims);
  m.impl("trace", trace);
  m.impl("trace.out", trace_out);
  m.impl("equal", equal);
}

}  // namespace torch_vkml::ops_reductions
