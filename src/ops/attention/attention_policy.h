// Kernel-choice rules of the attention family, keyed by device class (DeviceCaps::device_class).
// The mechanisms are in attention.cc and attention_gemm.cc. Measurements: docs/design/attention.md
#pragma once
#include <cstdint>

#include "vkml/device.h"

namespace vkml::ops {

// Whether the fused kernels take the small tiles sized for a few host cores.
bool attention_small_tiles(const DeviceCaps& caps);

// Threads of one workgroup of the GEMM path's row passes (softmax rows, their backward).
uint32_t attention_rows_workgroup(const DeviceCaps& caps);

// Whether VKML_ATTENTION=auto materialises the scores through the GEMMs for kv_len keys.
bool attention_gemm_by_default(const DeviceCaps& caps, int64_t kv_len);

// Launch shape of the split-KV decode kernels (attention_decode.comp) on a device class.
struct DecodeShape {
  uint32_t threads;           // workgroup size, also the keys per tile; divides 256
  uint32_t max_rows;          // query rows one workgroup takes at most (a power of two)
  int64_t target_workgroups;  // the keys are split until the grid has about this many
  int64_t min_split_keys;     // but never into ranges shorter than this
};
DecodeShape attention_decode_shape(DeviceClass device_class);

// Whether VKML_ATTENTION=auto takes the split-KV decode kernels for q_len queries per head,
// `rows` query rows per key head (q_len times the query heads per key head) and kv_len keys.
bool attention_decode_by_default(const DeviceCaps& caps, int64_t q_len, int64_t rows,
                                 int64_t kv_len);

}  // namespace vkml::ops
