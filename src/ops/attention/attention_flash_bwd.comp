#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#if defined(IN_BF16)
#extension GL_EXT_bfloat16 : require
#endif
// Attention backward on cooperative matrices (VK_KHR_cooperative_matrix, subgroup scope,
// 16x16x16, fp32 accumulation) for fp16 / bf16 data, in the FlashAttention-2 order without
// atomics: each workgroup owns BR = 16 * NSG rows of one gradient and walks the other sequence in
// tiles of BC staged through shared memory. The probabilities come back from the forward's
// logsumexp, P = exp(S - lse), and dS = P * (dP - delta) * scale with dP = dout v^T and delta =
// rowsum(dout * o); dropout draws are regenerated as in attention.comp.
//   FLASH_DQ: rows are queries of head h; X = q, Y = dout in registers, tiles of k and v;
//             dq += dS k.
//   FLASH_DK: rows are keys of key head hk; X = k, Y = v in registers, tiles of q and dout of
//             every query head that reads hk; dk += dS^T q.
//   FLASH_DV: as FLASH_DK with X = k only; dv += P_dropped^T dout.
// Per tile and subgroup: S = X T1^T (and dP = Y T2^T) into shared memory, the weights W (dS or
// P) in 16 bits, then acc += W T1 (or W T2 for dv). Writes g with its strides.
#include "vkml_common.glsl"
#include "attention_params.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint NSG = 4;  // subgroups per workgroup, 16 rows each
layout(constant_id = 2) const uint BC = 32;  // positions of the other sequence per tile
layout(constant_id = 3) const uint D = 64;   // head dim rounded up to 16
layout(constant_id = 4) const uint DV = 64;  // value head dim rounded up to 16
layout(constant_id = 5) const uint SG = 32;  // subgroup size
layout(constant_id = 6) const bool VEC = true;  // 16-byte loads (see attention_flash.comp)
layout(push_constant) uniform Push { AttentionParams p; } pc;

#include "attention_common.glsl"

#if defined(IN_BF16)
#define ELEM bfloat16_t
#define FLOAT_TO_ELEM(x) uintBitsToBFloat16EXT(float_to_bf16(x))
#else
#define ELEM float16_t
#define FLOAT_TO_ELEM(x) float16_t(x)
#endif

#if defined(FLASH_DQ)
#define ROWS_ARE_QUERIES 1
#endif
#if !defined(FLASH_DV)
#define HAS_DP 1
#endif

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer PV4 { uvec4 v; };

const uint THREADS = NSG * SG;
const uint BR = 16 * NSG;
// Column widths: X and T1 span the key head dim; Y and T2 the value head dim.
const uint D8 = D / 8, DV8 = DV / 8;
const uint XLD = D8 + 1, YLD = DV8 + 1;  // shared rows in uvec4, one vector of padding
const uint T1_TILE = BC * XLD, T2_TILE = BC * YLD;
const uint ROW_VECS = BR * (XLD > YLD ? XLD : YLD);  // X or Y staged once per pair
const uint KV_VECS = T1_TILE + T2_TILE > ROW_VECS ? T1_TILE + T2_TILE : ROW_VECS;
const uint SLD = BC + 4, PLD = BC + 8;
#if defined(FLASH_DV)
const uint OUT_COLS = DV;
#else
const uint OUT_COLS = D;
#endif

shared uvec4 sh_kv[KV_VECS];
shared float sh_s[NSG * 16 * SLD];  // S of each subgroup's rows; output blocks in the epilogue
#ifdef HAS_DP
shared float sh_d[NSG * 16 * SLD];  // dP
#endif
shared ELEM sh_w[NSG * 16 * PLD];   // the weights W
#ifndef ROWS_ARE_QUERIES
shared float sh_lse[BC];            // the tile's queries: logsumexp and delta
shared float sh_delta[BC];
#endif

uvec4 load8(uint64_t base, int64_t off, int64_t s_row, int64_t s_col, int64_t rows, int64_t cols,
            int64_t row, uint c8) {
  if (row >= rows) return uvec4(0);
  if (VEC) {
    if (int64_t(c8) >= cols) return uvec4(0);
    return PV4(base + uint64_t(off + row * s_row + int64_t(c8)) * 2ul).v;
  }
  uint h[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) {
    const int64_t c = int64_t(c8 + e);
    h[e] = c < cols ? uint(PU16(base + uint64_t(off + row * s_row + c * s_col) * 2ul).v) : 0u;
  }
  return uvec4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16));
}

// A matrix of one (batch, head): element (row, col) at base[off + row * s_row + col * s_col].
struct Operand {
  uint64_t base;
  int64_t off, s_row, s_col, rows, cols;
};

#define OPERAND(ptr, st, b, h, nrows, ncols) \
  Operand(ptr, (b) * st[0] + (h) * st[1], st[2], st[3], nrows, ncols)

// Rows [row0, row0 + nrows) of A into sh_kv at `at`, `vecs` vectors per row, `ld` apart.
void stage(Operand A, int64_t row0, uint nrows, uint vecs, uint ld, uint at) {
  for (uint v = gl_LocalInvocationIndex; v < nrows * vecs; v += THREADS) {
    const uint r = v / vecs, c8 = (v % vecs) * 8;
    sh_kv[at + r * ld + c8 / 8] =
        load8(A.base, A.off, A.s_row, A.s_col, A.rows, A.cols, row0 + int64_t(r), c8);
  }
}

void main() {
  AttentionParams p = pc.p;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const int64_t L = p.q_len, S = p.kv_len, E = p.head_dim, EV = p.v_head_dim;
  const int64_t group = p.heads / p.kv_heads;
  const bool causal = p.causal != 0u, dropout = p.dropout != 0u;
  const bool no_mask = p.mask_dtype == VKML_ATTN_MASK_NONE;
  const uint bx = causal ? gl_NumWorkGroups.x - 1u - gl_WorkGroupID.x : gl_WorkGroupID.x;
  const int64_t row0 = int64_t(bx) * BR, sg_row0 = row0 + int64_t(sg * 16);
  const uint s_base = sg * 16 * SLD, w_base = sg * 16 * PLD;
#ifdef ROWS_ARE_QUERIES
  const int64_t pairs = p.batch * p.heads, nrows = L, ncols = S;
#else
  const int64_t pairs = p.batch * p.kv_heads, nrows = S, ncols = L;
#endif

  for (int64_t bh = int64_t(gl_WorkGroupID.y); bh < pairs; bh += int64_t(gl_NumWorkGroups.y)) {
#ifdef ROWS_ARE_QUERIES
    const int64_t b = bh / p.heads, h0 = bh % p.heads, hk = h0 / group;
    const int64_t h_first = h0, h_last = h0 + 1;
    Operand X = OPERAND(p.q, p.q_strides, b, h0, L, E);
    Operand Y = OPERAND(p.dout, p.dout_strides, b, h0, L, EV);
#else
    const int64_t b = bh / p.kv_heads, hk = bh % p.kv_heads;
    const int64_t h_first = hk * group, h_last = (hk + 1) * group;
    Operand X = OPERAND(p.k, p.k_strides, b, hk, S, E);
    Operand Y = OPERAND(p.v, p.v_strides, b, hk, S, EV);
#endif
    // X (and Y) of this subgroup's rows as A operands, staged through sh_kv.
    coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> xa[D / 16];
    barrier();  // the previous pair's reads of sh_kv are done
    stage(X, row0, BR, D8, XLD, 0);
    barrier();
    [[unroll]] for (uint i = 0; i < D / 16; ++i) {
      coopMatLoad(xa[i], sh_kv, sg * 16 * XLD + i * 2, XLD, gl_CooperativeMatrixLayoutRowMajor);
    }
#ifdef HAS_DP
    coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ya[DV / 16];
    barrier();
    stage(Y, row0, BR, DV8, YLD, 0);
    barrier();
    [[unroll]] for (uint i = 0; i < DV / 16; ++i) {
      coopMatLoad(ya[i], sh_kv, sg * 16 * YLD + i * 2, YLD, gl_CooperativeMatrixLayoutRowMajor);
    }
#endif
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[OUT_COLS / 16];
    [[unroll]] for (uint i = 0; i < OUT_COLS / 16; ++i) {
      acc[i] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }
#ifdef ROWS_ARE_QUERIES
    // Each lane's rows' logsumexp and delta (rows lane % 16, the row handled below).
    const int64_t my_row = sg_row0 + int64_t(lane % 16);
    float lse_r = 0.0, delta_r = 0.0;
    if (my_row < L) {
      lse_r = PF32(p.lse + uint64_t(bh * L + my_row) * 4ul).v;
      delta_r = PF32(p.delta + uint64_t(bh * L + my_row) * 4ul).v;
    }
    if (lse_r == AT_NEG_INF) lse_r = 0.0;  // every key hidden: scores are -inf, P = 0
#endif

    for (int64_t h = h_first; h < h_last; ++h) {
#ifdef ROWS_ARE_QUERIES
      Operand T1 = OPERAND(p.k, p.k_strides, b, hk, S, E);
      Operand T2 = OPERAND(p.v, p.v_strides, b, hk, S, EV);
      const int64_t j_begin = 0;
      const int64_t j_stop = causal ? min(S, row0 + int64_t(BR)) : S;
#else
      Operand T1 = OPERAND(p.q, p.q_strides, b, h, L, E);
      Operand T2 = OPERAND(p.dout, p.dout_strides, b, h, L, EV);
      const int64_t lse_base = (b * p.heads + h) * L;
      // Causal: queries before the block's first key see none of its keys.
      const int64_t j_begin = causal ? min(row0, L) : 0;
      const int64_t j_stop = L;
#endif
      for (int64_t j0 = j_begin; j0 < j_stop; j0 += BC) {
        barrier();  // the previous tile's reads of shared memory are done
        stage(T1, j0, BC, D8, XLD, 0);
        stage(T2, j0, BC, DV8, YLD, T1_TILE);
#ifndef ROWS_ARE_QUERIES
        for (uint c = gl_LocalInvocationIndex; c < BC; c += THREADS) {
          const int64_t m = j0 + int64_t(c);
          float l = 0.0, d = 0.0;
          if (m < L) {
            l = PF32(p.lse + uint64_t(lse_base + m) * 4ul).v;
            d = PF32(p.delta + uint64_t(lse_base + m) * 4ul).v;
          }
          sh_lse[c] = l == AT_NEG_INF ? 0.0 : l;
          sh_delta[c] = d;
        }
#endif
        barrier();
#ifdef ROWS_ARE_QUERIES
        const bool visible = !causal || j0 <= sg_row0 + 15;
        const bool plain = no_mask && j0 + int64_t(BC) <= S && sg_row0 + 16 <= L &&
                           (!causal || j0 + int64_t(BC) - 1 <= sg_row0);
#else
        const bool visible = !causal || j0 + int64_t(BC) - 1 >= sg_row0;
        const bool plain = no_mask && j0 + int64_t(BC) <= L && sg_row0 + 16 <= S &&
                           (!causal || j0 >= sg_row0 + 15);
#endif
        if (!visible) continue;  // uniform in the subgroup; no workgroup barrier follows
        [[unroll]] for (uint nb = 0; nb < BC / 16; ++nb) {
          coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> sacc =
              coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
          [[unroll]] for (uint kd = 0; kd < D / 16; ++kd) {
            coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> tb;
            coopMatLoad(tb, sh_kv, nb * 16 * XLD + kd * 2, XLD,
                        gl_CooperativeMatrixLayoutColumnMajor);
            sacc = coopMatMulAdd(xa[kd], tb, sacc);
          }
          coopMatStore(sacc, sh_s, s_base + nb * 16, SLD, gl_CooperativeMatrixLayoutRowMajor);
#ifdef HAS_DP
          coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> dacc =
              coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
          [[unroll]] for (uint kd = 0; kd < DV / 16; ++kd) {
            coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> tb;
            coopMatLoad(tb, sh_kv, T1_TILE + nb * 16 * YLD + kd * 2, YLD,
                        gl_CooperativeMatrixLayoutColumnMajor);
            dacc = coopMatMulAdd(ya[kd], tb, dacc);
          }
          coopMatStore(dacc, sh_d, s_base + nb * 16, SLD, gl_CooperativeMatrixLayoutRowMajor);
#endif
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();

        // The weights: element (r, c) of the subgroup's 16 x BC block.
        for (uint e = lane; e < 16 * BC; e += SG) {
          const uint r = e / BC, c = e % BC;
#ifdef ROWS_ARE_QUERIES
          const int64_t m = sg_row0 + int64_t(r), n = j0 + int64_t(c);
          const float lse_m = subgroupShuffle(lse_r, r), delta_m = subgroupShuffle(delta_r, r);
#else
          const int64_t m = j0 + int64_t(c), n = sg_row0 + int64_t(r);
          const float lse_m = sh_lse[c], delta_m = sh_delta[c];
#endif
          const float dot = sh_s[s_base + r * SLD + c];
          const float x = plain ? dot * p.scale : at_logit(p, b, h, m, n, dot);
          const float pr = exp(x - lse_m);
          const bool keep = !dropout || at_keep(p, b, h, m, n);
#ifdef FLASH_DV
          const float w = keep ? pr * (dropout ? p.keep_scale : 1.0) : 0.0;
#else
          float dp = sh_d[s_base + r * SLD + c];
          if (dropout) dp = keep ? dp * p.keep_scale : 0.0;
          const float w = pr * (dp - delta_m) * p.scale;
#endif
          sh_w[w_base + r * PLD + c] = FLOAT_TO_ELEM(w);
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();

        // acc += W T1 (dq, dk) or W T2 (dv).
        [[unroll]] for (uint kb = 0; kb < BC / 16; ++kb) {
          coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> wa;
          coopMatLoad(wa, sh_w, w_base + kb * 16, PLD, gl_CooperativeMatrixLayoutRowMajor);
          [[unroll]] for (uint i = 0; i < OUT_COLS / 16; ++i) {
            coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> tb;
#ifdef FLASH_DV
            coopMatLoad(tb, sh_kv, T1_TILE + kb * 16 * YLD + i * 2, YLD,
                        gl_CooperativeMatrixLayoutRowMajor);
#else
            coopMatLoad(tb, sh_kv, kb * 16 * XLD + i * 2, XLD, gl_CooperativeMatrixLayoutRowMajor);
#endif
            acc[i] = coopMatMulAdd(wa, tb, acc[i]);
          }
        }
        subgroupBarrier();  // sh_s, sh_d and sh_w are rewritten by the next tile
      }
    }

    // Epilogue: 16x16 blocks through this subgroup's part of sh_s.
#ifdef ROWS_ARE_QUERIES
    Operand G = OPERAND(p.g, p.g_strides, b, h0, L, E);
#elif defined(FLASH_DK)
    Operand G = OPERAND(p.g, p.g_strides, b, hk, S, E);
#else
    Operand G = OPERAND(p.g, p.g_strides, b, hk, S, EV);
#endif
    [[unroll]] for (uint i = 0; i < OUT_COLS / 16; ++i) {
      subgroupBarrier();
      coopMatStore(acc[i], sh_s, s_base, 16, gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = lane; e < 256; e += SG) {
        const int64_t row = sg_row0 + int64_t(e / 16), col = int64_t(i * 16 + e % 16);
        if (row < G.rows && col < G.cols) {
          at_store(G.base, G.off + row * G.s_row + col * G.s_col, p.dtype, sh_s[s_base + e]);
        }
      }
    }
  }
}
