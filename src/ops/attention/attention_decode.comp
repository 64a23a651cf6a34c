#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// Split-KV attention for a few queries against many keys (LLM decoding), memory-bound on K and V.
// DECODE_SPLIT: workgroup (split x, pair y, row block z) reads keys [x * split_keys, ...) of one
//   (batch, key head) once for RB query rows: every query head of the key head's group and every
//   query, so grouped-query heads share each K/V load. Tiles of T keys, one per thread: the
//   thread's dot products over staged chunks of DC key columns, an online softmax per row (row
//   maxima by subgroup reductions, any subgroup size), then P V with threads along the value
//   columns (coalesced), 4 columns each, and the keys dealt out among partitions of them. Rows of
//   unit column stride and 4-aligned are read 4 elements at a time.
// DECODE_REDUCE: one workgroup per output row combines the splits' (max, sum, output) into the
//   output and the logsumexp.
// Masks, top-left causal alignment and dropout draws follow attention_common.glsl.
#include "vkml_common.glsl"
#include "attention_params.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint RB = 16;   // query rows per workgroup
layout(constant_id = 2) const uint DC = 32;   // key columns per staged chunk
layout(constant_id = 3) const uint NSG = 32;  // most subgroups one workgroup can hold
layout(push_constant) uniform Push { AttentionDecodeParams dp; } pc;

#include "attention_common.glsl"

const uint T = gl_WorkGroupSize.x;  // at least 64: 4 columns per thread cover 256

layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer PF16x4 { f16vec4 v; };
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer PU16x4 { u16vec4 v; };
layout(buffer_reference, scalar, buffer_reference_align = 16) readonly buffer PF32x4 { vec4 v; };

// Elements i .. i + 3 (i a multiple of 4, the address aligned to them).
vec4 at_load4(uint64_t base, int64_t i, uint dt) {
  if (dt == AT_F16) return vec4(PF16x4(base + uint64_t(i) * 2ul).v);
  if (dt == AT_BF16) {
    const u16vec4 b = PU16x4(base + uint64_t(i) * 2ul).v;
    return vec4(bf16_to_float(b.x), bf16_to_float(b.y), bf16_to_float(b.z), bf16_to_float(b.w));
  }
  return PF32x4(base + uint64_t(i) * 4ul).v;
}

#ifdef DECODE_SPLIT
const uint BK = T;  // keys per tile
const uint LDK = DC + 1;
shared float sh_q[RB * DC];
// The staged key chunk [key][column]; at the end, one row's outputs of every thread [thread][4].
shared float sh_k[BK * LDK];
shared float sh_p[RB * BK];  // the tile's weights [row][key]
shared float sh_red[RB * NSG];

float s[RB];                // scores of the thread's key
float m_run[RB];            // running row maxima (the same in every thread)
float l_part[RB];           // the thread's share of the row sums, scaled to m_run
float acc[RB * 4];          // unnormalised outputs of the thread's 4 columns, this partition's keys

// Max (take_max) or sum over the workgroup of each row's value v[r], in place.
void rows_reduce(inout float v[RB], bool take_max) {
  [[unroll]] for (uint r = 0; r < RB; ++r) {
    const float x = take_max ? subgroupMax(v[r]) : subgroupAdd(v[r]);
    if (subgroupElect()) sh_red[r * NSG + gl_SubgroupID] = x;
  }
  barrier();
  [[unroll]] for (uint r = 0; r < RB; ++r) {
    float x = sh_red[r * NSG];
    for (uint g = 1; g < gl_NumSubgroups; ++g) {
      const float y = sh_red[r * NSG + g];
      x = take_max ? max(x, y) : x + y;
    }
    v[r] = x;
  }
  barrier();
}

void main() {
  AttentionDecodeParams dp = pc.dp;
  AttentionParams p = AttentionParams(dp.attn);
  const uint dt = p.dtype, t = gl_LocalInvocationIndex;
  const int64_t L = p.q_len, S = p.kv_len, E = p.head_dim, EV = p.v_head_dim;
  const int64_t group = p.heads / p.kv_heads, pairs = p.batch * p.kv_heads;
  const int64_t i0 = int64_t(gl_WorkGroupID.z) * int64_t(RB);
  const int64_t nr = min(int64_t(RB), dp.rows - i0);
  const int64_t split = int64_t(gl_WorkGroupID.x);
  const int64_t k_begin = split * dp.split_keys;
  // Top-left causal: query m sees keys n <= m, so keys from q_len on are hidden from all.
  const int64_t k_end = min(min(S, k_begin + dp.split_keys), p.causal != 0u ? L : S);
  // Value columns: cv threads along a row (a power of two, 4 * cv >= EV), each with 4 columns:
  // 4 * lane + a when V is read 4 at a time, else lane + a * cv; kp partitions of the keys.
  uint cv = 1;
  while (cv < T && int64_t(4 * cv) < EV) cv *= 2;
  const uint kp = T / cv, part = t / cv, lane = t % cv;
  const bool vec_v = dp.vec_v != 0u, vec_k = dp.vec_k != 0u;
  for (int64_t pair = int64_t(gl_WorkGroupID.y); pair < pairs;
       pair += int64_t(gl_NumWorkGroups.y)) {
    const int64_t b = pair / p.kv_heads, hk = pair % p.kv_heads;
    const int64_t k_off = b * p.k_strides[0] + hk * p.k_strides[1];
    const int64_t v_off = b * p.v_strides[0] + hk * p.v_strides[1];
    [[unroll]] for (uint r = 0; r < RB; ++r) {
      m_run[r] = AT_NEG_INF;
      l_part[r] = 0.0;
    }
    [[unroll]] for (uint a = 0; a < RB * 4; ++a) acc[a] = 0.0;
    for (int64_t j0 = k_begin; j0 < k_end; j0 += int64_t(BK)) {
      [[unroll]] for (uint r = 0; r < RB; ++r) s[r] = 0.0;
      for (int64_t c0 = 0; c0 < E; c0 += int64_t(DC)) {
        for (uint i = t; i < RB * DC; i += T) {
          const int64_t row = i0 + int64_t(i / DC), c = c0 + int64_t(i % DC);
          float x = 0.0;
          if (int64_t(i / DC) < nr && c < E) {
            const int64_t h = hk * group + row / L, m = row % L;
            x = at_load(p.q, b * p.q_strides[0] + h * p.q_strides[1] + m * p.q_strides[2] +
                                 c * p.q_strides[3], dt);
          }
          sh_q[i] = x;
        }
        if (vec_k) {
          [[unroll]] for (uint it = 0; it < DC / 4; ++it) {  // BK * DC / 4 loads over T threads
            const uint i = t + it * T, j = i / (DC / 4), e4 = 4 * (i % (DC / 4));
            const int64_t n = j0 + int64_t(j), c = c0 + int64_t(e4);
            vec4 x = vec4(0.0);
            if (n < k_end && c < E) x = at_load4(p.k, k_off + n * p.k_strides[2] + c, dt);
            [[unroll]] for (uint u = 0; u < 4; ++u) sh_k[j * LDK + e4 + u] = x[u];
          }
        } else {
          [[unroll]] for (uint it = 0; it < DC; ++it) {  // BK * DC loads over T threads
            const uint i = t + it * T;
            const int64_t n = j0 + int64_t(i / DC), c = c0 + int64_t(i % DC);
            float x = 0.0;
            if (n < k_end && c < E) {
              x = at_load(p.k, k_off + n * p.k_strides[2] + c * p.k_strides[3], dt);
            }
            sh_k[(i / DC) * LDK + i % DC] = x;
          }
        }
        barrier();
        for (uint e = 0; e < DC; ++e) {
          const float kx = sh_k[t * LDK + e];
          [[unroll]] for (uint r = 0; r < RB; ++r) s[r] += sh_q[r * DC + e] * kx;
        }
        barrier();
      }
      const int64_t n = j0 + int64_t(t);
      float tmax[RB];
      [[unroll]] for (uint r = 0; r < RB; ++r) {
        const int64_t row = i0 + int64_t(r);
        s[r] = int64_t(r) < nr && n < k_end
                   ? at_logit(p, b, hk * group + row / L, row % L, n, s[r])
                   : AT_NEG_INF;
        tmax[r] = s[r];
      }
      rows_reduce(tmax, true);
      [[unroll]] for (uint r = 0; r < RB; ++r) {
        const float m_new = max(m_run[r], tmax[r]);
        const float base = m_new == AT_NEG_INF ? 0.0 : m_new;  // fully hidden so far: p = 0
        const float alpha = exp(m_run[r] - base);
        float pk = exp(s[r] - base);
        l_part[r] = l_part[r] * alpha + pk;
        if (p.dropout != 0u && pk != 0.0) {
          const int64_t row = i0 + int64_t(r);
          pk = at_keep(p, b, hk * group + row / L, row % L, n) ? pk * p.keep_scale : 0.0;
        }
        sh_p[r * BK + t] = pk;
        [[unroll]] for (uint a = 0; a < 4; ++a) acc[r * 4 + a] *= alpha;
        m_run[r] = m_new;
      }
      barrier();
      const int64_t n_end = min(int64_t(BK), k_end - j0);
      if (vec_v) {
        const bool live = int64_t(4 * lane) < EV;
        // Four keys per step: their loads are in flight together.
        for (uint j = part; int64_t(j) < n_end && live; j += 4 * kp) {
          vec4 vx[4];
          [[unroll]] for (uint u = 0; u < 4; ++u) {
            const int64_t n = j0 + int64_t(j + u * kp);
            vx[u] = int64_t(j + u * kp) < n_end
                        ? at_load4(p.v, v_off + n * p.v_strides[2] + int64_t(4 * lane), dt)
                        : vec4(0.0);
          }
          [[unroll]] for (uint u = 0; u < 4; ++u) {
            if (int64_t(j + u * kp) >= n_end) break;
            [[unroll]] for (uint r = 0; r < RB; ++r) {
              const float w = sh_p[r * BK + j + u * kp];
              [[unroll]] for (uint a = 0; a < 4; ++a) acc[r * 4 + a] += w * vx[u][a];
            }
          }
        }
      } else {
        for (uint j = part; int64_t(j) < n_end; j += kp) {
          const int64_t row_off = v_off + (j0 + int64_t(j)) * p.v_strides[2];
          [[unroll]] for (uint a = 0; a < 4; ++a) {
            const int64_t c = int64_t(lane + a * cv);
            if (c >= EV) break;
            const float vx = at_load(p.v, row_off + c * p.v_strides[3], dt);
            [[unroll]] for (uint r = 0; r < RB; ++r) acc[r * 4 + a] += sh_p[r * BK + j] * vx;
          }
        }
      }
      barrier();
    }
    rows_reduce(l_part, false);
    // Row by row, the key partitions' outputs meet in sh_k and partition 0 adds them up.
    [[unroll]] for (uint r = 0; r < RB; ++r) {
      [[unroll]] for (uint a = 0; a < 4; ++a) sh_k[t * 4 + a] = acc[r * 4 + a];
      barrier();
      if (part == 0u && int64_t(r) < nr) {
        float o[4];
        [[unroll]] for (uint a = 0; a < 4; ++a) o[a] = acc[r * 4 + a];
        for (uint q = 1; q < kp; ++q) {
          [[unroll]] for (uint a = 0; a < 4; ++a) o[a] += sh_k[(q * cv + lane) * 4 + a];
        }
        const int64_t row = i0 + int64_t(r), h = hk * group + row / L, m = row % L;
        const int64_t slot = (pair * dp.rows + row) * dp.splits + split;
        const float l_sum = l_part[r];
        const bool direct = dp.splits == 1;
        // A row with every key hidden gets 0, as PyTorch's math path (safe softmax) gives.
        const float inv = !direct ? 1.0 : l_sum == 0.0 ? 0.0 : 1.0 / l_sum;
        const int64_t o_off = b * p.o_strides[0] + h * p.o_strides[1] + m * p.o_strides[2];
        [[unroll]] for (uint a = 0; a < 4; ++a) {
          const int64_t c = vec_v ? int64_t(4 * lane + a) : int64_t(lane + a * cv);
          if (c >= EV) continue;
          if (direct) {
            at_store(p.o, o_off + c * p.o_strides[3], dt, o[a] * inv);
          } else {
            PF32(dp.part_o + uint64_t(slot * EV + c) * 4ul).v = o[a];
          }
        }
        if (lane == 0u) {
          if (direct) {
            PF32(p.lse + uint64_t((b * p.heads + h) * L + m) * 4ul).v =
                l_sum == 0.0 ? AT_NEG_INF : m_run[r] + log(l_sum);
          } else {
            PF32(dp.part_ml + uint64_t(slot) * 8ul).v = m_run[r];
            PF32(dp.part_ml + uint64_t(slot) * 8ul + 4ul).v = l_sum;
          }
        }
      }
      barrier();
    }
    barrier();  // sh_k is staged again for the next pair
  }
}
#endif

#ifdef DECODE_REDUCE
void main() {
  AttentionDecodeParams dp = pc.dp;
  AttentionParams p = AttentionParams(dp.attn);
  const int64_t L = p.q_len, H = p.heads, EV = p.v_head_dim, group = p.heads / p.kv_heads;
  const int64_t total = p.batch * H * L;
  const int64_t first = int64_t(gl_WorkGroupID.x) + int64_t(gl_WorkGroupID.y) *
                                                        int64_t(gl_NumWorkGroups.x);
  const int64_t step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y);
  for (int64_t out_row = first; out_row < total; out_row += step) {
    const int64_t b = out_row / (H * L), h = (out_row / L) % H, m = out_row % L;
    const int64_t pair = b * p.kv_heads + h / group, row = (h % group) * L + m;
    const int64_t slot0 = (pair * dp.rows + row) * dp.splits;
    float mx = AT_NEG_INF;
    for (int64_t x = 0; x < dp.splits; ++x) {
      mx = max(mx, PF32(dp.part_ml + uint64_t(slot0 + x) * 8ul).v);
    }
    const float base = mx == AT_NEG_INF ? 0.0 : mx;
    float l_sum = 0.0;
    for (int64_t x = 0; x < dp.splits; ++x) {
      const uint64_t at = uint64_t(slot0 + x) * 8ul;
      l_sum += PF32(dp.part_ml + at + 4ul).v * exp(PF32(dp.part_ml + at).v - base);
    }
    // A row with every key hidden gets 0, as PyTorch's math path (safe softmax) gives.
    const float inv = l_sum == 0.0 ? 0.0 : 1.0 / l_sum;
    const int64_t o_off = b * p.o_strides[0] + h * p.o_strides[1] + m * p.o_strides[2];
    for (int64_t c = int64_t(gl_LocalInvocationIndex); c < EV; c += int64_t(gl_WorkGroupSize.x)) {
      float o = 0.0;
      for (int64_t x = 0; x < dp.splits; ++x) {
        const float w = exp(PF32(dp.part_ml + uint64_t(slot0 + x) * 8ul).v - base);
        o += w * PF32(dp.part_o + uint64_t((slot0 + x) * EV + c) * 4ul).v;
      }
      at_store(p.o, o_off + c * p.o_strides[3], p.dtype, o * inv);
    }
    if (gl_LocalInvocationIndex == 0u) {
      PF32(p.lse + uint64_t(out_row) * 4ul).v = l_sum == 0.0 ? AT_NEG_INF : mx + log(l_sum);
    }
  }
}
#endif
