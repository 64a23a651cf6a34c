// Kernel-choice rules of the gemm family, keyed by device class (DeviceCaps::device_class): each a
// small function of the device and the problem. The mechanisms that apply them are in
// gemm_plan.cc and gemm_f32_split.cc. Thresholds and measurements: docs/design/gemm.md
#pragma once
#include <cstdint>

#include "vkml/device.h"
#include "vkml/gemm.h"

namespace vkml::ops {

// The fp32 kernel taken where VKML_GEMM_F32_KERNEL is auto.
enum class F32Kernel : uint8_t { kTiled, kVec, kSimt };
F32Kernel gemm_f32_kernel(const DeviceCaps& caps);

// Output blocks a grid needs before a larger tile pays.
int64_t gemm_min_blocks(const DeviceCaps& caps);

// Output blocks that split-K aims at for a product with fewer, and the least depth of a slice.
int64_t gemm_split_k_target(const DeviceCaps& caps, GemmKernel kernel);
int64_t gemm_split_k_min_slice(const DeviceCaps& caps, GemmKernel kernel);

// Whether fp32 products may run as three fp16 tensor-core products (VKML_GEMM_F32_SPLIT=1), and
// whether this one does where the setting is auto.
bool gemm_f32_split_supported(const DeviceCaps& caps);
bool gemm_f32_split_by_default(const DeviceCaps& caps, const GemmDesc& d);

}  // namespace vkml::ops
