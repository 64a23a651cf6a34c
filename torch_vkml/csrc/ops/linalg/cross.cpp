// linalg_cross on vkml (functional and out=): two products and a difference per component on
// strided views, rounded as the CPU's kernel rounds them.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sub.h>
#include <c10/core/WrapDimMinimal.h>
#include <torch/library.h>

namespace torch_vkml::ops_cross {

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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_cross", linalg_cross);
  m.impl("linalg_cross.out", linalg_cross_out);
}

}  // namespace torch_vkml::ops_cross
