// Counter-based (Philox) generator state for vkml devices: a seed and an offset that kernels
// advance, as CUDA's generator does, so results depend only on the seed and call order.
#pragma once
#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace torch_vkml {

class VkmlGeneratorImpl : public c10::GeneratorImpl {
 public:
  explicit VkmlGeneratorImpl(c10::DeviceIndex device_index);
  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }
  // Reserves `increment` counter values for one kernel; returns (seed, first offset).
  std::pair<uint64_t, uint64_t> philox_engine_inputs(uint64_t increment);

 private:
  VkmlGeneratorImpl* clone_impl() const override;
  uint64_t seed_ = 67280421310721ull;  // PyTorch's default seed
  uint64_t offset_ = 0;
};

const at::Generator& default_generator(c10::DeviceIndex device);
at::Generator new_generator(c10::DeviceIndex device);

}  // namespace torch_vkml
