#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Shared-memory tiled GEMM with fp32 (f64: f64) accumulation. A workgroup computes a BM x BN
// block of C; each thread a TM x TN register micro-tile whose rows and columns are interleaved
// with the other threads' (conflict-free shared reads, coalesced C stores). K advances BK at a
// time through two shared buffers: the next tile is fetched into registers while the current
// one is multiplied, so one barrier per step suffices. Out-of-range elements load as zero.
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 16;
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;
// Which index consecutive threads walk when fetching A (k if 1, else m) and B (n if 1, else k):
// the one whose stride is 1, so global loads coalesce.
layout(constant_id = 6) const uint A_K_FAST = 1;
layout(constant_id = 7) const uint B_N_FAST = 1;

layout(push_constant) uniform Push { GemmParams p; } pc;

const uint THREADS_N = BN / TN;
const uint THREADS = (BM / TM) * (BN / TN);  // equals local_size_x (host guarantees)
const uint A_LOADS = (BM * BK) / THREADS;
const uint B_LOADS = (BK * BN) / THREADS;
// Tiles fetched along k get one padding column so the transposing shared stores spread banks.
const uint A_LD = BM + (A_K_FAST == 1 ? 1 : 0);
const uint B_LD = BN + (B_N_FAST == 1 ? 0 : 1);
const uint A_TILE = BK * A_LD;
const uint B_TILE = BK * B_LD;

shared ACC sa[2 * A_TILE];  // [buffer][k][m]
shared ACC sb[2 * B_TILE];  // [buffer][k][n]

// Position of the l-th element this thread fetches, inside the A (BM x BK) or B (BK x BN) tile.
uvec2 a_pos(uint l) {  // (m, k)
  uint e = gl_LocalInvocationID.x + l * THREADS;
  return A_K_FAST == 1 ? uvec2(e / BK, e % BK) : uvec2(e % BM, e / BM);
}
uvec2 b_pos(uint l) {  // (k, n)
  uint e = gl_LocalInvocationID.x + l * THREADS;
  return B_N_FAST == 1 ? uvec2(e / BN, e % BN) : uvec2(e % BK, e / BK);
}

void main() {
  GemmParams p = pc.p;
  const GemmOperand A = p.a, B = p.b;
  const int64_t M = p.m, N = p.n, K = p.k, nb1 = p.batch1;
  const int64_t nbatch = p.batch0 * nb1;
  const Epilogue epi = load_epilogue(p);
  const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const uint tid = gl_LocalInvocationID.x;
  const uint tx = tid % THREADS_N, ty = tid / THREADS_N;
  const uint splits = max(p.splits, 1u);
  const int64_t k_chunk = splits > 1 ? p.k_chunk : K;
  const uint64_t partial = p.partial;

  ACC ra[A_LOADS];
  ACC rb[B_LOADS];
  ACC acc[TM * TN];

  // z walks (batch, K slice) pairs; without split-K there is one slice holding all of K.
  for (int64_t zs = gl_WorkGroupID.z; zs < nbatch * splits; zs += gl_NumWorkGroups.z) {
    const int64_t z = zs / splits, slice = zs % splits;
    const int64_t b0 = z / nb1, b1 = z % nb1;
    const int64_t k_begin = slice * k_chunk, k_end = min(K, k_begin + k_chunk);
    const int64_t nk = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
    for (int64_t tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (int64_t tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        const int64_t row0 = tm * BM, col0 = tn * BN;
        const uint64_t a_base = elem_addr(A, b0, b1, row0, 0, IN_SIZE);
        const uint64_t b_base = elem_addr(B, b0, b1, 0, col0, IN_SIZE);
        [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] = ACC(0);

        // Fetches k-tile kt into registers (zero outside the matrices).
        #define FETCH(kt)                                                                   \
          {                                                                                 \
            const int64_t k0 = k_begin + (kt) * BK;                                         \
            [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {                                 \
              uvec2 q = a_pos(l);                                                           \
              bool ok = row0 + q.x < M && k0 + q.y < k_end;                                 \
              ra[l] = ok ? load_in(a_base + uint64_t((int64_t(q.x) * A.row +                \
                                                      (k0 + q.y) * A.col) * IN_SIZE))       \
                         : ACC(0);                                                          \
            }                                                                               \
            [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {                                 \
              uvec2 q = b_pos(l);                                                           \
              bool ok = k0 + q.x < k_end && col0 + q.y < N;                                 \
              rb[l] = ok ? load_in(b_base + uint64_t(((k0 + q.x) * B.row +                  \
                                                      int64_t(q.y) * B.col) * IN_SIZE))     \
                         : ACC(0);                                                          \
            }                                                                               \
          }
        #define STASH(buf)                                                                  \
          {                                                                                 \
            [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {                                 \
              uvec2 q = a_pos(l);                                                           \
              sa[(buf) * A_TILE + q.y * A_LD + q.x] = ra[l];                                \
            }                                                                               \
            [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {                                 \
              uvec2 q = b_pos(l);                                                           \
              sb[(buf) * B_TILE + q.x * B_LD + q.y] = rb[l];                                \
            }                                                                               \
          }

        if (nk > 0) {
          FETCH(0);
          STASH(0);
          barrier();
        }
        for (int64_t kt = 0; kt < nk; ++kt) {
          const uint cur = uint(kt & 1);
          if (kt + 1 < nk) FETCH(kt + 1);
          const uint a_off = cur * A_TILE + ty, b_off = cur * B_TILE + tx;
          [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
            ACC av[TM], bv[TN];
            [[unroll]] for (uint i = 0; i < TM; ++i) av[i] = sa[a_off + kk * A_LD + i * (BM / TM)];
            [[unroll]] for (uint j = 0; j < TN; ++j) bv[j] = sb[b_off + kk * B_LD + j * THREADS_N];
            [[unroll]] for (uint i = 0; i < TM; ++i) {
              [[unroll]] for (uint j = 0; j < TN; ++j) {
                acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]);
              }
            }
          }
          if (kt + 1 < nk) STASH(cur ^ 1u);
          barrier();
        }

        [[unroll]] for (uint i = 0; i < TM; ++i) {
          const int64_t r = row0 + ty + i * (BM / TM);
          if (r >= M) continue;
          [[unroll]] for (uint j = 0; j < TN; ++j) {
            const int64_t c = col0 + tx + j * THREADS_N;
            if (c >= N) continue;
            if (splits > 1) {
              const int64_t at = partial_index(slice, nbatch, z, M, N, r, c);
              store_partial(partial + uint64_t(at) * ACC_SIZE, acc[i * TN + j]);
            } else {
              store_result(epi, b0, b1, r, c, acc[i * TN + j]);
            }
          }
        }
      }
    }
  }
}
