// Ops PyTorch gives each backend to implement but that are short compositions of vkml kernels:
// equal, linalg_cross, unfold_backward, repeat_interleave's index form, nonzero_static and the
// angle of real tensors. Each runs as a few
// dispatches on strided views; equal and repeat_interleave read one small result back, because
// their result (a Python bool, an output size) lives on the host, as on CUDA.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/all.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/div.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/full.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/where.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/WrapDimMinimal.h>

#include <cmath>
#include <torch/library.h>

namespace torch_vkml {

namespace {

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

// out[i] = a[j] b[k] - a[k] b[j] for (i, j, k) cyclic along `dim`: two products and a difference
// per component, each rounded as the CPU's kernel rounds them.
at::Tensor& linalg_cross_out(const at::Tensor& a, const at::Tensor& b, int64_t dim,
                             at::Tensor& out) {
  TORCH_CHECK(a.dim() == b.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  int64_t d = c10::maybe_wrap_dim(dim, a.dim());
  TORCH_CHECK(a.size(d) == 3 && b.size(d) == 3, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", a.size(d), " and ", b.size(d));
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "linalg.cross: expected both inputs to have ",
              "the same dtype, got ", a.scalar_type(), " and ", b.scalar_type());
  TORCH_CHECK(out.scalar_type() == a.scalar_type(), "linalg.cross: expected out tensor of dtype ",
              a.scalar_type(), " but got ", out.scalar_type());
  at::DimVector shape = at::infer_size_dimvector(a.sizes(), b.sizes());
  at::native::resize_output(out, shape);
  // Writing a component must not change an input a later component reads.
  bool overlaps = at::get_overlap_status(out, a) != at::MemOverlapStatus::No ||
                  at::get_overlap_status(out, b) != at::MemOverlapStatus::No;
  at::Tensor target = overlaps ? at::empty(shape, out.options()) : out;
  for (int64_t i = 0; i < 3; ++i) {
    int64_t j = (i + 1) % 3, k = (i + 2) % 3;
    at::Tensor left = at::mul(a.select(d, j), b.select(d, k));
    at::Tensor right = at::mul(a.select(d, k), b.select(d, j));
    at::Tensor component = target.select(d, i);
    at::sub_out(component, left, right);
  }
  if (overlaps) out.copy_(target);
  return out;
}

at::Tensor linalg_cross(const at::Tensor& a, const at::Tensor& b, int64_t dim) {
  at::Tensor out = at::empty({0}, a.options());
  return linalg_cross_out(a, b, dim, out);
}

// The gradient of x.unfold(dim, size, step): for each offset k inside a window, the windows'
// k-th elements sit `step` apart in x, so one strided add per k gathers them (windows overlap
// only across different k, which the adds accumulate one after another).
at::Tensor unfold_backward(const at::Tensor& grad, c10::SymIntArrayRef input_sizes, int64_t dim,
                           int64_t size, int64_t step) {
  std::vector<int64_t> sizes;
  for (const c10::SymInt& s : input_sizes) sizes.push_back(s.expect_int());
  at::Tensor grad_input = at::zeros(sizes, grad.options());
  int64_t d = c10::maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()), true);
  if (sizes.empty()) {  // a 0-dim input unfolds into one window of one element
    return grad_input.add_(grad.reshape({}));
  }
  int64_t windows = grad.size(d);
  if (windows == 0) return grad_input;
  for (int64_t k = 0; k < size; ++k) {
    at::Tensor slots = grad_input.slice(d, k, k + (windows - 1) * step + 1, step);
    slots.add_(grad.select(-1, k));
  }
  return grad_input;
}

// repeat_interleave(repeats): index i repeated repeats[i] times. The cumulative counts give each
// output slot its index by a right-sided search; the total size (and a negative count) needs one
// read of two values.
at::Tensor repeat_interleave(const at::Tensor& repeats, std::optional<c10::SymInt> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
              "repeats has to be Long or Int tensor");
  if (repeats.size(0) == 0) return at::empty({0}, repeats.options());
  at::Tensor ends = at::cumsum(repeats, 0);
  int64_t total;
  if (output_size.has_value()) {
    TORCH_CHECK(repeats.min().item<int64_t>() >= 0, "repeats can not be negative");
    total = output_size->expect_int();
  } else {
    at::Tensor facts = at::stack({ends[-1], repeats.min().to(at::kLong)}).cpu();
    TORCH_CHECK(facts[1].item<int64_t>() >= 0, "repeats can not be negative");
    total = facts[0].item<int64_t>();
  }
  at::Tensor slots = at::arange(total, ends.options());
  return at::searchsorted(ends, slots, repeats.scalar_type() == at::kInt, /*right=*/true);
}

// nonzero_static(x, size, fill): the first `size` coordinates of nonzero elements in row-major
// order, padded with fill, without reading the count back: each nonzero element's rank (an
// inclusive scan of the mask) is its output row; elements ranked beyond `size`, and zeros, are
// sent to a spare row past the end, which is dropped.
at::Tensor nonzero_static(const at::Tensor& x, int64_t size, int64_t fill_value) {
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer, but got size: ",
              size);
  const int64_t dims = x.dim();
  at::TensorOptions index_options = x.options().dtype(at::kLong);
  at::Tensor rows = at::full({size + 1, dims}, fill_value, index_options);
  if (x.numel() > 0 && dims > 0 && size > 0) {
    at::Tensor mask = at::ne(x, 0).reshape({-1});
    at::Tensor rank = at::cumsum(mask, 0, at::kLong).sub_(1);
    at::Tensor keep = at::logical_and(mask, at::lt(rank, size));
    at::Tensor target = at::where(keep, rank, at::scalar_tensor(size, index_options));
    at::Tensor flat = at::arange(x.numel(), index_options);
    std::vector<at::Tensor> coords;
    int64_t stride = 1;
    coords.resize(dims);
    for (int64_t d = dims - 1; d >= 0; --d) {
      coords[d] = at::remainder(at::div(flat, stride, "floor"), x.size(d));
      stride *= x.size(d);
    }
    rows.index_copy_(0, target, at::stack(coords, 1));
  }
  return rows.narrow(0, 0, size).clone();
}

// angle of a real tensor: pi below zero, 0 elsewhere, NaN kept (integers give floats).
at::Tensor& angle_out(const at::Tensor& x, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(!x.is_complex(), "vkml: angle of a complex tensor is not supported");
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
                              : x.scalar_type();
  at::Tensor out = at::empty({0}, x.options().dtype(result));
  return angle_out(x, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("equal", equal);
  m.impl("linalg_cross", linalg_cross);
  m.impl("linalg_cross.out", linalg_cross_out);
  m.impl("unfold_backward", unfold_backward);
  m.impl("repeat_interleave.Tensor", repeat_interleave);
  m.impl("nonzero_static", nonzero_static);
  m.impl("angle", angle);
  m.impl("angle.out", angle_out);
}

}  // namespace torch_vkml
