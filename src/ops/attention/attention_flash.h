// The attention family's single-pass forward on cooperative matrices (attention_flash.comp):
// fp16/bf16 data on devices with 16x16x16 cooperative matrices into fp32 and subgroup shuffles.
// The backward kernels (attention_flash_bwd.comp) recompute the probabilities from the forward's
// logsumexp. Chosen with VKML_ATTENTION=flash (flash-forward: the forward only); internal to
// src/ops/attention.
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

// The backward's launch (attention_flash_bwd.comp; `shader` holds the dtype suffix of the
// attention_flash_{dq,dk,dv} variants), or
// nothing where it does not apply, as for the forward.
std::optional<Plan> backward_plan(const DeviceCaps& caps, const AttentionParams& p);

// Records dq, dk and dv (those with an address) from p (p.dout, p.lse and p.delta filled in).
void backward(Device& dev, const AttentionParams& p, const Plan& plan, const TensorDesc& grad_q,
              const TensorDesc& grad_k, const TensorDesc& grad_v, std::span<const MemRange> reads);

}  // namespace vkml::ops::attention_flash
