// native_dropout / native_dropout_backward on vkml: torch.nn.functional.dropout (training,
// 0 < p < 1, out of place) reaches native_dropout for PrivateUse1 tensors. The keep decisions
// come from the vkml Philox generator, so torch.manual_seed reproduces them.
#include <ATen/core/DistributionsHelper.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/ones_like.h>
#include <torch/library.h>

#include <mutex>

#include "common/nn_bridge.h"
#include "device/generator.h"
#include "vkml/dropout.h"
#include "vkml/random.h"

namespace torch_vkml::ops_native_dropout {

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  at::Tensor mask_like = at::empty_like(input, input.options().dtype(at::kBool));
  if (input.numel() == 0) return {input, mask_like};
  if (train.has_value() && !*train) {
    return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  }
  nn::check_floating(input, "native_dropout");
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  at::Tensor out = at::empty_like(input);
  nn::run_on(input, [&](vkml::Device& dev) {
    auto* gen = at::get_generator_or_default<VkmlGeneratorImpl>(
        std::nullopt, default_generator(input.device().index()));
    uint64_t seed, offset;
    {
      std::lock_guard<std::mutex> lock(gen->mutex_);
      std::tie(seed, offset) =
          gen->philox_engine_inputs(vkml::ops::random_counter_increment(input.numel()));
    }
    vkml::ops::dropout(dev, to_desc(out), to_desc(mask_like), to_desc(input), p, seed, offset);
  });
  return {out, mask_like};
}

at::Tensor native_dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask,
                                   double scale) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be Bool Scalar Type",
              mask.scalar_type());
  nn::check_on_device(grad_output, mask, "native_dropout_backward", "mask");
  TORCH_CHECK(mask.sizes() == grad_output.sizes(), "native_dropout_backward: mask shape ",
              mask.sizes(), " does not match grad_output ", grad_output.sizes());
  // The CPU computes grad * mask * scale: integer and bool gradients promote, through the double
  // scale, to the default float dtype.
  at::Tensor grad = grad_output;
  if (!at::isFloatingType(grad.scalar_type())) {
    TORCH_CHECK_NOT_IMPLEMENTED(!at::isComplexType(grad.scalar_type()),
                                "\"native_dropout_backward\" not implemented for '",
                                c10::toString(grad.scalar_type()), "'");
    grad = grad.to(c10::typeMetaToScalarType(c10::get_default_dtype()));
  }
  nn::check_floating(grad, "native_dropout_backward");
  at::Tensor grad_input = at::empty_like(grad);
  if (grad.numel() == 0) return grad_input;
  nn::run_on(grad, [&](vkml::Device& dev) {
    vkml::ops::dropout_backward(dev, to_desc(grad_input), to_desc(grad), to_desc(mask), scale);
  });
  return grad_input;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("native_dropout", native_dropout);
  m.impl("native_dropout_backward", native_dropout_backward);
}

}  // namespace torch_vkml::ops_native_dropout
