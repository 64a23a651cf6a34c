// The recurrent cells' pointwise kernels (what PyTorch calls _thnn_fused_lstm_cell and
// _thnn_fused_gru_cell): gate activations and state updates after the two gate GEMMs, and their
// backward, one dispatch each. Operands are matrices (batch, features) or vectors (one row) of
// any strides and float dtypes (f16/bf16 computed in float, f64 in double where the device
// allows); H is the hidden size, gates are laid out [gate 0 | gate 1 | ...] along features.
#pragma once
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// LSTM: igates, hgates (B, 4H) in order i, f, g, o; cx (B, H); biases (4H) or absent
// (TensorDesc{}).
// Writes hy, cy (B, H) and workspace (B, 4H): the activated gates for lstm_cell_backward.
void lstm_cell(Device& dev, const TensorDesc& hy, const TensorDesc& cy, const TensorDesc& workspace,
               const TensorDesc& igates, const TensorDesc& hgates, const TensorDesc& cx,
               const TensorDesc& b_ih, const TensorDesc& b_hh);

// grad_hy / grad_cy may be absent (TensorDesc{}: zero). Writes grad_gates (B, 4H), grad_cx (B, H).
void lstm_cell_backward(Device& dev, const TensorDesc& grad_gates, const TensorDesc& grad_cx,
                        const TensorDesc& grad_hy, const TensorDesc& grad_cy, const TensorDesc& cx,
                        const TensorDesc& cy, const TensorDesc& workspace);

// GRU: igates, hgates (B, 3H) in order r, z, n; hx (B, H); biases (3H) or absent (TensorDesc{}).
// Writes hy (B, H) and workspace (B, 5H): r, z, n, hx, hn + b_hn for gru_cell_backward.
void gru_cell(Device& dev, const TensorDesc& hy, const TensorDesc& workspace,
              const TensorDesc& igates, const TensorDesc& hgates, const TensorDesc& hx,
              const TensorDesc& b_ih, const TensorDesc& b_hh);

// Writes grad_igates, grad_hgates (B, 3H) and grad_hx (B, H) from grad_hy (B, H).
void gru_cell_backward(Device& dev, const TensorDesc& grad_igates, const TensorDesc& grad_hgates,
                       const TensorDesc& grad_hx, const TensorDesc& grad_hy,
                       const TensorDesc& workspace);

}  // namespace vkml::ops
