#include "vulkan_api.h"

#include <mutex>
#include <string>

#include "platform.h"
#include "vkml/errors.h"
#include "vulkan_ext.h"

namespace vkml::vk {

#define VKML_VK_GLOBAL(name) PFN_##name name = nullptr;
#define VKML_VK_INSTANCE(name) PFN_##name name = nullptr;
#define VKML_VK_INSTANCE_OPT(name) PFN_##name name = nullptr;
#define VKML_VK_DEVICE(name) PFN_##name name = nullptr;
#include "vk_functions.def"
#undef VKML_VK_GLOBAL
#undef VKML_VK_INSTANCE
#undef VKML_VK_INSTANCE_OPT
#undef VKML_VK_DEVICE

static PFN_vkGetInstanceProcAddr g_get_instance_proc = nullptr;

bool load_loader(std::string* why) {
  static std::once_flag once;
  static bool ok = false;
  static std::string reason;
  std::call_once(once, [] {
    g_get_instance_proc =
        reinterpret_cast<PFN_vkGetInstanceProcAddr>(platform::open_vulkan_loader(&reason));
    if (!g_get_instance_proc) return;
#define VKML_VK_GLOBAL(name) \
  name = reinterpret_cast<PFN_##name>(g_get_instance_proc(VK_NULL_HANDLE, #name));
#define VKML_VK_INSTANCE(name)
#define VKML_VK_INSTANCE_OPT(name)
#define VKML_VK_DEVICE(name)
#include "vk_functions.def"
#undef VKML_VK_GLOBAL
#undef VKML_VK_INSTANCE
#undef VKML_VK_INSTANCE_OPT
#undef VKML_VK_DEVICE
    if (!vkCreateInstance || !vkEnumerateInstanceExtensionProperties) {
      reason = "the Vulkan loader lacks core entry points";
      return;
    }
    ok = true;
  });
  if (!ok && why) *why = reason;
  return ok;
}

PFN_vkVoidFunction instance_proc(VkInstance instance, const char* name) {
  return g_get_instance_proc ? g_get_instance_proc(instance, name) : nullptr;
}

void load_instance_functions(VkInstance instance) {
#define VKML_VK_GLOBAL(name)
#define VKML_VK_INSTANCE(name)                                                  \
  name = reinterpret_cast<PFN_##name>(g_get_instance_proc(instance, #name));    \
  if (!name) throw Error("Vulkan instance function " #name " is missing");
#define VKML_VK_INSTANCE_OPT(name) \
  name = reinterpret_cast<PFN_##name>(g_get_instance_proc(instance, #name));
#define VKML_VK_DEVICE(name)
#include "vk_functions.def"
#undef VKML_VK_GLOBAL
#undef VKML_VK_INSTANCE
#undef VKML_VK_INSTANCE_OPT
#undef VKML_VK_DEVICE
}

void load_device_functions(VkDevice device) {
  static std::once_flag once;
  std::call_once(once, [device] {
#define VKML_VK_GLOBAL(name)
#define VKML_VK_INSTANCE(name)
#define VKML_VK_INSTANCE_OPT(name)
#define VKML_VK_DEVICE(name)                                               \
  name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name)); \
  if (!name) throw Error("Vulkan device function " #name " is missing");
#include "vk_functions.def"
#undef VKML_VK_GLOBAL
#undef VKML_VK_INSTANCE
#undef VKML_VK_INSTANCE_OPT
#undef VKML_VK_DEVICE
  });
}

const char* result_name(VkResult r) {
  switch (r) {
#define CASE(x) case x: return #x;
    CASE(VK_SUCCESS) CASE(VK_NOT_READY) CASE(VK_TIMEOUT) CASE(VK_INCOMPLETE)
    CASE(VK_ERROR_OUT_OF_HOST_MEMORY) CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    CASE(VK_ERROR_INITIALIZATION_FAILED) CASE(VK_ERROR_DEVICE_LOST)
    CASE(VK_ERROR_MEMORY_MAP_FAILED) CASE(VK_ERROR_LAYER_NOT_PRESENT)
    CASE(VK_ERROR_EXTENSION_NOT_PRESENT) CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    CASE(VK_ERROR_INCOMPATIBLE_DRIVER) CASE(VK_ERROR_TOO_MANY_OBJECTS)
    CASE(VK_ERROR_FORMAT_NOT_SUPPORTED) CASE(VK_ERROR_FRAGMENTED_POOL) CASE(VK_ERROR_UNKNOWN)
    CASE(VK_ERROR_OUT_OF_POOL_MEMORY) CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    CASE(VK_ERROR_FRAGMENTATION) CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef CASE
    default: return "VK_ERROR_(unknown)";
  }
}

void throw_result(VkResult r, const char* what) {
  std::string msg = std::string("vkml: Vulkan call failed: ") + what + " returned " + result_name(r);
  if (r == VK_ERROR_DEVICE_LOST) {
    throw DeviceLostError(msg + ". The GPU driver reset the device (a crash or a timeout); "
                                "restart the process to use it again.");
  }
  throw VulkanError(msg, r);
}

}  // namespace vkml::vk
