// Device guard, streams and events for PrivateUse1. Each device has one Vulkan queue, so every
// c10::Stream of a device maps to the same ordered core stream; events are timeline values.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "common/bridge.h"

namespace torch_vkml::device_guard {

struct Event {
  c10::DeviceIndex device = -1;
  uint64_t value = 0;
};

struct VkmlGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kVkml; }

  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    if (d.index() != old.index()) setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kVkml, current_device()); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kVkml, "vkml guard got a ", d.type(), " device");
    if (d.index() >= 0) set_current_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    try {
      if (d.index() >= 0) set_current_device(d.index());
    } catch (...) {
    }
  }
  c10::Stream getStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(kVkml, d.index() < 0 ? current_device() : d.index()));
  }
  c10::Stream getNewStream(c10::Device d, int) const override { return getStream(d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override { return getStream(d); }
  c10::Stream exchangeStream(c10::Stream s) const override { return getStream(s.device()); }
  c10::DeviceIndex deviceCount() const noexcept override { return device_count(); }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag) const override {
    auto* e = static_cast<Event*>(*event);
    if (!e) {
      e = new Event();
      *event = e;
    }
    e->device = stream.device_index();
    e->value = core_device(e->device).stream().pending_value();
  }
  // All streams of a device share one queue: an event recorded earlier is already ordered.
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void* event) const override {
    auto* e = static_cast<Event*>(event);
    if (!e || e->device < 0) return true;
    return core_device(e->device).stream().completed_value() >= e->value;
  }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    delete static_cast<Event*>(event);
  }
  void synchronizeEvent(void* event) const override {
    auto* e = static_cast<Event*>(event);
    if (!e || e->device < 0) return;
    translate_errors([&] { core_device(e->device).stream().wait(e->value); });
  }
  bool queryStream(const c10::Stream& s) const override {
    auto& st = core_device(s.device_index()).stream();
    return st.completed_value() >= st.pending_value();
  }
  void synchronizeStream(const c10::Stream& s) const override {
    translate_errors([&] { core_device(s.device_index()).synchronize(); });
  }
  void synchronizeDevice(const c10::DeviceIndex index) const override {
    translate_errors([&] { core_device(index).synchronize(); });
  }
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const override {}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, VkmlGuardImpl);

}  // namespace torch_vkml::device_guard
