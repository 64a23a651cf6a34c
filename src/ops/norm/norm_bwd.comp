#version 460
#extension GL_GOOGLE_include_directive : require
// Normalization backward, one workgroup per row. With xhat = (x - mean) * rstd and per-element
// weight w: dx = rstd * (w*dy - mean(w*dy) - xhat * mean(w*dy*xhat)) (RMS: no mean(w*dy) term;
// fixed statistics, i.e. batch norm eval: dx = w * dy * rstd). With NORM_ROW_PARAM_GRADS the
// row's grad_weight = sum(dy * xhat) and grad_bias = sum(dy) are written too (batch norm).
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
  const bool fixed_stats = (p.mode & NORM_FIXED_STATS) != 0u;
  const bool row_grads = (p.mode & NORM_ROW_PARAM_GRADS) != 0u;
  const bool has_w = norm_has(p, NORM_W);
  int64_t idx[VKML_NORM_MAX_DIMS];
  for (int64_t row = nn_group_id(); row < p.rows; row += nn_group_count()) {
    int64_t ro[VKML_NORM_SLOTS];
    norm_row_offsets(p, row, ro);
    ACC mean, rstd;
    norm_row_stats(p, ro, mean, rstd);
    ACC sum_wdy = ACC(0), sum_wdy_xhat = ACC(0), sum_dy_xhat = ACC(0), sum_dy = ACC(0);
    if (!fixed_stats || row_grads) {
      for (int64_t j = lane; j < n; j += lanes) {
        norm_col_index(p, j, idx);
        ACC dy = NORM_AT(NORM_DY);
        ACC xhat = (NORM_AT(NORM_X) - mean) * rstd;
        ACC w = has_w ? NORM_AT(NORM_W) : ACC(1);
        // precise: w * dy must round the same way here and in the pass below, so that a
        // single-column row (dx exactly 0) gives 0, not an fma's rounding error times rstd.
        precise ACC wdy = w * dy;
        sum_wdy += wdy;
        sum_wdy_xhat += wdy * xhat;
        sum_dy_xhat += dy * xhat;
        sum_dy += dy;
      }
      nn_wg_sum2(sum_wdy, sum_wdy_xhat);
      nn_wg_sum2(sum_dy_xhat, sum_dy);
    }
    if (row_grads && lane == 0) {
      if (norm_has(p, NORM_GW)) norm_st(p, NORM_GW, ro[NORM_GW], sum_dy_xhat);
      if (norm_has(p, NORM_GB)) norm_st(p, NORM_GB, ro[NORM_GB], sum_dy);
    }
    if (norm_has(p, NORM_Y)) {
      ACC mean_wdy = rms ? ACC(0) : sum_wdy / ACC(n);
      ACC mean_wdy_xhat = sum_wdy_xhat / ACC(n);
      for (int64_t j = lane; j < n; j += lanes) {
        norm_col_index(p, j, idx);
        ACC dy = NORM_AT(NORM_DY);
        ACC w = has_w ? NORM_AT(NORM_W) : ACC(1);
        precise ACC wdy = w * dy;
        ACC dx;
        if (fixed_stats) {
          dx = wdy * rstd;
        } else {
          ACC xhat = (NORM_AT(NORM_X) - mean) * rstd;
          dx = rstd * ((wdy - mean_wdy) - xhat * mean_wdy_xhat);
        }
        norm_st(p, NORM_Y, ro[NORM_Y] + norm_col_off(p, NORM_Y, idx), dx);
      }
    }
  }
}
