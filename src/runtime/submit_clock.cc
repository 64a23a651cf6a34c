#include "submit_clock.h"

#include <algorithm>

namespace vkml {

namespace {

constexpr int kSlots = 256;  // command buffers timed at once (two queries each)
// Only submissions at least this long, whose cost is mostly what ops declared, teach the
// throughput: short ones are dominated by launch overhead, and invocation counts of
// memory-bound kernels are not comparable with a GEMM's multiply-adds.
constexpr double kLearnMinNs = 200e3;

}  // namespace

double initial_ops_per_ns(const DeviceCaps& caps) {
  switch (caps.kind) {
    case DeviceKind::kCpu: return 1.0;
    case DeviceKind::kDiscrete: return 500.0;
    default: return 100.0;
  }
}

void SubmitClock::enable(VkDevice device, float period_ns, double ops_per_ns) {
  if (pool_) return;
  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = 2 * kSlots;
  VKML_VK_CHECK(vk::vkCreateQueryPool(device, &qi, nullptr, &pool_));
  period_ns_ = period_ns;
  ops_per_ns_ = ops_per_ns;
  free_.clear();
  for (int i = kSlots - 1; i >= 0; --i) free_.push_back(i);
}

void SubmitClock::disable(VkDevice device) {
  if (pool_) vk::vkDestroyQueryPool(device, pool_, nullptr);
  pool_ = VK_NULL_HANDLE;
}

int SubmitClock::begin(VkCommandBuffer cb) {
  if (!pool_ || free_.empty()) return -1;
  const int slot = free_.back();
  free_.pop_back();
  vk::vkCmdResetQueryPool(cb, pool_, 2 * slot, 2);
  vk::vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, pool_, 2 * slot);
  return slot;
}

void SubmitClock::end(VkCommandBuffer cb, int slot) {
  if (slot < 0) return;
  vk::vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, 2 * slot + 1);
}

void SubmitClock::collect(VkDevice device, int slot, uint64_t cost, uint64_t declared) {
  if (slot < 0 || !pool_) return;
  uint64_t ticks[2] = {0, 0};
  const VkResult r = vk::vkGetQueryPoolResults(device, pool_, 2 * slot, 2, sizeof(ticks), ticks,
                                               sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  free_.push_back(slot);
  if (r != VK_SUCCESS) return;  // VK_NOT_READY cannot happen after completion; skip if it does
  // Submissions on one queue may start before the previous one ends: count only the busy part.
  const uint64_t start = std::max(ticks[0], last_end_ticks_);
  last_end_ticks_ = std::max(last_end_ticks_, ticks[1]);
  if (ticks[1] <= start) return;
  const double ns = static_cast<double>(ticks[1] - start) * period_ns_;
  times_.count++;
  times_.total_ms += ns * 1e-6;
  times_.max_ms = std::max(times_.max_ms, ns * 1e-6);
  if (ns < kLearnMinNs || declared * 2 < cost) return;
  // Fall at once, rise slowly: a slower kind of work than the one learned so far must not
  // overrun the budget, and one fast submission must not raise it much.
  const double seen = static_cast<double>(cost) / ns;
  if (!learned_ || seen < ops_per_ns_) {
    ops_per_ns_ = seen;
  } else {
    ops_per_ns_ = 0.8 * ops_per_ns_ + 0.2 * seen;
  }
  learned_ = true;
  times_.ops_per_ns = ops_per_ns_;
}

}  // namespace vkml
