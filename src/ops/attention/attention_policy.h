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

}  // namespace vkml::ops
