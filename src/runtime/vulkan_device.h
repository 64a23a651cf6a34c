// The Vulkan objects behind one vkml::Device, shared by allocator, stream and pipeline cache.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vkml/device.h"
#include "vulkan_api.h"

namespace vkml {

// A VkBuffer with its own memory, addressable by buffer device address.
struct RawBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t address = 0;
  uint64_t size = 0;
  void* mapped = nullptr;
  explicit operator bool() const { return buffer != VK_NULL_HANDLE; }
};

class CapturePool;

struct VulkanDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkPhysicalDeviceMemoryProperties memory{};
  int device_type = -1;   // device-local memory for tensors
  int spill_type = -1;    // host memory the device can use, for spilling when device memory is full
  int staging_type = -1;  // host-visible, coherent; cached when available (fast readback)
  int params_type = -1;   // host-visible, coherent; device-local when available (BAR)
  VkPipelineLayout layout = VK_NULL_HANDLE;
  // VKML_PIPELINE_STATS=1 and VK_KHR_pipeline_executable_properties: print the driver's statistics
  // (registers, shared memory, spills) of each new pipeline, for tuning kernels without a profiler.
  bool pipeline_stats = false;
  std::mutex queue_mutex;
  std::string name;  // the device's name, for error messages

  // VK_ERROR_DEVICE_LOST: once a call reports it, the device is lost for good and every later
  // call raises DeviceLostError at once (check_alive) instead of touching the device again.
  std::atomic<bool> lost{false};
  // Test hook: the next host wait reports VK_ERROR_DEVICE_LOST after the work really finished.
  std::atomic<bool> inject_loss{false};
  bool lost_injected = false;  // the loss came from inject_loss (a test may recover from it)
  std::mutex lost_mutex;       // guards lost_call and lost_injected
  std::string lost_call;       // the call that reported the loss

  // Graph capture (vkml/graph.h, capture_pool.h): the capture pools alive (weak: a pool goes
  // with its last graph or handle) and the one allocations come from while capturing.
  // `pool_count` lets Device::free skip the lock when there is none.
  std::mutex pools_mutex;
  std::vector<std::weak_ptr<CapturePool>> pools;
  std::shared_ptr<CapturePool> capture_pool;
  std::atomic<size_t> pool_count{0};

  // Throws DeviceLostError when the device was lost.
  void check_alive() {
    if (lost.load(std::memory_order_acquire)) throw_lost();
  }
  // Marks the device lost (`call` reported VK_ERROR_DEVICE_LOST) and throws DeviceLostError.
  [[noreturn]] void lose(const char* call, bool injected = false);
  [[noreturn]] void throw_lost();
  // Throws like VKML_VK_CHECK, marking the device lost on VK_ERROR_DEVICE_LOST.
  void check(VkResult r, const char* call) {
    if (r == VK_SUCCESS) return;
    if (r == VK_ERROR_DEVICE_LOST) lose(call);
    vk::throw_result(r, call);
  }

  // Creates a buffer with dedicated memory of `type`. Returns an empty RawBuffer when the
  // driver is out of memory; throws on any other failure.
  RawBuffer create_buffer(uint64_t size, int type, bool map);
  void destroy_buffer(RawBuffer& b);
  bool type_host_coherent(int type) const;
};

// Size of the push-constant block every pipeline layout declares (the guaranteed minimum).
constexpr uint32_t kPushConstantBytes = 128;

}  // namespace vkml
