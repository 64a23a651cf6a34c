// GradScaler's kernels on vkml: unscale-and-check of the gradients and the scale update. Both
// run on the device (found_inf, the scale and the growth tracker never visit the host), with
// CUDA's argument checks and messages.
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <vector>

#include "common/bridge.h"
#include "vkml/amp.h"

namespace torch_vkml::ops_amp_unscale_update_scale {

void check_one_element(const at::Tensor& t, at::ScalarType dtype, const char* name,
                       const char* kind) {
  TORCH_CHECK(t.device().type() == kVkml, name, " must be a vkml tensor.");
  TORCH_CHECK(t.numel() == 1, name, " must be a 1-element tensor.");
  TORCH_CHECK(t.scalar_type() == dtype, name, " must be a ", kind, " tensor.");
}

void amp_foreach_non_finite_check_and_unscale_(at::TensorList grads, at::Tensor& found_inf,
                                               const at::Tensor& inv_scale) {
  check_one_element(inv_scale, at::kFloat, "inv_scale", "float");
  check_one_element(found_inf, at::kFloat, "found_inf", "float");
  TORCH_CHECK(inv_scale.device() == found_inf.device(),
              "inv_scale and found_inf must be on the same device.");
  if (grads.empty()) return;  // as on the CPU: nothing to unscale
  std::vector<vkml::TensorDesc> descs;
  descs.reserve(grads.size());
  for (const at::Tensor& g : grads) {
    TORCH_CHECK(g.device() == found_inf.device(), "scaled_grad must be a vkml tensor on ",
                found_inf.device(), ", got ", g.device(), ".");
    TORCH_CHECK(g.layout() == at::kStrided, "scaled_grad must be a strided (not sparse) Tensor.");
    at::ScalarType t = g.scalar_type();
    TORCH_CHECK_NOT_IMPLEMENTED(
        t == at::kFloat || t == at::kHalf || t == at::kBFloat16 || t == at::kDouble,
        "\"_amp_foreach_non_finite_check_and_unscale_vkml\" not implemented for '",
        c10::toString(t), "'");
    descs.push_back(to_desc(g));
  }
  c10::DeviceGuard guard(found_inf.device());
  vkml::Device& dev = core_device(found_inf);
  translate_errors(
      [&] { vkml::ops::amp_unscale_check(dev, descs, to_desc(found_inf), to_desc(inv_scale)); });
}

at::Tensor& amp_update_scale_(at::Tensor& scale, at::Tensor& growth_tracker,
                              const at::Tensor& found_inf, double growth_factor,
                              double backoff_factor, int64_t growth_interval) {
  check_one_element(growth_tracker, at::kInt, "growth_tracker", "int");
  check_one_element(scale, at::kFloat, "current_scale", "float");
  check_one_element(found_inf, at::kFloat, "found_inf", "float");
  TORCH_CHECK(growth_tracker.device() == scale.device() && found_inf.device() == scale.device(),
              "current_scale, growth_tracker and found_inf must be on the same device.");
  c10::DeviceGuard guard(scale.device());
  vkml::Device& dev = core_device(scale);
  translate_errors([&] {
    vkml::ops::amp_update_scale(dev, to_desc(scale), to_desc(growth_tracker), to_desc(found_inf),
                                growth_factor, backoff_factor, growth_interval);
  });
  return scale;
}

// The functional and out= forms are composite in PyTorch and route to these two.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", amp_foreach_non_finite_check_and_unscale_);
  m.impl("_amp_update_scale_", amp_update_scale_);
}

}  // namespace torch_vkml::ops_amp_unscale_update_scale
