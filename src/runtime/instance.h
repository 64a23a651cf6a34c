// The process-wide Vulkan instance, validation messenger and the ordered device list.
#pragma once
#include <string>
#include <vector>

#include "vkml/device.h"
#include "vulkan_api.h"

namespace vkml {

struct PhysicalDeviceEntry {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  DeviceCaps caps;
};

class Instance {
 public:
  // Null when Vulkan is unavailable; `why` then says so.
  static Instance* get(std::string* why = nullptr);
  VkInstance handle() const { return instance_; }
  // Usable devices in vkml order.
  const std::vector<PhysicalDeviceEntry>& usable() const { return usable_; }
  // Every device the driver lists, usable or not.
  const std::vector<PhysicalDeviceEntry>& all() const { return all_; }
  bool validation() const { return validation_; }

 private:
  Instance() = default;
  bool init(std::string* why);
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  std::vector<PhysicalDeviceEntry> all_, usable_;
};

// Probes one physical device (device_caps.cc).
DeviceCaps probe_caps(VkPhysicalDevice pd);

}  // namespace vkml
