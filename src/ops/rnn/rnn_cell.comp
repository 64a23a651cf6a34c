#version 460
#extension GL_GOOGLE_include_directive : require
// The recurrent cells' pointwise parts, one thread per (batch row, hidden unit): the gate
// activations and state update of an LSTM or GRU cell after the two gate GEMMs, and their
// backward. Kernel by define: RNN_LSTM_FWD, RNN_LSTM_BWD, RNN_GRU_FWD, RNN_GRU_BWD. Math in float
// (f16/bf16/f32 operands) or double (VKML_USE_FP64), with the elementwise family's exp and tanh
// so results match PyTorch's CPU ops to the last bits it can.
#include "vkml_common.glsl"
#include "rnn_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { RnnCellParams p; } pc;

#include "nn_common.glsl"
#ifdef VKML_USE_FP64
#define EW_DOUBLE
#endif
#include "ew_math.glsl"

ACC ld(RnnCellParams p, int k, int64_t row, int64_t col) {
  if (p.address[k] == 0ul) return ACC(0);
  return nn_load(p.address[k], row * p.row_stride[k] + col * p.col_stride[k], p.dtype[k]);
}

void st(RnnCellParams p, int k, int64_t row, int64_t col, ACC v) {
  nn_store(p.address[k], row * p.row_stride[k] + col * p.col_stride[k], p.dtype[k], v);
}

ACC sigmoid(ACC x) { return ACC(1) / (ACC(1) + ew_exp(-x)); }

// Gate g of unit j: input gates + hidden gates + both biases, in the order CUDA adds them.
ACC gate(RnnCellParams p, int64_t b, int64_t col) {
  return ld(p, 0, b, col) + ld(p, 1, b, col) + ld(p, 3, 0, col) + ld(p, 4, 0, col);
}

void main() {
  RnnCellParams p = pc.p;
  const int64_t H = p.hidden;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.batch * H; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    const int64_t b = e / H, j = e % H;
#if defined(RNN_LSTM_FWD)
    ACC i = sigmoid(gate(p, b, j));
    ACC f = sigmoid(gate(p, b, H + j));
    ACC g = ew_tanh(gate(p, b, 2 * H + j));
    ACC o = sigmoid(gate(p, b, 3 * H + j));
    ACC cy = f * ld(p, 2, b, j) + i * g;
    st(p, 5, b, j, o * ew_tanh(cy));
    st(p, 6, b, j, cy);
    st(p, 7, b, j, i);
    st(p, 7, b, H + j, f);
    st(p, 7, b, 2 * H + j, g);
    st(p, 7, b, 3 * H + j, o);
#elif defined(RNN_LSTM_BWD)
    ACC i = ld(p, 4, b, j), f = ld(p, 4, b, H + j), g = ld(p, 4, b, 2 * H + j);
    ACC o = ld(p, 4, b, 3 * H + j);
    ACC grad_hy = ld(p, 0, b, j), tanh_cy = ew_tanh(ld(p, 3, b, j));
    ACC grad_c = grad_hy * o * (ACC(1) - tanh_cy * tanh_cy) + ld(p, 1, b, j);
    st(p, 5, b, j, grad_c * g * i * (ACC(1) - i));
    st(p, 5, b, H + j, grad_c * ld(p, 2, b, j) * f * (ACC(1) - f));
    st(p, 5, b, 2 * H + j, grad_c * i * (ACC(1) - g * g));
    st(p, 5, b, 3 * H + j, grad_hy * tanh_cy * o * (ACC(1) - o));
    st(p, 6, b, j, grad_c * f);
#elif defined(RNN_GRU_FWD)
    ACC r = sigmoid(gate(p, b, j));
    ACC z = sigmoid(gate(p, b, H + j));
    ACC hn = ld(p, 1, b, 2 * H + j) + ld(p, 4, 0, 2 * H + j);
    ACC n = ew_tanh(ld(p, 0, b, 2 * H + j) + ld(p, 3, 0, 2 * H + j) + r * hn);
    ACC hx = ld(p, 2, b, j);
    st(p, 5, b, j, n + z * (hx - n));
    st(p, 6, b, j, r);
    st(p, 6, b, H + j, z);
    st(p, 6, b, 2 * H + j, n);
    st(p, 6, b, 3 * H + j, hx);
    st(p, 6, b, 4 * H + j, hn);
#elif defined(RNN_GRU_BWD)
    ACC r = ld(p, 1, b, j), z = ld(p, 1, b, H + j), n = ld(p, 1, b, 2 * H + j);
    ACC hx = ld(p, 1, b, 3 * H + j), hn = ld(p, 1, b, 4 * H + j);
    ACC grad_hy = ld(p, 0, b, j);
    ACC grad_z = grad_hy * (hx - n) * (ACC(1) - z) * z;
    ACC grad_n = grad_hy * (ACC(1) - z) * (ACC(1) - n * n);
    ACC grad_r = grad_n * hn * (ACC(1) - r) * r;
    st(p, 2, b, j, grad_r);
    st(p, 2, b, H + j, grad_z);
    st(p, 2, b, 2 * H + j, grad_n);
    st(p, 3, b, j, grad_r);
    st(p, 3, b, H + j, grad_z);
    st(p, 3, b, 2 * H + j, grad_n * r);
    st(p, 4, b, j, grad_hy * z);
#endif
  }
}
