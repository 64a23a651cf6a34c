// GPU time per submission and the throughput learned from it, for the per-submission time budget
// (VKML_SUBMIT_BUDGET_MS). Each command buffer gets a timestamp at its start and one at its end;
// once it completes, its busy time (from the later of its start and the previous submission's
// end) enters the statistics. Reasons and measurements: docs/design/submission.md#time-budget.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "vkml/runtime.h"
#include "vulkan_api.h"

namespace vkml {

// Throughput assumed before any submission is timed: low for the device's kind, so that a slow
// GPU of that kind stays within the budget from its first submission.
double initial_ops_per_ns(const DeviceCaps& caps);

class SubmitClock {
 public:
  // `ops_per_ns`: the throughput assumed until submissions have been timed.
  void enable(VkDevice device, float period_ns, double ops_per_ns);
  void disable(VkDevice device);
  bool enabled() const { return pool_ != VK_NULL_HANDLE; }

  // At a command buffer's start; returns its slot, or -1 when every slot is in flight.
  int begin(VkCommandBuffer cb);
  // Just before the buffer ends.
  void end(VkCommandBuffer cb, int slot);
  // After the submission timed in `slot` completed. `cost` is its estimated scalar operations,
  // `declared` the part that ops estimated themselves (GEMMs, convolutions).
  void collect(VkDevice device, int slot, uint64_t cost, uint64_t declared);

  // Scalar operations per nanosecond the budget assumes (learned, or the starting value).
  double ops_per_ns() const { return ops_per_ns_; }
  SubmissionTimes times() const { return times_; }
  void reset_times() { times_ = {}; }

 private:
  VkQueryPool pool_ = VK_NULL_HANDLE;
  float period_ns_ = 1.0f;
  std::vector<int> free_;
  uint64_t last_end_ticks_ = 0;
  double ops_per_ns_ = 0;
  bool learned_ = false;
  SubmissionTimes times_;
};

}  // namespace vkml
