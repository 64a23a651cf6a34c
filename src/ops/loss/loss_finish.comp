#version 460
#extension GL_GOOGLE_include_directive : require
// Adds the per-workgroup (loss, weight) partial sums in a fixed order and writes the reduced
// loss (and nll's total_weight). One workgroup.
#include "vkml_common.glsl"
#include "loss_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { LossParams p; } pc;

#include "nn_common.glsl"
#include "loss_common.glsl"

void main() {
  LossParams p = pc.p;
  ACC a = ACC(0), b = ACC(0);
  for (int64_t i = LOSS_LANE; i < p.partial_count; i += int64_t(gl_WorkGroupSize.x)) {
    a += nn_load(p.partials, 2 * i, ACC_CODE);
    b += nn_load(p.partials, 2 * i + 1, ACC_CODE);
  }
  nn_wg_sum2(a, b);
  if (LOSS_LANE == 0) loss_finalize(p, a, b);
}
