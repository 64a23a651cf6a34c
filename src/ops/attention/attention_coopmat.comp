#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#if defined(IN_BF16)
#extension GL_EXT_bfloat16 : require
#endif
// Fused attention forward on cooperative matrices (VK_KHR_cooperative_matrix, subgroup scope,
// 16x16x16, fp32 accumulation) for fp16 / bf16 data. Each of NSG subgroups owns 16 queries; a
// workgroup stages key (and value) tiles of BC rows through shared memory with any strides.
// Two passes over the keys, so the output accumulators never need a per-row rescale (which
// cooperative matrices cannot express): pass 1 computes S = Q K^T tile by tile and keeps each
// row's running max and sum; pass 2 recomputes S, forms P = exp(S - max) / sum (with mask,
// causal rule and dropout as in attention.comp) in 16-bit and accumulates O += P V.
// Writes the same output and logsumexp as the ATTN_FWD kernel.
#include "vkml_common.glsl"
#include "attention_params.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint NSG = 4;   // subgroups per workgroup, 16 queries each
layout(constant_id = 2) const uint BC = 32;   // keys per tile (multiple of 16)
layout(constant_id = 3) const uint D = 64;    // head dim rounded up to 16
layout(constant_id = 4) const uint DV = 64;   // value head dim rounded up to 16
layout(constant_id = 5) const uint SG = 32;   // subgroup size
layout(push_constant) uniform Push { AttentionParams p; } pc;

#include "attention_common.glsl"

#if defined(IN_BF16)
#define ELEM bfloat16_t
#define BITS_TO_ELEM(u) uintBitsToBFloat16EXT(u)
#define FLOAT_TO_ELEM(x) uintBitsToBFloat16EXT(float_to_bf16(x))
#else
#define ELEM float16_t
#define BITS_TO_ELEM(u) uint16BitsToFloat16(u)
#define FLOAT_TO_ELEM(x) float16_t(x)
#endif

const uint BR = 16 * NSG;
const uint PAD = 8;  // elements: rows stay 16-byte aligned and shift banks
const uint KROWS = BR > BC ? BR : BC;  // the key buffer also stages the query block
const uint KLD = D + PAD, VLD = DV + PAD, PLD = BC + PAD;
const uint SLD = BC + 4;  // floats: 16-byte aligned rows; lanes reading a column hit 2 banks
const uint WI = SG > 16 ? SG : 16;  // row-statistics items per subgroup: row = w % 16
const uint IPL = WI / SG;           // items per lane
const uint PARTS = WI / 16;         // lanes sharing one row

shared ELEM sh_k[KROWS * KLD];
shared ELEM sh_v[BC * VLD];
shared float sh_s[NSG * 16 * SLD];  // scores of each subgroup's 16 x BC tile; output scratch
shared ELEM sh_p[NSG * 16 * PLD];
shared float sh_part[NSG * WI * 2];
shared float sh_stat[NSG * 16 * 2];  // per row: max, sum

// Stages rows [row0, row0 + nrows) x [0, cols) of a (rows x cols) matrix as ELEM, zero-padded.
void stage(bool into_v, uint64_t base, int64_t off, int64_t s_row, int64_t s_col, int64_t rows,
           int64_t cols, int64_t row0, uint nrows, uint width, uint ld) {
  for (uint i = gl_LocalInvocationIndex; i < nrows * width; i += gl_WorkGroupSize.x) {
    const uint r = i / width, c = i % width;
    const int64_t row = row0 + int64_t(r);
    uint16_t bits = uint16_t(0);
    if (row < rows && int64_t(c) < cols) {
      bits = PU16(base + uint64_t(off + row * s_row + int64_t(c) * s_col) * 2ul).v;
    }
    if (into_v) {
      sh_v[r * ld + c] = BITS_TO_ELEM(bits);
    } else {
      sh_k[r * ld + c] = BITS_TO_ELEM(bits);
    }
  }
}

void main() {
  AttentionParams p = pc.p;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const int64_t L = p.q_len, S = p.kv_len, E = p.head_dim, EV = p.v_head_dim;
  const int64_t group = p.heads / p.kv_heads;
  const int64_t row0 = int64_t(gl_WorkGroupID.x) * BR, sg_row0 = row0 + int64_t(sg * 16);
  const int64_t j_end = p.causal != 0u ? min(S, row0 + int64_t(BR)) : S;
  const bool dropout = p.dropout != 0u;
  for (int64_t bh = int64_t(gl_WorkGroupID.y); bh < p.batch * p.heads;
       bh += int64_t(gl_NumWorkGroups.y)) {
    const int64_t b = bh / p.heads, h = bh % p.heads, hk = h / group;
    const int64_t qo = b * p.q_strides[0] + h * p.q_strides[1];
    const int64_t ko = b * p.k_strides[0] + hk * p.k_strides[1];
    const int64_t vo = b * p.v_strides[0] + hk * p.v_strides[1];

    barrier();  // the previous pair's last reads of sh_k are done
    stage(false, p.q, qo, p.q_strides[2], p.q_strides[3], L, E, row0, BR, D, KLD);
    barrier();
    coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> qa[D / 16];
    [[unroll]] for (uint i = 0; i < D / 16; ++i) {
      coopMatLoad(qa[i], sh_k, sg * 16 * KLD + i * 16, KLD, gl_CooperativeMatrixLayoutRowMajor);
    }

    // S tile of this subgroup into sh_s (needs the key tile in sh_k).
    #define SCORES()                                                                         \
      [[unroll]] for (uint nb = 0; nb < BC / 16; ++nb) {                                      \
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> sacc =              \
            coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);           \
        [[unroll]] for (uint kd = 0; kd < D / 16; ++kd) {                                     \
          coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> kb;                          \
          coopMatLoad(kb, sh_k, nb * 16 * KLD + kd * 16, KLD,                                 \
                      gl_CooperativeMatrixLayoutColumnMajor);                                 \
          sacc = coopMatMulAdd(qa[kd], kb, sacc);                                             \
        }                                                                                     \
        coopMatStore(sacc, sh_s, sg * 16 * SLD + nb * 16, SLD,                                \
                     gl_CooperativeMatrixLayoutRowMajor);                                     \
      }                                                                                       \
      subgroupMemoryBarrierShared();                                                          \
      subgroupBarrier();

    // Pass 1: running max and sum per (row, part of the columns).
    float m_part[IPL], l_part[IPL];
    [[unroll]] for (uint t = 0; t < IPL; ++t) {
      m_part[t] = AT_NEG_INF;
      l_part[t] = 0.0;
    }
    for (int64_t j0 = 0; j0 < j_end; j0 += BC) {
      barrier();
      stage(false, p.k, ko, p.k_strides[2], p.k_strides[3], S, E, j0, BC, D, KLD);
      barrier();
      SCORES()
      [[unroll]] for (uint t = 0; t < IPL; ++t) {
        const uint w = lane + t * SG, r = w % 16, part = w / 16;
        for (uint c = part; c < BC; c += PARTS) {
          const float x =
              at_logit(p, b, h, sg_row0 + r, j0 + int64_t(c), sh_s[(sg * 16 + r) * SLD + c]);
          const float m_new = max(m_part[t], x);
          const float base = m_new == AT_NEG_INF ? 0.0 : m_new;
          l_part[t] = l_part[t] * exp(m_part[t] - base) + exp(x - base);
          m_part[t] = m_new;
        }
      }
      subgroupBarrier();  // sh_s is rewritten by the next tile
    }
    [[unroll]] for (uint t = 0; t < IPL; ++t) {
      const uint w = lane + t * SG;
      sh_part[(sg * WI + w) * 2] = m_part[t];
      sh_part[(sg * WI + w) * 2 + 1] = l_part[t];
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    if (lane < 16) {
      float m = AT_NEG_INF;
      for (uint q = 0; q < PARTS; ++q) m = max(m, sh_part[(sg * WI + q * 16 + lane) * 2]);
      const float base = m == AT_NEG_INF ? 0.0 : m;
      float l = 0.0;
      for (uint q = 0; q < PARTS; ++q) {
        const uint w = q * 16 + lane;
        l += sh_part[(sg * WI + w) * 2 + 1] * exp(sh_part[(sg * WI + w) * 2] - base);
      }
      sh_stat[(sg * 16 + lane) * 2] = base;
      sh_stat[(sg * 16 + lane) * 2 + 1] = l;
      const int64_t row = sg_row0 + int64_t(lane);
      if (row < L) {
        PF32(p.lse + uint64_t(bh * L + row) * 4ul).v = l == 0.0 ? AT_NEG_INF : m + log(l);
      }
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();

    // Pass 2: O = sum over tiles of P V with P already normalised.
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> oacc[DV / 16];
    [[unroll]] for (uint i = 0; i < DV / 16; ++i) {
      oacc[i] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }
    for (int64_t j0 = 0; j0 < j_end; j0 += BC) {
      barrier();
      stage(false, p.k, ko, p.k_strides[2], p.k_strides[3], S, E, j0, BC, D, KLD);
      stage(true, p.v, vo, p.v_strides[2], p.v_strides[3], S, EV, j0, BC, DV, VLD);
      barrier();
      SCORES()
      for (uint e = lane; e < 16 * BC; e += SG) {
        const uint r = e / BC, c = e % BC;
        const int64_t m = sg_row0 + int64_t(r), n = j0 + int64_t(c);
        const float l = sh_stat[(sg * 16 + r) * 2 + 1];
        float pr = exp(at_logit(p, b, h, m, n, sh_s[(sg * 16 + r) * SLD + c]) -
                       sh_stat[(sg * 16 + r) * 2]);
        pr = l == 0.0 ? 0.0 : pr / l;
        if (dropout) pr = at_keep(p, b, h, m, n) ? pr * p.keep_scale : 0.0;
        sh_p[(sg * 16 + r) * PLD + c] = FLOAT_TO_ELEM(pr);
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      [[unroll]] for (uint kb = 0; kb < BC / 16; ++kb) {
        coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> pa;
        coopMatLoad(pa, sh_p, sg * 16 * PLD + kb * 16, PLD, gl_CooperativeMatrixLayoutRowMajor);
        [[unroll]] for (uint i = 0; i < DV / 16; ++i) {
          coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> vb;
          coopMatLoad(vb, sh_v, kb * 16 * VLD + i * 16, VLD, gl_CooperativeMatrixLayoutRowMajor);
          oacc[i] = coopMatMulAdd(pa, vb, oacc[i]);
        }
      }
    }

    // Epilogue: 16x16 blocks through this subgroup's part of sh_s.
    const int64_t oo = b * p.o_strides[0] + h * p.o_strides[1];
    [[unroll]] for (uint i = 0; i < DV / 16; ++i) {
      subgroupBarrier();
      coopMatStore(oacc[i], sh_s, sg * 16 * SLD, 16, gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = lane; e < 256; e += SG) {
        const int64_t row = sg_row0 + int64_t(e / 16), col = int64_t(i * 16 + e % 16);
        if (row < L && col < EV) {
          at_store(p.o, oo + row * p.o_strides[2] + col * p.o_strides[3], p.dtype,
                   sh_s[sg * 16 * SLD + e]);
        }
      }
    }
  }
}
