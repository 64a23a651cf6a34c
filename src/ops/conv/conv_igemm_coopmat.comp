#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#if defined(IN_BF16)
#extension GL_EXT_bfloat16 : require
#endif
// Implicit-GEMM convolution on cooperative matrices (tensor cores): the operands of
// conv_igemm.glsl's GEMM are gathered straight from the tensors in octets (8 consecutive k of one
// row or column), packed into 16-byte vectors and staged in shared memory as [row][k], where
// coopMatLoad reads A row-major and B column-major. Two stages: the next K tile is gathered into
// registers while the current one is multiplied, one barrier per step.
// - CONV_IMPLICIT: forward-style passes (forward, input-gradient phases); A is the weight matrix,
//   B is gathered from the source, C is stored into the destination (+ bias).
// - CONV_WGRAD: the weight gradient; A is gathered from the output gradient, B from the input,
//   k walking (sample, position); C and split-K slices as the GEMM stores them.
// fp16 and bf16 inputs, fp32 accumulation.
#include "vkml_common.glsl"
#include "gemm_params.h"
#include "gemm_types.glsl"
#include "conv_igemm.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint WM = 4;  // 16-row blocks per subgroup
layout(constant_id = 5) const uint WN = 2;  // 16-column blocks per subgroup
layout(constant_id = 6) const uint SUBGROUPS = 8;
layout(constant_id = 7) const bool A_VEC = false;  // forward: weight octets as 16-byte loads
// The forward-style passes gather B one of two ways (the host sets exactly one):
// B_KROWS: staged as [k][n], each thread gathering 8 neighbouring columns of one k, so the
// per-k part of the address (channel and tap offset, the tap's shift) is computed once per 8
// elements and the per-column part once per tile.
layout(constant_id = 8) const bool B_KROWS = false;
// B_CHANNEL_OCTETS: over a channels-innermost source (unit channel stride, 16-byte aligned
// octets; the host transposes an NCHW one into scratch): k walks (tap, channel) with the channel
// fastest, A is re-laid to match, and an octet is 8 channels at one tap: one bounds test and one
// 16-byte load instead of 8 gathered elements. B is staged [n][k].
layout(constant_id = 9) const bool B_CHANNEL_OCTETS = false;

#if defined(IN_F16)
#define ELEM float16_t
#else
#define ELEM bfloat16_t
#endif
#define RAW uint
#define load_raw(addr) uint(PU16(addr).v)

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer CV4 { uvec4 v; };

#if defined(CONV_IMPLICIT)
layout(push_constant) uniform Push { ConvGemmParams p; } pc;
#else
layout(push_constant) uniform Push { GemmParams p; ConvGemmParams q; } pc;
#endif

const uint THREADS = gl_WorkGroupSize.x;
const uint OCTS = BK / 8;  // octets per row of a K tile
const uint LD = OCTS + 1;  // shared row in 16-byte vectors, one of padding against bank conflicts
const uint A_TILE = BM * LD;
const uint B_LDK = BN / 8 + 1;  // [k][n] rows (B_KROWS), in 16-byte vectors
const uint B_TILE = B_KROWS ? BK * B_LDK : BN * LD;
const uint STAGE = A_TILE + B_TILE;
const uint A_UNITS = BM * OCTS / THREADS;  // octets per thread and K tile (host guarantees whole)
const uint B_UNITS = BN * OCTS / THREADS;
const uint SG_N = BN / (16 * WN);

shared uvec4 sh[2 * STAGE];

coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> load_a(uint base, uint m0, uint kk) {
  coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> m;
  coopMatLoad(m, sh, base + m0 * LD + kk / 8, LD, gl_CooperativeMatrixLayoutRowMajor);
  return m;
}

coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> load_b(uint base, uint n0, uint kk) {
  coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> m;
  if (B_KROWS) {
    coopMatLoad(m, sh, base + A_TILE + kk * B_LDK + n0 / 8, B_LDK,
                gl_CooperativeMatrixLayoutRowMajor);
  } else {
    coopMatLoad(m, sh, base + A_TILE + n0 * LD + kk / 8, LD,
                gl_CooperativeMatrixLayoutColumnMajor);
  }
  return m;
}

// An octet of 16-bit values packed into one vector.
uvec4 pack_octet(RAW v[8]) {
  return uvec4(v[0] | (v[1] << 16), v[2] | (v[3] << 16), v[4] | (v[5] << 16), v[6] | (v[7] << 16));
}

// The source value at column coordinate `at` shifted by a tap, or zero outside the source.
RAW gather_raw(ConvGather g, uint64_t base, ivec3 at, ivec3 shift, int chan_off) {
  const ivec3 c = at + shift;
  if (!conv_inside(g, c)) return RAW(0);
  return load_raw(base + uint64_t(int64_t(chan_off + conv_offset(g, c)) * IN_SIZE));
}

#if defined(CONV_IMPLICIT)
// A weight octet (8 weights along k, a_elem bytes apart) of which `valid` are in range: one
// 16-byte load when A_VEC and all 8 are, else element by element.
uvec4 fetch_a_octet(uint64_t addr, int a_elem, uint valid) {
  if (A_VEC && valid == 8u) return CV4(addr).v;
  RAW v[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) {
    v[e] = e < valid ? load_raw(addr + uint64_t(int64_t(int(e) * a_elem))) : RAW(0);
  }
  return pack_octet(v);
}
#endif


void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint sg_m = sg / SG_N, sg_n = sg % SG_N;
#if defined(CONV_IMPLICIT)
  ConvGemmParams p = pc.p;
  const GemmOperand A = p.a;
  const int64_t M = p.m, N = p.n, K = p.k;
  const int64_t nbatch = p.groups;
  const uint splits = 1u;  // the forward-style passes keep K whole
  const int64_t k_chunk = K;
  const ConvGather cg = load_conv_gather(p);
  const bool conv_bias = (p.flags & VKML_CONV_HAS_BIAS) != 0u;
  uint64_t g_base[B_UNITS];  // B_CHANNEL_OCTETS: per B octet its column's sample address,
  ivec3 g_at[B_UNITS];       // coordinate and offset within the sample
  int g_off[B_UNITS];
  Digits b_tap[B_UNITS];  // B_KROWS: the unit's k as (channel, tap); B_CHANNEL_OCTETS: the
                          // octet's first k as (kd; kh, kw, channel)
  uint64_t r_base[8];  // B_KROWS: the thread's 8 columns' sample addresses, coordinates, offsets
  ivec3 r_at[8];
  int r_off[8];
  const Digits k_step = tap_digits(cg, int(BK));
  const ivec3 oct_radix = ivec3(cg.kernel.yz, cg.chans);
  const Digits oct_step = channel_tap_digits(cg, int(BK));
  uint64_t a_ptr[A_UNITS];  // the octet's first weight
  bool a_row_in[A_UNITS];
#else
  GemmParams p = pc.p;
  ConvGemmParams cq = pc.q;  // src: the input, dst: the output gradient (positions walk it)
  const int64_t M = p.m, N = p.n, K = p.k;
  const int64_t nbatch = p.batch0;
  const uint splits = max(p.splits, 1u);
  const int64_t k_chunk = splits > 1 ? p.k_chunk : K;
  const Epilogue epi = load_epilogue(p);
  const ConvGather cg = load_conv_gather(cq);
  const Digits one = position_digits(cg, 1), rest = position_digits(cg, int(BK) - 8);
  int w_chan[B_UNITS];  // per B octet (a column: channel, tap): channel offset and tap shift
  ivec3 w_shift[B_UNITS];
#endif
  const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  uvec4 ra[A_UNITS], rb[B_UNITS];
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[WM * WN];

  for (int64_t zs = gl_WorkGroupID.z; zs < nbatch * splits; zs += gl_NumWorkGroups.z) {
    const int64_t z = zs / splits, slice = zs % splits;
    const int64_t k_begin = slice * k_chunk, k_end = min(K, k_begin + k_chunk);
    const uint klen = k_end > k_begin ? uint(k_end - k_begin) : 0u;
    const uint nk = (klen + BK - 1) / BK;
    for (int64_t tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (int64_t tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        const int64_t row0 = tm * BM, col0 = tn * BN;
#if defined(CONV_IMPLICIT)
        // A octets: neighbouring threads walk k (coalesced weight rows); B octets: neighbouring
        // threads walk columns (neighbouring positions of the source).
        [[unroll]] for (uint l = 0; l < A_UNITS; ++l) {
          const uint u = tid + l * THREADS, m = u / OCTS, oct = u % OCTS;
          a_row_in[l] = row0 + m < M;
          a_ptr[l] = elem_addr(A, z, 0, row0 + m, k_begin + oct * 8, IN_SIZE);
        }
        if (B_KROWS) {
          const uint n8 = (tid % (BN / 8)) * 8;  // the same for every unit (host: THREADS % (BN/8) == 0)
          [[unroll]] for (uint e = 0; e < 8; ++e) {
            conv_column(p, cg, z, col0 + n8 + e, r_base[e], r_at[e]);
            r_off[e] = conv_offset(cg, r_at[e]);
          }
          [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {
            b_tap[l] = tap_digits(cg, int(k_begin) + int((tid + l * THREADS) / (BN / 8)));
          }
        } else {
          [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {
            const uint u = tid + l * THREADS, n = u % BN, oct = u / BN;
            conv_column(p, cg, z, col0 + n, g_base[l], g_at[l]);
            g_off[l] = conv_offset(cg, g_at[l]);
            b_tap[l] = channel_tap_digits(cg, int(k_begin) + int(oct * 8));
          }
        }
        const uint64_t a_step = uint64_t(int64_t(BK) * A.col * IN_SIZE);
        const int a_elem = int(A.col) * IN_SIZE;
#else
        // Every octet of a thread has the same k (threads walk k in both tiles): one (sample,
        // position), stepped by digits, serves A's and B's.
        const uint k_oct = (tid % OCTS) * 8;
        Digits k_pos = position_digits(cg, int(k_begin) + int(k_oct));
        [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {
          const int64_t j = col0 + (tid + l * THREADS) / OCTS;
          const Digits tap = tap_digits(cg, int(j));  // column j = (channel, tap)
          w_chan[l] = tap.top * cg.src_c;
          w_shift[l] = j < N ? tap.low * cg.kmul : ivec3(CONV_NOWHERE);
        }
#endif
        [[unroll]] for (uint i = 0; i < WM * WN; ++i) {
          acc[i] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
        }

#if defined(CONV_IMPLICIT)
        // The octets of K tile kbase (offset in the slice) into registers; zeros outside.
        #define FETCH(kbase)                                                                  \
          {                                                                                   \
            [[unroll]] for (uint l = 0; l < A_UNITS; ++l) {                                   \
              const uint k0 = (kbase) + ((tid + l * THREADS) % OCTS) * 8;                      \
              const uint valid = a_row_in[l] ? uint(clamp(int(klen) - int(k0), 0, 8)) : 0u;   \
              ra[l] = fetch_a_octet(a_ptr[l], a_elem, valid);                                 \
              a_ptr[l] += a_step;                                                             \
            }                                                                                 \
            [[unroll]] for (uint l = 0; l < B_UNITS && B_KROWS; ++l) {                        \
              const uint kq = (kbase) + (tid + l * THREADS) / (BN / 8);                        \
              const ivec3 shift = b_tap[l].low * cg.kmul;                                     \
              const int tap_off = b_tap[l].top * cg.src_c + conv_offset(cg, shift);           \
              RAW v[8];                                                                       \
              [[unroll]] for (uint e = 0; e < 8; ++e) {                                       \
                const bool inside = kq < klen && conv_inside(cg, r_at[e] + shift);            \
                const int off = r_off[e] + tap_off;                                           \
                v[e] = inside ? load_raw(r_base[e] + uint64_t(int64_t(off) * IN_SIZE)) : RAW(0); \
              }                                                                               \
              b_tap[l] = digits_add(b_tap[l], k_step, cg.kernel);                             \
              rb[l] = pack_octet(v);                                                          \
            }                                                                                 \
            [[unroll]] for (uint l = 0; l < B_UNITS && B_CHANNEL_OCTETS; ++l) {               \
              const uint k0 = (kbase) + ((tid + l * THREADS) / BN) * 8;                        \
              const ivec3 shift = ivec3(b_tap[l].top, b_tap[l].low.xy) * cg.kmul;             \
              uvec4 h = uvec4(0);                                                             \
              if (k0 < klen && conv_inside(cg, g_at[l] + shift)) {                            \
                const int off = g_off[l] + conv_offset(cg, shift) + b_tap[l].low.z;           \
                h = CV4(g_base[l] + uint64_t(int64_t(off) * IN_SIZE)).v;                      \
              }                                                                               \
              b_tap[l] = digits_add(b_tap[l], oct_step, oct_radix);                           \
              rb[l] = h;                                                                      \
            }                                                                                 \
          }
#else
        #define FETCH(kbase)                                                                  \
          {                                                                                   \
            RAW va[A_UNITS * 8], vb[B_UNITS * 8];                                             \
            [[unroll]] for (uint e = 0; e < 8; ++e) {                                         \
              const bool kin = (kbase) + k_oct + e < klen;                                    \
              const int smp = k_pos.top;                                                      \
              const ivec3 o = k_pos.low;                                                      \
              const int o_off = o.x * cg.dst_sp.x + o.y * cg.dst_sp.y + o.z * cg.dst_sp.z;    \
              const uint64_t dy_at =                                                          \
                  cq.dst + uint64_t((smp * cq.dst_n + z * M * cq.dst_c + o_off) * IN_SIZE);   \
              [[unroll]] for (uint l = 0; l < A_UNITS; ++l) {                                 \
                const int64_t m = row0 + (tid + l * THREADS) / OCTS;                          \
                va[l * 8 + e] = kin && m < M ? load_raw(dy_at + uint64_t(m * cq.dst_c * IN_SIZE)) \
                                             : RAW(0);                                        \
              }                                                                               \
              const ivec3 x_at = o * cg.mul + cg.add;                                         \
              const int64_t x_chan0 = z * cq.src_group_channels * int64_t(cg.src_c);          \
              const uint64_t x_base = cq.src + uint64_t((smp * cq.src_n + x_chan0) * IN_SIZE); \
              [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {                                 \
                vb[l * 8 + e] = kin ? gather_raw(cg, x_base, x_at, w_shift[l], w_chan[l])     \
                                    : RAW(0);                                                 \
              }                                                                               \
              k_pos = digits_add(k_pos, one, cg.pos_size);                                    \
            }                                                                                 \
            k_pos = digits_add(k_pos, rest, cg.pos_size);                                     \
            [[unroll]] for (uint l = 0; l < A_UNITS; ++l) {                                   \
              RAW v[8];                                                                       \
              [[unroll]] for (uint e = 0; e < 8; ++e) v[e] = va[l * 8 + e];                   \
              ra[l] = pack_octet(v);                                                          \
            }                                                                                 \
            [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {                                   \
              RAW v[8];                                                                       \
              [[unroll]] for (uint e = 0; e < 8; ++e) v[e] = vb[l * 8 + e];                   \
              rb[l] = pack_octet(v);                                                          \
            }                                                                                 \
          }
#endif
        // Shared places of the octets: A as [m][k] with threads along k; B as [k][n] (B_KROWS),
        // or [n][k] with threads along n (channel octets) or along k (weight gradient).
#if defined(CONV_IMPLICIT)
        #define B_SLOT(u) (B_KROWS ? ((u) / (BN / 8)) * B_LDK + (u) % (BN / 8)                 \
                               : ((u) % BN) * LD + (u) / BN)
#else
        #define B_SLOT(u) (((u) / OCTS) * LD + (u) % OCTS)
#endif
        #define STASH(stage)                                                                  \
          {                                                                                   \
            const uint base = (stage) * STAGE;                                                \
            [[unroll]] for (uint l = 0; l < A_UNITS; ++l) {                                   \
              const uint u = tid + l * THREADS;                                               \
              sh[base + (u / OCTS) * LD + u % OCTS] = ra[l];                                  \
            }                                                                                 \
            [[unroll]] for (uint l = 0; l < B_UNITS; ++l) {                                   \
              const uint u = tid + l * THREADS;                                               \
              sh[base + A_TILE + B_SLOT(u)] = rb[l];                                          \
            }                                                                                 \
          }

        barrier();  // the previous tile's epilogue may still read the shared scratch
        if (nk > 0) {
          FETCH(0u);
          STASH(0u);
        }
        barrier();
        for (uint kt = 0; kt < nk; ++kt) {
          const uint cur = kt & 1u;
          const bool more = kt + 1 < nk;
          if (more) FETCH((kt + 1) * BK);  // in flight while this tile is multiplied
          const uint hi = cur * STAGE;
          [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
            coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[WM];
            [[unroll]] for (uint i = 0; i < WM; ++i) ma[i] = load_a(hi, (sg_m * WM + i) * 16, kk);
            [[unroll]] for (uint j = 0; j < WN; ++j) {
              const uint n0 = (sg_n * WN + j) * 16;
              coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb = load_b(hi, n0, kk);
              [[unroll]] for (uint i = 0; i < WM; ++i) {
                acc[i * WN + j] = coopMatMulAdd(ma[i], mb, acc[i * WN + j]);
              }
            }
          }
          if (more) STASH(cur ^ 1u);
          barrier();  // stage cur^1 written, stage cur free for the next iteration's writes
        }

        // Epilogue: each 16x16 block through this subgroup's 64-vector scratch (stage 0 memory,
        // free after the loop's last barrier); a lane keeps one column and walks rows, so
        // neighbouring lanes store neighbouring columns.
        const uint scratch = sg * 64;
        const uint cc = lane % 16, row_step = gl_SubgroupSize / 16;
        [[unroll]] for (uint i = 0; i < WM; ++i) {
          [[unroll]] for (uint j = 0; j < WN; ++j) {
            const int64_t r0 = row0 + (sg_m * WM + i) * 16, c0 = col0 + (sg_n * WN + j) * 16;
            if (r0 >= M || c0 >= N) continue;  // uniform within the subgroup
            coopMatStore(acc[i * WN + j], sh, scratch, 4, gl_CooperativeMatrixLayoutRowMajor);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            const int64_t c = c0 + cc;
#if defined(CONV_IMPLICIT)
            const int64_t out_at = conv_out_address(p, cg, c);  // -1 past N
#endif
            for (uint rr = lane / 16; rr < 16; rr += row_step) {
              const int64_t r = r0 + rr;
              const float v = uintBitsToFloat(sh[scratch + rr * 4 + cc / 4][cc % 4]);
              if (r >= M || c >= N) continue;
#if defined(CONV_IMPLICIT)
              const int64_t ch = z * M + r;
              const ACC add =
                  conv_bias ? load_out(p.bias + uint64_t(ch * p.bias_stride * OUT_SIZE)) : 0.0;
              store_out(uint64_t(out_at) + uint64_t(ch * p.dst_c * OUT_SIZE), v + add);
#else
              if (splits > 1) {
                const int64_t at = partial_index(slice, nbatch, z, M, N, r, c);
                store_partial(p.partial + uint64_t(at) * 4, v);
              } else {
                store_result(epi, z, 0, r, c, v);
              }
#endif
            }
            subgroupBarrier();  // scratch is rewritten by the next block
          }
        }
      }
    }
  }
}
