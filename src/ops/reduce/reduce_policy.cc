// The reduce family's split targets per device class; one reason per branch.
#include "ops/reduce/reduce_policy.h"

namespace vkml::ops {

int64_t reduce_split_target(const DeviceCaps& caps, ReduceSplit kind) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      // A few cores: beyond a few workgroups per core a split only adds partial states.
      return kind == ReduceSplit::kScan ? 16 : 64;
    default:
      // Enough workgroups to keep every multiprocessor of a large GPU busy; column reductions
      // have short per-thread work and want more of them.
      return kind == ReduceSplit::kScan ? 512 : kind == ReduceSplit::kVectorColumns ? 2048 : 1024;
  }
}

}  // namespace vkml::ops
