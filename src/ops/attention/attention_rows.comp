#version 460
#extension GL_GOOGLE_include_directive : require
// Row-wise parts of the GEMM attention path. A workgroup handles wg / T rows at a time, T
// threads per row (T = row_threads, fewer for short rows, so that a row of ~200 keys does not
// leave most of a workgroup idle); blocks of rows are grid-strided. Each thread touches only its
// own elements, so the in-place fp32 updates need no barrier.
//   ROWS_FWD: scores -> logits (scale, causal, mask), row max and sum, lse, and the normalised
//             probabilities with the dropout draws applied (kept ones scaled by 1 / (1 - p));
//             two reads of the scores, one write of P.
//   ROWS_BWD: P = exp(logit - lse), dropout draws regenerated; writes P_dropped (for dV) and
//             dS = P * (dP - delta) with dP = dP_dropped * keep / (1 - p) (the scale goes to
//             the dQ / dK GEMMs' alpha).
// The draws and the masking rules are attention_common.glsl's, as in the fused kernels, so both
// paths drop the same elements.
#include "vkml_common.glsl"
#include "attention_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { AttentionRowsParams rp; } pc;

#include "attention_common.glsl"

shared float sh_red[gl_WorkGroupSize.x];

// Max (or sum) over the T threads of one row, whose values sit at sh_red[seg, seg + T).
float row_reduce(float v, bool take_max, uint seg, uint lane, uint T) {
  sh_red[seg + lane] = v;
  barrier();
  for (uint w = T / 2; w > 0; w /= 2) {
    if (lane < w) {
      const float o = sh_red[seg + lane + w];
      sh_red[seg + lane] = take_max ? max(sh_red[seg + lane], o) : sh_red[seg + lane] + o;
    }
    barrier();
  }
  const float r = sh_red[seg];
  barrier();
  return r;
}

void main() {
  AttentionRowsParams rp = pc.rp;
  AttentionParams p = AttentionParams(rp.attn);
  const int64_t L = p.q_len, S = p.kv_len;
  const int64_t group = p.heads / p.kv_heads;
  const bool dropout = p.dropout != 0u;
  const uint T = rp.row_threads, per_group = gl_WorkGroupSize.x / T;
  const uint lane = gl_LocalInvocationIndex % T, seg = gl_LocalInvocationIndex - lane;
  const int64_t first = int64_t(gl_WorkGroupID.x) + int64_t(gl_WorkGroupID.y) *
                                                        int64_t(gl_NumWorkGroups.x);
  const int64_t step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y);
  // The loop over blocks is uniform (barriers inside); rows past the end only join the barriers.
  for (int64_t block = first; block * int64_t(per_group) < rp.rows; block += step) {
    const int64_t r = block * int64_t(per_group) + int64_t(gl_LocalInvocationIndex / T);
    const bool live = r < rp.rows;
    const int64_t pair = r / L, m = r % L;
    const int64_t b = rp.b0 + pair / rp.chunk_heads;
    const int64_t h = (rp.hk0 + pair % rp.chunk_heads) * group + rp.group_index;
    const int64_t lse_at = (b * p.heads + h) * L + m;
    const uint64_t row = uint64_t(r * rp.ld);
    const int64_t n_end = live ? S : 0;
#ifdef ROWS_FWD
    // Pass 1: each thread's running max and sum over its keys (online softmax), then merged.
    float mx = AT_NEG_INF, sum = 0.0;
    for (int64_t n = int64_t(lane); n < n_end; n += int64_t(T)) {
      const float x = at_logit(p, b, h, m, n, PF32(rp.scores + (row + uint64_t(n)) * 4ul).v);
      const float m_new = max(mx, x);
      if (m_new != AT_NEG_INF) {
        sum = sum * exp(mx - m_new) + exp(x - m_new);
        mx = m_new;
      }
    }
    const float row_max = row_reduce(mx, true, seg, lane, T);
    sum = row_reduce(mx == AT_NEG_INF ? 0.0 : sum * exp(mx - row_max), false, seg, lane, T);
    const float base = row_max == AT_NEG_INF ? 0.0 : row_max;  // every key hidden: P = 0
    // A row with every key hidden gets 0, as PyTorch's math path (safe softmax) gives.
    const float inv = sum == 0.0 ? 0.0 : 1.0 / sum;
    // Pass 2: the logits again (the mask is cheaper to re-read than the scores to write back).
    for (int64_t n = int64_t(lane); n < n_end; n += int64_t(T)) {
      const float x = at_logit(p, b, h, m, n, PF32(rp.scores + (row + uint64_t(n)) * 4ul).v);
      float pk = exp(x - base) * inv;
      if (dropout) pk = at_keep(p, b, h, m, n) ? pk * p.keep_scale : 0.0;
      at_store(rp.prob, int64_t(row) + n, rp.out_dtype, pk);
    }
    if (live && lane == 0u) {
      PF32(p.lse + uint64_t(lse_at) * 4ul).v = sum == 0.0 ? AT_NEG_INF : row_max + log(sum);
    }
#else
    if (!live) continue;  // no barriers in the backward
    float lse_m = PF32(p.lse + uint64_t(lse_at) * 4ul).v;
    if (lse_m == AT_NEG_INF) lse_m = 0.0;  // every key hidden: scores are -inf, P = 0
    const float delta_m = rp.dscore != 0ul ? PF32(p.delta + uint64_t(lse_at) * 4ul).v : 0.0;
    for (int64_t n = int64_t(lane); n < n_end; n += int64_t(T)) {
      const uint64_t at = row + uint64_t(n);
      const float pk = exp(at_logit(p, b, h, m, n, PF32(rp.scores + at * 4ul).v) - lse_m);
      const bool keep = !dropout || at_keep(p, b, h, m, n);
      if (rp.dscore != 0ul) {
        float dp = PF32(rp.dprob + at * 4ul).v;
        if (dropout) dp = keep ? dp * p.keep_scale : 0.0;
        at_store(rp.dscore, int64_t(at), rp.out_dtype, pk * (dp - delta_m));
      }
      if (rp.prob != 0ul) {
        at_store(rp.prob, int64_t(at), rp.out_dtype, dropout ? (keep ? pk * p.keep_scale : 0.0) : pk);
      }
    }
#endif
  }
}
