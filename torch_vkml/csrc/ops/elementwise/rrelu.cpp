// rrelu_with_noise on vkml (nn.RReLU, F.rrelu). Training: noise ~ U(lower, upper) where the input
// is <= 0 and 1 elsewhere, output = input * noise. Evaluation: leaky_relu with slope
// (lower + upper) / 2, noise untouched. Its backward (a composite of mul and leaky_relu_backward)
// runs on those native kernels.
#include <ATen/ops/empty_like.h>
#include <ATen/ops/leaky_relu.h>
#include <ATen/ops/mul.h>
#include <torch/library.h>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_rrelu {

using ew::Promote;
using vkml::ops::BinaryOp;

// The CPU's checks: floating input (fp16 and bf16 too, as on CUDA), noise of its shape and dtype.
void check_inputs(const at::Tensor& self, const at::Tensor& noise) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"rrelu_with_noise_vkml\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  TORCH_CHECK(self.sizes() == noise.sizes(),
              "noise tensor shape must match self tensor shape. Got self.shape = ", self.sizes(),
              " noise.shape = ", noise.sizes());
  TORCH_CHECK(noise.scalar_type() == self.scalar_type(), "expected scalar type ",
              self.scalar_type(), " but found ", noise.scalar_type());
  TORCH_CHECK(noise.device() == self.device(), "rrelu_with_noise: noise is on ", noise.device(),
              " but the input is on ", self.device());
}

at::Tensor& rrelu_with_noise_out(const at::Tensor& self, at::Tensor& noise,
                                 const at::Scalar& lower, const at::Scalar& upper, bool training,
                                 std::optional<at::Generator> generator, at::Tensor& out) {
  check_inputs(self, noise);
  if (!training) {
    return at::leaky_relu_out(out, self, (lower.toDouble() + upper.toDouble()) / 2);
  }
  noise.uniform_(lower.toDouble(), upper.toDouble(), generator);
  ew::binary(BinaryOp::kRreluNoise, Promote::kFloating, self, noise, 1, noise);
  return at::mul_out(out, self, noise);
}

at::Tensor rrelu_with_noise(const at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                            const at::Scalar& upper, bool training,
                            std::optional<at::Generator> generator) {
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  return rrelu_with_noise_out(self, noise, lower, upper, training, std::move(generator), out);
}

at::Tensor& rrelu_with_noise_(at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                              const at::Scalar& upper, bool training,
                              std::optional<at::Generator> generator) {
  return rrelu_with_noise_out(self, noise, lower, upper, training, std::move(generator), self);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("rrelu_with_noise", rrelu_with_noise);
  m.impl("rrelu_with_noise.out", rrelu_with_noise_out);
  m.impl("rrelu_with_noise_", rrelu_with_noise_);
}

}  // namespace torch_vkml::ops_rrelu
