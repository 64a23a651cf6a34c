// glu / glu_backward, renorm and embedding_renorm_ on vkml, composed from native vkml kernels
// (sigmoid, mul, linalg_vector_norm, where, index_select / index_copy) with PyTorch's checks.
// No host synchronisation.
#include <ATen/AccumulateType.h>
#include <ATen/TensorUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/rsub.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <numeric>

#include "nn_bridge.h"

namespace torch_vkml {

namespace {

// The halves (a, b) of glu's input along dim.
std::pair<at::Tensor, at::Tensor> glu_halves(const at::Tensor& self, int64_t dim) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(d);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  return {self.narrow(d, 0, n / 2), self.narrow(d, n / 2, n / 2)};
}

at::Tensor& glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"glu\" not implemented for '", c10::toString(self.scalar_type()),
                              "'");
  auto [a, b] = glu_halves(self, dim);
  nn::prepare_out(out, a.sizes(), self.scalar_type(), self);
  return at::mul_out(out, a, at::sigmoid(b));
}

at::Tensor glu(const at::Tensor& self, int64_t dim) {
  at::Tensor out = at::empty({0}, self.options());
  return glu_out(self, dim, out);
}

// d/da = g * sigmoid(b), d/db = g * a * sigmoid(b) * (1 - sigmoid(b)).
at::Tensor& glu_backward_out(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim,
                             at::Tensor& grad_input) {
  auto [a, b] = glu_halves(self, dim);
  TORCH_CHECK(grad_output.sizes() == a.sizes(), "glu_backward: grad_output of shape ",
              grad_output.sizes(), " does not match the halves ", a.sizes());
  nn::prepare_out(grad_input, self.sizes(), self.scalar_type(), self);
  auto [ga, gb] = glu_halves(grad_input, dim);
  at::Tensor s = at::sigmoid(b);
  at::mul_out(ga, grad_output, s);
  at::mul_out(gb, ga.mul(a), at::rsub(s, 1));
  return grad_input;
}

at::Tensor glu_backward(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim) {
  at::Tensor gi = at::empty(self.sizes(), self.options());
  return glu_backward_out(grad_output, self, dim, gi);
}

// renorm: slices along dim whose p-norm exceeds maxnorm are scaled to maxnorm / (norm + 1e-7);
// norms accumulate in float for half and bfloat16, as on CUDA.
at::Tensor& renorm_out(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                       const at::Scalar& maxnorm, at::Tensor& out) {
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
  if (!out.defined()) out = at::empty(self.sizes(), self.options());
  nn::prepare_out(out, self.sizes(), dtype, self);
  return at::mul_out(out, self, factor.to(dtype));
}

at::Tensor renorm(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                  const at::Scalar& maxnorm) {
  at::Tensor out;
  return renorm_out(self, p, dim, maxnorm, out);
}

at::Tensor& renorm_(at::Tensor& self, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm) {
  return renorm_out(self, p, dim, maxnorm, self);
}

// The rows of an embedding table that `indices` name are scaled to max_norm where their p-norm
// exceeds it (F.embedding with max_norm). Repeated indices rescale the same original row, so the
// copies written back agree.
at::Tensor& embedding_renorm_(at::Tensor& self, const at::Tensor& indices, double max_norm,
                              double norm_type) {
  at::checkDim("embedding_renorm_", at::TensorArg(self, "self", 1), 2);
  at::checkScalarTypes("embedding_renorm_", at::TensorArg(indices, "indices", 2),
                       {at::kLong, at::kInt});
  nn::check_on_device(self, indices, "embedding_renorm_", "indices");
  if (indices.numel() == 0) return self;
  at::Tensor idx = indices.reshape({-1});
  at::Tensor rows = self.index_select(0, idx);
  const auto dtype = self.scalar_type();
  const auto acc = at::toAccumulateType(dtype, /*is_cuda=*/true);
  at::Tensor norm = at::linalg_vector_norm(rows, norm_type, {1}, /*keepdim=*/true,
                                           acc != dtype ? std::optional(acc) : std::nullopt);
  at::Tensor scaled = at::full_like(norm, max_norm).div(norm.add(1e-7));
  at::Tensor factor = at::where(norm.gt(max_norm), scaled, at::ones_like(norm));
  self.index_copy_(0, idx, rows.mul(factor.to(dtype)));
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("glu", glu);
  m.impl("glu.out", glu_out);
  m.impl("glu_backward", glu_backward);
  m.impl("glu_backward.grad_input", glu_backward_out);
  m.impl("renorm", renorm);
  m.impl("renorm.out", renorm_out);
  m.impl("renorm_", renorm_);
}

// PyTorch registers its CPU embedding_renorm_ for PrivateUse1 too, so ours replaces it. The
// dispatcher warns on every import about that replacement; the registration runs at module
// initialisation under a handler that drops that one message (others pass through).
void register_embedding_renorm() {
  struct QuietOverride : c10::WarningHandler {
    c10::WarningHandler* next = c10::WarningUtils::get_warning_handler();
    void process(const c10::Warning& w) override {
      if (w.msg().find("Overriding a previously registered kernel") == std::string::npos) {
        next->process(w);
      }
    }
  };
  static QuietOverride quiet;
  c10::WarningUtils::WarningHandlerGuard guard(&quiet);
  static torch::Library lib(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                            __LINE__);
  lib.impl("embedding_renorm_", embedding_renorm_);
}

}  // namespace torch_vkml
