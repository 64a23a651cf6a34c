// Indexing along one dim: gather, scatter (+ reductions), scatter_add, scatter_reduce,
// index_select, index_add, index_copy, index_fill, index_reduce, take and put_.
// Inputs are validated by PyTorch's meta kernels (CPU-identical errors) before any GPU work;
// bad index values are caught on the device (see BadIndexCheck: one host sync per op).
// complex64 tensors run on the same kernels as kC64 elements (sums and products of complex
// numbers); complex128 index_select runs on (real, imaginary) double pairs.
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_copy.h>
#include <ATen/ops/index_reduce.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/scatter.h>
#include <ATen/ops/scatter_add.h>
#include <ATen/ops/scatter_reduce.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>

#include "common/index_util.h"

namespace torch_vkml::ops_gather_scatter_index {

using vkml::ops::ScatterReduce;

// A fresh contiguous copy of self: the functional forms work on it in place.
at::Tensor clone_for_result(const at::Tensor& self) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  out.copy_(self);
  return out;
}

// out = self (resized), then the in-place form runs on out.
void copy_into_out(const at::Tensor& out, const at::Tensor& self) {
  prepare_out(out, self, self.sizes(), self.scalar_type());
  at::assert_no_internal_overlap(out);
  if (!out.is_same(self)) out.copy_(self);
}

void check_devices(const at::Tensor& self, std::initializer_list<const at::Tensor*> others,
                   const char* op) {
  check_element_dtype(self);
  for (const at::Tensor* t : others) {
    if (t && t->defined()) check_same_device(self, *t, op);
  }
}

// ---- gather -------------------------------------------------------------------------------

void gather_into(const at::Tensor& out, const at::Tensor& self, int64_t dim,
                 const at::Tensor& index) {
  if (index.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  vkml::Device& d = core_device(self);
  BadIndexCheck check(self, true);
  translate_errors([&] {
    vkml::ops::gather(d, to_element_desc(out), to_element_desc(self), static_cast<int>(dim),
                      to_desc(index), check.address());
  });
  int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  check.raise_if_bad(BadIndexError::kRuntime,
                     [&](int64_t v, uint32_t) { return out_of_bounds_message(v, dim, size); });
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse) {
  check_devices(self, {&index}, "gather");
  c10::DeviceGuard guard(self.device());
  at::Tensor m = at::gather(meta(self), dim, meta(index), sparse);
  at::Tensor out = at::empty(m.sizes(), self.options());
  gather_into(out, self, dim, index);
  return out;
}

at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse,
                       at::Tensor& out) {
  check_devices(self, {&index, &out}, "gather");
  c10::DeviceGuard guard(self.device());
  at::Tensor m = at::gather(meta(self), dim, meta(index), sparse);
  prepare_out(out, self, m.sizes(), self.scalar_type());
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_partial_overlap(out, index);
  gather_into(out, self, dim, index);
  return out;
}

// ---- scatter family -----------------------------------------------------------------------

ScatterReduce legacy_reduce(c10::string_view reduce) {
  if (reduce == "add") return ScatterReduce::kSum;
  if (reduce == "multiply") return ScatterReduce::kProd;
  TORCH_CHECK(false, "reduce argument must be either add or multiply.");
}

// self[index] (op)= src or value along dim, in place; self holds the initial values.
void scatter_into(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor* src, const at::Scalar* value, ScatterReduce reduce) {
  if (index.numel() == 0 || self.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  vkml::Device& d = core_device(self);
  BadIndexCheck check(self, true);
  translate_errors([&] {
    int ndim = static_cast<int>(dim);
    if (src) {
      vkml::ops::scatter(d, to_element_desc(self), ndim, to_desc(index), to_element_desc(*src),
                         reduce, check.address());
    } else {
      vkml::ops::scatter_value(d, to_element_desc(self), ndim, to_desc(index),
                               to_element_scalar(*value, self.scalar_type()), reduce,
                               check.address());
    }
  });
  int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  check.raise_if_bad(BadIndexError::kRuntime,
                     [&](int64_t v, uint32_t) { return out_of_bounds_message(v, dim, size); });
}

// The three forms of a scatter variant. `validate` runs the meta kernel on meta twins.
struct ScatterArgs {
  int64_t dim;
  const at::Tensor& index;
  const at::Tensor* src;
  const at::Scalar* value;
  ScatterReduce reduce;
};

template <typename Validate>
at::Tensor scatter_functional(const at::Tensor& self, const ScatterArgs& a, Validate validate) {
  check_devices(self, {&a.index, a.src}, "scatter");
  c10::DeviceGuard guard(self.device());
  validate();
  at::Tensor out = clone_for_result(self);
  scatter_into(out, a.dim, a.index, a.src, a.value, a.reduce);
  return out;
}

template <typename Validate>
at::Tensor& scatter_inplace(at::Tensor& self, const ScatterArgs& a, Validate validate) {
  check_devices(self, {&a.index, a.src}, "scatter_");
  c10::DeviceGuard guard(self.device());
  validate();
  at::assert_no_internal_overlap(self);
  scatter_into(self, a.dim, a.index, a.src, a.value, a.reduce);
  return self;
}

template <typename Validate>
at::Tensor& scatter_out_form(const at::Tensor& self, const ScatterArgs& a, at::Tensor& out,
                             Validate validate) {
  check_devices(self, {&a.index, a.src, &out}, "scatter");
  c10::DeviceGuard guard(self.device());
  validate();
  copy_into_out(out, self);
  scatter_into(out, a.dim, a.index, a.src, a.value, a.reduce);
  return out;
}

// scatter.src / scatter_.src / scatter.src_out
at::Tensor scatter_src(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& src) {
  return scatter_functional(self, {dim, index, &src, nullptr, ScatterReduce::kNone},
                            [&] { at::scatter(meta(self), dim, meta(index), meta(src)); });
}
at::Tensor& scatter_src_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& src) {
  return scatter_inplace(self, {dim, index, &src, nullptr, ScatterReduce::kNone},
                         [&] { at::scatter(meta(self), dim, meta(index), meta(src)); });
}
at::Tensor& scatter_src_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, at::Tensor& out) {
  return scatter_out_form(self, {dim, index, &src, nullptr, ScatterReduce::kNone}, out,
                          [&] { at::scatter(meta(self), dim, meta(index), meta(src)); });
}

// scatter.value / scatter_.value / scatter.value_out
at::Tensor scatter_value(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Scalar& value) {
  return scatter_functional(self, {dim, index, nullptr, &value, ScatterReduce::kNone},
                            [&] { at::scatter(meta(self), dim, meta(index), value); });
}
at::Tensor& scatter_value_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const at::Scalar& value) {
  return scatter_inplace(self, {dim, index, nullptr, &value, ScatterReduce::kNone},
                         [&] { at::scatter(meta(self), dim, meta(index), value); });
}
at::Tensor& scatter_value_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Scalar& value, at::Tensor& out) {
  return scatter_out_form(self, {dim, index, nullptr, &value, ScatterReduce::kNone}, out,
                          [&] { at::scatter(meta(self), dim, meta(index), value); });
}

// scatter.reduce (src, reduce='add'|'multiply') in three forms
at::Tensor scatter_reduce_legacy(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                 const at::Tensor& src, c10::string_view reduce) {
  auto v = [&] { at::scatter(meta(self), dim, meta(index), meta(src), reduce); };
  return scatter_functional(self, {dim, index, &src, nullptr, legacy_reduce(reduce)}, v);
}
at::Tensor& scatter_reduce_legacy_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                                   const at::Tensor& src, c10::string_view reduce) {
  auto v = [&] { at::scatter(meta(self), dim, meta(index), meta(src), reduce); };
  return scatter_inplace(self, {dim, index, &src, nullptr, legacy_reduce(reduce)}, v);
}
at::Tensor& scatter_reduce_legacy_out(const at::Tensor& self, int64_t dim,
                                      const at::Tensor& index, const at::Tensor& src,
                                      c10::string_view reduce, at::Tensor& out) {
  auto v = [&] { at::scatter(meta(self), dim, meta(index), meta(src), reduce); };
  return scatter_out_form(self, {dim, index, &src, nullptr, legacy_reduce(reduce)}, out, v);
}

// scatter.value_reduce in three forms
at::Tensor scatter_value_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                const at::Scalar& value, c10::string_view reduce) {
  auto v = [&] { at::scatter(meta(self), dim, meta(index), value, reduce); };
  return scatter_functional(self, {dim, index, nullptr, &value, legacy_reduce(reduce)}, v);
}
at::Tensor& scatter_value_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                                  const at::Scalar& value, c10::string_view reduce) {
  auto v = [&] { at::scatter(meta(self), dim, meta(index), value, reduce); };
  return scatter_inplace(self, {dim, index, nullptr, &value, legacy_reduce(reduce)}, v);
}
at::Tensor& scatter_value_reduce_out(const at::Tensor& self, int64_t dim,
                                     const at::Tensor& index, const at::Scalar& value,
                                     c10::string_view reduce, at::Tensor& out) {
  auto v = [&] { at::scatter(meta(self), dim, meta(index), value, reduce); };
  return scatter_out_form(self, {dim, index, nullptr, &value, legacy_reduce(reduce)}, out, v);
}

// scatter_add in three forms
at::Tensor scatter_add(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& src) {
  return scatter_functional(self, {dim, index, &src, nullptr, ScatterReduce::kSum},
                            [&] { at::scatter_add(meta(self), dim, meta(index), meta(src)); });
}
at::Tensor& scatter_add_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& src) {
  return scatter_inplace(self, {dim, index, &src, nullptr, ScatterReduce::kSum},
                         [&] { at::scatter_add(meta(self), dim, meta(index), meta(src)); });
}
at::Tensor& scatter_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, at::Tensor& out) {
  return scatter_out_form(self, {dim, index, &src, nullptr, ScatterReduce::kSum}, out,
                          [&] { at::scatter_add(meta(self), dim, meta(index), meta(src)); });
}

// ---- scatter_reduce / index_reduce: sum, prod, mean, amax, amin with include_self ----------

enum class ScatterReduction { kSum, kProd, kMean, kMax, kMin };

ScatterReduction parse_reduction(c10::string_view r) {
  if (r == "sum") return ScatterReduction::kSum;
  if (r == "prod") return ScatterReduction::kProd;
  if (r == "mean") return ScatterReduction::kMean;
  if (r == "amax" || r == "max") return ScatterReduction::kMax;
  if (r == "amin" || r == "min") return ScatterReduction::kMin;
  TORCH_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin, got ", r);
}

ScatterReduce kernel_reduce(ScatterReduction r) {
  switch (r) {
    case ScatterReduction::kSum: case ScatterReduction::kMean: return ScatterReduce::kSum;
    case ScatterReduction::kProd: return ScatterReduce::kProd;
    case ScatterReduction::kMax: return ScatterReduce::kMax;
    case ScatterReduction::kMin: return ScatterReduce::kMin;
  }
  return ScatterReduce::kSum;
}

// Lowest (or highest) value of an integral dtype.
int64_t integral_limit(at::ScalarType t, bool lowest) {
  switch (t) {
    case at::kBool: return lowest ? 0 : 1;
    case at::kByte: return lowest ? 0 : 255;
    case at::kChar: return lowest ? -128 : 127;
    case at::kShort: return lowest ? -32768 : 32767;
    case at::kInt: return lowest ? std::numeric_limits<int32_t>::lowest()
                                 : std::numeric_limits<int32_t>::max();
    default: return lowest ? std::numeric_limits<int64_t>::lowest()
                           : std::numeric_limits<int64_t>::max();
  }
}

// The value that leaves a reduction unchanged (written over self's values when !include_self).
at::Scalar reduction_identity(ScatterReduction r, at::ScalarType t) {
  bool fp = at::isFloatingType(t);
  const double inf = std::numeric_limits<double>::infinity();
  switch (r) {
    case ScatterReduction::kSum: case ScatterReduction::kMean: return 0;
    case ScatterReduction::kProd: return 1;
    case ScatterReduction::kMax: return fp ? at::Scalar(-inf) : at::Scalar(integral_limit(t, true));
    case ScatterReduction::kMin: return fp ? at::Scalar(inf) : at::Scalar(integral_limit(t, false));
  }
  return 0;
}

// out (holding self's values) reduced with src along dim by index; scatter (dim-wise index
// of src's shape) or index (1-D index along dim) addressing.
void reduce_into(const at::Tensor& out, int64_t dim, const at::Tensor& index,
                 const at::Tensor& src, ScatterReduction r, bool include_self, bool index_form) {
  // As the CPU: complex numbers have no order.
  const bool ordered = r == ScatterReduction::kMax || r == ScatterReduction::kMin;
  TORCH_CHECK_NOT_IMPLEMENTED(!(ordered && out.is_complex()), "\"",
                              index_form ? "index_reduce" : "scatter_reduce", "\" with reduce='",
                              r == ScatterReduction::kMax ? "amax" : "amin",
                              "' not implemented for '", out.scalar_type(), "'");
  if (index.numel() == 0 || out.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, out.dim());
  vkml::Device& d = core_device(out);
  BadIndexCheck check(out, true);
  auto scatter_like = [&](const at::Tensor& target, const at::Tensor* values, at::Scalar value,
                          ScatterReduce how) {
    translate_errors([&] {
      int nd = static_cast<int>(dim);
      if (index_form && values) {
        vkml::ops::index_accumulate(d, to_element_desc(target), nd, to_desc(index),
                                    to_element_desc(*values), how, std::nullopt,
                                    check.address());
      } else if (index_form) {
        vkml::ops::index_fill(d, to_element_desc(target), nd, to_desc(index),
                              to_element_scalar(value, target.scalar_type()), nullptr,
                              check.address());
      } else if (values) {
        vkml::ops::scatter(d, to_element_desc(target), nd, to_desc(index),
                           to_element_desc(*values), how, check.address());
      } else {
        vkml::ops::scatter_value(d, to_element_desc(target), nd, to_desc(index),
                                 to_element_scalar(value, target.scalar_type()), how,
                                 check.address());
      }
    });
  };
  if (!include_self) {
    scatter_like(out, nullptr, reduction_identity(r, out.scalar_type()), ScatterReduce::kNone);
  }
  scatter_like(out, &src, 0, kernel_reduce(r));
  if (r == ScatterReduction::kMean) {
    at::Tensor counts = at::empty(out.sizes(), out.options());
    counts.fill_(include_self ? 1 : 0);
    if (index_form) {
      at::Tensor ones = at::empty(src.sizes(), src.options());
      ones.fill_(1);
      scatter_like(counts, &ones, 0, ScatterReduce::kSum);
    } else {
      scatter_like(counts, nullptr, 1, ScatterReduce::kSum);
    }
    translate_errors([&] {
      vkml::ops::divide_by_counts(d, to_element_desc(out), to_element_desc(counts));
    });
  }
  int64_t size = out.dim() == 0 ? 1 : out.size(dim);
  check.raise_if_bad(index_form ? BadIndexError::kIndex : BadIndexError::kRuntime,
                     [&](int64_t v, uint32_t) { return out_of_bounds_message(v, dim, size); });
}

at::Tensor scatter_reduce_two(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Tensor& src, c10::string_view reduce, bool include_self) {
  check_devices(self, {&index, &src}, "scatter_reduce");
  c10::DeviceGuard guard(self.device());
  at::scatter_reduce(meta(self), dim, meta(index), meta(src), reduce, include_self);
  at::Tensor out = clone_for_result(self);
  reduce_into(out, dim, index, src, parse_reduction(reduce), include_self, false);
  return out;
}
at::Tensor& scatter_reduce_two_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                                const at::Tensor& src, c10::string_view reduce,
                                bool include_self) {
  check_devices(self, {&index, &src}, "scatter_reduce_");
  c10::DeviceGuard guard(self.device());
  at::scatter_reduce(meta(self), dim, meta(index), meta(src), reduce, include_self);
  reduce_into(self, dim, index, src, parse_reduction(reduce), include_self, false);
  return self;
}
at::Tensor& scatter_reduce_two_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                   const at::Tensor& src, c10::string_view reduce,
                                   bool include_self, at::Tensor& out) {
  check_devices(self, {&index, &src, &out}, "scatter_reduce");
  c10::DeviceGuard guard(self.device());
  at::scatter_reduce(meta(self), dim, meta(index), meta(src), reduce, include_self);
  copy_into_out(out, self);
  reduce_into(out, dim, index, src, parse_reduction(reduce), include_self, false);
  return out;
}

// index_reduce takes no sum (index_add is one) and, as on the CPU, complex values only with
// include_self.
void check_index_reduce(c10::string_view reduce, const at::Tensor& self, bool include_self) {
  TORCH_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
              "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ",
              reduce, ".");
  TORCH_CHECK_NOT_IMPLEMENTED(include_self || !self.is_complex(),
                              "\"index_reduce_func_exclude_input_init\" not implemented for '",
                              self.scalar_type(), "'");
}

at::Tensor index_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& source, c10::string_view reduce, bool include_self) {
  check_devices(self, {&index, &source}, "index_reduce");
  c10::DeviceGuard guard(self.device());
  at::index_reduce(meta(self), dim, meta(index), meta(source), reduce, include_self);
  check_index_reduce(reduce, self, include_self);
  at::Tensor out = clone_for_result(self);
  reduce_into(out, dim, index, source, parse_reduction(reduce), include_self, true);
  return out;
}
at::Tensor& index_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, c10::string_view reduce, bool include_self) {
  check_devices(self, {&index, &source}, "index_reduce_");
  c10::DeviceGuard guard(self.device());
  at::index_reduce(meta(self), dim, meta(index), meta(source), reduce, include_self);
  check_index_reduce(reduce, self, include_self);
  reduce_into(self, dim, index, source, parse_reduction(reduce), include_self, true);
  return self;
}
at::Tensor& index_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor& source, c10::string_view reduce, bool include_self,
                             at::Tensor& out) {
  check_devices(self, {&index, &source, &out}, "index_reduce");
  c10::DeviceGuard guard(self.device());
  at::index_reduce(meta(self), dim, meta(index), meta(source), reduce, include_self);
  check_index_reduce(reduce, self, include_self);
  copy_into_out(out, self);
  reduce_into(out, dim, index, source, parse_reduction(reduce), include_self, true);
  return out;
}

// ---- index_select -------------------------------------------------------------------------

void index_select_into(const at::Tensor& out, const at::Tensor& self, int64_t dim,
                       const at::Tensor& index) {
  TORCH_CHECK(self.dim() > 0 || index.numel() == 1,
              "index_select(): Index to scalar can have only 1 value, got ", index.numel(),
              " value(s)");
  if (out.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  vkml::Device& d = core_device(self);
  BadIndexCheck check(self, true);
  translate_errors([&] {
    vkml::ops::index_select(d, to_element_desc(out), to_element_desc(self), static_cast<int>(dim),
                            to_desc(index), check.address());
  });
  check.raise_if_bad(BadIndexError::kIndex,
                     [](int64_t, uint32_t) { return std::string("index out of range in self"); });
}

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  if (self.scalar_type() == at::kComplexDouble) {
    // complex128 values select as (real, imaginary) double pairs; a 0-dim tensor as one of 1
    // element (its pair dimension must not be the one indexed).
    at::Tensor m = at::index_select(meta(self), dim, meta(index));
    at::Tensor x = self.dim() == 0 ? self.unsqueeze(0) : self;
    at::Tensor pairs = at::view_as_real(x.resolve_conj().resolve_neg());
    const int64_t d = at::maybe_wrap_dim(dim, x.dim());
    return at::view_as_complex(ops_gather_scatter_index::index_select(pairs, d, index))
        .reshape(m.sizes());
  }
  check_devices(self, {&index}, "index_select");
  c10::DeviceGuard guard(self.device());
  at::Tensor m = at::index_select(meta(self), dim, meta(index));
  at::Tensor out = at::empty(m.sizes(), self.options());
  index_select_into(out, self, dim, index);
  return out;
}

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             at::Tensor& out) {
  check_devices(self, {&index, &out}, "index_select");
  c10::DeviceGuard guard(self.device());
  at::Tensor m = at::index_select(meta(self), dim, meta(index));
  TORCH_CHECK(out.scalar_type() == self.scalar_type(),
              "index_select(): self and result must have the same scalar type");
  prepare_out(out, self, m.sizes(), self.scalar_type());
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
  index_select_into(out, self, dim, index);
  return out;
}

// ---- index_add / index_copy ---------------------------------------------------------------

void index_accumulate_into(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, ScatterReduce how, const at::Scalar& alpha,
                           BadIndexError kind, const char* prefix) {
  if (index.numel() == 0 || self.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  vkml::Device& d = core_device(self);
  BadIndexCheck check(self, true);
  translate_errors([&] {
    vkml::ops::index_accumulate(d, to_element_desc(self), static_cast<int>(dim), to_desc(index),
                                to_element_desc(source), how,
                                to_element_scalar(alpha, self.scalar_type()), check.address());
  });
  int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  check.raise_if_bad(kind, [&](int64_t v, uint32_t) {
    return std::string(prefix) + out_of_bounds_message(v, dim, size);
  });
}

at::Tensor index_add(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                     const at::Tensor& source, const at::Scalar& alpha) {
  check_devices(self, {&index, &source}, "index_add");
  c10::DeviceGuard guard(self.device());
  at::index_add(meta(self), dim, meta(index), meta(source), alpha);
  at::Tensor out = clone_for_result(self);
  index_accumulate_into(out, dim, index, source, ScatterReduce::kSum, alpha,
                        BadIndexError::kRuntime, "");
  return out;
}
at::Tensor& index_add_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& source, const at::Scalar& alpha) {
  check_devices(self, {&index, &source}, "index_add_");
  c10::DeviceGuard guard(self.device());
  at::index_add(meta(self), dim, meta(index), meta(source), alpha);
  at::assert_no_internal_overlap(self);
  index_accumulate_into(self, dim, index, source, ScatterReduce::kSum, alpha,
                        BadIndexError::kRuntime, "");
  return self;
}
at::Tensor& index_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, const at::Scalar& alpha, at::Tensor& out) {
  check_devices(self, {&index, &source, &out}, "index_add");
  c10::DeviceGuard guard(self.device());
  at::index_add(meta(self), dim, meta(index), meta(source), alpha);
  copy_into_out(out, self);
  index_accumulate_into(out, dim, index, source, ScatterReduce::kSum, alpha,
                        BadIndexError::kRuntime, "");
  return out;
}

at::Tensor index_copy(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& source) {
  check_devices(self, {&index, &source}, "index_copy");
  c10::DeviceGuard guard(self.device());
  at::index_copy(meta(self), dim, meta(index), meta(source));
  at::Tensor out = clone_for_result(self);
  index_accumulate_into(out, dim, index, source, ScatterReduce::kNone, 1, BadIndexError::kIndex,
                        "index_copy_(): ");
  return out;
}
at::Tensor& index_copy_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& source) {
  check_devices(self, {&index, &source}, "index_copy_");
  c10::DeviceGuard guard(self.device());
  at::index_copy(meta(self), dim, meta(index), meta(source));
  at::assert_no_internal_overlap(self);
  index_accumulate_into(self, dim, index, source, ScatterReduce::kNone, 1,
                        BadIndexError::kIndex, "index_copy_(): ");
  return self;
}
at::Tensor& index_copy_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, at::Tensor& out) {
  check_devices(self, {&index, &source, &out}, "index_copy");
  c10::DeviceGuard guard(self.device());
  at::index_copy(meta(self), dim, meta(index), meta(source));
  copy_into_out(out, self);
  index_accumulate_into(out, dim, index, source, ScatterReduce::kNone, 1, BadIndexError::kIndex,
                        "index_copy_(): ");
  return out;
}

// ---- index_fill_ --------------------------------------------------------------------------

void index_fill_into(at::Tensor& self, int64_t dim, const at::Tensor& index,
                     const at::Scalar& value, const at::Tensor* value_tensor) {
  check_devices(self, {&index}, "index_fill_");
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong,
                    "index_fill_(): Expected dtype int64 for index.");
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_fill_(): Index is supposed to be a vector");
  dim = at::maybe_wrap_dim(dim, self.dim());
  at::assert_no_internal_overlap(self);
  if (index.numel() == 0 || self.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  vkml::Device& d = core_device(self);
  BadIndexCheck check(self, true);
  translate_errors([&] {
    vkml::TensorDesc vt;
    if (value_tensor) vt = to_element_desc(*value_tensor);
    vkml::ops::index_fill(d, to_element_desc(self), static_cast<int>(dim), to_desc(index),
                          to_element_scalar(value, self.scalar_type()),
                          value_tensor ? &vt : nullptr, check.address());
  });
  int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  check.raise_if_bad(BadIndexError::kIndex,
                     [&](int64_t v, uint32_t) { return out_of_bounds_message(v, dim, size); });
}

at::Tensor& index_fill_scalar_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Scalar& value) {
  check_element_dtype(self);
  index_fill_into(self, dim, index, value, nullptr);
  return self;
}

at::Tensor& index_fill_tensor_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  check_element_dtype(self);
  if (!on_vkml(value)) return index_fill_scalar_(self, dim, index, value.item());
  check_same_device(self, value, "index_fill_");
  c10::DeviceGuard guard(self.device());
  at::Tensor v = value.scalar_type() == self.scalar_type() ? value : value.to(self.scalar_type());
  index_fill_into(self, dim, index, 0, &v);
  return self;
}

// ---- take / put_ --------------------------------------------------------------------------

std::string flat_message(int64_t v, int64_t numel) {
  return "out of range: tried to access index " + std::to_string(v) + " on a tensor of " +
         std::to_string(numel) + " elements.";
}

void take_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& index) {
  TORCH_CHECK(index.scalar_type() == at::kLong,
              "take(): Expected a long tensor for index, but got ", index.scalar_type());
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "take(): self and out expected to have the same dtype, but got self.dtype = ",
              self.scalar_type(), " and out.dtype = ", out.scalar_type());
  TORCH_CHECK_INDEX(!(self.numel() == 0 && index.numel() != 0),
                    "take(): tried to take from an empty tensor");
  at::native::resize_output(out, index.sizes());
  if (index.numel() == 0) return;
  vkml::Device& d = core_device(self);
  BadIndexCheck check(self, true);
  translate_errors([&] {
    vkml::ops::take(d, to_element_desc(out), to_element_desc(self), to_desc(index),
                    check.address());
  });
  check.raise_if_bad(BadIndexError::kIndex,
                     [&](int64_t v, uint32_t) { return flat_message(v, self.numel()); });
}

at::Tensor take(const at::Tensor& self, const at::Tensor& index) {
  check_devices(self, {&index}, "take");
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty(index.sizes(), self.options());
  take_into(out, self, index);
  return out;
}

at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out) {
  check_devices(self, {&index, &out}, "take");
  c10::DeviceGuard guard(self.device());
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, index);
  at::assert_no_overlap(out, self);
  take_into(out, self, index);
  return out;
}

at::Tensor& put_(at::Tensor& self, const at::Tensor& index, const at::Tensor& source,
                 bool accumulate) {
  check_devices(self, {&index, &source}, "put_");
  TORCH_CHECK(index.scalar_type() == at::kLong,
              "put_(): Expected a long tensor for index, but got ", index.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "put_(): self and source expected to have the same dtype, but got self.dtype = ",
              self.scalar_type(), " and source.dtype = ", source.scalar_type());
  TORCH_CHECK_INDEX(source.numel() == index.numel(),
                    "put_(): Expected source and index to have the same number of elements, but "
                    "got source.numel() = ", source.numel(), ", index.numel() = ", index.numel());
  TORCH_CHECK_INDEX(!(self.numel() == 0 && index.numel() != 0),
                    "put_(): Tried to put elements into an empty tensor");
  at::assert_no_internal_overlap(self);
  at::assert_no_overlap(self, index);
  at::assert_no_overlap(self, source);
  if (index.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  // Source elements pair with index elements in row-major order: lay source on index's shape.
  at::Tensor src = source.sizes() == index.sizes() ? source : source.reshape(index.sizes());
  vkml::Device& d = core_device(self);
  BadIndexCheck check(self, true);
  translate_errors([&] {
    vkml::ops::put(d, to_element_desc(self), to_desc(index), to_element_desc(src), accumulate,
                   check.address());
  });
  check.raise_if_bad(BadIndexError::kIndex,
                     [&](int64_t v, uint32_t) { return flat_message(v, self.numel()); });
  return self;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("gather", gather);
  m.impl("gather.out", gather_out);
  m.impl("scatter.src", scatter_src);
  m.impl("scatter_.src", scatter_src_);
  m.impl("scatter.src_out", scatter_src_out);
  m.impl("scatter.value", scatter_value);
  m.impl("scatter_.value", scatter_value_);
  m.impl("scatter.value_out", scatter_value_out);
  m.impl("scatter.reduce", scatter_reduce_legacy);
  m.impl("scatter_.reduce", scatter_reduce_legacy_);
  m.impl("scatter.reduce_out", scatter_reduce_legacy_out);
  m.impl("scatter.value_reduce", scatter_value_reduce);
  m.impl("scatter_.value_reduce", scatter_value_reduce_);
  m.impl("scatter.value_reduce_out", scatter_value_reduce_out);
  m.impl("scatter_add", scatter_add);
  m.impl("scatter_add_", scatter_add_);
  m.impl("scatter_add.out", scatter_add_out);
  m.impl("scatter_reduce.two", scatter_reduce_two);
  m.impl("scatter_reduce_.two", scatter_reduce_two_);
  m.impl("scatter_reduce.two_out", scatter_reduce_two_out);
  m.impl("index_reduce", index_reduce);
  m.impl("index_reduce_", index_reduce_);
  m.impl("index_reduce.out", index_reduce_out);
  m.impl("index_select", index_select);
  m.impl("index_select.out", index_select_out);
  m.impl("index_add", index_add);
  m.impl("index_add_", index_add_);
  m.impl("index_add.out", index_add_out);
  m.impl("index_copy", index_copy);
  m.impl("index_copy_", index_copy_);
  m.impl("index_copy.out", index_copy_out);
  m.impl("index_fill_.int_Scalar", index_fill_scalar_);
  m.impl("index_fill_.int_Tensor", index_fill_tensor_);
  m.impl("take", take);
  m.impl("take.out", take_out);
  m.impl("put_", put_);
}

}  // namespace torch_vkml::ops_gather_scatter_index
