// Per-kernel GPU time, for finding where a model's step goes (VKML_PROFILE=1 or profiler_enable).
// Profiling serialises the stream: a barrier before each command, timestamps around it, and a wait
// after each submit to read them. Figures are therefore per kernel alone, not overlapped.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vkml/profiling.h"
#include "vulkan_api.h"

namespace vkml {

class KernelProfiler {
 public:
  // `max_commands`: commands per command buffer (the stream's batch limit).
  void enable(VkDevice device, uint32_t max_commands, float period_ns);
  void disable(VkDevice device);
  bool enabled() const { return pool_ != VK_NULL_HANDLE; }
  // Called when a command buffer begins: resets the queries it will use.
  void begin_buffer(VkCommandBuffer cb);
  // Around one command; `before` is recorded after the stream's barrier.
  void before(VkCommandBuffer cb, const std::string& name);
  void after(VkCommandBuffer cb);
  // After the buffer's work completed: reads its timestamps into the totals.
  void collect(VkDevice device);
  std::map<std::string, KernelTime> report() const { return totals_; }
  void reset() { totals_.clear(); }

 private:
  VkQueryPool pool_ = VK_NULL_HANDLE;
  uint32_t capacity_ = 0;
  float period_ns_ = 1.0f;
  uint32_t used_ = 0;
  std::vector<std::string> names_;
  std::map<std::string, KernelTime> totals_;
};

}  // namespace vkml
