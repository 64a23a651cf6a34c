#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// fp32 GEMM for GPUs (SIMT, no tensor cores), laid out like a CUDA SGEMM: a BM x BN block per
// workgroup, split into WM x WN warp tiles; the threads of a warp tile own TM x TN micro-tiles made
// of 4x4 sub-blocks, so each k step reads TM/4 + TN/4 16-byte vectors from shared memory for
// TM * TN FMAs, and the lanes of a warp read neighbouring vectors (no bank conflicts). Shared
// memory holds A as [k][m] and B as [k][n] in two stages; the next K tile is fetched into
// registers while the current one is multiplied, one barrier per step.
//
// Every layout is accepted. Each fetched unit is 4 neighbouring m (A) or n (B) values of one k:
// - along the contiguous dimension (A m-fast, B n-fast) with A_VEC / B_VEC: one 16-byte load
//   (the plan checks the alignment);
// - otherwise 4 scalar loads, consecutive threads walking k when the operand is k-contiguous
//   (coalesced), stored as one vector into the [k][.] tile, whose rows get 4 floats of padding.
// So every shared store is a whole vector (no dynamic component writes). Address arithmetic is
// 64-bit once per tile and 32-bit in the K loop (the plan bounds the strides).
// The accumulators are four named mat4 blocks indexed by constants (thread tiles of 4 or 8), so
// they stay in registers without relying on the driver to unroll loops over an array.
// CONV_IMPLICIT (conv_igemm_f32): an implicit-GEMM convolution; B is gathered from the source
// tensor and C stored into the destination by the hooks in conv_igemm.glsl.
// CONV_WGRAD (conv_igemm_wgrad_f32): a weight gradient; A is gathered from the output gradient and
// B from the input, k walking (sample, position); C and split-K are the GEMM's.
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"
#if defined(CONV_IMPLICIT) || defined(CONV_WGRAD)
#include "conv_igemm.glsl"
#endif
// Bytes and load of one A element: fp32 in the GEMM builds; the convolution builds also take
// f16/bf16, widened to fp32 on load (SIMT_LOAD expands to the fp32 load itself in fp32 builds).
#if defined(IN_F32)
#define SIMT_IN_BYTES 4
#define SIMT_LOAD(addr) PF32(addr).v
#define SIMT_LOAD4(addr) SimtV4(addr).v
#else
#define SIMT_LOAD4(addr) vec4(0)  // A_KVEC is fp32 only (the plans never set it here)
#define SIMT_IN_BYTES IN_SIZE
#define SIMT_LOAD(addr) load_in(addr)
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 8;
layout(constant_id = 4) const uint WM = 32;  // warp tile
layout(constant_id = 5) const uint WN = 64;
layout(constant_id = 6) const uint TM = 8;  // thread tile, multiples of 4
layout(constant_id = 7) const uint TN = 8;
layout(constant_id = 8) const bool A_KFAST = true;  // A walked along k by neighbouring threads
layout(constant_id = 9) const bool B_NFAST = true;  // B walked along n (else along k)
layout(constant_id = 10) const bool A_VEC = false;  // 16-byte loads of A along m (!A_KFAST only)
layout(constant_id = 11) const bool B_VEC = false;  // 16-byte loads of B along n (B_NFAST only)
// Diagnostic only (VKML_GEMM_PROBE in diagnostic builds; the results are wrong): 1 skips the global
// loads after the first K tile, 2 also the shared stores (one stage read throughout), 3 also the
// barriers. 0 in every real plan.
layout(constant_id = 12) const uint PROBE = 0;
// A k-contiguous and 16-byte aligned (fp32 only; A_KFAST, A_UNITS a multiple of 4): each thread
// reads 4x4 blocks of A as four 16-byte rows along k and transposes them in registers, 4 vector
// loads where the scalar path issues 16. 0: scalar loads; 1: blocks; 2: blocks, A's shared rows
// unpadded (whole-row stores need no padding, which lets 128x64x32 fit in 48 KiB).
layout(constant_id = 13) const uint A_BLOCKS = 0;
const bool A_KVEC = A_BLOCKS != 0;
// The same for a k-contiguous B (!B_NFAST, the GEMM builds only; x @ W^T): 4x4 blocks of 4 n
// by 4 k, 0/1/2 as above.
layout(constant_id = 14) const uint B_BLOCKS = 0;
const bool B_KVEC = B_BLOCKS != 0;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer SimtV4 { vec4 v; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer SimtW4 { vec4 v; };

#if defined(CONV_IMPLICIT)
layout(push_constant) uniform Push { ConvGemmParams p; } pc;
#elif defined(CONV_WGRAD)
layout(push_constant) uniform Push { GemmParams p; ConvGemmParams q; } pc;
#else
layout(push_constant) uniform Push { GemmParams p; } pc;
#endif

const uint LANES_M = WM / TM;  // lanes of a warp tile along m and n
const uint LANES_N = WN / TN;
const uint WARP = LANES_M * LANES_N;
const uint WARPS_N = BN / WN;
const uint THREADS = (BM / TM) * (BN / TN);  // equals local_size_x (host guarantees)
// Shared rows in vectors; tiles filled along k get one vector of padding (spreads the banks).
const uint A_LD = BM / 4 + (A_KFAST && A_BLOCKS != 2 ? 1 : 0);
const uint B_LD = BN / 4 + (!B_NFAST && B_BLOCKS != 2 ? 1 : 0);
const uint A_STAGE = BK * A_LD;
const uint B_STAGE = BK * B_LD;
const uint A_UNITS = BM * BK / 4 / THREADS;  // 4-element units per thread and K step
const uint B_UNITS = BK * BN / 4 / THREADS;

shared vec4 sa[2 * A_STAGE];  // [stage][k][m / 4]
shared vec4 sb[2 * B_STAGE];  // [stage][k][n / 4]

// With 4x4 blocks, unit l is row (A) or column (B) l % 4 of a block: (its first k, m or n / 4).
uvec2 block_unit(uint l) {
  const uint u = gl_LocalInvocationID.x + (l / 4) * THREADS;
  return uvec2((u % (BK / 4)) * 4, u / (BK / 4));
}
// (k, m4) of A's l-th unit and (k, n4) of B's, inside the tile.
uvec2 a_unit(uint l) {
  if (A_KVEC) return block_unit(l);
  const uint u = gl_LocalInvocationID.x + l * THREADS;
  return A_KFAST ? uvec2(u % BK, u / BK) : uvec2(u / (BM / 4), u % (BM / 4));
}
uvec2 b_unit(uint l) {
  if (B_KVEC) return block_unit(l);
  const uint u = gl_LocalInvocationID.x + l * THREADS;
  return B_NFAST ? uvec2(u / (BN / 4), u % (BN / 4)) : uvec2(u % BK, u / BK);
}

#if !defined(CONV_IMPLICIT)  // the GEMM and weight-gradient builds (vec_out: fp32 C only)
// store_result's alpha * acc + beta * C_in + bias, in the same order, for 4 outputs at (r, c).
vec4 epilogue4(Epilogue epi, int64_t b0, int64_t b1, int64_t r, int64_t c, vec4 acc) {
  vec4 v = epi.alpha * acc;
  if ((epi.flags & VKML_GEMM_HAS_CIN) != 0u) {
    v += epi.beta * SimtV4(elem_addr(epi.c_in, b0, b1, r, c, 4)).v;
  }
  if ((epi.flags & VKML_GEMM_HAS_BIAS) != 0u) v += SimtV4(elem_addr(epi.bias, b0, b1, r, c, 4)).v;
  return v;
}

// store_result for the outputs (r, c + e), e < min(n, 4), where 16-byte stores do not apply (C
// unaligned, e.g. 197 columns): each operand's address is computed once and stepped by its column
// stride: four full 64-bit address computations per 4 outputs would cost as much as a short K
// loop.
void store_results4(Epilogue epi, int64_t b0, int64_t b1, int64_t r, int64_t c, vec4 acc,
                    int64_t n) {
  const bool cin = (epi.flags & VKML_GEMM_HAS_CIN) != 0u;
  const bool bias = (epi.flags & VKML_GEMM_HAS_BIAS) != 0u;
  uint64_t at = elem_addr(epi.c, b0, b1, r, c, OUT_SIZE);
  uint64_t cin_at = cin ? elem_addr(epi.c_in, b0, b1, r, c, OUT_SIZE) : 0ul;
  uint64_t bias_at = bias ? elem_addr(epi.bias, b0, b1, r, c, OUT_SIZE) : 0ul;
  const uint64_t step = uint64_t(epi.c.col * OUT_SIZE);
  const uint64_t cin_step = uint64_t(epi.c_in.col * OUT_SIZE);
  const uint64_t bias_step = uint64_t(epi.bias.col * OUT_SIZE);
  [[unroll]] for (uint e = 0; e < 4; ++e) {
    if (int64_t(e) < n) {
      // The same order as store_result: alpha * acc, then beta * C_in, then the bias.
      ACC v = epi.alpha * ACC(acc[e]);
      if (cin) v += epi.beta * load_out(cin_at);
      if (bias) v += load_out(bias_at);
      store_out(at, v);
    }
    at += step;
    cin_at += cin_step;
    bias_at += bias_step;
  }
}
#endif

void main() {
#ifdef CONV_IMPLICIT
  ConvGemmParams p = pc.p;
  const GemmOperand A = p.a;
  const int64_t M = p.m, N = p.n, K = p.k, nb1 = 1;
  const int64_t nbatch = p.groups;
  const ConvGather cg = load_conv_gather(p);
  const bool conv_bias = (p.flags & VKML_CONV_HAS_BIAS) != 0u;
#else
  GemmParams p = pc.p;
  const GemmOperand A = p.a, B = p.b;
  const int64_t M = p.m, N = p.n, K = p.k, nb1 = p.batch1;
  const int64_t nbatch = p.batch0 * nb1;
  const Epilogue epi = load_epilogue(p);
#endif
#ifdef CONV_WGRAD
  ConvGemmParams cq = pc.q;  // src: the input, dst: the output gradient (positions walk it)
  const ConvGather cg = load_conv_gather(cq);
  int w_off[B_UNITS * 4];  // per B element (a column: channel, tap): channel + tap offset
  ivec3 w_shift[B_UNITS * 4];
  Digits k_pos;  // this thread's k as (sample, position), stepped by BK without dividing
  const Digits pos_step = position_digits(cg, int(BK));
#endif
  const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const uint tid = gl_LocalInvocationID.x;
  const uint warp = tid / WARP, lane = tid % WARP;
  const uint lr = lane / LANES_N, lc = lane % LANES_N;
  // First vector this thread reads in a shared row of A and of B.
  const uint a_rd = (warp / WARPS_N) * (WM / 4) + lr;
  const uint b_rd = (warp % WARPS_N) * (WN / 4) + lc;
#ifdef CONV_IMPLICIT
  const uint splits = 1u;  // the forward-style passes keep K whole
  const int64_t k_chunk = K;
  const int a_elem = int(A.row) * SIMT_IN_BYTES;
  const int64_t a_kstep = int64_t(BK) * A.col * SIMT_IN_BYTES;
  uint64_t g_base[B_UNITS * 4];  // per gathered element: its sample's address and coordinate
  ivec3 g_at[B_UNITS * 4];
  int g_off[B_UNITS * 4];  // the coordinate's offset in the sample
  Digits b_tap[B_UNITS];  // each B unit's k as (channel, tap), stepped by BK without dividing
  const Digits tap_step = tap_digits(cg, int(BK));
#else
  const uint splits = max(p.splits, 1u);
  const int64_t k_chunk = splits > 1 ? p.k_chunk : K;
  const uint64_t partial = p.partial;
#if defined(OUT_F32)
  // 4 consecutive outputs per 16-byte access when C, and C_in and bias where used, are dense
  // along rows (a biased linear's broadcast bias included).
  const bool vec_out = splits == 1 && epilogue_dense(epi, 4);
#else
  const bool vec_out = false;  // its 16-byte stores hold 4 floats
#endif
  const bool vec_partial = (N % 4) == 0;
  // Byte strides, 32-bit (bounded by the plan): between the 4 elements of a unit, and per K step.
  const int a_elem = int(A.row) * 4, b_elem = int(B.col) * 4;
  const int64_t a_kstep = int64_t(BK) * A.col * 4, b_kstep = int64_t(BK) * B.row * 4;
#endif

  int a_off[A_UNITS], b_off[B_UNITS];  // byte offset of each unit's first element in the tile
  uint a_rows[A_UNITS], b_cols[B_UNITS];  // elements of each unit inside the matrix (0..4)
  vec4 ra[A_UNITS], rb[B_UNITS];
  // Thread tiles of 4 or 8: four named 4x4 blocks, column r of cij = row i*4+r of block (i, j),
  // every access a constant index.
  mat4 c00, c01, c10, c11;
  [[unroll]] for (uint l = 0; l < A_UNITS; ++l) {
    const uvec2 q = a_unit(l);
    const uint row = q.y * 4 + (A_KVEC ? l % 4 : 0u);
    a_off[l] = int(row) * a_elem + int(q.x) * int(A.col) * SIMT_IN_BYTES;
  }
#ifndef CONV_IMPLICIT
  [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {
    const uvec2 q = b_unit(l);
    const uint col = q.y * 4 + (B_KVEC ? l % 4 : 0u);
    b_off[l] = int(q.x) * int(B.row) * 4 + int(col) * b_elem;
  }
#endif

  for (int64_t zs = gl_WorkGroupID.z; zs < nbatch * splits; zs += gl_NumWorkGroups.z) {
    const int64_t z = zs / splits, slice = zs % splits;
    const int64_t b0 = z / nb1, b1 = z % nb1;
    const int64_t k_begin = slice * k_chunk, k_end = min(K, k_begin + k_chunk);
    const uint klen = k_end > k_begin ? uint(k_end - k_begin) : 0u;
    const uint nk = (klen + BK - 1) / BK;
    for (int64_t tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (int64_t tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        const int64_t row0 = tm * BM, col0 = tn * BN;
        // Start of the current K tile of each operand; advanced by a whole tile per step.
        uint64_t a_next = elem_addr(A, b0, b1, row0, k_begin, SIMT_IN_BYTES);
#ifdef CONV_IMPLICIT
        [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {
          [[unroll]] for (uint e = 0; e < 4; ++e) {
            conv_column(p, cg, b0, col0 + b_unit(l).y * 4 + e, g_base[l * 4 + e], g_at[l * 4 + e]);
            g_off[l * 4 + e] = conv_offset(cg, g_at[l * 4 + e]);
          }
          b_tap[l] = tap_digits(cg, int(k_begin) + int(b_unit(l).x));
        }
#else
        uint64_t b_next = elem_addr(B, b0, b1, k_begin, col0, 4);
#endif
#ifdef CONV_WGRAD
        [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {
          [[unroll]] for (uint e = 0; e < 4; ++e) {
            const int64_t j = col0 + b_unit(l).y * 4 + e;
            const Digits tap = tap_digits(cg, int(j));  // column j = (channel, tap)
            w_shift[l * 4 + e] = j < N ? tap.low * cg.kmul : ivec3(CONV_NOWHERE);
            w_off[l * 4 + e] = tap.top * cg.src_c + conv_offset(cg, w_shift[l * 4 + e]);
          }
        }
        k_pos = position_digits(cg, int(k_begin) + int(tid % BK));
#endif
        const uint m_left = uint(min(M - row0, int64_t(BM))), n_left = uint(min(N - col0, int64_t(BN)));
        [[unroll]] for (uint l = 0; l < A_UNITS; ++l) {
          a_rows[l] = uint(clamp(int(m_left) - int(a_unit(l).y * 4), 0, 4));
        }
        [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {
          b_cols[l] = uint(clamp(int(n_left) - int(b_unit(l).y * 4), 0, 4));
        }
        c00 = mat4(0.0), c01 = mat4(0.0), c10 = mat4(0.0), c11 = mat4(0.0);

#ifdef CONV_WGRAD
        // Every unit of a thread has the same k (threads walk k in both tiles): one (sample,
        // position), stepped by digits, serves A's and B's elements.
        #define FETCH_A(kbase)                                                                \
            const uint kq = (kbase) + gl_LocalInvocationID.x % BK;                            \
            const bool kin = kq < klen;                                                       \
            const int smp = k_pos.top;                                                        \
            const ivec3 o = k_pos.low;                                                        \
            const int o_off = o.x * cg.dst_sp.x + o.y * cg.dst_sp.y + o.z * cg.dst_sp.z;      \
            const uint64_t dy_at =                                                            \
                cq.dst + uint64_t((smp * cq.dst_n + b0 * M * cq.dst_c + o_off) * IN_SIZE);    \
            [[unroll]] for (uint l = 0; l < A_UNITS; ++l) {                                   \
              [[unroll]] for (uint j = 0; j < 4; ++j) {                                       \
                const int64_t m = row0 + a_unit(l).y * 4 + j;                                 \
                ra[l][j] = kin && m < M ? load_in(dy_at + uint64_t(m * cq.dst_c * IN_SIZE)) : 0.0; \
              }                                                                               \
            }
        #define FETCH_B(kbase)                                                                \
            const ivec3 x_at = o * cg.mul + cg.add;                                           \
            const int x_off = conv_offset(cg, x_at);                                          \
            const int64_t x_chan0 = b0 * cq.src_group_channels * int64_t(cg.src_c);           \
            const uint64_t x_base = cq.src + uint64_t((smp * cq.src_n + x_chan0) * IN_SIZE);  \
            [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {                                   \
              [[unroll]] for (uint j = 0; j < 4; ++j) {                                       \
                const bool inside = kin && conv_inside(cg, x_at + w_shift[l * 4 + j]);            \
                const int off = x_off + w_off[l * 4 + j];                                     \
                rb[l][j] = inside ? load_in(x_base + uint64_t(int64_t(off) * IN_SIZE)) : 0.0;     \
              }                                                                               \
            }
        #define ADVANCE_A k_pos = digits_add(k_pos, pos_step, cg.pos_size);
        #define ADVANCE_B
#else
        #define FETCH_A(kbase)                                                                \
            [[unroll]] for (uint l = 0; l < A_UNITS; ++l) {                                   \
              const bool kin = (kbase) + a_unit(l).x < klen;                                  \
              const uint64_t at = a_next + uint64_t(int64_t(a_off[l]));                       \
              if (A_VEC) {                                                                    \
                ra[l] = kin && a_rows[l] == 4u ? SimtV4(at).v : vec4(0);                      \
              } else if (A_KVEC) {                                                            \
                ra[l] = kin && l % 4 < a_rows[l] ? SIMT_LOAD4(at) : vec4(0);                  \
              } else {                                                                        \
                [[unroll]] for (uint j = 0; j < 4; ++j) {                                     \
                  ra[l][j] = kin && j < a_rows[l]                                             \
                                 ? SIMT_LOAD(at + uint64_t(int64_t(int(j) * a_elem))) : 0.0;  \
                }                                                                             \
              }                                                                               \
            }
        #define ADVANCE_A a_next += uint64_t(a_kstep);
#endif
#if defined(CONV_IMPLICIT)
        // One tap per unit; its 4 columns differ only in sample and position.
        #define FETCH_B(kbase)                                                                \
            [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {                                   \
              const uint kq = (kbase) + b_unit(l).x;                                          \
              const ivec3 shift = b_tap[l].low * cg.kmul;                                     \
              const int tap_off = b_tap[l].top * cg.src_c + conv_offset(cg, shift);           \
              [[unroll]] for (uint j = 0; j < 4; ++j) {                                       \
                const bool inside = kq < klen && conv_inside(cg, g_at[l * 4 + j] + shift);        \
                const int off = g_off[l * 4 + j] + tap_off;                                   \
                rb[l][j] = inside ? load_in(g_base[l * 4 + j] + uint64_t(int64_t(off) * IN_SIZE)) \
                              : 0.0;                                                          \
              }                                                                               \
            }
        #define ADVANCE_B                                                                     \
            [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {                                   \
              b_tap[l] = digits_add(b_tap[l], tap_step, cg.kernel);                           \
            }
#elif !defined(CONV_WGRAD)
        #define FETCH_B(kbase)                                                                \
            [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {                                   \
              const bool kin = (kbase) + b_unit(l).x < klen;                                  \
              const uint64_t at = b_next + uint64_t(int64_t(b_off[l]));                       \
              if (B_VEC) {                                                                    \
                rb[l] = kin && b_cols[l] == 4u ? SimtV4(at).v : vec4(0);                      \
              } else if (B_KVEC) {                                                            \
                rb[l] = kin && l % 4 < b_cols[l] ? SimtV4(at).v : vec4(0);                    \
              } else {                                                                        \
                [[unroll]] for (uint j = 0; j < 4; ++j) {                                     \
                  rb[l][j] = kin && j < b_cols[l]                                             \
                                 ? PF32(at + uint64_t(int64_t(int(j) * b_elem))).v : 0.0;     \
                }                                                                             \
              }                                                                               \
            }
        #define ADVANCE_B b_next += uint64_t(b_kstep);
#endif
        // Fetches the K tile at a_next / b_next (k offset kbase in the slice) into registers;
        // elements outside the matrices read as zero.
        #define FETCH(kbase)                                                                  \
          {                                                                                   \
            FETCH_A(kbase)                                                                    \
            FETCH_B(kbase)                                                                    \
            ADVANCE_A                                                                         \
            ADVANCE_B                                                                         \
          }
        // Stores the units in r: as they are at (k, m4 or n4), or, for 4x4 blocks, transposed
        // into 4 rows of 4 k each.
        #define STASH_UNITS(sh, base, ld, r, units, unit_of, blocks)                          \
          if (blocks) {                                                                       \
            [[unroll]] for (uint l = 0; l < units; l += 4) {                                  \
              const uvec2 q = block_unit(l);                                                  \
              [[unroll]] for (uint i = 0; i < 4; ++i) {                                       \
                sh[(base) + (q.x + i) * (ld) + q.y] =                                         \
                    vec4(r[l][i], r[l + 1][i], r[l + 2][i], r[l + 3][i]);                     \
              }                                                                               \
            }                                                                                 \
          } else {                                                                            \
            [[unroll]] for (uint l = 0; l < units; ++l) {                                     \
              const uvec2 q = unit_of(l);                                                     \
              sh[(base) + q.x * (ld) + q.y] = r[l];                                           \
            }                                                                                 \
          }
        #define STASH(stage)                                                                  \
          {                                                                                   \
            STASH_UNITS(sa, (stage) * A_STAGE, A_LD, ra, A_UNITS, a_unit, A_KVEC)             \
            STASH_UNITS(sb, (stage) * B_STAGE, B_LD, rb, B_UNITS, b_unit, B_KVEC)             \
          }

        if (nk > 0) {
          FETCH(0u);
          STASH(0u);
        }
        barrier();
        for (uint kt = 0; kt < nk; ++kt) {
          const uint cur = PROBE >= 2 ? 0u : kt & 1u;
          const bool more = kt + 1 < nk;
          if (more && PROBE == 0) FETCH((kt + 1) * BK);
          const uint a_at = cur * A_STAGE + a_rd, b_at = cur * B_STAGE + b_rd;
          // c += a (column) x b (row) for one 4x4 block, column by column.
          #define MAC(c, a, b)                                                                \
            c[0] = fma(vec4((a).x), b, c[0]);                                                 \
            c[1] = fma(vec4((a).y), b, c[1]);                                                 \
            c[2] = fma(vec4((a).z), b, c[2]);                                                 \
            c[3] = fma(vec4((a).w), b, c[3]);
          [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
            const uint ar = a_at + kk * A_LD, br = b_at + kk * B_LD;
            const vec4 fa0 = sa[ar], fb0 = sb[br];
            // The second fragments only where the tile has them (else a dead in-range read).
            const vec4 fa1 = sa[ar + (TM > 4 ? LANES_M : 0u)];
            const vec4 fb1 = sb[br + (TN > 4 ? LANES_N : 0u)];
            MAC(c00, fa0, fb0);
            if (TN > 4) { MAC(c01, fa0, fb1); }
            if (TM > 4) { MAC(c10, fa1, fb0); }
            if (TM > 4 && TN > 4) { MAC(c11, fa1, fb1); }
          }
          if (more && PROBE <= 1) STASH(cur ^ 1u);
          if (PROBE <= 2) barrier();  // also orders the last reads before the next tile's stores
        }

#ifdef CONV_IMPLICIT
        // This thread's columns: their destination addresses (channel 0), or -1 past N.
        int64_t out_at[TN];
        [[unroll]] for (uint jj = 0; jj < TN / 4; ++jj) {
          [[unroll]] for (uint e = 0; e < 4; ++e) {
            out_at[jj * 4 + e] = conv_out_address(p, cg, col0 + (b_rd + jj * LANES_N) * 4 + e);
          }
        }
        // Stores row r of block (i, j): 4 columns of output channel b0 * M + row, plus its bias.
        #define STORE4(i, r, j, val)                                                          \
          {                                                                                   \
            const int64_t row = row0 + (a_rd + (i) * LANES_M) * 4 + (r);                      \
            if (row < M) {                                                                    \
              const int64_t ch = b0 * M + row;                                                \
              const ACC add =                                                                 \
                  conv_bias ? load_out(p.bias + uint64_t(ch * p.bias_stride * OUT_SIZE)) : 0.0; \
              const uint64_t chan = uint64_t(ch * p.dst_c * OUT_SIZE);                        \
              [[unroll]] for (uint e = 0; e < 4; ++e) {                                       \
                const int64_t at = out_at[(j) * 4 + e];                                       \
                if (at >= 0) store_out(uint64_t(at) + chan, val[e] + add);                    \
              }                                                                               \
            }                                                                                 \
          }
#else
        // Stores row r of block (i, j) of the thread tile: 4 columns of C (or of a split-K slice).
        #define STORE4(i, r, j, val)                                                          \
          {                                                                                   \
            const int64_t row = row0 + (a_rd + (i) * LANES_M) * 4 + (r);                      \
            const int64_t col = col0 + (b_rd + (j) * LANES_N) * 4;                            \
            const bool full = col + 4 <= N;                                                   \
            if (row < M && col < N) {                                                         \
              if (splits > 1) {                                                               \
                const int64_t at_elem = partial_index(slice, nbatch, z, M, N, row, col);       \
                const uint64_t at = partial + uint64_t(at_elem) * 4;                          \
                if (vec_partial && full) {                                                    \
                  SimtW4(at).v = val;                                                         \
                } else {                                                                      \
                  [[unroll]] for (uint e = 0; e < 4; ++e) {                                   \
                    if (col + e < N) store_partial(at + e * 4, val[e]);                       \
                  }                                                                           \
                }                                                                             \
              } else if (vec_out && full) {                                                   \
                SimtW4(elem_addr(epi.c, b0, b1, row, col, 4)).v =                             \
                    epilogue4(epi, b0, b1, row, col, val);                                    \
              } else {                                                                        \
                store_results4(epi, b0, b1, row, col, val, N - col);                          \
              }                                                                               \
            }                                                                                 \
          }
#endif
        #define STORE_BLOCK(c, i, j)                                                          \
          { STORE4(i, 0, j, c[0]) STORE4(i, 1, j, c[1]) STORE4(i, 2, j, c[2]) STORE4(i, 3, j, c[3]) }
        STORE_BLOCK(c00, 0, 0)
        if (TN > 4) STORE_BLOCK(c01, 0, 1)
        if (TM > 4) STORE_BLOCK(c10, 1, 0)
        if (TM > 4 && TN > 4) STORE_BLOCK(c11, 1, 1)
      }
    }
  }
}
