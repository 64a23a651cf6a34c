// Logical device creation and the Device facade.
#include "vulkan_device.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "allocator.h"
#include "capture_pool.h"
#include "host_allocator.h"
#include "pipeline_cache.h"
#include "vkml/errors.h"
#include "vkml/config.h"
#include "vkml/runtime.h"
#include "vulkan_ext.h"

namespace vkml {

static int find_memory_type(const VkPhysicalDeviceMemoryProperties& m, VkMemoryPropertyFlags want,
                            VkMemoryPropertyFlags avoid = 0) {
  for (uint32_t i = 0; i < m.memoryTypeCount; ++i) {
    auto f = m.memoryTypes[i].propertyFlags;
    if ((f & want) == want && !(f & avoid)) return static_cast<int>(i);
  }
  return -1;
}

void VulkanDevice::lose(const char* call, bool injected) {
  {
    std::lock_guard<std::mutex> lock(lost_mutex);
    if (!lost.load(std::memory_order_relaxed)) {
      lost_call = call;
      lost_injected = injected;
      lost.store(true, std::memory_order_release);
    }
  }
  throw_lost();
}

void VulkanDevice::throw_lost() {
  std::string call;
  {
    std::lock_guard<std::mutex> lock(lost_mutex);
    call = lost_call;
  }
  throw DeviceLostError(
      "vkml: the GPU " + name + " was lost (" + call + " returned VK_ERROR_DEVICE_LOST): the " +
      "driver reset it after a crash, a hang or a timeout (Windows resets a GPU that does not " +
      "answer for about 2 s). This device cannot be used again in this process, and every call " +
      "on it raises this error. Save what you need from CPU tensors and restart the process.");
}

bool VulkanDevice::type_host_coherent(int type) const {
  auto f = memory.memoryTypes[type].propertyFlags;
  return (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
}

RawBuffer VulkanDevice::create_buffer(uint64_t size, int type, bool map) {
  RawBuffer b;
  b.size = size;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vk::vkCreateBuffer(device, &bi, nullptr, &b.buffer);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) return {};
  VKML_VK_CHECK(r);
  VkMemoryRequirements req;
  vk::vkGetBufferMemoryRequirements(device, b.buffer, &req);
  if (!(req.memoryTypeBits & (1u << type))) {
    vk::vkDestroyBuffer(device, b.buffer, nullptr);
    throw Error("vkml: memory type " + std::to_string(type) + " cannot back storage buffers");
  }
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dedicated.buffer = b.buffer;
  flags.pNext = &dedicated;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.pNext = &flags;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = vk::vkAllocateMemory(device, &ai, nullptr, &b.memory);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    vk::vkDestroyBuffer(device, b.buffer, nullptr);
    return {};
  }
  VKML_VK_CHECK(r);
  VKML_VK_CHECK(vk::vkBindBufferMemory(device, b.buffer, b.memory, 0));
  VkBufferDeviceAddressInfo addr{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  addr.buffer = b.buffer;
  b.address = vk::vkGetBufferDeviceAddress(device, &addr);
  if (map) VKML_VK_CHECK(vk::vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

void VulkanDevice::destroy_buffer(RawBuffer& b) {
  if (!b) return;
  if (b.mapped) vk::vkUnmapMemory(device, b.memory);
  vk::vkDestroyBuffer(device, b.buffer, nullptr);
  vk::vkFreeMemory(device, b.memory, nullptr);
  b = {};
}

static void create_logical_device(VulkanDevice& v, const DeviceCaps& caps) {
  uint32_t n = 0;
  vk::vkGetPhysicalDeviceQueueFamilyProperties(v.physical, &n, nullptr);
  std::vector<VkQueueFamilyProperties> qf(n);
  vk::vkGetPhysicalDeviceQueueFamilyProperties(v.physical, &n, qf.data());
  // A compute-only family keeps long ML work off the graphics queue that drives the desktop.
  int family = -1;
  for (uint32_t i = 0; i < n; ++i) {
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
        qf[i].timestampValidBits > 0) {
      family = static_cast<int>(i);
      break;
    }
  }
  for (uint32_t i = 0; i < n && family < 0; ++i) {
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = static_cast<int>(i);
  }
  v.queue_family = static_cast<uint32_t>(family);
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = v.queue_family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;

  std::vector<const char*> exts;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR fcm{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceShaderBfloat16FeaturesKHR fbf{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
  f2.pNext = &f11;
  f11.pNext = &f12;
  void** tail = &f12.pNext;
  f2.features.shaderInt64 = VK_TRUE;
  f2.features.shaderInt16 = caps.int16_math;
  f2.features.shaderFloat64 = caps.fp64_math;
  f11.storageBuffer16BitAccess = caps.storage_16bit;
  f12.storageBuffer8BitAccess = caps.storage_8bit;
  f12.shaderFloat16 = caps.fp16_math;
  f12.shaderInt8 = caps.int8_math;
  f12.bufferDeviceAddress = VK_TRUE;
  f12.timelineSemaphore = VK_TRUE;
  f12.hostQueryReset = VK_FALSE;
  if (caps.api_version >= VK_API_VERSION_1_3) {
    f13.subgroupSizeControl = caps.subgroup_size_control;
    f13.computeFullSubgroups = caps.subgroup_size_control;
    f13.synchronization2 = VK_FALSE;
    *tail = &f13;
    tail = &f13.pNext;
  }
  if (caps.coopmat) {
    exts.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    fcm.cooperativeMatrix = VK_TRUE;
    *tail = &fcm;
    tail = &fcm.pNext;
  }
  if (caps.bf16_math) {
    exts.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
    fbf.shaderBFloat16Type = VK_TRUE;
    fbf.shaderBFloat16CooperativeMatrix = caps.coopmat_bf16;
    *tail = &fbf;
    tail = &fbf.pNext;
  }
  if (caps.memory_budget) exts.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR fpe{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  const bool want_stats = config().pipeline_stats;
  // MoltenVK and other portability drivers require this extension to be enabled when listed.
  uint32_t ne = 0;
  vk::vkEnumerateDeviceExtensionProperties(v.physical, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> props(ne);
  vk::vkEnumerateDeviceExtensionProperties(v.physical, nullptr, &ne, props.data());
  for (auto& p : props) {
    if (std::strcmp(p.extensionName, "VK_KHR_portability_subset") == 0) {
      exts.push_back("VK_KHR_portability_subset");
    }
    if (want_stats &&
        std::strcmp(p.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0) {
      exts.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
      fpe.pipelineExecutableInfo = VK_TRUE;
      *tail = &fpe;
      tail = &fpe.pNext;
      v.pipeline_stats = true;
    }
  }

  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.pNext = &f2;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  di.ppEnabledExtensionNames = exts.data();
  VKML_VK_CHECK(vk::vkCreateDevice(v.physical, &di, nullptr, &v.device));
  vk::load_device_functions(v.device);
  vk::vkGetDeviceQueue(v.device, v.queue_family, 0, &v.queue);

  vk::vkGetPhysicalDeviceMemoryProperties(v.physical, &v.memory);
  const auto kDev = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  const auto kHost = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  v.device_type = find_memory_type(v.memory, kDev);
  if (v.device_type < 0) v.device_type = find_memory_type(v.memory, 0);
  v.spill_type = find_memory_type(v.memory, kHost, kDev);
  v.staging_type = find_memory_type(v.memory, kHost | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (v.staging_type < 0) v.staging_type = find_memory_type(v.memory, kHost);
  v.params_type = find_memory_type(v.memory, kHost | kDev);
  if (v.params_type < 0) v.params_type = find_memory_type(v.memory, kHost);
  if (v.device_type < 0 || v.staging_type < 0) {
    throw NoDeviceError("vkml: device " + caps.name + " has no usable memory types");
  }

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
  VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  li.pushConstantRangeCount = 1;
  li.pPushConstantRanges = &range;
  VKML_VK_CHECK(vk::vkCreatePipelineLayout(v.device, &li, nullptr, &v.layout));
}

Device::Device(int index, const DeviceCaps& caps, void* physical_device, void* instance)
    : index_(index), caps_(caps), vk_(std::make_unique<VulkanDevice>()) {
  vk_->instance = static_cast<VkInstance>(instance);
  vk_->physical = static_cast<VkPhysicalDevice>(physical_device);
  vk_->name = caps_.name;
  create_logical_device(*vk_, caps_);
  stream_ = std::make_unique<Stream>(*this);
  allocator_ = std::make_unique<Allocator>(*vk_, caps_, [this] { stream_->synchronize(); });
  pipelines_ = std::make_unique<PipelineCache>(*vk_, caps_);
}

Device::~Device() {
  try {
    synchronize();
    pipelines_->save();
  } catch (...) {
  }
  pipelines_.reset();
  stream_.reset();
  allocator_.reset();
  vk::vkDestroyPipelineLayout(vk_->device, vk_->layout, nullptr);
  vk::vkDestroyDevice(vk_->device, nullptr);
}

uint64_t Device::allocate(uint64_t bytes) {
  vk_->check_alive();
  if (vk_->pool_count.load(std::memory_order_acquire) > 0) {
    std::shared_ptr<CapturePool> pool;
    {
      std::lock_guard<std::mutex> lock(vk_->pools_mutex);
      pool = vk_->capture_pool;
    }
    if (pool) {
      if (uint64_t address = pool->reuse(bytes)) return address;
      const uint64_t address = allocator_->allocate(bytes);
      pool->adopt(address, bytes);
      return address;
    }
  }
  return allocator_->allocate(bytes);
}

void Device::free(uint64_t address) {
  if (vk_->pool_count.load(std::memory_order_acquire) > 0) {
    std::vector<std::shared_ptr<CapturePool>> alive;  // released after the lock
    std::lock_guard<std::mutex> lock(vk_->pools_mutex);
    for (auto& weak : vk_->pools) {
      if (auto pool = weak.lock()) alive.push_back(std::move(pool));
    }
    for (auto& pool : alive) {
      if (pool->take_back(address)) return;
    }
    std::erase_if(vk_->pools, [](const std::weak_ptr<CapturePool>& w) { return w.expired(); });
    vk_->pool_count.store(vk_->pools.size(), std::memory_order_release);
    if (vk_->capture_pool) {  // the captured commands may still use it
      vk_->capture_pool->defer_free(address);
      return;
    }
  }
  allocator_->free(address);
}



bool Device::lost() const { return vk_->lost.load(std::memory_order_acquire); }

void Device::inject_device_loss() { vk_->inject_loss.store(true, std::memory_order_release); }

void Device::recover_injected_loss() {
  std::lock_guard<std::mutex> lock(vk_->lost_mutex);
  vk_->inject_loss.store(false, std::memory_order_release);
  if (!vk_->lost_injected) return;  // a real loss stays
  vk_->lost_injected = false;
  vk_->lost_call.clear();
  vk_->lost.store(false, std::memory_order_release);
}
MemoryStats Device::memory_stats() const { return allocator_->stats(); }
void Device::reset_peak_memory_stats() { allocator_->reset_peak(); }
void Device::empty_cache() { allocator_->empty_cache(); }
BufferSlice Device::resolve(uint64_t address) const {
  BufferSlice s;
  if (allocator_->try_resolve(address, &s) || resolve_pinned(*this, address, &s)) return s;
  throw InvalidArgument("vkml: address is not device memory");
}
bool Device::owns(uint64_t address) const { return allocator_->owns(address); }
void Device::synchronize() { stream_->synchronize(); }
void Device::set_memory_limit(uint64_t bytes) { allocator_->set_limit(bytes); }
uint64_t Device::memory_limit() const { return allocator_->limit(); }

std::pair<uint64_t, uint64_t> Device::mem_get_info() {
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (caps_.memory_budget) mp.pNext = &budget;
  vk::vkGetPhysicalDeviceMemoryProperties2(vk_->physical, &mp);
  uint32_t heap = mp.memoryProperties.memoryTypes[vk_->device_type].heapIndex;
  uint64_t total = mp.memoryProperties.memoryHeaps[heap].size;
  uint64_t used = caps_.memory_budget ? budget.heapUsage[heap] : memory_stats().reserved;
  uint64_t avail = caps_.memory_budget ? budget.heapBudget[heap] : total;
  uint64_t free_bytes = avail > used ? avail - used : 0;
  uint64_t limit = allocator_->limit();
  if (limit) {
    uint64_t reserved = memory_stats().reserved;
    free_bytes = std::min(free_bytes, limit > reserved ? limit - reserved : 0);
    total = std::min(total, limit);
  }
  return {free_bytes, total};
}

const Pipeline& Device::pipeline(const std::string& name, std::span<const uint32_t> spec) {
  return pipelines_->get(name, spec);
}
void Device::save_pipeline_cache() { pipelines_->save(); }
std::string Device::pipeline_cache_path() const { return pipelines_->path(); }
uint64_t Device::pipelines_created() const { return pipelines_->created(); }
uint64_t Device::pipeline_build_ns() const { return pipelines_->build_ns(); }
void Device::set_pipeline_build_threads(unsigned n) { pipelines_->set_build_threads(n); }

}  // namespace vkml
