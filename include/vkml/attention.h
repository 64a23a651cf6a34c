// Fused scaled dot-product attention (flash style), forward and backward, on f32/f16/bf16
// tensors of any strides, computing in float. The L x S attention matrix is never stored: the
// forward keeps a running max and sum per query and saves the log-sum-exp, from which the
// backward recomputes the probabilities tile by tile. Deterministic (no atomics).
#pragma once
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

struct AttentionOptions {
  bool causal = false;    // key n is visible to query m only when n <= m (top-left aligned)
  double scale = 1.0;     // multiplies q . k (PyTorch's default is 1 / sqrt(E))
  double dropout_p = 0;   // probability of dropping an attention weight
  uint64_t seed = 0;      // Philox key and offset of the dropout draws: the draw for
  uint64_t offset = 0;    // (b, h, m, n) is element ((b*H + h)*L + m)*S + n of the random family
};

// out = softmax(q k^T * scale + mask) v, lse = log-sum-exp of each query's scores (f32,
// contiguous (B, H, L); -inf where every key is hidden, whose output is 0).
// q: (B, H, L, E); k: (B, Hkv, S, E); v: (B, Hkv, S, Ev) with H a multiple of Hkv (query head h
// reads key head h / (H / Hkv)); out: (B, H, L, Ev), all of one floating dtype (f32/f16/bf16).
// mask: address 0 for none, else bool (true = attend) or additive in the data dtype, of up to
// four dimensions broadcastable to (B, H, L, S).
void attention_forward(Device& dev, const TensorDesc& out, const TensorDesc& lse,
                       const TensorDesc& q, const TensorDesc& k, const TensorDesc& v,
                       const TensorDesc& mask, const AttentionOptions& opt);

// Gradients of q, k and v (any of them may have address 0 to skip it) from grad_out and the
// forward's out and lse, with the same options (the dropout draws are regenerated).
void attention_backward(Device& dev, const TensorDesc& grad_q, const TensorDesc& grad_k,
                        const TensorDesc& grad_v, const TensorDesc& grad_out,
                        const TensorDesc& q, const TensorDesc& k, const TensorDesc& v,
                        const TensorDesc& out, const TensorDesc& lse, const TensorDesc& mask,
                        const AttentionOptions& opt);

// Tests use this to run the tile shapes chosen for GPUs (fused and decode kernels) on any device
// (lavapipe included).
void attention_force_gpu_tiles(bool on);

}  // namespace vkml::ops
