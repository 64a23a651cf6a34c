#version 460
#extension GL_GOOGLE_include_directive : require
// grad_weight = sum(dy * xhat) and grad_bias = sum(dy) per parameter element, one workgroup per
// parameter: here the view's rows are the parameter dims and its columns everything reduced, and
// MEAN/RSTD vary along the columns (layer and group norm).
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
  int64_t idx[VKML_NORM_MAX_DIMS];
  for (int64_t row = nn_group_id(); row < p.rows; row += nn_group_count()) {
    int64_t ro[VKML_NORM_SLOTS];
    norm_row_offsets(p, row, ro);
    ACC sum_dy_xhat = ACC(0), sum_dy = ACC(0);
    for (int64_t j = lane; j < n; j += lanes) {
      norm_col_index(p, j, idx);
      ACC dy = NORM_AT(NORM_DY);
      ACC mean = rms ? ACC(0) : NORM_AT(NORM_MEAN);
      sum_dy_xhat += dy * (NORM_AT(NORM_X) - mean) * NORM_AT(NORM_RSTD);
      sum_dy += dy;
    }
    nn_wg_sum2(sum_dy_xhat, sum_dy);
    if (lane == 0) {
      if (norm_has(p, NORM_GW)) norm_st(p, NORM_GW, ro[NORM_GW], sum_dy_xhat);
      if (norm_has(p, NORM_GB)) norm_st(p, NORM_GB, ro[NORM_GB], sum_dy);
    }
  }
}
