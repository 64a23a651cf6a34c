// Test-only operators for the lost-device behaviour (tests/torch/integration/test_device_lost.py):
// torch.ops.vkml_testing.inject_device_loss(index) makes the next host wait on that device report
// VK_ERROR_DEVICE_LOST, as after a GPU reset; device_lost(index) says whether the device is lost.
// A process that injects a loss cannot use that device again, so tests do it in a subprocess.
#include <torch/library.h>

#include "common/bridge.h"

namespace torch_vkml::testing_device_loss_hook {

void inject_device_loss(int64_t index) {
  core_device(static_cast<c10::DeviceIndex>(index)).inject_device_loss();
}

bool device_lost(int64_t index) {
  return core_device(static_cast<c10::DeviceIndex>(index)).lost();
}

TORCH_LIBRARY(vkml_testing, m) {
  m.def("inject_device_loss(int index) -> ()", inject_device_loss);
  m.def("device_lost(int index) -> bool", device_lost);
}

}  // namespace torch_vkml::testing_device_loss_hook
