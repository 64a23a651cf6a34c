#include "kernel_profiler.h"

#include <cstdlib>

#include "vkml/config.h"
#include "vulkan_device.h"

namespace vkml {

namespace {
thread_local std::string t_profile_tag;
}  // namespace

bool profiling_shapes() { return config().profile >= 2; }

ProfileTag::ProfileTag(const std::string& tag) {
  if (!t_profile_tag.empty()) return;
  t_profile_tag = tag;
  owner_ = true;
}

ProfileTag::~ProfileTag() {
  if (owner_) t_profile_tag.clear();
}

const std::string& ProfileTag::current() { return t_profile_tag; }

void KernelProfiler::enable(VkDevice device, uint32_t max_commands, float period_ns) {
  if (pool_) return;
  capacity_ = 2 * (max_commands + 4);  // copies recorded outside the batch count get room too
  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = capacity_;
  VKML_VK_CHECK(vk::vkCreateQueryPool(device, &qi, nullptr, &pool_));
  period_ns_ = period_ns;
}

void KernelProfiler::disable(VkDevice device) {
  if (pool_) vk::vkDestroyQueryPool(device, pool_, nullptr);
  pool_ = VK_NULL_HANDLE;
}

void KernelProfiler::begin_buffer(VkCommandBuffer cb) {
  vk::vkCmdResetQueryPool(cb, pool_, 0, capacity_);
  used_ = 0;
  names_.clear();
}

void KernelProfiler::before(VkCommandBuffer cb, const std::string& name) {
  if (used_ + 2 > capacity_) return;  // more commands than expected: leave this one out
  vk::vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, used_++);
  const std::string& tag = ProfileTag::current();
  names_.push_back(tag.empty() ? name : name + " [" + tag + "]");
}

void KernelProfiler::after(VkCommandBuffer cb) {
  if (used_ % 2 == 0) return;  // `before` was left out
  vk::vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, used_++);
}

void KernelProfiler::collect(VkDevice device) {
  if (used_ == 0) return;
  std::vector<uint64_t> ticks(used_);
  VKML_VK_CHECK(vk::vkGetQueryPoolResults(device, pool_, 0, used_, ticks.size() * sizeof(uint64_t),
                                          ticks.data(), sizeof(uint64_t),
                                          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  for (size_t i = 0; i < names_.size(); i++) {
    auto& t = totals_[names_[i]];
    t.count++;
    t.total_ns += static_cast<double>(ticks[2 * i + 1] - ticks[2 * i]) * period_ns_;
  }
  used_ = 0;
  names_.clear();
}

}  // namespace vkml
