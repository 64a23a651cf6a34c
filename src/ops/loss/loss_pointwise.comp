#version 460
#extension GL_GOOGLE_include_directive : require
// Pointwise losses (mse, smooth_l1, huber, binary_cross_entropy[_with_logits]) with optional
// weight: per-element output or a workgroup sum (LOSS_FORWARD), or grad_input (LOSS_BACKWARD)
// with PyTorch's formulas.
#include "vkml_common.glsl"
#include "loss_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { LossParams p; } pc;

#include "nn_common.glsl"
#include "loss_common.glsl"

ACC pointwise_loss(LossParams p, ACC x, ACC y, int64_t o[VKML_LOSS_SLOTS]) {
  ACC d = x - y;
  if (p.kind == LOSS_MSE) return d * d;
  if (p.kind == LOSS_SMOOTH_L1) {
    ACC z = abs(d), beta = loss_param(p);
    return z < beta ? ACC(0.5) * z * z / beta : z - ACC(0.5) * beta;
  }
  if (p.kind == LOSS_HUBER) {
    ACC z = abs(d), delta = loss_param(p);
    return z < delta ? ACC(0.5) * z * z : delta * (z - ACC(0.5) * delta);
  }
  if (p.kind == LOSS_BCE) {
    return (y - ACC(1)) * max(nn_log1p(-x), ACC(-100)) - y * max(nn_log(x), ACC(-100));
  }
  // binary_cross_entropy_with_logits: (1 - y) x - lw * log_sigmoid(x), lw = 1 + (pw - 1) y,
  // with -log_sigmoid(x) = max(-x, 0) + log1p(exp(-|x|)); the exact terms are added first so
  // that (1 - y) x + lw max(-x, 0) cancels before the small log1p term joins.
  ACC lw = loss_has(p, LOSS_PW) ? (loss_ld(p, LOSS_PW, o[LOSS_PW]) - ACC(1)) * y + ACC(1) : ACC(1);
  return ((ACC(1) - y) * x + lw * max(-x, ACC(0))) + lw * nn_log1p(nn_exp(-abs(x)));
}

ACC pointwise_grad(LossParams p, ACC x, ACC y) {
  ACC d = x - y;
  if (p.kind == LOSS_MSE) return ACC(2) * d;
  if (p.kind == LOSS_SMOOTH_L1) {
    ACC beta = loss_param(p);
    return d <= -beta ? ACC(-1) : (d >= beta ? ACC(1) : d / beta);
  }
  if (p.kind == LOSS_HUBER) {
    ACC delta = loss_param(p);
    return d <= -delta ? -delta : (d >= delta ? delta : d);
  }
  // binary_cross_entropy
  return d / max((ACC(1) - x) * x, ACC(1e-12));
}

void main() {
  LossParams p = pc.p;
  const bool none = p.reduction == LOSS_REDUCE_NONE;
  const bool has_w = loss_has(p, LOSS_W);
#ifdef LOSS_FORWARD
  ACC sum = ACC(0);
  for (int64_t e = LOSS_START; e < p.numel; e += LOSS_STEP) {
    int64_t o[VKML_LOSS_SLOTS];
    loss_offsets(p, e, o);
    ACC l = pointwise_loss(p, loss_ld(p, LOSS_X, o[LOSS_X]), loss_ld(p, LOSS_Y, o[LOSS_Y]), o);
    if (has_w) l *= loss_ld(p, LOSS_W, o[LOSS_W]);
    if (none) {
      nn_store(p.ptr[LOSS_OUT], o[LOSS_OUT], p.dtype[LOSS_OUT], l);
    } else {
      sum += l;
    }
  }
  if (!none) {
    sum = nn_wg_sum(sum);
    if (LOSS_LANE == 0) loss_emit(p, nn_group_id(), sum, ACC(0));
  }
#else
  // grad_input = dloss/dx * grad (grad_output per element, or the scalar over the count).
  ACC scale = ACC(1);
  if (!none) {
    scale = loss_ld(p, LOSS_GO, 0);
    if (p.reduction == LOSS_REDUCE_MEAN) scale *= ACC(1) / ACC(p.reduce_count);
  }
  for (int64_t e = LOSS_START; e < p.numel; e += LOSS_STEP) {
    int64_t o[VKML_LOSS_SLOTS];
    loss_offsets(p, e, o);
    ACC g = none ? loss_ld(p, LOSS_GO, o[LOSS_GO]) : scale;
    ACC v = pointwise_grad(p, loss_ld(p, LOSS_X, o[LOSS_X]), loss_ld(p, LOSS_Y, o[LOSS_Y])) * g;
    if (has_w) v *= loss_ld(p, LOSS_W, o[LOSS_W]);
    nn_store(p.ptr[LOSS_OUT], o[LOSS_OUT], p.dtype[LOSS_OUT], v);
  }
#endif
}
