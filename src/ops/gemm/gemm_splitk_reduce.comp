#version 460
#extension GL_GOOGLE_include_directive : require
// Split-K second pass: C = alpha * (sum of the K slices' partial products) + beta * C_in + bias.
// Slices are summed in a fixed order, so results do not depend on scheduling. One thread per
// output over a (columns, rows, batches) grid, each dimension a grid-stride loop, so that no
// output pays the 64-bit divisions that splitting a flat index into batch, row and column takes.
// Measurements: docs/design/gemm.md#split-k-reduce
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { GemmParams p; } pc;

void main() {
  GemmParams p = pc.p;
  const int64_t M = p.m, N = p.n, nb1 = p.batch1, nbatch = p.batch0 * nb1;
  const Epilogue epi = load_epilogue(p);
  const uint splits = p.splits;
  const uint64_t slice_bytes = uint64_t(nbatch * M * N) * ACC_SIZE;
  for (int64_t z = gl_WorkGroupID.z; z < nbatch; z += gl_NumWorkGroups.z) {
    const int64_t b0 = z / nb1, b1 = z % nb1;
    for (int64_t r = gl_WorkGroupID.y; r < M; r += gl_NumWorkGroups.y) {
      for (int64_t c = int64_t(gl_GlobalInvocationID.x); c < N; c += VKML_GRID_STRIDE) {
        uint64_t at = p.partial + uint64_t(partial_index(0, nbatch, z, M, N, r, c)) * ACC_SIZE;
        ACC sum = ACC(0);
        for (uint s = 0; s < splits; ++s, at += slice_bytes) sum += load_partial(at);
        store_result(epi, b0, b1, r, c, sum);
      }
    }
  }
}
