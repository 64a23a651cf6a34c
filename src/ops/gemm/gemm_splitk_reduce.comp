#version 460
#extension GL_GOOGLE_include_directive : require
// Split-K second pass: C = alpha * (sum of the K slices' partial products) + beta * C_in + bias.
// Slices are summed in a fixed order, so results do not depend on scheduling.
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { GemmParams p; } pc;

void main() {
  GemmParams p = pc.p;
  const int64_t M = p.m, N = p.n, nb1 = p.batch1;
  const int64_t mn = M * N, nbatch = p.batch0 * nb1, total = nbatch * mn;
  const Epilogue epi = load_epilogue(p);
  const uint64_t partial = p.partial;
  const uint splits = p.splits;
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < total; i += VKML_GRID_STRIDE) {
    ACC sum = ACC(0);
    for (uint s = 0; s < splits; ++s) {
      sum += load_partial(partial + uint64_t(s * total + i) * ACC_SIZE);
    }
    const int64_t z = i / mn, rc = i % mn;
    store_result(epi, z / nb1, z % nb1, rc / N, rc % N, sum);
  }
}
