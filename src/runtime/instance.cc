#include "instance.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>

#include "vkml/config.h"
#include "vkml/errors.h"
#include "vkml/runtime.h"

namespace vkml {

static std::atomic<uint64_t> g_validation_messages{0};

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
  g_validation_messages++;
  std::fprintf(stderr, "vkml: validation %s: %s\n",
               severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
               data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

uint64_t validation_message_count() { return g_validation_messages.load(); }

// The class VKML_DEVICE_CLASS names (the registry has checked the word).
static DeviceClass parse_device_class(const std::string& name) {
  for (DeviceClass c : {DeviceClass::kNvidia, DeviceClass::kAmd, DeviceClass::kIntel,
                        DeviceClass::kMobile, DeviceClass::kApple, DeviceClass::kCpu}) {
    if (device_class_name(c) == name) return c;
  }
  return DeviceClass::kGeneric;
}

// Whether the validation layer offers VK_EXT_validation_features (how sync validation is asked for).
static bool layer_has_validation_features() {
  uint32_t n = 0;
  vk::vkEnumerateInstanceExtensionProperties("VK_LAYER_KHRONOS_validation", &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  vk::vkEnumerateInstanceExtensionProperties("VK_LAYER_KHRONOS_validation", &n, props.data());
  return std::any_of(props.begin(), props.end(), [](const VkExtensionProperties& p) {
    return std::strcmp(p.extensionName, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME) == 0;
  });
}

static int kind_rank(DeviceKind k) {
  switch (k) {
    case DeviceKind::kDiscrete: return 0;
    case DeviceKind::kIntegrated: return 1;
    case DeviceKind::kVirtual: return 2;
    case DeviceKind::kCpu: return 3;
    default: return 4;
  }
}

// Why the loader offers less than Vulkan 1.2. A loader that reaches no driver can report 1.0 too
// (Wine without a display does), so a bare 1.0 instance tells an old loader from a missing driver.
static std::string old_loader_reason() {
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  VkInstance probe = VK_NULL_HANDLE;
  VkResult r = vk::vkCreateInstance(&ci, nullptr, &probe);
  if (r != VK_SUCCESS) {
    return std::string("the Vulkan loader found no driver (vkCreateInstance returned ") +
           vk::result_name(r) + "); install your GPU's Vulkan driver";
  }
  auto destroy =
      reinterpret_cast<PFN_vkDestroyInstance>(vk::instance_proc(probe, "vkDestroyInstance"));
  if (destroy) destroy(probe, nullptr);
  return "the Vulkan loader is older than 1.2; update the Vulkan loader and driver";
}

bool Instance::init(std::string* why) {
  if (!vk::load_loader(why)) return false;
  uint32_t api = VK_API_VERSION_1_0;
  if (vk::vkEnumerateInstanceVersion) vk::vkEnumerateInstanceVersion(&api);
  if (api < VK_API_VERSION_1_2) {
    *why = old_loader_reason();
    return false;
  }
  std::vector<const char*> layers, exts;
  uint32_t n = 0;
  vk::vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext_props(n);
  vk::vkEnumerateInstanceExtensionProperties(nullptr, &n, ext_props.data());
  auto has_ext = [&](const char* e) {
    return std::any_of(ext_props.begin(), ext_props.end(),
                       [&](auto& p) { return std::strcmp(p.extensionName, e) == 0; });
  };
  if (has_ext(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    exts.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);  // MoltenVK
  }
  const Config& cfg = config();  // parsed here, when the first device is created
  bool want_validation = cfg.validation;
  bool sync_validation = false;
  if (want_validation) {
    vk::vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> layer_props(n);
    vk::vkEnumerateInstanceLayerProperties(&n, layer_props.data());
    bool found = std::any_of(layer_props.begin(), layer_props.end(), [](auto& p) {
      return std::strcmp(p.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    });
    if (!found) {
      std::fprintf(stderr, "vkml: VKML_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not "
                           "installed (Debian: vulkan-validationlayers)\n");
      g_validation_messages++;  // a requested check that cannot run is a failure, not a pass
    } else {
      layers.push_back("VK_LAYER_KHRONOS_validation");
      if (has_ext(VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
        exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      }
      // Synchronisation validation (hazards between our dispatches and copies) comes from the
      // layer's own VK_EXT_validation_features; VKML_VALIDATION_SYNC=0 leaves it off.
      if (cfg.validation_sync && layer_has_validation_features()) {
        exts.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
        sync_validation = true;
      }
      validation_ = true;
    }
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkml";
  app.pEngineName = "vkml";
  app.apiVersion = std::min<uint32_t>(api, VK_API_VERSION_1_3);
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  const VkValidationFeatureEnableEXT sync_feature =
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync_feature;
  if (sync_validation) ci.pNext = &features;
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  if (has_ext(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    ci.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkResult r = vk::vkCreateInstance(&ci, nullptr, &instance_);
  if (r != VK_SUCCESS) {
    *why = std::string("vkCreateInstance failed: ") + vk::result_name(r) +
           " (no working Vulkan driver?)";
    return false;
  }
  vk::load_instance_functions(instance_);
  if (validation_ && vk::vkCreateDebugUtilsMessengerEXT) {
    VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = on_validation_message;
    VKML_VK_CHECK(vk::vkCreateDebugUtilsMessengerEXT(instance_, &mi, nullptr, &messenger_));
  }
  vk::vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  vk::vkEnumeratePhysicalDevices(instance_, &n, pds.data());
  for (VkPhysicalDevice pd : pds) {
    DeviceCaps caps = probe_caps(pd);
    if (cfg.device_class != "auto") caps.device_class = parse_device_class(cfg.device_class);
    apply_caps_mask(caps);
    all_.push_back({pd, caps});
  }

  std::vector<size_t> order;
  if (!cfg.device_order.empty()) {
    for (int64_t i : cfg.device_order) {
      if (i >= static_cast<int64_t>(all_.size())) {
        throw InvalidArgument("vkml: VKML_DEVICE_ORDER names device " + std::to_string(i) +
                              ", but the driver lists " + std::to_string(all_.size()) +
                              " (vkml-info shows them)");
      }
      order.push_back(static_cast<size_t>(i));
    }
  } else {
    for (size_t i = 0; i < all_.size(); ++i) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return kind_rank(all_[a].caps.kind) < kind_rank(all_[b].caps.kind);
    });
  }
  // An index may repeat: each entry becomes its own logical device (multi-device tests on one GPU).
  for (size_t i : order) {
    if (all_[i].caps.usable()) usable_.push_back(all_[i]);
  }
  if (usable_.empty()) {
    *why = all_.empty() ? "the Vulkan driver lists no devices" : "no Vulkan device is usable by vkml";
    for (size_t i = 0; i < all_.size(); ++i) {  // each device's verdict
      *why += (i ? "; " : ": ") + all_[i].caps.name + " " + all_[i].caps.unusable_reason;
    }
  }
  return true;
}

Instance* Instance::get(std::string* why) {
  static std::once_flag once;
  static Instance* inst = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    auto* candidate = new Instance();
    std::string r;
    try {
      if (candidate->init(&r)) inst = candidate;
    } catch (const std::exception& e) {
      r = e.what();
    }
    if (!inst) delete candidate;
    reason = r;
  });
  if (why) *why = reason;
  return inst;
}

bool validation_enabled() {
  Instance* inst = Instance::get();
  return inst && inst->validation();
}

int device_count() noexcept {
  try {
    Instance* inst = Instance::get();
    return inst ? static_cast<int>(inst->usable().size()) : 0;
  } catch (...) {
    return 0;
  }
}

std::string no_device_reason() {
  std::string why;
  Instance* inst = Instance::get(&why);
  if (inst && !inst->usable().empty()) return "";
  return why.empty() ? "no usable Vulkan device" : why;
}

std::vector<DeviceCaps> probe_all_devices() {
  std::vector<DeviceCaps> out;
  if (Instance* inst = Instance::get()) {
    for (auto& e : inst->all()) out.push_back(e.caps);
  }
  return out;
}

Device& device(int index) {
  static std::mutex mu;
  // Never destroyed: tensors freed during interpreter shutdown may still return memory to it.
  static auto& devices = *new std::vector<std::unique_ptr<Device>>();
  std::lock_guard<std::mutex> lock(mu);
  std::string why;
  Instance* inst = Instance::get(&why);
  int count = inst ? static_cast<int>(inst->usable().size()) : 0;
  if (index < 0 || index >= count) {
    if (count == 0) throw NoDeviceError("vkml: no Vulkan device: " + no_device_reason());
    throw NoDeviceError("vkml: device index " + std::to_string(index) + " is out of range; " +
                        std::to_string(count) + " device(s) available (0.." +
                        std::to_string(count - 1) + ")");
  }
  if (devices.size() < static_cast<size_t>(count)) devices.resize(count);
  if (!devices[index]) {
    auto& e = inst->usable()[index];
    devices[index] = std::make_unique<Device>(index, e.caps, e.handle, inst->handle());
  }
  return *devices[index];
}

}  // namespace vkml
