#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Fused attention, flash style: scores are computed tile by tile and never stored whole.
// A workgroup owns BR rows and XC output columns of one (batch, head); it walks the other
// sequence in tiles of BC, staging operands through shared memory in chunks of EC columns.
// Thread t owns row t / TPR and, of each tile, the scores j = t % TPR + k * TPR.
//   ATTN_FWD: rows are queries. Online softmax (running max and sum in float) over key tiles;
//             o = softmax(q k^T * scale + mask) [dropout] v, and lse = log-sum-exp per query.
//   ATTN_DQ:  rows are queries; dq = scale * dS k over key tiles.
//   ATTN_DK:  rows are keys; dk = scale * dS^T q over the query tiles of every query head
//             that reads this key head (no atomics: each workgroup owns its keys).
//   ATTN_DV:  rows are keys; dv = P_dropped^T dout likewise.
// The backward recomputes P = exp(score - lse) and dS = P * (dP - delta), dP = dout v^T with
// the forward's dropout draws regenerated from seed and offset.
#include "vkml_common.glsl"
#include "attention_params.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BR = 16;  // rows per workgroup
layout(constant_id = 2) const uint BC = 32;  // positions of the other sequence per tile
layout(constant_id = 3) const uint EC = 16;  // columns per staged chunk (a multiple of TPR)
layout(constant_id = 4) const uint XC = 64;  // output columns per workgroup (a multiple of EC)
layout(push_constant) uniform Push { AttentionParams p; } pc;

#include "attention_common.glsl"

const uint TPR = gl_WorkGroupSize.x / BR;  // threads per row
const uint NJ = BC / TPR;                  // scores per thread and tile
const uint NX = XC / TPR;                  // output columns per thread
const uint CPT = EC / TPR;                 // output columns per thread and chunk
const uint LD = EC + 1;                    // padded shared row: spreads banks

shared float sh_a[BR * LD];  // row operand chunk [row][col]
shared float sh_b[BC * LD];  // tile operand chunk [position][col]
shared float sh_w[BR * BC];  // scores of the tile, then its weights: P, dS ... [row][position]
#if defined(ATTN_DQ) || defined(ATTN_DK)
shared float sh_d[BR * BC];  // dout . v of the tile
#endif
shared float sh_red[gl_WorkGroupSize.x];

float acc[NX];  // owned output columns

// A matrix of one (batch, head): element (row, col) at base[off + row * s_row + col * s_col].
struct Operand {
  uint64_t base;
  int64_t off, s_row, s_col, rows, cols;
};

#define OPERAND(ptr, st, b, h, nrows, ncols) \
  Operand(ptr, (b) * st[0] + (h) * st[1], st[2], st[3], nrows, ncols)

void stage_a(Operand A, int64_t row0, int64_t c0, uint dt) {
  for (uint i = gl_LocalInvocationIndex; i < BR * EC; i += gl_WorkGroupSize.x) {
    int64_t row = row0 + int64_t(i / EC), col = c0 + int64_t(i % EC);
    float x = 0.0;
    if (row < A.rows && col < A.cols) {
      x = at_load(A.base, A.off + row * A.s_row + col * A.s_col, dt);
    }
    sh_a[(i / EC) * LD + i % EC] = x;
  }
}

void stage_b(Operand B, int64_t j0, int64_t c0, uint dt) {
  for (uint i = gl_LocalInvocationIndex; i < BC * EC; i += gl_WorkGroupSize.x) {
    int64_t row = j0 + int64_t(i / EC), col = c0 + int64_t(i % EC);
    float x = 0.0;
    if (row < B.rows && col < B.cols) {
      x = at_load(B.base, B.off + row * B.s_row + col * B.s_col, dt);
    }
    sh_b[(i / EC) * LD + i % EC] = x;
  }
}

// sh_w (or sh_d) of the owned entries = A[row0 + r] . B[j0 + j] over A's columns. Each thread
// later reads back only its own entries, so no barrier is needed before it does.
void dot_tile(Operand A, int64_t row0, Operand B, int64_t j0, bool into_d, uint dt) {
  const uint r = gl_LocalInvocationIndex / TPR, l = gl_LocalInvocationIndex % TPR;
  float t[NJ];
  [[unroll]] for (uint k = 0; k < NJ; ++k) t[k] = 0.0;
  for (int64_t c0 = 0; c0 < A.cols; c0 += EC) {
    stage_a(A, row0, c0, dt);
    stage_b(B, j0, c0, dt);
    barrier();
    for (uint e = 0; e < EC; ++e) {
      float a = sh_a[r * LD + e];
      [[unroll]] for (uint k = 0; k < NJ; ++k) t[k] += a * sh_b[(l + k * TPR) * LD + e];
    }
    barrier();
  }
  [[unroll]] for (uint k = 0; k < NJ; ++k) {
#if defined(ATTN_DQ) || defined(ATTN_DK)
    if (into_d) {
      sh_d[r * BC + l + k * TPR] = t[k];
      continue;
    }
#endif
    sh_w[r * BC + l + k * TPR] = t[k];
  }
}

// acc += sh_w[r] . X[j0 + j][owned columns]; X's columns from xc0 on.
void accumulate(Operand X, int64_t j0, int64_t xc0, uint dt) {
  const uint r = gl_LocalInvocationIndex / TPR, l = gl_LocalInvocationIndex % TPR;
  [[unroll]] for (uint cb = 0; cb < XC / EC; ++cb) {
    if (xc0 + int64_t(cb * EC) >= X.cols) break;  // uniform: the block is past X's columns
    stage_b(X, j0, xc0 + int64_t(cb * EC), dt);
    barrier();
    for (uint j = 0; j < BC; ++j) {
      float w = sh_w[r * BC + j];
      [[unroll]] for (uint kk = 0; kk < CPT; ++kk) {
        acc[cb * CPT + kk] += w * sh_b[j * LD + l + kk * TPR];
      }
    }
    barrier();
  }
}

// Column of acc[a] for this thread.
int64_t acc_column(int64_t xc0, uint a) {
  const uint l = gl_LocalInvocationIndex % TPR;
  return xc0 + int64_t((a / CPT) * EC + l + (a % CPT) * TPR);
}

float row_max(float v) {
  const uint r = gl_LocalInvocationIndex / TPR;
  sh_red[gl_LocalInvocationIndex] = v;
  barrier();
  float m = sh_red[r * TPR];
  for (uint i = 1; i < TPR; ++i) m = max(m, sh_red[r * TPR + i]);
  barrier();
  return m;
}

float row_sum(float v) {
  const uint r = gl_LocalInvocationIndex / TPR;
  sh_red[gl_LocalInvocationIndex] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0; i < TPR; ++i) s += sh_red[r * TPR + i];
  barrier();
  return s;
}

void store_acc(Operand G, int64_t row, int64_t xc0, float factor, uint dt) {
  if (row >= G.rows) return;
  [[unroll]] for (uint a = 0; a < NX; ++a) {
    int64_t c = acc_column(xc0, a);
    if (c < G.cols) at_store(G.base, G.off + row * G.s_row + c * G.s_col, dt, acc[a] * factor);
  }
}

void main() {
  AttentionParams p = pc.p;
  const uint dt = p.dtype;
  const uint r = gl_LocalInvocationIndex / TPR, l = gl_LocalInvocationIndex % TPR;
  const int64_t row0 = int64_t(gl_WorkGroupID.x) * BR, row = row0 + r;
  const int64_t xc0 = int64_t(gl_WorkGroupID.z) * XC;
  const int64_t L = p.q_len, S = p.kv_len, E = p.head_dim, EV = p.v_head_dim;
  const int64_t group = p.heads / p.kv_heads;
  const bool dropout = p.dropout != 0u;
#if defined(ATTN_FWD) || defined(ATTN_DQ)
  const int64_t pairs = p.batch * p.heads;
#else
  const int64_t pairs = p.batch * p.kv_heads;
#endif
  for (int64_t bh = int64_t(gl_WorkGroupID.y); bh < pairs; bh += int64_t(gl_NumWorkGroups.y)) {
    [[unroll]] for (uint a = 0; a < NX; ++a) acc[a] = 0.0;
#if defined(ATTN_FWD) || defined(ATTN_DQ)
    const int64_t b = bh / p.heads, h = bh % p.heads, hk = h / group;
    Operand Q = OPERAND(p.q, p.q_strides, b, h, L, E);
    Operand K = OPERAND(p.k, p.k_strides, b, hk, S, E);
    Operand V = OPERAND(p.v, p.v_strides, b, hk, S, EV);
    // Causal: keys past the block's last query are hidden from all of its rows.
    const int64_t j_end = p.causal != 0u ? min(S, row0 + int64_t(BR)) : S;
#endif
#ifdef ATTN_FWD
    float m_run = AT_NEG_INF, l_part = 0.0;
    for (int64_t j0 = 0; j0 < j_end; j0 += BC) {
      dot_tile(Q, row0, K, j0, false, dt);
      float tmax = AT_NEG_INF;
      for (uint k = 0; k < NJ; ++k) {
        const uint i = r * BC + l + k * TPR;
        sh_w[i] = at_logit(p, b, h, row, j0 + int64_t(l + k * TPR), sh_w[i]);
        tmax = max(tmax, sh_w[i]);
      }
      const float m_new = max(m_run, row_max(tmax));
      const float base = m_new == AT_NEG_INF ? 0.0 : m_new;  // fully hidden so far: p = 0
      const float alpha = exp(m_run - base);
      l_part *= alpha;
      [[unroll]] for (uint a = 0; a < NX; ++a) acc[a] *= alpha;
      for (uint k = 0; k < NJ; ++k) {
        const uint i = r * BC + l + k * TPR;
        float pk = exp(sh_w[i] - base);
        l_part += pk;
        if (dropout) {
          pk = at_keep(p, b, h, row, j0 + int64_t(l + k * TPR)) ? pk * p.keep_scale : 0.0;
        }
        sh_w[i] = pk;
      }
      accumulate(V, j0, xc0, dt);
      m_run = m_new;
    }
    const float l_sum = row_sum(l_part);
    // A row with every key hidden gets 0, as PyTorch's math path (safe softmax) gives.
    const float inv_sum = l_sum == 0.0 ? 0.0 : 1.0 / l_sum;
    store_acc(OPERAND(p.o, p.o_strides, b, h, L, EV), row, xc0, inv_sum, dt);
    if (gl_WorkGroupID.z == 0u && l == 0u && row < L) {
      PF32(p.lse + uint64_t(bh * L + row) * 4ul).v = l_sum == 0.0 ? AT_NEG_INF : m_run + log(l_sum);
    }
#elif defined(ATTN_DQ)
    Operand DO = OPERAND(p.dout, p.dout_strides, b, h, L, EV);
    float lse_m = 0.0, delta_m = 0.0;
    if (row < L) {
      lse_m = PF32(p.lse + uint64_t(bh * L + row) * 4ul).v;
      delta_m = PF32(p.delta + uint64_t(bh * L + row) * 4ul).v;
    }
    if (lse_m == AT_NEG_INF) lse_m = 0.0;  // every key hidden: scores are -inf, P = 0
    for (int64_t j0 = 0; j0 < j_end; j0 += BC) {
      dot_tile(Q, row0, K, j0, false, dt);
      dot_tile(DO, row0, V, j0, true, dt);
      for (uint k = 0; k < NJ; ++k) {
        const uint i = r * BC + l + k * TPR;
        const int64_t n = j0 + int64_t(l + k * TPR);
        float pk = exp(at_logit(p, b, h, row, n, sh_w[i]) - lse_m);
        float dp = sh_d[i];
        if (dropout) dp = at_keep(p, b, h, row, n) ? dp * p.keep_scale : 0.0;
        sh_w[i] = pk * (dp - delta_m) * p.scale;
      }
      accumulate(K, j0, xc0, dt);
    }
    store_acc(OPERAND(p.g, p.g_strides, b, h, L, E), row, xc0, 1.0, dt);
#else
    // Rows are keys of kv head hk; the tiles walk the queries of every head in its group.
    const int64_t b = bh / p.kv_heads, hk = bh % p.kv_heads;
    Operand K = OPERAND(p.k, p.k_strides, b, hk, S, E);
    Operand V = OPERAND(p.v, p.v_strides, b, hk, S, EV);
    // Causal: queries before the block's first key see none of its keys.
    const int64_t j_start = p.causal != 0u ? min(row0, L) : 0;
    for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
      Operand Q = OPERAND(p.q, p.q_strides, b, h, L, E);
      Operand DO = OPERAND(p.dout, p.dout_strides, b, h, L, EV);
      const int64_t lse_base = (b * p.heads + h) * L;
      for (int64_t j0 = j_start; j0 < L; j0 += BC) {
        dot_tile(K, row0, Q, j0, false, dt);
#ifdef ATTN_DK
        dot_tile(V, row0, DO, j0, true, dt);
#endif
        for (uint k = 0; k < NJ; ++k) {
          const uint i = r * BC + l + k * TPR;
          const int64_t m = j0 + int64_t(l + k * TPR);
          float lse_m = 0.0, delta_m = 0.0;
          if (m < L) {
            lse_m = PF32(p.lse + uint64_t(lse_base + m) * 4ul).v;
            delta_m = PF32(p.delta + uint64_t(lse_base + m) * 4ul).v;
          }
          if (lse_m == AT_NEG_INF) lse_m = 0.0;
          const float pk = exp(at_logit(p, b, h, m, row, sh_w[i]) - lse_m);
          const bool keep = !dropout || at_keep(p, b, h, m, row);
#ifdef ATTN_DK
          const float dp = dropout ? (keep ? sh_d[i] * p.keep_scale : 0.0) : sh_d[i];
          sh_w[i] = pk * (dp - delta_m) * p.scale;
#else
          sh_w[i] = dropout ? (keep ? pk * p.keep_scale : 0.0) : pk;
#endif
        }
#ifdef ATTN_DK
        accumulate(Q, j0, xc0, dt);
#else
        accumulate(DO, j0, xc0, dt);
#endif
      }
    }
#ifdef ATTN_DK
    store_acc(OPERAND(p.g, p.g_strides, b, hk, S, E), row, xc0, 1.0, dt);
#else
    store_acc(OPERAND(p.g, p.g_strides, b, hk, S, EV), row, xc0, 1.0, dt);
#endif
#endif
  }
}
