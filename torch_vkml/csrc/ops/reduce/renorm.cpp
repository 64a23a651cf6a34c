// renorm (functional, out=, in-place) on vkml, composed from native vkml kernels
// (linalg_vector_norm, where, mul) with PyTorch's checks. No host synchronisation.
#include <ATen/AccumulateType.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <numeric>

#include "common/nn_bridge.h"

namespace torch_vkml::ops_renorm {

// renorm: slices along dim whose p-norm exceeds maxnorm are scaled to maxnorm / (norm + 1e-7);
// norms accumulate in float for half and bfloat16, as on CUDA. Returns the factor per slice
// (in self's dtype), from differentiable ops.
at::Tensor renorm_factor(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                         const at::Scalar& maxnorm) {
  TORCH_CHECK(!p.isComplex(), "renorm: p must be real-valued");
  TORCH_CHECK(p.toDouble() > 0.0, "renorm: non-positive-norm not supported");
  TORCH_CHECK(!maxnorm.isComplex(), "renorm: maxnorm must be real-valued");
  TORCH_CHECK(maxnorm.toDouble() >= 0.0, "renorm: expected maxnorm to be >= 0 but got ",
              maxnorm.toDouble());
  TORCH_CHECK(self.dim() > 1, "renorm: input needs at least 2 dimensions, got ", self.dim(),
              " dimensions");
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> reduce(self.dim());
  std::iota(reduce.begin(), reduce.end(), 0);
  reduce.erase(reduce.begin() + d);
  const auto dtype = self.scalar_type();
  const auto acc = at::toAccumulateType(dtype, /*is_cuda=*/true);
  at::Tensor norm = at::linalg_vector_norm(self, p.toDouble(), reduce, /*keepdim=*/true,
                                           acc != dtype ? std::optional(acc) : std::nullopt);
  const double mx = maxnorm.toDouble();
  at::Tensor factor = at::where(norm.gt(mx), at::full_like(norm, mx).div(norm.add(1e-7)),
                                at::ones_like(norm));
  return factor.to(dtype);
}

at::Tensor& renorm_out(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                       const at::Scalar& maxnorm, at::Tensor& out) {
  at::Tensor factor = renorm_factor(self, p, dim, maxnorm);
  if (!out.defined()) out = at::empty(self.sizes(), self.options());
  nn::prepare_out(out, self.sizes(), self.scalar_type(), self);
  return at::mul_out(out, self, factor);
}

at::Tensor renorm(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                  const at::Scalar& maxnorm) {
  at::Tensor out;
  return renorm_out(self, p, dim, maxnorm, out);
}

at::Tensor& renorm_(at::Tensor& self, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm) {
  return renorm_out(self, p, dim, maxnorm, self);
}

// The functional form under autograd, composed from the differentiable ops above: PyTorch's own
// renorm_backward accumulates in the CPU's accumulate type on PrivateUse1 devices (double for
// float), which a device without fp64 cannot hold; the composite's gradient is the same formula
// with CUDA's accumulate types.
at::Tensor renorm_autograd(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                           const at::Scalar& maxnorm) {
  return self.mul(renorm_factor(self, p, dim, maxnorm));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("renorm", renorm);
  m.impl("renorm.out", renorm_out);
  m.impl("renorm_", renorm_);
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { m.impl("renorm", renorm_autograd); }

}  // namespace torch_vkml::ops_renorm
