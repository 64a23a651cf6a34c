#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// fp32 GEMM for aligned operands: the fast sibling of gemm_tiled.comp. Preconditions checked by
// the plan: A and B are each contiguous along one dimension, the other strides and base addresses
// are multiples of 4 elements (16 bytes), and the extent along the contiguous dimension is a
// multiple of 4. Each thread computes an 8x8 micro-tile made of four 4x4 quadrants, half a tile
// apart, so that both its A and its B values for one k are two 16-byte shared reads (four reads
// per 64 FMAs). Global loads are 16-byte vectors; tiles fetched along k are transposed on their
// way into shared memory, which stores A as [k][m] and B as [k][n]. Two shared stages, one
// barrier per K step.
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 8;
layout(constant_id = 4) const bool A_KFAST = true;  // A contiguous along k (else along m)
layout(constant_id = 5) const bool B_NFAST = true;  // B contiguous along n (else along k)

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer PV4F { vec4 v; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer PW4F { vec4 v; };

layout(push_constant) uniform Push { GemmParams p; } pc;

const uint THREADS_N = BN / 8;
const uint THREADS = (BM / 8) * (BN / 8);  // equals local_size_x (host guarantees)
// Rows of the shared tiles; a transposed fill gets 4 floats of padding against bank conflicts.
const uint A_LD = BM + (A_KFAST ? 4 : 0);
const uint B_LD = BN + (B_NFAST ? 0 : 4);
const uint A_TILE = BK * A_LD;  // floats
const uint B_TILE = BK * B_LD;
const uint A_LOADS = BM * BK / 4 / THREADS;  // 16-byte vectors per thread and K step
const uint B_LOADS = BK * BN / 4 / THREADS;
const uint A_VECS = A_KFAST ? BK / 4 : BM / 4;  // vectors along a fetched row
const uint B_VECS = B_NFAST ? BN / 4 : BK / 4;

shared vec4 sa[2 * A_TILE / 4];
shared vec4 sb[2 * B_TILE / 4];

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
  const bool vec_out = splits == 1 && epi.flags == 0u && epi.alpha == 1.0 && epi.c.col == 1 &&
                       (epi.c.row % 4) == 0 && (epi.c.batch0 % 4) == 0 &&
                       (epi.c.batch1 % 4) == 0 && (epi.c.address % 16) == 0;
  const uint64_t a_step = uint64_t(A_KFAST ? BK : BK * A.col) * 4;
  const uint64_t b_step = uint64_t(B_NFAST ? BK * B.row : BK) * 4;

  vec4 ra[A_LOADS];
  vec4 rb[B_LOADS];
  uint64_t a_ptr[A_LOADS];
  uint64_t b_ptr[B_LOADS];
  bool a_in[A_LOADS];
  bool b_in[B_LOADS];
  vec4 acc[16];  // [quadrant row i][row r][quadrant col j] -> acc[(i * 4 + r) * 2 + j]

  for (int64_t zs = gl_WorkGroupID.z; zs < nbatch * splits; zs += gl_NumWorkGroups.z) {
    const int64_t z = zs / splits, slice = zs % splits;
    const int64_t b0 = z / nb1, b1 = z % nb1;
    const int64_t k_begin = slice * k_chunk, k_end = min(K, k_begin + k_chunk);
    const int64_t nk = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
    for (int64_t tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (int64_t tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        const int64_t row0 = tm * BM, col0 = tn * BN;
        const uint64_t a_base = elem_addr(A, b0, b1, row0, k_begin, 4);
        const uint64_t b_base = elem_addr(B, b0, b1, k_begin, col0, 4);
        [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {
          const uint v = tid + l * THREADS, r = v / A_VECS, c4 = (v % A_VECS) * 4;
          a_ptr[l] = a_base + uint64_t(A_KFAST ? int64_t(r) * A.row + c4 : int64_t(r) * A.col + c4) * 4;
          a_in[l] = A_KFAST ? row0 + r < M : row0 + c4 < M;
        }
        [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {
          const uint v = tid + l * THREADS, r = v / B_VECS, c4 = (v % B_VECS) * 4;
          b_ptr[l] = b_base + uint64_t(B_NFAST ? int64_t(r) * B.row + c4 : int64_t(r) * B.col + c4) * 4;
          b_in[l] = B_NFAST ? col0 + c4 < N : col0 + r < N;
        }
        [[unroll]] for (uint i = 0; i < 16; ++i) acc[i] = vec4(0);

        #define FETCH(kt)                                                                     \
          {                                                                                   \
            const int64_t k0 = k_begin + int64_t(kt) * BK;                                    \
            [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {                                   \
              const uint v = tid + l * THREADS, r = v / A_VECS, c4 = (v % A_VECS) * 4;        \
              const bool ok = a_in[l] && (A_KFAST ? k0 + c4 < k_end : k0 + r < k_end);        \
              ra[l] = ok ? PV4F(a_ptr[l]).v : vec4(0);                                        \
              a_ptr[l] += a_step;                                                             \
            }                                                                                 \
            [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {                                   \
              const uint v = tid + l * THREADS, r = v / B_VECS, c4 = (v % B_VECS) * 4;        \
              const bool ok = b_in[l] && (B_NFAST ? k0 + r < k_end : k0 + c4 < k_end);        \
              rb[l] = ok ? PV4F(b_ptr[l]).v : vec4(0);                                        \
              b_ptr[l] += b_step;                                                             \
            }                                                                                 \
          }
        // k-fast vectors hold 4 k values of one row: scattered into 4 rows of the [k][.] tile.
        #define STASH(stage)                                                                  \
          {                                                                                   \
            [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {                                   \
              const uint v = tid + l * THREADS, r = v / A_VECS, c4 = (v % A_VECS) * 4;        \
              if (A_KFAST) {                                                                  \
                [[unroll]] for (uint e = 0; e < 4; ++e) {                                     \
                  const uint f = (stage) * A_TILE + (c4 + e) * A_LD + r;                      \
                  sa[f / 4][f % 4] = ra[l][e];                                                \
                }                                                                             \
              } else {                                                                        \
                sa[((stage) * A_TILE + r * A_LD + c4) / 4] = ra[l];                           \
              }                                                                               \
            }                                                                                 \
            [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {                                   \
              const uint v = tid + l * THREADS, r = v / B_VECS, c4 = (v % B_VECS) * 4;        \
              if (B_NFAST) {                                                                  \
                sb[((stage) * B_TILE + r * B_LD + c4) / 4] = rb[l];                           \
              } else {                                                                        \
                [[unroll]] for (uint e = 0; e < 4; ++e) {                                     \
                  const uint f = (stage) * B_TILE + (c4 + e) * B_LD + r;                      \
                  sb[f / 4][f % 4] = rb[l][e];                                                \
                }                                                                             \
              }                                                                               \
            }                                                                                 \
          }

        barrier();  // the previous tile's last reads of stage 0 are done
        if (nk > 0) {
          FETCH(0);
          STASH(0);
        }
        barrier();
        for (int64_t kt = 0; kt < nk; ++kt) {
          const uint cur = uint(kt & 1);
          const bool more = kt + 1 < nk;
          if (more) FETCH(kt + 1);
          const uint a4 = (cur * A_TILE) / 4 + ty, b4 = (cur * B_TILE) / 4 + tx;
          [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
            const vec4 a_lo = sa[a4 + kk * (A_LD / 4)], a_hi = sa[a4 + kk * (A_LD / 4) + BM / 8];
            const vec4 b_lo = sb[b4 + kk * (B_LD / 4)], b_hi = sb[b4 + kk * (B_LD / 4) + BN / 8];
            [[unroll]] for (uint r = 0; r < 4; ++r) {
              acc[r * 2 + 0] = fma(vec4(a_lo[r]), b_lo, acc[r * 2 + 0]);
              acc[r * 2 + 1] = fma(vec4(a_lo[r]), b_hi, acc[r * 2 + 1]);
              acc[(4 + r) * 2 + 0] = fma(vec4(a_hi[r]), b_lo, acc[(4 + r) * 2 + 0]);
              acc[(4 + r) * 2 + 1] = fma(vec4(a_hi[r]), b_hi, acc[(4 + r) * 2 + 1]);
            }
          }
          if (more) STASH(cur ^ 1u);
          barrier();
        }

        [[unroll]] for (uint i = 0; i < 2; ++i) {
          [[unroll]] for (uint r = 0; r < 4; ++r) {
            const int64_t row = row0 + i * (BM / 2) + ty * 4 + r;
            if (row >= M) continue;
            [[unroll]] for (uint j = 0; j < 2; ++j) {
              const int64_t col = col0 + j * (BN / 2) + tx * 4;
              const vec4 v = acc[(i * 4 + r) * 2 + j];
              if (vec_out && col + 4 <= N) {
                PW4F(elem_addr(epi.c, b0, b1, row, col, 4)).v = v;
                continue;
              }
              [[unroll]] for (uint e = 0; e < 4; ++e) {
                if (col + e >= N) continue;
                if (splits > 1) {
                  const int64_t at = partial_index(slice, nbatch, z, M, N, row, col + e);
                  store_partial(partial + uint64_t(at) * 4, v[e]);
                } else {
                  store_result(epi, b0, b1, row, col + e, v[e]);
                }
              }
            }
          }
        }
      }
    }
  }
}
