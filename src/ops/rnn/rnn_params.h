// Parameters of the rnn family's cell shader, shared by C++ and GLSL. Every operand is a matrix
// (batch rows, feature columns) given by address, row stride, column stride (elements) and dtype
// code (nn_common.glsl); a bias has row stride 0, an absent operand address 0 (reads as zero).
// Operand slots per kernel (inputs first, then outputs):
//   lstm_fwd: igates, hgates, cx, b_ih, b_hh | hy, cy, workspace (i, f, g, o after activation)
//   lstm_bwd: grad_hy, grad_cy, cx, cy, workspace | grad_gates, grad_cx
//   gru_fwd:  igates, hgates, hx, b_ih, b_hh | hy, workspace (r, z, n, hx, hn + b_hn)
//   gru_bwd:  grad_hy, workspace | grad_igates, grad_hgates, grad_hx
#ifndef VKML_OPS_RNN_PARAMS_H_
#define VKML_OPS_RNN_PARAMS_H_

#define VKML_RNN_OPERANDS 8

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct RnnCellParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer RnnCellParams {
#endif
  uint64_t address[VKML_RNN_OPERANDS];
  int64_t row_stride[VKML_RNN_OPERANDS];
  int64_t col_stride[VKML_RNN_OPERANDS];
  int64_t batch;
  int64_t hidden;
  uint32_t dtype[VKML_RNN_OPERANDS];
};
#ifdef __cplusplus
static_assert(sizeof(RnnCellParams) == 3 * 8 * VKML_RNN_OPERANDS + 16 + 4 * VKML_RNN_OPERANDS);
static_assert(offsetof(RnnCellParams, batch) == 3 * 8 * VKML_RNN_OPERANDS);
static_assert(offsetof(RnnCellParams, dtype) == 3 * 8 * VKML_RNN_OPERANDS + 16);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_RNN_PARAMS_H_
