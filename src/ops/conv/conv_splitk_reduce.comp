#version 460
#extension GL_GOOGLE_include_directive : require
// Split-K second pass of the implicit convolution's forward-style passes: sums the slices'
// partial products in a fixed order (results do not depend on scheduling), adds the bias and
// stores into the destination's (n, channel, position) layout.
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"
#include "conv_igemm.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { ConvGemmParams p; } pc;

void main() {
  ConvGemmParams p = pc.p;
  const ConvGather cg = load_conv_gather(p);
  const int64_t M = p.m, N = p.n, mn = M * N, total = int64_t(p.groups) * mn;
  const uint splits = max(p.splits, 1u);
  const bool bias = (p.flags & VKML_CONV_HAS_BIAS) != 0u;
  // Neighbouring invocations take neighbouring columns: positions, contiguous in both buffers.
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < total; i += VKML_GRID_STRIDE) {
    ACC sum = ACC(0);
    for (uint s = 0; s < splits; ++s) {
      sum += load_partial(p.partial + uint64_t(s * total + i) * ACC_SIZE);
    }
    const int64_t z = i / mn, rc = i % mn, r = rc / N, c = rc % N;
    const int64_t ch = z * M + r;
    if (bias) sum += load_out(p.bias + uint64_t(ch * p.bias_stride * OUT_SIZE));
    store_out(uint64_t(conv_out_address(p, cg, c)) + uint64_t(ch * p.dst_c * OUT_SIZE), sum);
  }
}
