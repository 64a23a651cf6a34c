// Probes a physical device into DeviceCaps, the only capability record ops consult.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sstream>

#include "instance.h"
#include "vkml/config.h"
#include "vulkan_ext.h"

namespace vkml {

std::string_view device_kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::kDiscrete: return "discrete GPU";
    case DeviceKind::kIntegrated: return "integrated GPU";
    case DeviceKind::kVirtual: return "virtual GPU";
    case DeviceKind::kCpu: return "CPU";
    default: return "other";
  }
}

std::string_view device_class_name(DeviceClass c) {
  switch (c) {
    case DeviceClass::kNvidia: return "nvidia";
    case DeviceClass::kAmd: return "amd";
    case DeviceClass::kIntel: return "intel";
    case DeviceClass::kMobile: return "mobile";
    case DeviceClass::kApple: return "apple";
    case DeviceClass::kCpu: return "cpu";
    default: return "generic";
  }
}

namespace {

// A CPU implementation first (lavapipe reports Mesa's vendor id), then MoltenVK (any GPU under
// Metal behaves as Apple's), then the PCI vendor.
DeviceClass classify(const DeviceCaps& c) {
  if (c.kind == DeviceKind::kCpu) return DeviceClass::kCpu;
  if (c.driver_id == VK_DRIVER_ID_MOLTENVK || c.vendor_id == kVendorApple) return DeviceClass::kApple;
  switch (c.vendor_id) {
    case kVendorNvidia: return DeviceClass::kNvidia;
    case kVendorAmd: return DeviceClass::kAmd;
    case kVendorIntel: return DeviceClass::kIntel;
    case kVendorArm:
    case kVendorQualcomm: return DeviceClass::kMobile;
    default: return DeviceClass::kGeneric;
  }
}

}  // namespace

bool DeviceCaps::supports_dtype(DType t) const {
  switch (t) {
    case DType::kF64: case DType::kC128: return fp64_math && int64_math;
    case DType::kF16: case DType::kBF16: case DType::kI16: return storage_16bit;
    case DType::kI8: case DType::kU8: case DType::kBool: return storage_8bit;
    case DType::kI64: return int64_math;
    default: return true;
  }
}

namespace {

// Adds a feature vkml needs and the device lacks to the unusable verdict.
void add_missing(DeviceCaps& c, const std::string& what) {
  c.unusable_reason += (c.unusable_reason.empty() ? "missing " : ", ") + what;
}

}  // namespace

void apply_caps_mask(DeviceCaps& c) {
  const Config& cfg = config();
  // The registry has checked the words; "none" masks nothing.
  auto masked = [&](const char* word) {
    std::stringstream ss(cfg.caps_mask);
    for (std::string item; std::getline(ss, item, ',');) {
      if (item == word) return true;
    }
    return false;
  };
  // Every cooperative-matrix kernel computes on 16-bit floats: without fp16 arithmetic they go too.
  if (masked("no-coopmat") || masked("no-fp16")) {
    c.coopmat = c.coopmat_bf16 = false;
    c.coopmat_shapes.clear();
  }
  if (masked("no-bf16")) c.bf16_math = c.coopmat_bf16 = false;
  if (masked("no-fp16")) c.fp16_math = false;
  if (masked("no-fp64")) c.fp64_math = false;
  // Most kernels compute on 8- and 16-bit integers: a device without them is not usable.
  if (masked("no-int8") && c.int8_math) {
    c.int8_math = false;
    add_missing(c, "shaderInt8");
  }
  if (masked("no-int16") && c.int16_math) {
    c.int16_math = false;
    add_missing(c, "shaderInt16");
  }
  // Basic subgroup operations (elect, barriers) stay; the reductions and scans go.
  if (masked("no-subgroup-arithmetic")) {
    c.subgroup_ops &= ~uint32_t{VK_SUBGROUP_FEATURE_ARITHMETIC_BIT};
  }
  if (masked("no-subgroup-size-control")) {
    c.subgroup_size_control = false;
    c.min_subgroup_size = c.max_subgroup_size = c.subgroup_size;
  }
  if (masked("no-timestamps")) c.timestamps = false;
  if (cfg.caps_shared_memory > 0) {
    c.max_shared_memory = std::min<uint32_t>(c.max_shared_memory,
                                             static_cast<uint32_t>(cfg.caps_shared_memory));
  }
  if (cfg.caps_workgroup_count > 0) {
    for (auto& n : c.max_workgroup_count) {
      n = std::min<uint32_t>(n, static_cast<uint32_t>(cfg.caps_workgroup_count));
    }
  }
}

std::string format_driver_version(const DeviceCaps& c) {
  std::ostringstream os;
  uint32_t v = c.driver_version;
  if (c.vendor_id == kVendorNvidia) {  // NVIDIA packs 10.8.8.6 bits
    char buf[32];
    std::snprintf(buf, sizeof buf, "%u.%u.%02u", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff);
    os << buf;
  } else {
    os << VK_API_VERSION_MAJOR(v) << '.' << VK_API_VERSION_MINOR(v) << '.'
       << VK_API_VERSION_PATCH(v);
  }
  return os.str();
}

static bool component_to_dtype(int c, DType* out) {
  switch (c) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR: *out = DType::kF16; return true;
    case VK_COMPONENT_TYPE_FLOAT32_KHR: *out = DType::kF32; return true;
    case VK_COMPONENT_TYPE_FLOAT64_KHR: *out = DType::kF64; return true;
    case VK_COMPONENT_TYPE_SINT8_KHR: *out = DType::kI8; return true;
    case VK_COMPONENT_TYPE_UINT8_KHR: *out = DType::kU8; return true;
    case VK_COMPONENT_TYPE_SINT32_KHR: case VK_COMPONENT_TYPE_UINT32_KHR:
      *out = DType::kI32; return true;
    case VK_COMPONENT_TYPE_BFLOAT16_KHR: *out = DType::kBF16; return true;
    default: return false;
  }
}

DeviceCaps probe_caps(VkPhysicalDevice pd) {
  DeviceCaps c;
  uint32_t n = 0;
  vk::vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vk::vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  auto has_ext = [&](const char* e) {
    return std::any_of(exts.begin(), exts.end(),
                       [&](auto& p) { return std::strcmp(p.extensionName, e) == 0; });
  };

  VkPhysicalDeviceProperties base{};
  vk::vkGetPhysicalDeviceProperties(pd, &base);
  c.api_version = base.apiVersion;
  bool v13 = base.apiVersion >= VK_API_VERSION_1_3;

  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties ssc{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceFloatControlsProperties floats{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &driver;
  if (base.apiVersion >= VK_API_VERSION_1_2) {  // float controls are core from 1.2
    props.pNext = &floats;
    floats.pNext = &driver;
  }
  driver.pNext = &subgroup;
  subgroup.pNext = &ids;
  ids.pNext = &m3;
  if (v13 || has_ext(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) {
    m3.pNext = &ssc;
    if (v13) ssc.pNext = &m4;
  }
  vk::vkGetPhysicalDeviceProperties2(pd, &props);

  c.name = base.deviceName;
  c.driver_name = driver.driverName;
  c.driver_info = driver.driverInfo;
  c.vendor_id = base.vendorID;
  c.device_id = base.deviceID;
  c.driver_version = base.driverVersion;
  c.driver_id = driver.driverID;
  std::memcpy(c.device_uuid.data(), ids.deviceUUID, 16);
  std::memcpy(c.pipeline_cache_uuid.data(), base.pipelineCacheUUID, 16);
  switch (base.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: c.kind = DeviceKind::kDiscrete; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: c.kind = DeviceKind::kIntegrated; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: c.kind = DeviceKind::kVirtual; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: c.kind = DeviceKind::kCpu; break;
    default: c.kind = DeviceKind::kOther;
  }
  c.device_class = classify(c);
  c.denorm_preserve_f32 = floats.shaderDenormPreserveFloat32;
  c.signed_zero_inf_nan_f32 = floats.shaderSignedZeroInfNanPreserveFloat32;
  c.subgroup_size = subgroup.subgroupSize;
  c.subgroup_ops = subgroup.supportedOperations;
  c.min_subgroup_size = ssc.minSubgroupSize ? ssc.minSubgroupSize : subgroup.subgroupSize;
  c.max_subgroup_size = ssc.maxSubgroupSize ? ssc.maxSubgroupSize : subgroup.subgroupSize;
  c.max_shared_memory = base.limits.maxComputeSharedMemorySize;
  c.max_push_constants = base.limits.maxPushConstantsSize;
  c.max_workgroup_invocations = base.limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) c.max_workgroup_count[i] = base.limits.maxComputeWorkGroupCount[i];
  c.max_storage_buffer_range = base.limits.maxStorageBufferRange;
  c.max_allocation_size = m3.maxMemoryAllocationSize;
  c.max_buffer_size = v13 ? m4.maxBufferSize : m3.maxMemoryAllocationSize;
  c.timestamp_period_ns = base.limits.timestampPeriod;

  // Features.
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR fcm{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceShaderBfloat16FeaturesKHR fbf{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &f11;
  f11.pNext = &f12;
  void** tail = &f12.pNext;
  if (v13) { *tail = &f13; tail = &f13.pNext; }
  bool has_coopmat = has_ext(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  bool has_bf16 = has_ext(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  if (has_coopmat) { *tail = &fcm; tail = &fcm.pNext; }
  if (has_bf16) { *tail = &fbf; tail = &fbf.pNext; }
  bool v12 = base.apiVersion >= VK_API_VERSION_1_2;
  if (v12) vk::vkGetPhysicalDeviceFeatures2(pd, &f2);

  c.fp16_math = f12.shaderFloat16;
  c.int8_math = f12.shaderInt8;
  c.int16_math = f2.features.shaderInt16;
  c.int64_math = f2.features.shaderInt64;
  c.fp64_math = f2.features.shaderFloat64;
  c.storage_16bit = f11.storageBuffer16BitAccess;
  c.storage_8bit = f12.storageBuffer8BitAccess;
  c.buffer_device_address = f12.bufferDeviceAddress;
  c.timeline_semaphore = f12.timelineSemaphore;
  c.subgroup_size_control = v13 && f13.subgroupSizeControl && f13.computeFullSubgroups;
  c.bf16_math = has_bf16 && fbf.shaderBFloat16Type;
  c.memory_budget = has_ext(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);

  if (has_coopmat && fcm.cooperativeMatrix && vk::vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR) {
    vk::vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, nullptr);
    std::vector<VkCooperativeMatrixPropertiesKHR> cm(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
    vk::vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, cm.data());
    for (auto& p : cm) {
      if (p.scope != VK_SCOPE_SUBGROUP_KHR) continue;
      CoopMatShape s{p.MSize, p.NSize, p.KSize};
      if (component_to_dtype(p.AType, &s.a) && component_to_dtype(p.BType, &s.b) &&
          component_to_dtype(p.CType, &s.c) && component_to_dtype(p.ResultType, &s.result)) {
        c.coopmat_shapes.push_back(s);
        if (s.a == DType::kBF16) c.coopmat_bf16 = fbf.shaderBFloat16CooperativeMatrix;
      }
    }
    c.coopmat = !c.coopmat_shapes.empty();
  }

  // Queues: timestamps need valid bits on the compute family we will pick.
  vk::vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> qf(n);
  vk::vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, qf.data());
  bool has_compute_queue = false;
  for (auto& q : qf) {
    if (q.queueFlags & VK_QUEUE_COMPUTE_BIT) {
      has_compute_queue = true;
      if (q.timestampValidBits > 0 && base.limits.timestampComputeAndGraphics) c.timestamps = true;
    }
  }

  // Memory heaps and budgets.
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (c.memory_budget) mp.pNext = &budget;
  vk::vkGetPhysicalDeviceMemoryProperties2(pd, &mp);
  const auto& mem = mp.memoryProperties;
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    MemoryHeap h;
    h.size = mem.memoryHeaps[i].size;
    h.device_local = mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    h.budget = c.memory_budget ? budget.heapBudget[i] : h.size;
    h.usage = c.memory_budget ? budget.heapUsage[i] : 0;
    c.heaps.push_back(h);
  }
  bool any_device_local_host_visible = false, any_device_local_not_host = false;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    auto f = mem.memoryTypes[i].propertyFlags;
    if (!(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) continue;
    if (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
      any_device_local_host_visible = true;
    } else {
      any_device_local_not_host = true;
    }
  }
  c.unified_memory = any_device_local_host_visible && !any_device_local_not_host;

  // The verdict: what vkml needs and this device lacks.
  std::vector<std::string> missing;
  if (!v12) missing.push_back("Vulkan 1.2 (device reports " +
                              std::to_string(VK_API_VERSION_MAJOR(base.apiVersion)) + "." +
                              std::to_string(VK_API_VERSION_MINOR(base.apiVersion)) + ")");
  if (!c.buffer_device_address) missing.push_back("bufferDeviceAddress");
  if (!c.timeline_semaphore) missing.push_back("timelineSemaphore");
  if (!c.int64_math) missing.push_back("shaderInt64");
  // Kernels load and store 8- and 16-bit elements and compute on 8- and 16-bit integers.
  if (!c.int8_math) missing.push_back("shaderInt8");
  if (!c.int16_math) missing.push_back("shaderInt16");
  if (!c.storage_8bit) missing.push_back("storageBuffer8BitAccess");
  if (!c.storage_16bit) missing.push_back("storageBuffer16BitAccess");
  if (!has_compute_queue) missing.push_back("a compute queue");
  if (c.max_push_constants < 128) missing.push_back("128 bytes of push constants");
  if (!missing.empty()) {
    c.unusable_reason = "missing ";
    for (size_t i = 0; i < missing.size(); ++i) {
      c.unusable_reason += (i ? ", " : "") + missing[i];
    }
  }
  return c;
}

}  // namespace vkml
