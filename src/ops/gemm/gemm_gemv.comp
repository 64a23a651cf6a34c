#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Matrix-vector product (N == 1; the host transposes M == 1 problems into this form). A
// workgroup computes ROWS outputs; LANES threads share each row's K range and their partial
// sums meet in shared memory. ROW_FAST lays consecutive threads along m (coalesced when A is
// column-major) instead of along k (row-major A, and dot products).
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint LANES = 32;  // power of two
layout(constant_id = 2) const uint ROW_FAST = 0;

layout(push_constant) uniform Push { GemmParams p; } pc;

const uint THREADS = gl_WorkGroupSize.x;
const uint ROWS = THREADS / LANES;

shared ACC partial[THREADS];

void main() {
  GemmParams p = pc.p;
  const GemmOperand A = p.a, B = p.b;
  const int64_t M = p.m, K = p.k, nb1 = p.batch1;
  const int64_t nbatch = p.batch0 * nb1;
  const Epilogue epi = load_epilogue(p);
  const uint tid = gl_LocalInvocationID.x;
  const uint row_local = ROW_FAST == 1 ? tid % ROWS : tid / LANES;
  const uint lane = ROW_FAST == 1 ? tid / ROWS : tid % LANES;
  const uint slot = row_local * LANES + lane;
  const int64_t blocks = (M + ROWS - 1) / ROWS;

  for (int64_t z = gl_WorkGroupID.y; z < nbatch; z += gl_NumWorkGroups.y) {
    const int64_t b0 = z / nb1, b1 = z % nb1;
    for (int64_t blk = gl_WorkGroupID.x; blk < blocks; blk += gl_NumWorkGroups.x) {
      const int64_t r = blk * ROWS + row_local;
      ACC sum = ACC(0);
      if (r < M) {
        const uint64_t a_row = elem_addr(A, b0, b1, r, 0, IN_SIZE);
        const uint64_t x = elem_addr(B, b0, b1, 0, 0, IN_SIZE);
        const int64_t a_step = A.col * IN_SIZE, x_step = B.row * IN_SIZE;
        uint64_t pa = a_row + uint64_t(lane * a_step), px = x + uint64_t(lane * x_step);
        const uint64_t da = uint64_t(LANES * a_step), dx = uint64_t(LANES * x_step);
        for (int64_t k = lane; k < K; k += LANES, pa += da, px += dx) {
          sum = fma(load_in(pa), load_in(px), sum);
        }
      }
      partial[slot] = sum;
      barrier();
      [[unroll]] for (uint s = LANES / 2; s > 0; s >>= 1) {
        if (lane < s) partial[slot] += partial[slot + s];
        barrier();
      }
      if (lane == 0 && r < M) store_result(epi, b0, b1, r, 0, partial[slot]);
      barrier();  // partial[] is rewritten by the next block
    }
  }
}
