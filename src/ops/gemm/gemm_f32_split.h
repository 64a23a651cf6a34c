// fp32 matrix products on fp16 tensor cores (three fp16 products per fp32 one); see
// gemm_f32_split.cc.
#pragma once
#include "vkml/gemm.h"

namespace vkml::ops {

// Whether gemm() takes this (non-empty) product through gemm_f32_split: an fp32 product without
// batch whose C_in and bias (if any) do not alias C, on a GPU with fp16 cooperative matrices,
// where VKML_GEMM_F32_SPLIT is 1 or auto and the policy takes it (=force: on any device).
bool gemm_f32_split_wanted(const GemmDesc& desc, const DeviceCaps& caps);

// Records the product (validated by the caller) on the device's stream.
void gemm_f32_split(Device& dev, const GemmDesc& desc);

}  // namespace vkml::ops
