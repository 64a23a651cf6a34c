#version 460
#extension GL_GOOGLE_include_directive : require
// Normalization forward, one workgroup per row: mean and variance over the row's columns (two
// passes, for accuracy), saved mean/rstd, running-statistics update, then
// y = (x - mean) * rstd * w + b. Layer, group, batch (train and eval) and RMS norm.
#include "vkml_common.glsl"
#include "norm_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { NormParams p; } pc;

#include "nn_common.glsl"
#include "norm_index.glsl"

void main() {
  NormParams p = pc.p;
  const int64_t n = p.cols;
  const int64_t lane = int64_t(gl_LocalInvocationID.x), lanes = int64_t(gl_WorkGroupSize.x);
  const bool rms = (p.mode & NORM_RMS) != 0u;
  const bool has_w = norm_has(p, NORM_W), has_b = norm_has(p, NORM_B);
  int64_t idx[VKML_NORM_MAX_DIMS];
  for (int64_t row = nn_group_id(); row < p.rows; row += nn_group_count()) {
    int64_t ro[VKML_NORM_SLOTS];
    norm_row_offsets(p, row, ro);
    ACC mean = ACC(0), rstd;
    if ((p.mode & NORM_FIXED_STATS) != 0u) {
      norm_row_stats(p, ro, mean, rstd);
    } else {
      if (!rms) {
        ACC s = ACC(0);
        for (int64_t j = lane; j < n; j += lanes) {
          norm_col_index(p, j, idx);
          s += NORM_AT(NORM_X);
        }
        mean = nn_wg_sum(s) / ACC(n);
      }
      ACC v = ACC(0);
      for (int64_t j = lane; j < n; j += lanes) {
        norm_col_index(p, j, idx);
        ACC d = NORM_AT(NORM_X) - mean;
        v += d * d;
      }
      v = nn_wg_sum(v);
      rstd = ACC(1) / sqrt(max(v / ACC(n), ACC(0)) + norm_eps(p));
      if (lane == 0) {
        if (norm_has(p, NORM_MEAN)) norm_st(p, NORM_MEAN, ro[NORM_MEAN], mean);
        if (norm_has(p, NORM_RSTD)) norm_st(p, NORM_RSTD, ro[NORM_RSTD], rstd);
        if ((p.mode & NORM_UPDATE_RUNNING) != 0u) {
          // PyTorch's update: momentum * batch + (1 - momentum) * running, unbiased variance.
          ACC m = norm_momentum(p);
          if (norm_has(p, NORM_RMEAN)) {
            ACC old = norm_ld(p, NORM_RMEAN, ro[NORM_RMEAN]);
            norm_st(p, NORM_RMEAN, ro[NORM_RMEAN], m * mean + (ACC(1) - m) * old);
          }
          if (norm_has(p, NORM_RVAR)) {
            ACC old = norm_ld(p, NORM_RVAR, ro[NORM_RVAR]);
            ACC unbiased = v / ACC(n - 1);
            norm_st(p, NORM_RVAR, ro[NORM_RVAR], m * unbiased + (ACC(1) - m) * old);
          }
        }
      }
    }
    for (int64_t j = lane; j < n; j += lanes) {
      norm_col_index(p, j, idx);
      ACC y = (NORM_AT(NORM_X) - mean) * rstd;
      if (has_w) y *= NORM_AT(NORM_W);
      if (has_b) y += NORM_AT(NORM_B);
      norm_st(p, NORM_Y, ro[NORM_Y] + norm_col_off(p, NORM_Y, idx), y);
    }
  }
}
