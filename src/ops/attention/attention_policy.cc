// The attention family's kernel-choice rules per device class; one reason per branch.
#include "ops/attention/attention_policy.h"

namespace vkml::ops {

namespace {
// Keys up to which the GEMM path's score scratch stays a small fraction of the work.
constexpr int64_t kGemmPathMaxKeys = 4096;
}  // namespace

bool attention_small_tiles(const DeviceCaps& caps) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return true;  // a few cores: large workgroups only serialise
    default:
      return false;
  }
}

uint32_t attention_rows_workgroup(const DeviceCaps& caps) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return 64;  // a workgroup runs on one core
    default:
      return 256;  // long rows spread over a whole workgroup
  }
}

// docs/design/attention.md#gemm-path
bool attention_gemm_by_default(const DeviceCaps& caps, int64_t kv_len) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return false;  // the fused kernels never write the scores out: less memory traffic
    default:
      // Materialised scores run the tuned GEMMs, which beat the fused kernels on GPUs.
      return kv_len <= kGemmPathMaxKeys;
  }
}

}  // namespace vkml::ops
