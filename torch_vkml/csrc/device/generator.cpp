#include "device/generator.h"

#include <ATen/Utils.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/irange.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <random>

#include "common/bridge.h"

namespace torch_vkml {

VkmlGeneratorImpl::VkmlGeneratorImpl(c10::DeviceIndex device_index)
    : c10::GeneratorImpl(c10::Device(kVkml, device_index),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}

void VkmlGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}
void VkmlGeneratorImpl::set_offset(uint64_t offset) { offset_ = offset; }
uint64_t VkmlGeneratorImpl::get_offset() const { return offset_; }
uint64_t VkmlGeneratorImpl::current_seed() const { return seed_; }

uint64_t VkmlGeneratorImpl::seed() {
  uint64_t s = std::random_device{}() | (static_cast<uint64_t>(std::random_device{}()) << 32);
  set_current_seed(s);
  return s;
}

// State layout: [seed (8 bytes), offset (8 bytes)] as a CPU uint8 tensor, like CUDA's.
void VkmlGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && new_state.numel() == 16,
              "vkml: RNG state must be a uint8 tensor of 16 bytes");
  const auto* p = static_cast<const uint8_t*>(new_state.data());
  std::memcpy(&seed_, p, 8);
  std::memcpy(&offset_, p + 8, 8);
}

c10::intrusive_ptr<c10::TensorImpl> VkmlGeneratorImpl::get_state() const {
  auto state = at::detail::empty_cpu({16}, at::kByte, std::nullopt, std::nullopt, std::nullopt,
                                     std::nullopt);
  auto* p = state.data_ptr<uint8_t>();
  std::memcpy(p, &seed_, 8);
  std::memcpy(p + 8, &offset_, 8);
  return state.getIntrusivePtr();
}

std::pair<uint64_t, uint64_t> VkmlGeneratorImpl::philox_engine_inputs(uint64_t increment) {
  uint64_t first = offset_;
  offset_ += (increment + 3) / 4 * 4;  // Philox yields 4 values per counter step
  return {seed_, first};
}

VkmlGeneratorImpl* VkmlGeneratorImpl::clone_impl() const {
  auto* g = new VkmlGeneratorImpl(device().index());
  g->seed_ = seed_;
  g->offset_ = offset_;
  return g;
}

const at::Generator& default_generator(c10::DeviceIndex device) {
  static std::mutex mu;
  static std::deque<at::Generator> generators;  // deque: references stay valid as it grows
  std::lock_guard<std::mutex> lock(mu);
  if (device < 0) device = current_device();
  TORCH_CHECK_INDEX(device < device_count(), "vkml: invalid device index ", int(device));
  while (generators.size() <= static_cast<size_t>(device)) {
    generators.push_back(at::make_generator<VkmlGeneratorImpl>(
        static_cast<c10::DeviceIndex>(generators.size())));
  }
  return generators[device];
}

at::Generator new_generator(c10::DeviceIndex device) {
  if (device < 0) device = current_device();
  return at::make_generator<VkmlGeneratorImpl>(device);
}

}  // namespace torch_vkml
