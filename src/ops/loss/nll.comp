#version 460
#extension GL_GOOGLE_include_directive : require
// nll_loss. NLL_FORWARD: per sample, loss = -w[t] * x[t] (0 for ignore_index, NaN for a target
// out of range: a GPU cannot raise), written per sample or summed with the weights.
// Otherwise backward: grad_input[s, c] = -w[c] * grad (/ total_weight for mean) where c == t[s].
#include "vkml_common.glsl"
#include "loss_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { LossParams p; } pc;

#include "nn_common.glsl"
#include "loss_common.glsl"

ACC class_weight(LossParams p, int64_t t) {
  return loss_has(p, LOSS_W) ? nn_load(p.ptr[LOSS_W], t * p.weight_stride, p.dtype[LOSS_W])
                             : ACC(1);
}

void main() {
  LossParams p = pc.p;
  const bool none = p.reduction == LOSS_REDUCE_NONE;
#ifdef NLL_FORWARD
  ACC sum_loss = ACC(0), sum_weight = ACC(0);
  for (int64_t e = LOSS_START; e < p.numel; e += LOSS_STEP) {
    int64_t o[VKML_LOSS_SLOTS];
    loss_offsets(p, e, o);
    int64_t t = nn_load_index(p.ptr[LOSS_Y], o[LOSS_Y], p.dtype[LOSS_Y]);
    ACC loss = ACC(0), w = ACC(0);
    if (t != p.ignore_index) {
      if (t < 0 || t >= p.classes) {
        loss = ACC(NN_NAN);
        w = ACC(NN_NAN);
      } else {
        w = class_weight(p, t);
        loss = -w * loss_ld(p, LOSS_X, o[LOSS_X] + t * p.class_stride);
      }
    }
    if (none) {
      nn_store(p.ptr[LOSS_OUT], o[LOSS_OUT], p.dtype[LOSS_OUT], loss);
      if (e == 0 && p.total_weight != 0ul) {
        nn_store(p.total_weight, 0, p.total_weight_dtype, p.single_sample != 0u ? w : ACC(0));
      }
    } else {
      sum_loss += loss;
      sum_weight += w;
    }
  }
  if (!none) {
    nn_wg_sum2(sum_loss, sum_weight);
    if (LOSS_LANE == 0) loss_emit(p, nn_group_id(), sum_loss, sum_weight);
  }
#else
  ACC scale = ACC(1);
  if (!none) {
    scale = loss_ld(p, LOSS_GO, 0);
    if (p.reduction == LOSS_REDUCE_MEAN) {
      scale /= nn_load(p.total_weight, 0, p.total_weight_dtype);
    }
  }
  for (int64_t e = LOSS_START; e < p.numel; e += LOSS_STEP) {
    int64_t o[VKML_LOSS_SLOTS];
    int64_t c = 0, rem = e;
    for (int s = 0; s < VKML_LOSS_SLOTS; ++s) o[s] = 0;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      int64_t i = rem % p.sizes[d];
      rem /= p.sizes[d];
      if (d == p.class_dim) c = i;
      for (int s = 0; s < VKML_LOSS_SLOTS; ++s) o[s] += i * p.strides[s][d];
    }
    int64_t t = nn_load_index(p.ptr[LOSS_Y], o[LOSS_Y], p.dtype[LOSS_Y]);
    ACC v = ACC(0);
    if (t == c && t != p.ignore_index) {
      ACC g = none ? loss_ld(p, LOSS_GO, o[LOSS_GO]) : scale;
      v = -class_weight(p, t) * g;
    }
    nn_store(p.ptr[LOSS_OUT], o[LOSS_OUT], p.dtype[LOSS_OUT], v);
  }
#endif
}
