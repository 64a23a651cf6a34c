#version 460
#extension GL_GOOGLE_include_directive : require
// Batch-norm fast path over a dense [outer, channels, inner] layout (see norm_bn_params.h), fp32
// math, 32-bit element indices (the host guarantees fewer than 2^31 elements). Stages (variants):
//   BN_PARTIAL  workgroup per (channel, chunk): forward sums of (x - shift) and (x - shift)^2
//               (shift: see channel_shift); backward sums of dy and dy * (x - mean)
//   BN_COMBINE  invocation per channel: adds its chunks in order (deterministic), writes the saved
//               statistics, running statistics or parameter grads, and the apply coefficients
//   BN_APPLY    invocation per element (or per four, 16-byte vector loads): the affine map
#include "vkml_common.glsl"
#include "norm_bn_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { NormBnParams p; } pc;

#include "nn_common.glsl"

#include "norm_vec4.glsl"

#ifdef BN_PARTIAL
shared vec4 bn_rows_sums[2][256];
#endif

bool ch_has(NormBnParams p, int s) { return p.ch_ptr[s] != 0ul; }
float ch_ld(NormBnParams p, int s, uint c) {
  return nn_load(p.ch_ptr[s], int64_t(c) * int64_t(p.ch_stride[s]), p.ch_dtype[s]);
}
void ch_st(NormBnParams p, int s, uint c, float v) {
  nn_store(p.ch_ptr[s], int64_t(c) * int64_t(p.ch_stride[s]), p.ch_dtype[s], v);
}
uint coef_base(NormBnParams p) { return (p.channels * p.chunks * 2u + 3u) & ~3u; }

// Element j (in [0, outer * inner)) of channel c.
uint channel_offset(NormBnParams p, uint c, uint j) {
  uint o = j / p.inner;
  return (o * p.channels + c) * p.inner + (j - o * p.inner);
}

// The forward's shift: the mean of the channel's first (up to) 16 elements, close enough to the
// channel mean that sum((x - shift)^2) - sum(x - shift)^2 / n does not cancel.
float channel_shift(NormBnParams p, uint c) {
  uint count = min(16u, p.outer * p.inner);
  float s = 0.0;
  for (uint j = 0u; j < count; ++j) {
    s += nn_load(p.x, int64_t(channel_offset(p, c, j)), p.x_dtype);
  }
  return s / float(count);
}

// The channel's mean used by the backward: saved (training) or running (eval).
float bwd_mean(NormBnParams p, uint c) {
  return (p.mode & BN_TRAINING) != 0u ? ch_ld(p, BN_MEAN, c) : ch_ld(p, BN_RMEAN, c);
}

void main() {
  NormBnParams p = pc.p;
  const uint lane = gl_LocalInvocationID.x, lanes = gl_WorkGroupSize.x;
  const bool backward = (p.mode & BN_BACKWARD) != 0u;
  const uint per_channel = p.outer * p.inner;
#if defined(BN_PARTIAL)
  if ((p.mode & BN_ROWS) != 0u) {
    // Rows of C contiguous channels: lane reads channels 4q..4q+3 of every subs-th row, so a
    // workgroup reads whole rows; the lanes of one quad are then added in order.
    const uint quads = p.channels / 4u, subs = lanes / quads;
    const uint q = lane % quads, sub = lane / quads;
    vec4 ref = vec4(0.0);
    for (uint e = 0u; e < 4u; ++e) {
      ref[e] = backward ? bwd_mean(p, 4u * q + e) : channel_shift(p, 4u * q + e);
    }
    for (uint g = uint(nn_group_id()); g < p.chunks; g += uint(nn_group_count())) {
      uint j0 = g * p.chunk_len, j1 = min(j0 + p.chunk_len, per_channel);
      vec4 s1 = vec4(0.0), s2 = vec4(0.0);
      for (uint o = j0 + sub; sub < subs && o < j1; o += subs) {
        vec4 d = ld4(p.x, o * p.channels + 4u * q, p.x_dtype) - ref;
        if (backward) {
          vec4 g4 = ld4(p.dy, o * p.channels + 4u * q, p.dy_dtype);
          s1 += g4;
          s2 += g4 * d;
        } else {
          s1 += d;
          s2 += d * d;
        }
      }
      bn_rows_sums[0][lane] = s1;
      bn_rows_sums[1][lane] = s2;
      barrier();
      if (lane < quads) {
        s1 = vec4(0.0);
        s2 = vec4(0.0);
        for (uint s = 0u; s < subs; ++s) {
          s1 += bn_rows_sums[0][s * quads + lane];
          s2 += bn_rows_sums[1][s * quads + lane];
        }
        for (uint e = 0u; e < 4u; ++e) {
          uint64_t at = p.scratch + uint64_t((4u * lane + e) * p.chunks + g) * 8ul;
          PF32(at).v = s1[e];
          PF32(at + 4ul).v = s2[e];
        }
      }
      barrier();
    }
    return;
  }
  const bool vec = (p.mode & BN_VEC4) != 0u && p.inner % 4u == 0u;
  for (int64_t g = nn_group_id(); g < int64_t(p.channels) * int64_t(p.chunks);
       g += nn_group_count()) {
    uint c = uint(g) / p.chunks, k = uint(g) % p.chunks;
    uint j0 = k * p.chunk_len, j1 = min(j0 + p.chunk_len, per_channel);
    float ref = backward ? bwd_mean(p, c) : channel_shift(p, c);
    float s1 = 0.0, s2 = 0.0;
    if (vec) {
      for (uint j = j0 + 4u * lane; j < j1; j += 4u * lanes) {
        uint off = channel_offset(p, c, j);
        vec4 d = ld4(p.x, off, p.x_dtype) - ref;
        if (backward) {
          vec4 g4 = ld4(p.dy, off, p.dy_dtype);
          s1 += (g4.x + g4.y) + (g4.z + g4.w);
          s2 += dot(g4, d);
        } else {
          s1 += (d.x + d.y) + (d.z + d.w);
          s2 += dot(d, d);
        }
      }
    } else {
      for (uint j = j0 + lane; j < j1; j += lanes) {
        uint off = channel_offset(p, c, j);
        float d = nn_load(p.x, int64_t(off), p.x_dtype) - ref;
        if (backward) {
          float gv = nn_load(p.dy, int64_t(off), p.dy_dtype);
          s1 += gv;
          s2 += gv * d;
        } else {
          s1 += d;
          s2 += d * d;
        }
      }
    }
    nn_wg_sum2(s1, s2);
    if (lane == 0u) {
      PF32(p.scratch + uint64_t(g) * 8ul).v = s1;
      PF32(p.scratch + uint64_t(g) * 8ul + 4ul).v = s2;
    }
  }
#elif defined(BN_COMBINE)
  for (uint c = uint(nn_group_id()) * lanes + lane; c < p.channels;
       c += uint(nn_group_count()) * lanes) {
    float s1 = 0.0, s2 = 0.0;
    for (uint k = 0u; k < p.chunks; ++k) {
      uint64_t at = p.scratch + uint64_t(c * p.chunks + k) * 8ul;
      s1 += PF32(at).v;
      s2 += PF32(at + 4ul).v;
    }
    const float n = float(per_channel);
    const bool training = (p.mode & BN_TRAINING) != 0u;
    float w = ch_has(p, BN_W) ? ch_ld(p, BN_W, c) : 1.0;
    float mean, rstd;
    vec4 coef;
    if (!backward) {
      if (training) {
        float shift = channel_shift(p, c);
        float d = s1 / n;
        float m2 = max(s2 - s1 * d, 0.0);
        mean = shift + d;
        rstd = 1.0 / sqrt(m2 / n + p.eps);
        if (ch_has(p, BN_MEAN)) ch_st(p, BN_MEAN, c, mean);
        if (ch_has(p, BN_RSTD)) ch_st(p, BN_RSTD, c, rstd);
        if ((p.mode & BN_UPDATE_RUNNING) != 0u) {
          // PyTorch's update: momentum * batch + (1 - momentum) * running, unbiased variance.
          float m = p.momentum;
          if (ch_has(p, BN_RMEAN)) {
            ch_st(p, BN_RMEAN, c, m * mean + (1.0 - m) * ch_ld(p, BN_RMEAN, c));
          }
          if (ch_has(p, BN_RVAR)) {
            float unbiased = m2 / float(per_channel - 1u);
            ch_st(p, BN_RVAR, c, m * unbiased + (1.0 - m) * ch_ld(p, BN_RVAR, c));
          }
        }
      } else {
        mean = ch_ld(p, BN_RMEAN, c);
        rstd = 1.0 / sqrt(ch_ld(p, BN_RVAR, c) + p.eps);
      }
      coef = vec4(rstd * w, 0.0, mean, ch_has(p, BN_B) ? ch_ld(p, BN_B, c) : 0.0);
    } else {
      mean = bwd_mean(p, c);
      rstd = training ? ch_ld(p, BN_RSTD, c) : 1.0 / sqrt(ch_ld(p, BN_RVAR, c) + p.eps);
      if (ch_has(p, BN_GW)) ch_st(p, BN_GW, c, s2 * rstd);
      if (ch_has(p, BN_GB)) ch_st(p, BN_GB, c, s1);
      if (training) {
        // dx = rstd * (w*dy - mean(w*dy) - xhat * mean(w*dy*xhat)), xhat = (x - mean) * rstd.
        float mean_wdy = w * s1 / n, mean_wdy_xhat = w * rstd * s2 / n;
        coef = vec4(rstd * w, -rstd * rstd * mean_wdy_xhat, mean, -rstd * mean_wdy);
      } else {
        coef = vec4(rstd * w, 0.0, 0.0, 0.0);
      }
    }
    NormVec4F32(p.scratch + uint64_t(coef_base(p) + 4u * c) * 4ul).v = coef;
  }
#else  // BN_APPLY
  const uint total = per_channel * p.channels;
  const bool read_x = !backward || (p.mode & BN_TRAINING) != 0u;
  const uint64_t coefs = p.scratch + uint64_t(coef_base(p)) * 4ul;
  const uint step = uint(nn_group_count()) * lanes;
  if ((p.mode & BN_VEC4) != 0u) {
    for (uint u = uint(nn_group_id()) * lanes + lane; u < total / 4u; u += step) {
      uint off = 4u * u;
      vec4 a, b, m, k;
      if (p.inner % 4u == 0u) {  // four elements of one channel
        vec4 cf = NormVec4F32(coefs + uint64_t((off / p.inner) % p.channels) * 16ul).v;
        a = vec4(cf.x), b = vec4(cf.y), m = vec4(cf.z), k = vec4(cf.w);
      } else {  // channels innermost: four consecutive channels
        uint c = off % p.channels;
        vec4 c0 = NormVec4F32(coefs + uint64_t(c) * 16ul).v;
        vec4 c1 = NormVec4F32(coefs + uint64_t(c + 1u) * 16ul).v;
        vec4 c2 = NormVec4F32(coefs + uint64_t(c + 2u) * 16ul).v;
        vec4 c3 = NormVec4F32(coefs + uint64_t(c + 3u) * 16ul).v;
        a = vec4(c0.x, c1.x, c2.x, c3.x), b = vec4(c0.y, c1.y, c2.y, c3.y);
        m = vec4(c0.z, c1.z, c2.z, c3.z), k = vec4(c0.w, c1.w, c2.w, c3.w);
      }
      vec4 x = read_x ? ld4(p.x, off, p.x_dtype) : vec4(0.0);
      vec4 r = backward ? a * ld4(p.dy, off, p.dy_dtype) + b * (x - m) + k : a * (x - m) + k;
      st4(p.y, off, p.y_dtype, r);
    }
  } else {
    for (uint off = uint(nn_group_id()) * lanes + lane; off < total; off += step) {
      vec4 cf = NormVec4F32(coefs + uint64_t((off / p.inner) % p.channels) * 16ul).v;
      float x = read_x ? nn_load(p.x, int64_t(off), p.x_dtype) : 0.0;
      float r = backward ? cf.x * nn_load(p.dy, int64_t(off), p.dy_dtype) + cf.y * (x - cf.z) + cf.w
                         : cf.x * (x - cf.z) + cf.w;
      nn_store(p.y, int64_t(off), p.y_dtype, r);
    }
  }
#endif
}
