// The attention family's GEMM path ("math" attention with the L x S scores materialised in fp32
// scratch, chunked over (batch, key head) pairs): the products run on the fast GEMM kernels and
// small row-wise shaders do the softmax, masks, dropout and dS. Internal to src/ops/attention.
#pragma once
#include <cstdint>

#include "ops/attention/attention_params.h"
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops::attention_gemm {

// Whether the call takes the GEMM path. VKML_ATTENTION=fused|gemm forces a path, gemm-backward
// the GEMM path for the backward only (read per call; gemm still leaves empty sequences or heads,
// and pairs whose scratch alone exceeds the budget, to the fused kernels); by default (auto, and
// flash where the flash forward does not apply) GPUs (not lavapipe) take it when kv_len <= 4096.
bool applies(const Device& dev, const AttentionParams& p, bool backward);

// out, lse from p.q/k/v/mask (p.o, p.lse and their strides filled in).
void forward(Device& dev, const AttentionParams& p, const TensorDesc& lse, const MemRange& mask);

// The gradients whose descriptors have an address, from p (p.dout, p.o, p.lse and p.delta, the
// rowsum(dout * o) already recorded, filled in).
void backward(Device& dev, const AttentionParams& p, const TensorDesc& grad_q,
              const TensorDesc& grad_k, const TensorDesc& grad_v, const TensorDesc& lse, const MemRange& delta, const MemRange& mask);

}  // namespace vkml::ops::attention_gemm
