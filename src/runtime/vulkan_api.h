// Vulkan loaded at run time: function pointers, result checking and header back-fills.
#pragma once
#include "vulkan_ext.h"  // Vulkan headers plus back-filled newer extensions

#include <string>

namespace vkml::vk {

#define VKML_VK_GLOBAL(name) extern PFN_##name name;
#define VKML_VK_INSTANCE(name) extern PFN_##name name;
#define VKML_VK_INSTANCE_OPT(name) extern PFN_##name name;
#define VKML_VK_DEVICE(name) extern PFN_##name name;
#include "vk_functions.def"
#undef VKML_VK_GLOBAL
#undef VKML_VK_INSTANCE
#undef VKML_VK_INSTANCE_OPT
#undef VKML_VK_DEVICE

// Opens the loader once (platform.h); returns false (and sets *why) when there is none.
bool load_loader(std::string* why);
void load_instance_functions(VkInstance instance);
// An instance-level function outside vk_functions.def's lists; nullptr when the loader lacks it.
PFN_vkVoidFunction instance_proc(VkInstance instance, const char* name);
// Device functions are loaded once, from the first device (all devices share one loader).
void load_device_functions(VkDevice device);

const char* result_name(VkResult r);
// Throws DeviceLostError, OutOfMemoryError-free VulkanError etc. with `what` in the message.
[[noreturn]] void throw_result(VkResult r, const char* what);

}  // namespace vkml::vk

#define VKML_VK_CHECK(expr)                                      \
  do {                                                           \
    VkResult vkml_result_ = (expr);                              \
    if (vkml_result_ != VK_SUCCESS) ::vkml::vk::throw_result(vkml_result_, #expr); \
  } while (0)
