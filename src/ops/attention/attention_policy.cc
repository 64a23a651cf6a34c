// The attention family's kernel-choice rules per device class; one reason per branch.
#include "ops/attention/attention_policy.h"

namespace vkml::ops {

namespace {
// Keys up to which the GEMM path's score scratch stays a small fraction of the work.
constexpr int64_t kGemmPathMaxKeys = 4096;
// Decode kernels: queries per head, and query rows per key head (four row blocks of the widest
// workgroup), up to which a split re-reads its keys less often than the fused kernels would.
constexpr int64_t kDecodeMaxQueries = 8;
constexpr int64_t kDecodeMaxRows = 64;
// Keys from which splitting pays for the second (merge) dispatch.
constexpr int64_t kDecodeMinKeys = 64;
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

// docs/design/attention.md#decode
DecodeShape attention_decode_shape(DeviceClass device_class) {
  switch (device_class) {
    case DeviceClass::kCpu:
      // A few cores: a few workgroups each, long splits (each split's partials cost a write).
      return {64, 8, 16, 256};
    case DeviceClass::kMobile:
      return {64, 8, 64, 128};  // few compute units with small register files
    case DeviceClass::kNvidia:
    case DeviceClass::kAmd:
      // Over a hundred SMs / CUs: several resident workgroups each keep enough loads in flight
      // for the memory's bandwidth.
      return {128, 16, 1024, 128};
    default:
      return {128, 16, 256, 128};  // tens of compute units
  }
}

// docs/design/attention.md#decode
bool attention_decode_by_default(const DeviceCaps& caps, int64_t q_len, int64_t rows,
                                 int64_t kv_len) {
  (void)caps;  // every class: the fused and GEMM paths leave most of a tile idle for one query
  return q_len <= kDecodeMaxQueries && rows <= kDecodeMaxRows && kv_len >= kDecodeMinKeys;
}

}  // namespace vkml::ops
