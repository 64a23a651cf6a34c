// ATen kernels of the sort family: sort (stable or not: always stable), topk, kthvalue, median
// (per dim and whole), nanmedian and mode; searchsorted and bucketize are in
// searchsorted_bucketize.cpp.
// argsort and msort are composite in PyTorch and reach sort.stable.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/BucketizationUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <tuple>

#include "common/bridge.h"
#include "vkml/sort.h"

namespace torch_vkml::ops_sort_topk_median {

void check_sortable(const at::Tensor& self, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(is_supported_dtype(self.scalar_type()), "vkml: ", op,
                              " does not support ", self.scalar_type());
}

void check_out_dtypes(const at::Tensor& self, const at::Tensor& values, const at::Tensor& indices,
                      const char* op) {
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), op, ": expected out values dtype ",
              self.scalar_type(), " but got ", values.scalar_type());
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": expected out indices dtype Long but got ",
              indices.scalar_type());
  TORCH_CHECK(values.device() == self.device() && indices.device() == self.device(), op,
              ": out tensors must be on the input's device");
}

// Runs the core sort into `values`/`indices` (already shaped with `count` along dim, keepdim
// layout); an output aliasing the input is written through a temporary.
void run_sort(const at::Tensor& self, int64_t dim, vkml::ops::SortSelection sel,
              const at::Tensor& values, const at::Tensor& indices) {
  if (self.numel() == 0) return;
  bool alias = values.is_alias_of(self) || indices.is_alias_of(self);
  at::Tensor v = alias ? at::empty_like(values, at::MemoryFormat::Contiguous) : values;
  at::Tensor i = alias ? at::empty_like(indices, at::MemoryFormat::Contiguous) : indices;
  translate_errors([&] {
    vkml::TensorDesc in = to_desc(self), vd = to_desc(v), id = to_desc(i);
    vkml::ops::sort_lines(core_device(self), in, static_cast<int>(dim), sel, &vd, &id);
  });
  if (alias) {
    values.copy_(v);
    indices.copy_(i);
  }
}

std::tuple<at::Tensor&, at::Tensor&> sort_values_stable(const at::Tensor& self,
                                                        std::optional<bool> /*stable*/, int64_t dim,
                                                        bool descending, at::Tensor& values,
                                                        at::Tensor& indices) {
  check_sortable(self, "sort");
  dim = at::maybe_wrap_dim(dim, self.dim());
  check_out_dtypes(self, values, indices, "sort");
  at::native::resize_output(values, self.sizes());
  at::native::resize_output(indices, self.sizes());
  vkml::ops::SortSelection sel;
  sel.descending = descending;
  run_sort(self, dim, sel, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, std::optional<bool> stable,
                                               int64_t dim, bool descending) {
  // The input's layout, as the meta function (and so torch.compile's reading of this extern
  // call) gives the outputs.
  at::Tensor values = at::empty_like(self);
  at::Tensor indices = at::empty_like(self, self.options().dtype(at::kLong));
  sort_values_stable(self, stable, dim, descending, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> sort_values(const at::Tensor& self, int64_t dim,
                                                 bool descending, at::Tensor& values,
                                                 at::Tensor& indices) {
  return sort_values_stable(self, false, dim, descending, values, indices);
}

std::tuple<at::Tensor, at::Tensor> sort_default(const at::Tensor& self, int64_t dim,
                                                bool descending) {
  return sort_stable(self, false, dim, descending);
}

// Shape of `self` with `count` along dim (the keepdim layout of a selection).
std::vector<int64_t> selected_shape(const at::Tensor& self, int64_t dim, int64_t count) {
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (!shape.empty()) shape[dim] = count;
  return shape;
}

std::tuple<at::Tensor&, at::Tensor&> topk_values(const at::Tensor& self, int64_t k, int64_t dim,
                                                 bool largest, bool /*sorted*/, at::Tensor& values,
                                                 at::Tensor& indices) {
  check_sortable(self, "topk");
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  TORCH_CHECK(k >= 0 && k <= (self.dim() > 0 ? self.size(dim) : 1),
              "selected index k out of range");
  check_out_dtypes(self, values, indices, "topk");
  std::vector<int64_t> shape = selected_shape(self, dim, k);
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  // Perf TODO: a full sort, then the first k; a partial selection would do less work.
  vkml::ops::SortSelection sel;
  sel.descending = largest;
  sel.count = k;
  run_sort(self, dim, sel, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, int64_t k, int64_t dim,
                                        bool largest, bool sorted) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  topk_values(self, k, dim, largest, sorted, values, indices);
  return {values, indices};
}

// One sorted position per line (kthvalue, median) into keepdim-or-not outputs.
void select_one(const at::Tensor& self, int64_t dim, bool keepdim, vkml::ops::SortSelection sel,
                at::Tensor& values, at::Tensor& indices, const char* op) {
  check_out_dtypes(self, values, indices, op);
  std::vector<int64_t> shape = selected_shape(self, dim, 1);
  if (!keepdim && self.dim() > 0) shape.erase(shape.begin() + dim);
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  bool unsqueeze = !keepdim && self.dim() > 0;
  run_sort(self, dim, sel, unsqueeze ? values.unsqueeze(dim) : values,
           unsqueeze ? indices.unsqueeze(dim) : indices);
}

std::tuple<at::Tensor&, at::Tensor&> kthvalue_values(const at::Tensor& self, int64_t k, int64_t dim,
                                                     bool keepdim, at::Tensor& values,
                                                     at::Tensor& indices) {
  check_sortable(self, "kthvalue");
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  int64_t slice = self.dim() == 0 ? 1 : self.size(dim);
  TORCH_CHECK(k >= 1 && k <= slice, "kthvalue(): selected number k out of range for dimension ",
              dim);
  vkml::ops::SortSelection sel;
  sel.start = k - 1;
  sel.count = 1;
  select_one(self, dim, keepdim, sel, values, indices, "kthvalue");
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> kthvalue(const at::Tensor& self, int64_t k, int64_t dim,
                                            bool keepdim) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  kthvalue_values(self, k, dim, keepdim, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> median_dim_values(const at::Tensor& self, int64_t dim,
                                                       bool keepdim, at::Tensor& values,
                                                       at::Tensor& indices) {
  check_sortable(self, "median");
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  TORCH_CHECK_INDEX(size > 0, "median() cannot compute median for a dimension of size 0 because ",
                    "the operation does not have an identity");
  vkml::ops::SortSelection sel;
  sel.start = (size - 1) / 2;
  sel.count = 1;
  sel.nan_median = true;
  select_one(self, dim, keepdim, sel, values, indices, "median");
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> median_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  median_dim_values(self, dim, keepdim, values, indices);
  return {values, indices};
}

// ---- whole-tensor median, nanmedian, mode ---------------------------------------------------

// median() / nanmedian() of the whole tensor: a 0-dim value; an empty tensor gives NaN as on
// the CPU.
at::Tensor median_all_impl(const at::Tensor& self, bool ignore_nan, const char* op) {
  check_sortable(self, op);
  at::Tensor result = at::empty({}, self.options());
  if (self.numel() == 0) return result.fill_(std::numeric_limits<double>::quiet_NaN());
  at::Tensor flat = self.reshape({-1});
  if (ignore_nan && at::isFloatingType(self.scalar_type())) {
    auto [values, indices] = at::nanmedian(flat, 0, false);
    return result.copy_(values);
  }
  vkml::ops::SortSelection sel;
  sel.start = (flat.numel() - 1) / 2;
  sel.count = 1;
  sel.nan_median = true;
  at::Tensor index = at::empty({1}, self.options().dtype(at::kLong));
  run_sort(flat, 0, sel, result.view({1}), index);
  return result;
}

at::Tensor median_all(const at::Tensor& self) { return median_all_impl(self, false, "median"); }
at::Tensor nanmedian_all(const at::Tensor& self) {
  return median_all_impl(self, true, "nanmedian");
}

// nanmedian along a dim: the lower median of each line's non-NaN values (NaNs sort last), or
// its first NaN when the line holds nothing else.
std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_values(const at::Tensor& self, int64_t dim,
                                                          bool keepdim, at::Tensor& values,
                                                          at::Tensor& indices) {
  check_sortable(self, "nanmedian");
  if (!at::isFloatingType(self.scalar_type())) {
    return median_dim_values(self, dim, keepdim, values, indices);
  }
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  TORCH_CHECK_INDEX(size > 0, "nanmedian() cannot compute median for a dimension of size 0 ",
                    "because the operation does not have an identity");
  check_out_dtypes(self, values, indices, "nanmedian");
  at::Tensor x = self.dim() == 0 ? self.view({1}) : self;
  int64_t d = self.dim() == 0 ? 0 : dim;
  auto [sorted, order] = at::sort(x, /*stable=*/true, d, false);
  at::Tensor real = at::logical_not(at::isnan(x)).sum(d, /*keepdim=*/true);
  // (count - 1) / 2, with an all-NaN line taking position 0.
  at::Tensor pos = at::bitwise_right_shift(real.sub_(1).clamp_min_(0), 1);
  std::vector<int64_t> shape = selected_shape(self, dim, 1);
  if (!keepdim && self.dim() > 0) shape.erase(shape.begin() + dim);
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  if (self.numel() == 0) return {values, indices};
  values.copy_(sorted.gather(d, pos).view(shape));
  indices.copy_(order.gather(d, pos).view(shape));
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> nanmedian_dim(const at::Tensor& self, int64_t dim,
                                                 bool keepdim) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  nanmedian_dim_values(self, dim, keepdim, values, indices);
  return {values, indices};
}

// mode: per line, the most frequent value (the smallest on ties) and the index of its last
// occurrence. The stable sort puts each run of equal values together in index order; a run's
// length so far is the distance to its start (a running max of the run starts), and the first
// position holding the longest length ends the wanted run.
std::tuple<at::Tensor&, at::Tensor&> mode_values(const at::Tensor& self, int64_t dim,
                                                 bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  check_sortable(self, "mode");
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  check_out_dtypes(self, values, indices, "mode");
  int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  TORCH_CHECK_INDEX(self.numel() == 0 || n > 0, "mode(): Expected reduction dim ", dim,
                    " to have non-zero size.");
  std::vector<int64_t> shape = selected_shape(self, dim, 1);
  if (!keepdim && self.dim() > 0) shape.erase(shape.begin() + dim);
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  if (self.numel() == 0) return {values, indices};
  at::Tensor x = self.dim() == 0 ? self.view({1}) : self;
  int64_t d = self.dim() == 0 ? 0 : dim;
  auto [sorted, order] = at::sort(x, /*stable=*/true, d, false);
  at::Tensor starts_here = at::empty(sorted.sizes(), self.options().dtype(at::kBool));
  starts_here.narrow(d, 0, 1).fill_(true);
  if (n > 1) {
    at::Tensor rest = starts_here.narrow(d, 1, n - 1);
    at::ne_out(rest, sorted.narrow(d, 1, n - 1), sorted.narrow(d, 0, n - 1));
  }
  std::vector<int64_t> line(x.dim(), 1);
  line[d] = n;
  at::Tensor pos = at::arange(n, self.options().dtype(at::kLong)).view(line).expand(x.sizes());
  at::Tensor run_start = std::get<0>(at::cummax(at::mul(pos, starts_here), d));
  at::Tensor best = at::argmax(at::sub(pos, run_start), d, /*keepdim=*/true);
  values.copy_(sorted.gather(d, best).view(shape));
  indices.copy_(order.gather(d, best).view(shape));
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> mode(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  mode_values(self, dim, keepdim, values, indices);
  return {values, indices};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sort", sort_default);
  m.impl("sort.values", sort_values);
  m.impl("sort.stable", sort_stable);
  m.impl("sort.values_stable", sort_values_stable);
  m.impl("topk", topk);
  m.impl("topk.values", topk_values);
  m.impl("kthvalue", kthvalue);
  m.impl("kthvalue.values", kthvalue_values);
  m.impl("median.dim", median_dim);
  m.impl("median.dim_values", median_dim_values);
  m.impl("median", median_all);
  m.impl("nanmedian", nanmedian_all);
  m.impl("nanmedian.dim", nanmedian_dim);
  m.impl("nanmedian.dim_values", nanmedian_dim_values);
  m.impl("mode", mode);
  m.impl("mode.values", mode_values);
}

}  // namespace torch_vkml::ops_sort_topk_median
