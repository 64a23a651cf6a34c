// The attention family's split-KV decode forward (attention_decode.comp): a few queries against
// many keys, the keys split across workgroups and the partial softmaxes merged by a second pass.
// Internal to src/ops/attention.
#pragma once
#include <span>

#include "ops/attention/attention_params.h"
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops::attention_decode {

// Whether the forward takes the decode kernels: VKML_ATTENTION=auto where the attention policy
// picks them, =decode wherever they can run (head dims up to 256, subgroup reductions, a
// workgroup that fits the device, non-empty sequences and heads).
// gpu_shape: a CPU device takes the launch shape of GPUs (for tests).
bool applies(const Device& dev, const AttentionParams& p, bool gpu_shape);

// out and lse from p (p.o, p.lse and the output strides filled in). reads: q, k, v and the mask;
// writes: out and lse.
void forward(Device& dev, const AttentionParams& p, bool gpu_shape,
             std::span<const MemRange> reads, std::span<const MemRange> writes);

}  // namespace vkml::ops::attention_decode
