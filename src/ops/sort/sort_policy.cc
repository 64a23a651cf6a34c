// The sort family's kernel-choice rules per device class; one reason per branch. The radix sort
// does O(n) work per key byte against the bitonic network's O(n log^2 n), but costs about 16
// dispatches and per-line digit tables.
#include "ops/sort/sort_policy.h"

namespace vkml::ops {

int64_t sort_radix_min_length(const DeviceCaps& caps) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return int64_t{1} << 10;  // dispatches are cheap next to the network's extra work
    default:
      // The network's one dispatch per global merge step passes the radix sort's count here
      // (estimated from the dispatch counts; not measured on a GPU).
      return int64_t{1} << 15;
  }
}

bool sort_radix_serial(const DeviceCaps& caps) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return true;  // one core per workgroup: a serial count beats shared-memory ranking
    default:
      return false;  // many lanes rank a tile in shared memory in parallel
  }
}

}  // namespace vkml::ops
