// glu and glu_backward on vkml (functional and out=), composed from native vkml kernels
// (sigmoid, mul) with PyTorch's checks. No host synchronisation.
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/rsub.h>
#include <ATen/ops/sigmoid.h>
#include <torch/library.h>

#include "common/nn_bridge.h"

namespace torch_vkml::ops_glu {

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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("glu", glu);
  m.impl("glu.out", glu_out);
  m.impl("glu_backward", glu_backward);
  m.impl("glu_backward.grad_input", glu_backward_out);
}

}  // namespace torch_vkml::ops_glu
