#version 460
#extension GL_GOOGLE_include_directive : require
// Bias gradient: bias[c] = sum over n and every output position of y[n, c, ...], one
// workgroup per channel, accumulated in ACC and reduced in shared memory.
#include "vkml_common.glsl"
#include "conv_params.h"
#include "conv_common.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { ConvParams p; } pc;

shared ACC partial[gl_WorkGroupSize.x];

void main() {
  ConvParams p = pc.p;
  const Geometry g = load_geometry(p);
  const int P = volume(g.out_size);
  int64_t ys[5] = p.y_strides;
  const uint tid = gl_LocalInvocationID.x;
  for (uint c = gl_WorkGroupID.x; c < p.work; c += gl_NumWorkGroups.x) {
    ACC sum = ACC(0);
    for (int n = 0; n < p.batch; ++n) {
      for (int of = int(tid); of < P; of += int(gl_WorkGroupSize.x)) {
        sum += load_t(p.y + uint64_t(offset5(ys, n, int(c), unflatten(of, g.out_size)) * DT_SIZE));
      }
    }
    partial[tid] = sum;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
      if (tid < s) partial[tid] += partial[tid + s];
      barrier();
    }
    if (tid == 0) store_t(p.bias + uint64_t(int64_t(c) * p.bias_stride * DT_SIZE), partial[0]);
    barrier();
  }
}
