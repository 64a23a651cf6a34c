// The index family's kernel-choice rules per device class; one reason per branch. The mechanism
// (index_launch.cc) applies them.
#include "ops/index/index_launch.h"

namespace vkml::ops {

bool prefer_owner_threads(const DeviceCaps& caps, int64_t parallel, int64_t owners) {
  if (owners < 2) return false;
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return false;  // a few cores: one serial walk per column is already the fastest
    default:
      // The plain scheme's time is one thread's serial walk; owner threads finish in about
      // parallel * owners * serial / throughput, which wins while parallel * owners stays below
      // throughput * latency of a dependent update (about 1e5 on discrete GPUs).
      return parallel <= (int64_t{1} << 17) / owners;
  }
}

}  // namespace vkml::ops
