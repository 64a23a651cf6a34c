#version 460
#extension GL_GOOGLE_include_directive : require
// nll_loss. NLL_FORWARD: per sample, loss = -w[t] * x[t] (0 for ignore_index), written per sample
// or summed with the weights. Otherwise backward into a zeroed grad_input:
// grad_input[s, t[s]] = -w[t[s]] * grad (/ total_weight for mean). A target out of range that is
// not ignore_index is recorded in error_flag (the host raises) and gives NaN (forward) or no write.
#include "vkml_common.glsl"
#include "loss_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { LossParams p; } pc;

#include "nn_common.glsl"
#include "loss_common.glsl"
#include "loss_report.glsl"

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
        loss_report_bad_target(p.error_flag, 0u, t);
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
  // Backward, after grad_input was zeroed: per sample, its target class's element only.
  ACC scale = ACC(1);
  if (!none) {
    scale = loss_ld(p, LOSS_GO, 0);
    if (p.reduction == LOSS_REDUCE_MEAN) {
      scale /= nn_load(p.total_weight, 0, p.total_weight_dtype);
    }
  }
  for (int64_t e = LOSS_START; e < p.numel; e += LOSS_STEP) {
    int64_t o[VKML_LOSS_SLOTS];
    loss_offsets(p, e, o);
    int64_t t = nn_load_index(p.ptr[LOSS_Y], o[LOSS_Y], p.dtype[LOSS_Y]);
    // ignore_index and targets out of range keep their zeros (no class matches them).
    if (t == p.ignore_index) continue;
    if (t < 0 || t >= p.classes) {
      loss_report_bad_target(p.error_flag, 0u, t);
      continue;
    }
    ACC g = none ? loss_ld(p, LOSS_GO, o[LOSS_GO]) : scale;
    nn_store(p.ptr[LOSS_OUT], o[LOSS_OUT] + t * p.class_stride, p.dtype[LOSS_OUT],
             -class_weight(p, t) * g);
  }
#endif
}
