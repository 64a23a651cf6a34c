#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#if defined(IN_BF16)
#extension GL_EXT_bfloat16 : require
#endif
// Cooperative-matrix GEMM (VK_KHR_cooperative_matrix, subgroup scope, 16x16x16, fp32
// accumulation) for fp16 / bf16 inputs. A workgroup of SUBGROUPS subgroups computes a BM x BN
// block of C; the subgroups form a grid and each owns WM x WN blocks of 16x16 accumulators.
// A and B tiles (BM x BK, BK x BN) are staged through shared memory with any strides; elements
// outside the matrices are staged as zero, so any M, N, K works. The next tile is fetched into
// registers while the current one is multiplied. The epilogue goes through a 16x16 fp32 scratch
// per subgroup, so alpha, beta * C_in, bias, strides and the output dtype are handled as in the
// tiled kernel.
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint WM = 4;  // 16-row blocks per subgroup
layout(constant_id = 5) const uint WN = 4;  // 16-column blocks per subgroup
layout(constant_id = 6) const uint SUBGROUPS = 4;

#if defined(IN_BF16)
#define ELEM bfloat16_t
#define BITS_TO_ELEM(u) uintBitsToBFloat16EXT(u)
#else
#define ELEM float16_t
#define BITS_TO_ELEM(u) uint16BitsToFloat16(u)
#endif

layout(push_constant) uniform Push { GemmParams p; } pc;

const uint THREADS = gl_WorkGroupSize.x;
const uint PAD = 8;  // elements: rows stay 16-byte aligned and shift banks
const uint A_LD = BK + PAD;
const uint B_LD = BN + PAD;
const uint A_LOADS = (BM * BK) / THREADS;
const uint B_LOADS = (BK * BN) / THREADS;
const uint SG_N = BN / (16 * WN);  // subgroup grid: SG_M x SG_N == SUBGROUPS

shared ELEM sh_a[BM * A_LD];  // [m][k]
shared ELEM sh_b[BK * B_LD];  // [k][n]
shared float sh_c[SUBGROUPS * 256];

// Position of the l-th element this thread fetches: consecutive threads walk k for A (m, k)
// and n for B (k, n) when that stride is 1.
uvec2 a_pos(uint l, bool k_fast) {
  uint e = gl_LocalInvocationID.x + l * THREADS;
  return k_fast ? uvec2(e / BK, e % BK) : uvec2(e % BM, e / BM);
}
uvec2 b_pos(uint l, bool n_fast) {
  uint e = gl_LocalInvocationID.x + l * THREADS;
  return n_fast ? uvec2(e / BN, e % BN) : uvec2(e % BK, e / BK);
}

void main() {
  GemmParams p = pc.p;
  const GemmOperand A = p.a, B = p.b;
  const int64_t M = p.m, N = p.n, K = p.k, nb1 = p.batch1;
  const int64_t nbatch = p.batch0 * nb1;
  const Epilogue epi = load_epilogue(p);
  const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const uint splits = max(p.splits, 1u);
  const int64_t k_chunk = splits > 1 ? p.k_chunk : K;
  const uint64_t partial = p.partial;
  const bool a_k_fast = A.col == 1 || A.row != 1;
  const bool b_n_fast = B.col == 1 || B.row != 1;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint sg_m = sg / SG_N, sg_n = sg % SG_N;

  uint16_t ra[A_LOADS];
  uint16_t rb[B_LOADS];
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[WM * WN];

  // z walks (batch, K slice) pairs; without split-K there is one slice holding all of K.
  for (int64_t zs = gl_WorkGroupID.z; zs < nbatch * splits; zs += gl_NumWorkGroups.z) {
    const int64_t z = zs / splits, slice = zs % splits;
    const int64_t b0 = z / nb1, b1 = z % nb1;
    const int64_t k_begin = slice * k_chunk, k_end = min(K, k_begin + k_chunk);
    const int64_t nk = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
    for (int64_t tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (int64_t tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        const int64_t row0 = tm * BM, col0 = tn * BN;
        const uint64_t a_base = elem_addr(A, b0, b1, row0, 0, 2);
        const uint64_t b_base = elem_addr(B, b0, b1, 0, col0, 2);
        [[unroll]] for (uint i = 0; i < WM * WN; ++i) {
          acc[i] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
        }

        #define FETCH(kt)                                                                   \
          {                                                                                 \
            const int64_t k0 = k_begin + (kt) * BK;                                         \
            [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {                                 \
              uvec2 q = a_pos(l, a_k_fast);                                                 \
              bool ok = row0 + q.x < M && k0 + q.y < k_end;                                 \
              ra[l] = ok ? PU16(a_base + uint64_t((int64_t(q.x) * A.row +                   \
                                                   (k0 + q.y) * A.col) * 2)).v              \
                         : uint16_t(0);                                                     \
            }                                                                               \
            [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {                                 \
              uvec2 q = b_pos(l, b_n_fast);                                                 \
              bool ok = k0 + q.x < k_end && col0 + q.y < N;                                 \
              rb[l] = ok ? PU16(b_base + uint64_t(((k0 + q.x) * B.row +                     \
                                                   int64_t(q.y) * B.col) * 2)).v            \
                         : uint16_t(0);                                                     \
            }                                                                               \
          }

        if (nk > 0) FETCH(0);
        for (int64_t kt = 0; kt < nk; ++kt) {
          barrier();  // the previous step's coopMatLoads are done with the tiles
          [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {
            uvec2 q = a_pos(l, a_k_fast);
            sh_a[q.x * A_LD + q.y] = BITS_TO_ELEM(ra[l]);
          }
          [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {
            uvec2 q = b_pos(l, b_n_fast);
            sh_b[q.x * B_LD + q.y] = BITS_TO_ELEM(rb[l]);
          }
          barrier();
          if (kt + 1 < nk) FETCH(kt + 1);
          [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
            coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[WM];
            [[unroll]] for (uint i = 0; i < WM; ++i) {
              coopMatLoad(ma[i], sh_a, (sg_m * WM * 16 + i * 16) * A_LD + kk, A_LD,
                          gl_CooperativeMatrixLayoutRowMajor);
            }
            [[unroll]] for (uint j = 0; j < WN; ++j) {
              coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
              coopMatLoad(mb, sh_b, kk * B_LD + sg_n * WN * 16 + j * 16, B_LD,
                          gl_CooperativeMatrixLayoutRowMajor);
              [[unroll]] for (uint i = 0; i < WM; ++i) {
                acc[i * WN + j] = coopMatMulAdd(ma[i], mb, acc[i * WN + j]);
              }
            }
          }
        }

        // Epilogue: one 16x16 block at a time through this subgroup's scratch.
        [[unroll]] for (uint i = 0; i < WM; ++i) {
          [[unroll]] for (uint j = 0; j < WN; ++j) {
            const int64_t r0 = row0 + (sg_m * WM + i) * 16, c0 = col0 + (sg_n * WN + j) * 16;
            if (r0 >= M || c0 >= N) continue;  // uniform within the subgroup
            coopMatStore(acc[i * WN + j], sh_c, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            for (uint e = lane; e < 256; e += gl_SubgroupSize) {
              const int64_t r = r0 + e / 16, c = c0 + e % 16;
              if (r >= M || c >= N) continue;
              if (splits > 1) {
                store_partial(partial + uint64_t(partial_index(slice, nbatch, z, M, N, r, c)) * 4,
                              sh_c[sg * 256 + e]);
              } else {
                store_result(epi, b0, b1, r, c, sh_c[sg * 256 + e]);
              }
            }
            subgroupBarrier();  // scratch is rewritten by the next block
          }
        }
      }
    }
  }
}
