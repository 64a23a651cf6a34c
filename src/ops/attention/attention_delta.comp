#version 460
#extension GL_GOOGLE_include_directive : require
// Backward preprocessing: delta[b, h, m] = sum_c dout[b, h, m, c] * o[b, h, m, c], in float,
// one invocation per query row.
#include "vkml_common.glsl"
#include "attention_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { AttentionParams p; } pc;

#include "attention_common.glsl"

void main() {
  AttentionParams p = pc.p;
  const int64_t rows = p.batch * p.heads * p.q_len;
  const int64_t stride = int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y) *
                         int64_t(gl_WorkGroupSize.x);
  int64_t first = (int64_t(gl_WorkGroupID.y) * int64_t(gl_NumWorkGroups.x) +
                   int64_t(gl_WorkGroupID.x)) * int64_t(gl_WorkGroupSize.x) +
                  int64_t(gl_LocalInvocationID.x);
  for (int64_t row = first; row < rows; row += stride) {
    int64_t m = row % p.q_len, bh = row / p.q_len;
    int64_t b = bh / p.heads, h = bh % p.heads;
    int64_t od = b * p.dout_strides[0] + h * p.dout_strides[1] + m * p.dout_strides[2];
    int64_t oo = b * p.o_strides[0] + h * p.o_strides[1] + m * p.o_strides[2];
    float s = 0.0;
    for (int64_t c = 0; c < p.v_head_dim; ++c) {
      s += at_load(p.dout, od + c * p.dout_strides[3], p.dtype) *
           at_load(p.o, oo + c * p.o_strides[3], p.dtype);
    }
    PF32(p.delta + uint64_t(row) * 4ul).v = s;
  }
}
