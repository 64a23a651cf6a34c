// ATen kernels of unique / unique_consecutive (whole tensor or slices along a dim) and isin.
// unique: a stable sort (slices: one stable sort per column, last column first, which orders
// them lexicographically), flags where a run of equal values starts (NaN never equals NaN, as on
// the CPU), their running sum as group ids, and one host read of the group count to size the
// outputs (CUDA reads it too). Every step is a vkml kernel; nothing else waits for the device.
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "common/bridge.h"

namespace torch_vkml::ops_unique_isin {

using Triple = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

void check_unique_dtype(const at::Tensor& self, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(is_supported_dtype(self.scalar_type()), "vkml: ", op,
                              " does not support ", self.scalar_type());
}

at::Tensor empty_long(const at::Tensor& like, at::IntArrayRef sizes) {
  return at::empty(sizes, like.options().dtype(at::kLong));
}

// Runs of equal consecutive rows of `rows` ([n] values or [n, m] slices, n > 0).
struct Groups {
  at::Tensor gid;     // int64 [n]: the run each row belongs to
  at::Tensor starts;  // int64 [num + 1]: first row of each run, then n
  int64_t num = 0;
};

Groups consecutive_groups(const at::Tensor& rows) {
  int64_t n = rows.size(0);
  at::Tensor flag = at::empty({n}, rows.options().dtype(at::kBool));
  flag.narrow(0, 0, 1).fill_(true);
  if (n > 1) {
    at::Tensor differs = at::ne(rows.narrow(0, 1, n - 1), rows.narrow(0, 0, n - 1));
    if (differs.dim() > 1) differs = differs.any(1);
    flag.narrow(0, 1, n - 1).copy_(differs);
  }
  Groups g;
  g.gid = at::cumsum(flag, 0, at::kLong).sub_(1);
  g.num = g.gid.select(0, n - 1).item<int64_t>() + 1;  // the one host read
  // Each run's first row writes its position; the other rows all land in the spare last slot,
  // which is then overwritten with n.
  at::Tensor slot = g.gid.masked_fill(flag.logical_not(), g.num);
  g.starts = empty_long(rows, {g.num + 1});
  g.starts.scatter_(0, slot, at::arange(n, rows.options().dtype(at::kLong)));
  g.starts.narrow(0, g.num, 1).fill_(n);
  return g;
}

at::Tensor run_counts(const Groups& g) {
  return at::sub(g.starts.narrow(0, 1, g.num), g.starts.narrow(0, 0, g.num));
}

at::Tensor run_firsts(const Groups& g) { return g.starts.narrow(0, 0, g.num); }

// ---- whole-tensor unique ----------------------------------------------------------------------

Triple unique_flat(const at::Tensor& self, bool sort, bool return_inverse, bool return_counts,
                   const char* op) {
  check_unique_dtype(self, op);
  at::Tensor flat = self.reshape({-1});
  int64_t n = flat.numel();
  at::Tensor inverse = empty_long(self, {0}), counts = empty_long(self, {0});
  if (n == 0) {
    if (return_inverse) inverse = empty_long(self, self.sizes());
    return {at::empty({0}, self.options()), inverse, counts};
  }
  at::Tensor values = flat, perm;
  if (sort) std::tie(values, perm) = at::sort(flat, /*stable=*/true, 0, /*descending=*/false);
  Groups g = consecutive_groups(values);
  at::Tensor out = values.index_select(0, run_firsts(g));
  if (return_inverse) {
    inverse = sort ? empty_long(self, {n}).scatter_(0, perm, g.gid) : g.gid;
    inverse = inverse.view(self.sizes());
  }
  if (return_counts) counts = run_counts(g);
  return {out, inverse, counts};
}

Triple unique2(const at::Tensor& self, bool /*sorted: the CPU sorts either way*/,
               bool return_inverse, bool return_counts) {
  return unique_flat(self, true, return_inverse, return_counts, "unique");
}

std::tuple<at::Tensor, at::Tensor> unique1(const at::Tensor& self, bool sorted,
                                           bool return_inverse) {
  auto [out, inverse, counts] = unique_flat(self, true, return_inverse, false, "unique");
  return {out, inverse};
}

// ---- unique along a dim -----------------------------------------------------------------------

Triple unique_slices(const at::Tensor& self, int64_t dim, bool sort, const char* op) {
  check_unique_dtype(self, op);
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t zero_dims = 0;
  for (int64_t s : self.sizes()) zero_dims += s == 0 ? 1 : 0;
  if (self.size(dim) == 0) {
    TORCH_CHECK(zero_dims == 1,
                "Number of zero sized dimensions is more than one, so unique cannot be applied ");
    return {at::empty(self.sizes(), self.options()), empty_long(self, {0}),
            empty_long(self, {0})};
  }
  TORCH_CHECK(zero_dims == 0,
              "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
              "applied");
  at::Tensor moved = self.movedim(dim, 0);
  int64_t n = moved.size(0);
  at::Tensor rows = moved.reshape({n, -1});
  int64_t m = rows.size(1);
  at::Tensor perm;
  if (sort) {
    // Stable sorts by each column, last first: the order is lexicographic over the slices.
    perm = at::arange(n, self.options().dtype(at::kLong));
    for (int64_t c = m - 1; c >= 0; --c) {
      at::Tensor key = rows.select(1, c).index_select(0, perm);
      at::Tensor order = std::get<1>(at::sort(key, /*stable=*/true, 0, false));
      perm = perm.index_select(0, order);
    }
    rows = rows.index_select(0, perm);
  }
  Groups g = consecutive_groups(rows);
  std::vector<int64_t> shape(moved.sizes().begin(), moved.sizes().end());
  shape[0] = g.num;
  // The result is a new dense tensor, as the CPU's: the groups laid out back along `dim`.
  at::Tensor out = rows.index_select(0, run_firsts(g))
                       .view(shape)
                       .movedim(0, dim)
                       .clone(at::MemoryFormat::Contiguous);
  at::Tensor inverse = sort ? empty_long(self, {n}).scatter_(0, perm, g.gid) : g.gid;
  return {out, inverse, run_counts(g)};
}

Triple unique_dim(const at::Tensor& self, int64_t dim, bool /*sorted*/, bool /*return_inverse*/,
                  bool /*return_counts*/) {
  // The CPU returns inverse and counts whether asked or not.
  return unique_slices(self, dim, true, "unique_dim");
}

Triple unique_dim_consecutive(const at::Tensor& self, int64_t dim, bool /*return_inverse*/,
                              bool /*return_counts*/) {
  return unique_slices(self, dim, false, "unique_dim_consecutive");
}

Triple unique_consecutive(const at::Tensor& self, bool return_inverse, bool return_counts,
                          std::optional<int64_t> dim) {
  if (dim.has_value() && self.dim() > 0) {
    return unique_slices(self, *dim, false, "unique_consecutive");
  }
  return unique_flat(self, false, return_inverse, return_counts, "unique_consecutive");
}

// ---- isin ------------------------------------------------------------------------------------

// out = elements in test_elements (== semantics: NaN is in nothing), by a binary search of
// each element in the sorted test elements.
at::Tensor& isin_out(const at::Tensor& elements, const at::Tensor& test_elements,
                     bool /*assume_unique*/, bool invert, at::Tensor& out) {
  at::ScalarType common = at::result_type(elements, test_elements);
  TORCH_CHECK_NOT_IMPLEMENTED(is_supported_dtype(common), "vkml: isin does not support ", common);
  TORCH_CHECK(out.scalar_type() == at::kBool, "isin: expected out dtype Bool but got ",
              out.scalar_type());
  at::native::resize_output(out, elements.sizes());
  if (elements.numel() == 0) return out;
  if (test_elements.numel() == 0) {
    out.fill_(invert);
    return out;
  }
  at::Tensor e = elements.to(common);
  at::Tensor tests = std::get<0>(at::sort(test_elements.to(common).reshape({-1}), false, 0, false));
  int64_t n = tests.numel();
  at::Tensor pos = at::searchsorted(tests, e).clamp_max_(n - 1);
  at::Tensor nearest = tests.index_select(0, pos.reshape({-1})).view(e.sizes());
  if (invert) {
    at::ne_out(out, nearest, e);
  } else {
    at::eq_out(out, nearest, e);
  }
  return out;
}

at::Tensor isin(const at::Tensor& elements, const at::Tensor& test_elements, bool assume_unique,
                bool invert) {
  at::Tensor out = at::empty(elements.sizes(), elements.options().dtype(at::kBool));
  return isin_out(elements, test_elements, assume_unique, invert, out);
}

at::Tensor& isin_scalar_out(const at::Tensor& elements, const at::Scalar& test, bool,
                            bool invert, at::Tensor& out) {
  return invert ? at::ne_out(out, elements, test) : at::eq_out(out, elements, test);
}

at::Tensor isin_scalar(const at::Tensor& elements, const at::Scalar& test, bool assume_unique,
                       bool invert) {
  at::Tensor out = at::empty(elements.sizes(), elements.options().dtype(at::kBool));
  return isin_scalar_out(elements, test, assume_unique, invert, out);
}

at::Tensor& isin_scalar_tensor_out(const at::Scalar& element, const at::Tensor& test_elements,
                                   bool assume_unique, bool invert, at::Tensor& out) {
  // The scalar takes the common dtype on the CPU before it moves: a Python float is a float64
  // tensor, which a device without fp64 cannot hold.
  at::Tensor wrapped = at::native::wrapped_scalar_tensor(element);
  at::Tensor e = wrapped.to(at::result_type(wrapped, test_elements)).to(test_elements.device());
  return isin_out(e, test_elements, assume_unique, invert, out);
}

at::Tensor isin_scalar_tensor(const at::Scalar& element, const at::Tensor& test_elements,
                              bool assume_unique, bool invert) {
  at::Tensor out = at::empty({}, test_elements.options().dtype(at::kBool));
  return isin_scalar_tensor_out(element, test_elements, assume_unique, invert, out);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_unique", unique1);
  m.impl("_unique2", unique2);
  m.impl("unique_dim", unique_dim);
  m.impl("unique_consecutive", unique_consecutive);
  m.impl("unique_dim_consecutive", unique_dim_consecutive);
  m.impl("isin.Tensor_Tensor", isin);
  m.impl("isin.Tensor_Tensor_out", isin_out);
  m.impl("isin.Tensor_Scalar", isin_scalar);
  m.impl("isin.Tensor_Scalar_out", isin_scalar_out);
  m.impl("isin.Scalar_Tensor", isin_scalar_tensor);
  m.impl("isin.Scalar_Tensor_out", isin_scalar_tensor_out);
}

}  // namespace torch_vkml::ops_unique_isin
