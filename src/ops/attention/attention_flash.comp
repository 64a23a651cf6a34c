#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#if defined(IN_BF16)
#extension GL_EXT_bfloat16 : require
#endif
// Single-pass attention forward on cooperative matrices (VK_KHR_cooperative_matrix, subgroup
// scope, 16x16x16, fp32 accumulation) for fp16 / bf16 data, in the FlashAttention-2 order.
// Each of NSG subgroups owns QB blocks of 16 queries and keeps them in registers as A operands;
// the workgroup walks the keys in tiles of BC, staged through STAGES shared buffers (with two,
// the next tile's global loads are in flight while the current one is multiplied, and one
// barrier per tile separates them). Per tile and subgroup:
//   S = Q K^T into shared memory; four lanes per row read it, apply scale, mask, causal rule and
//   bounds, update the row's running max, and write P = exp(S - max) in 16 bits (dropout draws
//   as in attention.comp); the output accumulators are rescaled by exp(old max - new max),
//   expressed as an element-wise product with a 16x16 matrix whose row r holds row r's factor
//   (the component layout of a cooperative matrix is the driver's, so no lane can scale a row of
//   it directly); then O += P V.
// Causal tiles past a subgroup's last query are skipped, and the workgroup stops at its last
// query. The output is O / sum and the logsumexp, as the ATTN_FWD kernel writes them.
#include "vkml_common.glsl"
#include "attention_params.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint NSG = 4;     // subgroups per workgroup
layout(constant_id = 2) const uint QB = 1;      // 16-query blocks per subgroup
layout(constant_id = 3) const uint BC = 32;     // keys per tile (a multiple of 16)
layout(constant_id = 4) const uint D = 64;      // head dim rounded up to 16
layout(constant_id = 5) const uint DV = 64;     // value head dim rounded up to 16
layout(constant_id = 6) const uint SG = 32;     // subgroup size (16, 32 or 64)
layout(constant_id = 7) const uint STAGES = 2;  // shared key/value buffers (1 or 2)
// 16-byte loads: q, k and v have unit column strides, row and head strides and base addresses
// that are multiples of 8 elements, and head dims that are multiples of 8 (checked by the host).
layout(constant_id = 8) const bool VEC = true;
layout(push_constant) uniform Push { AttentionParams p; } pc;

#include "attention_common.glsl"

#if defined(IN_BF16)
#define ELEM bfloat16_t
#define FLOAT_TO_ELEM(x) uintBitsToBFloat16EXT(float_to_bf16(x))
#else
#define ELEM float16_t
#define FLOAT_TO_ELEM(x) float16_t(x)
#endif

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer PV4 { uvec4 v; };

const uint THREADS = NSG * SG;
const uint R = 16 * QB;            // queries per subgroup
const uint BR = R * NSG;           // queries per workgroup
const uint D8 = D / 8, DV8 = DV / 8;
const uint KLD = D8 + 1, VLD = DV8 + 1;  // shared rows in uvec4, one vector of padding
const uint K_TILE = BC * KLD, V_TILE = BC * VLD;
const uint STAGE = K_TILE + V_TILE;
const uint Q_VECS = BR * KLD;  // the query block is staged once per (batch, head) in stage memory
const uint KV_VECS = STAGES * STAGE > Q_VECS ? STAGES * STAGE : Q_VECS;
const uint K_LOADS = (BC * D8 + THREADS - 1) / THREADS;
const uint V_LOADS = (BC * DV8 + THREADS - 1) / THREADS;
const uint SLD = BC + 4;  // floats: 16-byte aligned rows; a row's four lanes and 8 rows hit 32 banks
const uint PLD = BC + 8;  // halves: 16-byte aligned rows
const uint LPR = 4;               // lanes per row in the softmax
const uint RPP = SG / LPR;        // rows per pass
const uint NPASS = R / RPP;       // passes over the subgroup's rows
const uint CPL = BC / LPR;        // columns per lane and row: c = part + LPR * k

shared uvec4 sh_kv[KV_VECS];
shared float sh_s[NSG * R * SLD];  // per subgroup: S, then the row factors, then output blocks
shared ELEM sh_p[NSG * R * PLD];

// 8 consecutive elements (row, c8..c8+7) of a (rows x cols) matrix; zero outside it.
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

void main() {
  AttentionParams p = pc.p;
  const uint tid = gl_LocalInvocationIndex;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const int64_t L = p.q_len, S = p.kv_len, E = p.head_dim, EV = p.v_head_dim;
  const int64_t group = p.heads / p.kv_heads;
  const bool causal = p.causal != 0u, dropout = p.dropout != 0u;
  const bool no_mask = p.mask_dtype == VKML_ATTN_MASK_NONE;
  // Causal blocks differ in work: the longest ones start first.
  const uint bx = causal ? gl_NumWorkGroups.x - 1u - gl_WorkGroupID.x : gl_WorkGroupID.x;
  const int64_t row0 = int64_t(bx) * BR, sg_row0 = row0 + int64_t(sg * R);
  const int64_t j_end = causal ? min(S, row0 + int64_t(BR)) : S;
  const uint nt = uint((j_end + BC - 1) / BC);
  const uint s_base = sg * R * SLD, p_base = sg * R * PLD;
  const uint part = lane % LPR, prow = lane / LPR;

  for (int64_t bh = int64_t(gl_WorkGroupID.y); bh < p.batch * p.heads;
       bh += int64_t(gl_NumWorkGroups.y)) {
    const int64_t b = bh / p.heads, h = bh % p.heads, hk = h / group;
    const int64_t qo = b * p.q_strides[0] + h * p.q_strides[1];
    const int64_t ko = b * p.k_strides[0] + hk * p.k_strides[1];
    const int64_t vo = b * p.v_strides[0] + hk * p.v_strides[1];

    barrier();  // the previous pair's reads of stage memory are done
    for (uint v = tid; v < BR * D8; v += THREADS) {
      const uint r = v / D8, c8 = (v % D8) * 8;
      sh_kv[r * KLD + c8 / 8] = load8(p.q, qo, p.q_strides[2], p.q_strides[3], L, E,
                                       row0 + int64_t(r), c8);
    }
    barrier();
    coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> qa[QB][D / 16];
    [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
      [[unroll]] for (uint i = 0; i < D / 16; ++i) {
        coopMatLoad(qa[qb][i], sh_kv, (sg * R + qb * 16) * KLD + i * 2, KLD,
                    gl_CooperativeMatrixLayoutRowMajor);
      }
    }
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> oacc[QB][DV / 16];
    [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
      [[unroll]] for (uint i = 0; i < DV / 16; ++i) {
        oacc[qb][i] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
      }
    }
    float m_run[NPASS], l_part[NPASS];
    [[unroll]] for (uint t = 0; t < NPASS; ++t) {
      m_run[t] = AT_NEG_INF;
      l_part[t] = 0.0;
    }

    uvec4 rk[K_LOADS];
    uvec4 rv[V_LOADS];
    // Global loads of key/value tile t into registers.
    #define FETCH(t)                                                                          \
      {                                                                                       \
        const int64_t j0_ = int64_t(t) * BC;                                                  \
        [[unroll]] for (uint l = 0; l < K_LOADS; ++l) {                                       \
          const uint v = tid + l * THREADS;                                                   \
          rk[l] = v < BC * D8 ? load8(p.k, ko, p.k_strides[2], p.k_strides[3], S, E,          \
                                      j0_ + int64_t(v / D8), (v % D8) * 8)                    \
                              : uvec4(0);                                                     \
        }                                                                                     \
        [[unroll]] for (uint l = 0; l < V_LOADS; ++l) {                                       \
          const uint v = tid + l * THREADS;                                                   \
          rv[l] = v < BC * DV8 ? load8(p.v, vo, p.v_strides[2], p.v_strides[3], S, EV,        \
                                       j0_ + int64_t(v / DV8), (v % DV8) * 8)                 \
                               : uvec4(0);                                                    \
        }                                                                                     \
      }
    #define STASH(stage)                                                                      \
      {                                                                                       \
        [[unroll]] for (uint l = 0; l < K_LOADS; ++l) {                                       \
          const uint v = tid + l * THREADS;                                                   \
          if (v < BC * D8) sh_kv[(stage) * STAGE + (v / D8) * KLD + v % D8] = rk[l];          \
        }                                                                                     \
        [[unroll]] for (uint l = 0; l < V_LOADS; ++l) {                                       \
          const uint v = tid + l * THREADS;                                                   \
          if (v < BC * DV8) {                                                                 \
            sh_kv[(stage) * STAGE + K_TILE + (v / DV8) * VLD + v % DV8] = rv[l];              \
          }                                                                                   \
        }                                                                                     \
      }

    barrier();  // every subgroup holds its queries: stage memory is free
    if (nt > 0) {
      FETCH(0);
      STASH(0);
    }
    barrier();
    for (uint t = 0; t < nt; ++t) {
      const uint cur = STAGES == 2 ? (t & 1u) : 0u;
      const bool more = t + 1 < nt;
      if (more) FETCH(t + 1);  // in flight while this tile is multiplied
      const int64_t j0 = int64_t(t) * BC;
      const uint k_sh = cur * STAGE, v_sh = cur * STAGE + K_TILE;
      // Causal: a tile whose first key is past this subgroup's last query is hidden from it.
      const bool visible = !causal || j0 <= sg_row0 + int64_t(R) - 1;
      if (visible) {
        // S = Q K^T of this subgroup's rows.
        [[unroll]] for (uint nb = 0; nb < BC / 16; ++nb) {
          coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> sacc[QB];
          [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
            sacc[qb] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
          }
          [[unroll]] for (uint kd = 0; kd < D / 16; ++kd) {
            coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> kb;
            coopMatLoad(kb, sh_kv, k_sh + nb * 16 * KLD + kd * 2, KLD,
                        gl_CooperativeMatrixLayoutColumnMajor);
            [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
              sacc[qb] = coopMatMulAdd(qa[qb][kd], kb, sacc[qb]);
            }
          }
          [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
            coopMatStore(sacc[qb], sh_s, s_base + qb * 16 * SLD + nb * 16, SLD,
                         gl_CooperativeMatrixLayoutRowMajor);
          }
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();

        // Online softmax: lanes 4r..4r+3 of a pass own row r, columns part + 4k.
        // Scores need no per-element rule where no mask applies, every key and query is in
        // range and (causal) every key of the tile precedes every query of the subgroup.
        const bool plain = no_mask && j0 + int64_t(BC) <= S && sg_row0 + int64_t(R) <= L &&
                           (!causal || j0 + int64_t(BC) - 1 <= sg_row0);
        float alpha[NPASS];
        [[unroll]] for (uint t2 = 0; t2 < NPASS; ++t2) {
          const uint r = t2 * RPP + prow;
          const int64_t m = sg_row0 + int64_t(r);
          float x[CPL];
          if (plain) {
            [[unroll]] for (uint k = 0; k < CPL; ++k) {
              x[k] = sh_s[s_base + r * SLD + part + LPR * k] * p.scale;
            }
          } else {
            [[unroll]] for (uint k = 0; k < CPL; ++k) {
              const uint c = part + LPR * k;
              x[k] = at_logit(p, b, h, m, j0 + int64_t(c), sh_s[s_base + r * SLD + c]);
            }
          }
          float tmax = AT_NEG_INF;
          [[unroll]] for (uint k = 0; k < CPL; ++k) tmax = max(tmax, x[k]);
          tmax = max(tmax, subgroupShuffleXor(tmax, 1u));
          tmax = max(tmax, subgroupShuffleXor(tmax, 2u));
          const float m_new = max(m_run[t2], tmax);
          const float base = m_new == AT_NEG_INF ? 0.0 : m_new;  // fully hidden so far: p = 0
          alpha[t2] = exp(m_run[t2] - base);
          float sum = 0.0;
          [[unroll]] for (uint k = 0; k < CPL; ++k) {
            const uint c = part + LPR * k;
            float pk = exp(x[k] - base);
            sum += pk;
            if (dropout) {
              pk = at_keep(p, b, h, m, j0 + int64_t(c)) ? pk * p.keep_scale : 0.0;
            }
            sh_p[p_base + r * PLD + c] = FLOAT_TO_ELEM(pk);
          }
          l_part[t2] = l_part[t2] * alpha[t2] + sum;
          m_run[t2] = m_new;
        }
        bool rescale = false;
        [[unroll]] for (uint t2 = 0; t2 < NPASS; ++t2) rescale = rescale || alpha[t2] != 1.0;
        rescale = subgroupAny(rescale);
        subgroupBarrier();  // every lane's reads of S are done: the factors overwrite it
        if (rescale) {
          // Row factors as QB 16x16 matrices (row r of block qb: alpha of row qb * 16 + r).
          [[unroll]] for (uint t2 = 0; t2 < NPASS; ++t2) {
            const uint r = t2 * RPP + prow;
            [[unroll]] for (uint c = part; c < 16; c += LPR) {
              sh_s[s_base + (r / 16) * 256 + (r % 16) * 16 + c] = alpha[t2];
            }
          }
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        if (rescale) {
          [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
            coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> f;
            coopMatLoad(f, sh_s, s_base + qb * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (uint i = 0; i < DV / 16; ++i) oacc[qb][i] = oacc[qb][i] * f;
          }
        }

        // O += P V.
        [[unroll]] for (uint kb = 0; kb < BC / 16; ++kb) {
          coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> pa[QB];
          [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
            coopMatLoad(pa[qb], sh_p, p_base + qb * 16 * PLD + kb * 16, PLD,
                        gl_CooperativeMatrixLayoutRowMajor);
          }
          [[unroll]] for (uint i = 0; i < DV / 16; ++i) {
            coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> vb;
            coopMatLoad(vb, sh_kv, v_sh + kb * 16 * VLD + i * 2, VLD,
                        gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
              oacc[qb][i] = coopMatMulAdd(pa[qb], vb, oacc[qb][i]);
            }
          }
        }
        subgroupBarrier();  // sh_s and sh_p are rewritten by the next tile
      }
      if (STAGES == 2) {
        if (more) STASH(cur ^ 1u);
        barrier();  // stage cur^1 written; stage cur free for the next writes
      } else {
        barrier();  // every subgroup is done with the tile
        if (more) STASH(0);
        barrier();
      }
    }

    // Epilogue: row sums over the four lanes, logsumexp, O / sum.
    const int64_t oo = b * p.o_strides[0] + h * p.o_strides[1];
    [[unroll]] for (uint t2 = 0; t2 < NPASS; ++t2) {
      const uint r = t2 * RPP + prow;
      float l = l_part[t2];
      l += subgroupShuffleXor(l, 1u);
      l += subgroupShuffleXor(l, 2u);
      // A row with every key hidden gets 0, as PyTorch's math path (safe softmax) gives.
      const float inv = l == 0.0 ? 0.0 : 1.0 / l;
      [[unroll]] for (uint c = part; c < 16; c += LPR) {
        sh_s[s_base + (r / 16) * 256 + (r % 16) * 16 + c] = inv;
      }
      const int64_t row = sg_row0 + int64_t(r);
      if (part == 0u && row < L) {
        PF32(p.lse + uint64_t(bh * L + row) * 4ul).v = l == 0.0 ? AT_NEG_INF : m_run[t2] + log(l);
      }
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
      coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> f;
      coopMatLoad(f, sh_s, s_base + qb * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
      [[unroll]] for (uint i = 0; i < DV / 16; ++i) oacc[qb][i] = oacc[qb][i] * f;
    }
    subgroupBarrier();  // the factors are read: the output blocks overwrite them
    [[unroll]] for (uint qb = 0; qb < QB; ++qb) {
      [[unroll]] for (uint i = 0; i < DV / 16; ++i) {
        coopMatStore(oacc[qb][i], sh_s, s_base, 16, gl_CooperativeMatrixLayoutRowMajor);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        for (uint e = lane; e < 256; e += SG) {
          const int64_t row = sg_row0 + int64_t(qb * 16 + e / 16), col = int64_t(i * 16 + e % 16);
          if (row < L && col < EV) {
            at_store(p.o, oo + row * p.o_strides[2] + col * p.o_strides[3], p.dtype, sh_s[s_base + e]);
          }
        }
        subgroupBarrier();  // the block is read: the next one overwrites it
      }
    }
  }
}
