#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#if defined(IN_BF16)
#extension GL_EXT_bfloat16 : require
#endif
// Cooperative-matrix GEMM for aligned operands (fp16 / bf16 in, fp32 accumulation): the fast
// sibling of gemm_coopmat.comp. Preconditions checked by the plan: each of A and B is contiguous
// along one dimension. Where its other strides and base address are multiples of 8 elements
// (16 bytes) and its extent along the contiguous dimension is a multiple of 8, each global load of
// that operand is one 16-byte vector; else (A_SCALAR, B_SCALAR: for example a 1x1 convolution's
// 14x14 or 7x7 planes) the same 8 halves are read one by one with their own bounds, and
// everything after the load is shared. Tiles stay in shared memory in their global layout (row- or
// column-major, read back with the matching coopMatLoad layout), and two shared stages let one
// barrier per K step separate the writes of the next tile from the reads of the current one.
// Output tiles are visited in groups of GROUP_M rows so that concurrent workgroups share A and B
// panels in L2.
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint WM = 4;  // 16-row blocks per subgroup
layout(constant_id = 5) const uint WN = 2;  // 16-column blocks per subgroup
layout(constant_id = 6) const uint SUBGROUPS = 8;
layout(constant_id = 7) const bool A_KFAST = true;  // A contiguous along k (else along m)
layout(constant_id = 8) const bool B_NFAST = true;  // B contiguous along n (else along k)
layout(constant_id = 9) const uint GROUP_M = 8;
layout(constant_id = 10) const bool A_SCALAR = false;  // A's rows not 16-byte aligned
layout(constant_id = 11) const bool B_SCALAR = false;
// Diagnostic only (VKML_GEMM_PROBE in diagnostic builds; the results are wrong): which part of
// the K loop bounds the rate. 1: no global loads after the first tile; 2: nor shared stores (one
// stage read throughout); 3: nor barriers. 0 in every real plan.
layout(constant_id = 12) const uint PROBE = 0;

#if defined(IN_BF16)
#define ELEM bfloat16_t
#else
#define ELEM float16_t
#endif

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer PV4 { uvec4 v; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer PW4 { uvec4 v; };

layout(push_constant) uniform Push { GemmParams p; } pc;

const uint THREADS = gl_WorkGroupSize.x;
// Shared tiles in uvec4 (8 halves) units, one vector of padding per row against bank conflicts.
const uint A_ROWS = A_KFAST ? BM : BK;
const uint A_VECS = (A_KFAST ? BK : BM) / 8;
const uint A_LD = A_VECS + 1;
const uint B_ROWS = B_NFAST ? BK : BN;
const uint B_VECS = (B_NFAST ? BN : BK) / 8;
const uint B_LD = B_VECS + 1;
const uint A_TILE = A_ROWS * A_LD;
const uint B_TILE = B_ROWS * B_LD;
const uint STAGE = A_TILE + B_TILE;
const uint A_LOADS = A_ROWS * A_VECS / THREADS;
const uint B_LOADS = B_ROWS * B_VECS / THREADS;
const uint SG_N = BN / (16 * WN);

shared uvec4 sh[2 * STAGE];

// 8 consecutive halves from a 2-byte aligned address, of which the first `left` are in range.
uvec4 load_halves(uint64_t addr, int64_t left) {
  uint h[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) {
    h[e] = int64_t(e) < left ? uint(PU16(addr + e * 2).v) : 0u;
  }
  return uvec4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16));
}

coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> load_a(uint base, uint m0, uint kk) {
  coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> m;
  if (A_KFAST) {
    coopMatLoad(m, sh, base + m0 * A_LD + kk / 8, A_LD, gl_CooperativeMatrixLayoutRowMajor);
  } else {
    coopMatLoad(m, sh, base + kk * A_LD + m0 / 8, A_LD, gl_CooperativeMatrixLayoutColumnMajor);
  }
  return m;
}

coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> load_b(uint base, uint n0, uint kk) {
  coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> m;
  if (B_NFAST) {
    coopMatLoad(m, sh, base + kk * B_LD + n0 / 8, B_LD, gl_CooperativeMatrixLayoutRowMajor);
  } else {
    coopMatLoad(m, sh, base + n0 * B_LD + kk / 8, B_LD, gl_CooperativeMatrixLayoutColumnMajor);
  }
  return m;
}

// Eight consecutive floats as two 16-byte stores: fp32 outputs, and split-K partial sums (fp32
// whatever C's type).
void store8_f32(uint64_t addr, float v[8]) {
  PW4(addr).v = uvec4(floatBitsToUint(v[0]), floatBitsToUint(v[1]), floatBitsToUint(v[2]),
                      floatBitsToUint(v[3]));
  PW4(addr + 16).v = uvec4(floatBitsToUint(v[4]), floatBitsToUint(v[5]), floatBitsToUint(v[6]),
                           floatBitsToUint(v[7]));
}

#if defined(OUT_F32)
// Eight consecutive elements of C_in or bias as two 16-byte loads.
void load8(uint64_t addr, out float v[8]) {
  const uvec4 lo = PV4(addr).v, hi = PV4(addr + 16).v;
  v = float[8](uintBitsToFloat(lo.x), uintBitsToFloat(lo.y), uintBitsToFloat(lo.z),
               uintBitsToFloat(lo.w), uintBitsToFloat(hi.x), uintBitsToFloat(hi.y),
               uintBitsToFloat(hi.z), uintBitsToFloat(hi.w));
}
void store8(uint64_t addr, float v[8]) { store8_f32(addr, v); }
#elif defined(OUT_F16)
void load8(uint64_t addr, out float v[8]) {
  const uvec4 w = PV4(addr).v;
  const vec2 p0 = unpackHalf2x16(w.x), p1 = unpackHalf2x16(w.y), p2 = unpackHalf2x16(w.z),
             p3 = unpackHalf2x16(w.w);
  v = float[8](p0.x, p0.y, p1.x, p1.y, p2.x, p2.y, p3.x, p3.y);
}
void store8(uint64_t addr, float v[8]) {
  PW4(addr).v = uvec4(packHalf2x16(vec2(v[0], v[1])), packHalf2x16(vec2(v[2], v[3])),
                      packHalf2x16(vec2(v[4], v[5])), packHalf2x16(vec2(v[6], v[7])));
}
#else
void load8(uint64_t addr, out float v[8]) {
  const uvec4 w = PV4(addr).v;
  [[unroll]] for (uint i = 0; i < 4; ++i) {
    v[2 * i] = uintBitsToFloat(w[i] << 16);
    v[2 * i + 1] = uintBitsToFloat(w[i] & 0xffff0000u);
  }
}
uint pack_bf16(float lo, float hi) {
  return uint(float_to_bf16(lo)) | (uint(float_to_bf16(hi)) << 16);
}
void store8(uint64_t addr, float v[8]) {
  PW4(addr).v = uvec4(pack_bf16(v[0], v[1]), pack_bf16(v[2], v[3]), pack_bf16(v[4], v[5]),
                      pack_bf16(v[6], v[7]));
}
#endif

// store_result's alpha * acc + beta * C_in + bias, in the same order, for 8 outputs at (r, c).
void epilogue8(Epilogue epi, int64_t b0, int64_t b1, int64_t r, int64_t c, inout float v[8]) {
  if (epi.flags == 0u && epi.alpha == ACC(1)) return;
  float add[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) v[e] = epi.alpha * v[e];
  if ((epi.flags & VKML_GEMM_HAS_CIN) != 0u) {
    load8(elem_addr(epi.c_in, b0, b1, r, c, OUT_SIZE), add);
    [[unroll]] for (uint e = 0; e < 8; ++e) v[e] += epi.beta * add[e];
  }
  if ((epi.flags & VKML_GEMM_HAS_BIAS) != 0u) {
    load8(elem_addr(epi.bias, b0, b1, r, c, OUT_SIZE), add);
    [[unroll]] for (uint e = 0; e < 8; ++e) v[e] += add[e];
  }
}

void main() {
  GemmParams p = pc.p;
  const GemmOperand A = p.a, B = p.b;
  const int64_t M = p.m, N = p.n, K = p.k, nb1 = p.batch1;
  const int64_t nbatch = p.batch0 * nb1;
  const Epilogue epi = load_epilogue(p);
  const uint tiles_m = uint((M + BM - 1) / BM), tiles_n = uint((N + BN - 1) / BN);
  const uint tiles = tiles_m * tiles_n;
  const uint splits = max(p.splits, 1u);
  const int64_t k_chunk = splits > 1 ? p.k_chunk : K;
  const uint64_t partial = p.partial;
  const uint tid = gl_LocalInvocationID.x;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint sg_m = sg / SG_N, sg_n = sg % SG_N;
  // 8 consecutive outputs per 16-byte access when C, and C_in and bias where used, are dense
  // along rows (the split fp32 GEMM's beta = 1 products and biased linears take this path too).
  const bool vec_out = splits == 1 && epilogue_dense(epi, 8);
  // Split-K partials (rows of N floats): 16-byte aligned runs of 8 where N is a multiple of 4.
  // One float per store would write each 32-byte sector in 8 pieces.
  const bool vec_partial = splits > 1 && (N % 4) == 0;
  // Byte steps of this thread's A and B pointers per K tile.
  const uint64_t a_step = uint64_t(A_KFAST ? BK : BK * A.col) * 2;
  const uint64_t b_step = uint64_t(B_NFAST ? BK * B.row : BK) * 2;

  uvec4 ra[A_LOADS];
  uvec4 rb[B_LOADS];
  uint64_t a_ptr[A_LOADS];
  uint64_t b_ptr[B_LOADS];
  bool a_in[A_LOADS];  // the tile-fixed half of the bounds test
  bool b_in[B_LOADS];
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[WM * WN];

  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint wg_count = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  // z walks (batch, K slice) pairs; without split-K there is one slice holding all of K.
  for (int64_t zs = gl_WorkGroupID.z; zs < nbatch * splits; zs += gl_NumWorkGroups.z) {
    const int64_t z = zs / splits, slice = zs % splits;
    const int64_t b0 = z / nb1, b1 = z % nb1;
    const int64_t k_begin = slice * k_chunk, k_end = min(K, k_begin + k_chunk);
    const uint nk = k_end > k_begin ? uint((k_end - k_begin + BK - 1) / BK) : 0u;
    for (uint t = wg; t < tiles; t += wg_count) {
      // Grouped order: GROUP_M tile rows advance together along N.
      const uint group = t / (GROUP_M * tiles_n);
      const uint first_m = group * GROUP_M;
      const uint group_rows = min(tiles_m - first_m, GROUP_M);
      const uint in_group = t % (GROUP_M * tiles_n);
      const uint tm = first_m + in_group % group_rows, tn = in_group / group_rows;
      const int64_t row0 = int64_t(tm) * BM, col0 = int64_t(tn) * BN;
      const uint64_t a_base = elem_addr(A, b0, b1, row0, k_begin, 2);
      const uint64_t b_base = elem_addr(B, b0, b1, k_begin, col0, 2);
      [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {
        const uint v = tid + l * THREADS, r = v / A_VECS, c8 = (v % A_VECS) * 8;
        a_ptr[l] = a_base + uint64_t(A_KFAST ? int64_t(r) * A.row + c8 : int64_t(r) * A.col + c8) * 2;
        a_in[l] = A_KFAST ? row0 + r < M : row0 + c8 < M;
      }
      [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {
        const uint v = tid + l * THREADS, r = v / B_VECS, c8 = (v % B_VECS) * 8;
        b_ptr[l] = b_base + uint64_t(B_NFAST ? int64_t(r) * B.row + c8 : int64_t(r) * B.col + c8) * 2;
        b_in[l] = B_NFAST ? col0 + c8 < N : col0 + r < N;
      }
      [[unroll]] for (uint i = 0; i < WM * WN; ++i) {
        acc[i] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
      }

      // Loads of K tile kt into registers; out-of-range vectors read as zero.
      #define FETCH(kt)                                                                       \
        {                                                                                     \
          const int64_t k0 = k_begin + int64_t(kt) * BK;                                      \
          [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {                                     \
            const uint v = tid + l * THREADS, r = v / A_VECS, c8 = (v % A_VECS) * 8;          \
            if (A_SCALAR) {                                                                   \
              const bool line = A_KFAST ? a_in[l] : k0 + r < k_end;                           \
              const int64_t left = A_KFAST ? k_end - (k0 + c8) : M - (row0 + c8);             \
              ra[l] = line ? load_halves(a_ptr[l], left) : uvec4(0);                          \
            } else {                                                                          \
              const bool ok = a_in[l] && (A_KFAST ? k0 + c8 < k_end : k0 + r < k_end);        \
              ra[l] = ok ? PV4(a_ptr[l]).v : uvec4(0);                                        \
            }                                                                                 \
            a_ptr[l] += a_step;                                                               \
          }                                                                                   \
          [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {                                     \
            const uint v = tid + l * THREADS, r = v / B_VECS, c8 = (v % B_VECS) * 8;          \
            if (B_SCALAR) {                                                                   \
              const bool line = B_NFAST ? k0 + r < k_end : b_in[l];                           \
              const int64_t left = B_NFAST ? N - (col0 + c8) : k_end - (k0 + c8);             \
              rb[l] = line ? load_halves(b_ptr[l], left) : uvec4(0);                          \
            } else {                                                                          \
              const bool ok = b_in[l] && (B_NFAST ? k0 + r < k_end : k0 + c8 < k_end);        \
              rb[l] = ok ? PV4(b_ptr[l]).v : uvec4(0);                                        \
            }                                                                                 \
            b_ptr[l] += b_step;                                                               \
          }                                                                                   \
        }
      #define STASH(stage)                                                                    \
        {                                                                                     \
          [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {                                     \
            const uint v = tid + l * THREADS;                                                 \
            sh[(stage) * STAGE + (v / A_VECS) * A_LD + v % A_VECS] = ra[l];                   \
          }                                                                                   \
          [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {                                     \
            const uint v = tid + l * THREADS;                                                 \
            sh[(stage) * STAGE + A_TILE + (v / B_VECS) * B_LD + v % B_VECS] = rb[l];          \
          }                                                                                   \
        }

      barrier();  // the previous tile's epilogue may still read the shared scratch
      if (nk > 0) {
        FETCH(0);
        STASH(0);
      }
      barrier();
      for (uint kt = 0; kt < nk; ++kt) {
        const uint cur = PROBE >= 2 ? 0u : kt & 1u;
        const bool more = kt + 1 < nk;
        if (more && PROBE == 0) FETCH(kt + 1);  // in flight while this tile is multiplied
        const uint a_sh = cur * STAGE, b_sh = cur * STAGE + A_TILE;
        [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
          coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[WM];
          [[unroll]] for (uint i = 0; i < WM; ++i) {
            ma[i] = load_a(a_sh, (sg_m * WM + i) * 16, kk);
          }
          [[unroll]] for (uint j = 0; j < WN; ++j) {
            coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb =
                load_b(b_sh, (sg_n * WN + j) * 16, kk);
            [[unroll]] for (uint i = 0; i < WM; ++i) {
              acc[i * WN + j] = coopMatMulAdd(ma[i], mb, acc[i * WN + j]);
            }
          }
        }
        if (more && PROBE <= 1) STASH(cur ^ 1u);
        if (PROBE <= 2) barrier();  // stage cur^1 written, stage cur free for the next writes
      }

      // Epilogue: each 16x16 block through this subgroup's 64-vector scratch (stage 0 memory,
      // free after the loop's last barrier); lane pairs own the two 8-wide halves of a row.
      const uint scratch = sg * 64;
      [[unroll]] for (uint i = 0; i < WM; ++i) {
        [[unroll]] for (uint j = 0; j < WN; ++j) {
          const int64_t r0 = row0 + (sg_m * WM + i) * 16, c0 = col0 + (sg_n * WN + j) * 16;
          if (r0 >= M || c0 >= N) continue;  // uniform within the subgroup
          coopMatStore(acc[i * WN + j], sh, scratch, 4, gl_CooperativeMatrixLayoutRowMajor);
          subgroupMemoryBarrierShared();
          subgroupBarrier();
          const bool full = r0 + 16 <= M && c0 + 16 <= N;
          for (uint h = lane; h < 32; h += gl_SubgroupSize) {
            const uint rr = h / 2, cc = (h % 2) * 8;
            const uvec4 lo = sh[scratch + rr * 4 + cc / 4], hi = sh[scratch + rr * 4 + cc / 4 + 1];
            float v[8] = float[8](uintBitsToFloat(lo.x), uintBitsToFloat(lo.y),
                                  uintBitsToFloat(lo.z), uintBitsToFloat(lo.w),
                                  uintBitsToFloat(hi.x), uintBitsToFloat(hi.y),
                                  uintBitsToFloat(hi.z), uintBitsToFloat(hi.w));
            const int64_t r = r0 + rr, c = c0 + cc;
            if (vec_out && full) {
              epilogue8(epi, b0, b1, r, c, v);
              store8(elem_addr(epi.c, b0, b1, r, c, OUT_SIZE), v);
              continue;
            }
            if (vec_partial && full) {
              store8_f32(partial + uint64_t(partial_index(slice, nbatch, z, M, N, r, c)) * 4, v);
              continue;
            }
            [[unroll]] for (uint e = 0; e < 8; ++e) {
              if (r >= M || c + e >= N) continue;
              if (splits > 1) {
                const int64_t at = partial_index(slice, nbatch, z, M, N, r, c + e);
                store_partial(partial + uint64_t(at) * 4, v[e]);
              } else {
                store_result(epi, b0, b1, r, c + e, v[e]);
              }
            }
          }
          subgroupBarrier();  // scratch is rewritten by the next block
        }
      }
    }
  }
}
