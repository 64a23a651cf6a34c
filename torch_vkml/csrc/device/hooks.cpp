// PrivateUse1 hooks: availability, generators, pointer-to-device lookup, pinned host memory,
// storage resize.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Storage.h>

#include "common/bridge.h"
#include "device/allocator.h"
#include "device/generator.h"
#include "device/pinned_allocator.h"
#include "vkml/host_memory.h"

namespace torch_vkml::device_hooks {

struct VkmlHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device) const override {
    return default_generator(device);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device) const override {
    return new_generator(device);
  }
  at::Device getDeviceFromPtr(void* data) const override {
    uint64_t address = reinterpret_cast<uint64_t>(data);
    for (int i = 0; i < device_count(); ++i) {
      if (core_device(i).owns(address)) return at::Device(kVkml, i);
    }
    TORCH_CHECK(false, "vkml: pointer is not vkml device memory");
  }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  void init() const override {}
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_current_device(d); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    c10::DeviceIndex old = current_device();
    set_current_device(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override {
    return exchangeDevice(d);
  }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinned_allocator(); }
  bool isPinnedPtr(const void* data) const override {
    return vkml::pinned_host_device(data) >= 0;
  }

  // Grows a storage in place (resize_ and storage.resize_): new memory, old bytes copied over.
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    size_t old = storage.nbytes();
    c10::DataPtr data = vkml_allocator()->allocate(newsize);
    size_t keep = std::min(old, newsize);
    if (keep > 0 && storage.data() != nullptr) {
      vkml::Device& dev = core_device(storage.device().index());
      translate_errors([&] {
        vkml::ops::copy_bytes(dev, reinterpret_cast<uint64_t>(data.get()),
                              reinterpret_cast<uint64_t>(storage.data()), keep);
      });
    }
    const_cast<c10::Storage&>(storage).set_data_ptr_noswap(std::move(data));
    const_cast<c10::Storage&>(storage).set_nbytes(newsize);
  }
};

// Registered at load time, before any tensor exists.
const bool g_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new VkmlHooks());
  return true;
}();

}  // namespace torch_vkml::device_hooks
