// The attention family's single-pass forward on cooperative matrices (attention_flash.comp):
// fp16/bf16 data on devices with 16x16x16 cooperative matrices into fp32 and subgroup shuffles.
// Chosen with VKML_ATTENTION=flash; internal to src/ops/attention.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops/attention/attention_params.h"
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops::attention_flash {

// One launch of the kernel: its variant, specialization constants and queries per workgroup.
struct Plan {
  std::string shader;
  std::vector<uint32_t> spec;
  uint32_t rows_per_group = 0;
};

// Whether the device multiplies 16x16x16 matrices of t (fp16 or bf16) into fp32.
bool coopmat_16(const DeviceCaps& caps, DType t);

// The launch for p's dtype, head dims and layouts, or nothing where the kernel does not apply
// (no cooperative matrices or shuffles, a variant missing from the build, fp32 data, head dims
// above 256, tiles that do not fit shared memory).
std::optional<Plan> plan(const DeviceCaps& caps, const AttentionParams& p);

// Records the forward (out and lse; p.o, p.lse and their strides filled in).
void forward(Device& dev, const AttentionParams& p, const Plan& plan,
             std::span<const MemRange> reads, std::span<const MemRange> writes);

}  // namespace vkml::ops::attention_flash
