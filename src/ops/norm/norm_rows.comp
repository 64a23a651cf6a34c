#version 460
#extension GL_GOOGLE_include_directive : require
// Row-norm fast path (layer and RMS norm over contiguous rows, see norm_rows_params.h), fp32
// math, 32-bit indices. One stage per variant:
//   ROWS_FWD         workgroup per row: the row read once into registers (vec4 loads), mean and
//                    variance from them (two exact passes), then y
//   ROWS_BWD         workgroup per row: dy, x read once; dx = rstd * (w*dy - mean(w*dy) -
//                    xhat * mean(w*dy*xhat)) (RMS: no mean(w*dy) term)
//   ROWS_PG_PARTIAL  workgroup per (row chunk, column block), invocation per four columns:
//                    sums of dy * xhat and dy over the chunk's rows (coalesced along the row)
//   ROWS_PG_COMBINE  invocation per four columns: adds the chunks in order (deterministic)
#include "vkml_common.glsl"
#include "norm_rows_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { NormRowsParams p; } pc;

#include "nn_common.glsl"
#include "norm_vec4.glsl"

bool has(NormRowsParams p, int s) { return p.ptr[s] != 0ul; }
float ld1(NormRowsParams p, int s, uint i) { return nn_load(p.ptr[s], int64_t(i), p.dtype[s]); }
void st1(NormRowsParams p, int s, uint i, float v) {
  nn_store(p.ptr[s], int64_t(i), p.dtype[s], v);
}
vec4 ld(NormRowsParams p, int s, uint off) { return ld4(p.ptr[s], off, p.dtype[s]); }

void main() {
  NormRowsParams p = pc.p;
  const uint lane = gl_LocalInvocationID.x, lanes = gl_WorkGroupSize.x;
  const bool rms = (p.mode & ROWS_MODE_RMS) != 0u;
  const uint nvec = p.cols / 4u;
  const float n = float(p.cols);
#if defined(ROWS_FWD) || defined(ROWS_BWD)
  const bool has_w = has(p, ROWS_W);
  for (uint row = uint(nn_group_id()); row < p.rows; row += uint(nn_group_count())) {
    const uint base = row * p.cols;
    vec4 a[ROWS_MAX_VEC];
#ifdef ROWS_FWD
    float s = 0.0;
    for (int k = 0; k < ROWS_MAX_VEC; ++k) {
      uint v = lane + uint(k) * lanes;
      a[k] = v < nvec ? ld(p, ROWS_X, base + 4u * v) : vec4(0.0);
      s += (a[k].x + a[k].y) + (a[k].z + a[k].w);
    }
    float mean = rms ? 0.0 : nn_wg_sum(s) / n;
    float q = 0.0;
    for (int k = 0; k < ROWS_MAX_VEC; ++k) {
      if (lane + uint(k) * lanes < nvec) {
        vec4 d = a[k] - mean;
        q += dot(d, d);
      }
    }
    float rstd = 1.0 / sqrt(max(nn_wg_sum(q) / n, 0.0) + p.eps);
    if (lane == 0u) {
      if (has(p, ROWS_MEAN)) st1(p, ROWS_MEAN, row, mean);
      if (has(p, ROWS_RSTD)) st1(p, ROWS_RSTD, row, rstd);
    }
    for (int k = 0; k < ROWS_MAX_VEC; ++k) {
      uint v = lane + uint(k) * lanes;
      if (v >= nvec) continue;
      vec4 y = (a[k] - mean) * rstd;
      if (has_w) y *= ld(p, ROWS_W, 4u * v);
      if (has(p, ROWS_B)) y += ld(p, ROWS_B, 4u * v);
      st4(p.ptr[ROWS_Y], base + 4u * v, p.dtype[ROWS_Y], y);
    }
#else
    const float mean = rms ? 0.0 : ld1(p, ROWS_MEAN, row);
    const float rstd = ld1(p, ROWS_RSTD, row);
    vec4 xhat[ROWS_MAX_VEC];
    float sum_wdy = 0.0, sum_wdy_xhat = 0.0;
    for (int k = 0; k < ROWS_MAX_VEC; ++k) {
      uint v = lane + uint(k) * lanes;
      a[k] = vec4(0.0);
      xhat[k] = vec4(0.0);
      if (v >= nvec) continue;
      // precise: w * dy must round the same way in both passes (see norm_bwd.comp).
      precise vec4 wdy = ld(p, ROWS_DY, base + 4u * v);
      if (has_w) wdy *= ld(p, ROWS_W, 4u * v);
      a[k] = wdy;
      xhat[k] = (ld(p, ROWS_X, base + 4u * v) - mean) * rstd;
      sum_wdy += (wdy.x + wdy.y) + (wdy.z + wdy.w);
      sum_wdy_xhat += dot(wdy, xhat[k]);
    }
    nn_wg_sum2(sum_wdy, sum_wdy_xhat);
    const float mean_wdy = rms ? 0.0 : sum_wdy / n, mean_wdy_xhat = sum_wdy_xhat / n;
    for (int k = 0; k < ROWS_MAX_VEC; ++k) {
      uint v = lane + uint(k) * lanes;
      if (v >= nvec) continue;
      vec4 dx = rstd * ((a[k] - mean_wdy) - xhat[k] * mean_wdy_xhat);
      st4(p.ptr[ROWS_Y], base + 4u * v, p.dtype[ROWS_Y], dx);
    }
#endif
  }
#elif defined(ROWS_PG_PARTIAL)
  const uint blocks = (nvec + lanes - 1u) / lanes;
  for (uint g = uint(nn_group_id()); g < p.chunks * blocks; g += uint(nn_group_count())) {
    uint chunk = g / blocks, v = (g % blocks) * lanes + lane;
    if (v >= nvec) continue;
    uint r0 = chunk * p.rows_per_chunk, r1 = min(r0 + p.rows_per_chunk, p.rows);
    vec4 gw = vec4(0.0), gb = vec4(0.0);
    for (uint r = r0; r < r1; ++r) {
      vec4 dy = ld(p, ROWS_DY, r * p.cols + 4u * v);
      float mean = rms ? 0.0 : ld1(p, ROWS_MEAN, r);
      gw += dy * ((ld(p, ROWS_X, r * p.cols + 4u * v) - mean) * ld1(p, ROWS_RSTD, r));
      gb += dy;
    }
    NormVec4F32(p.scratch + (uint64_t(2u * chunk) * p.cols + 4u * v) * 4ul).v = gw;
    NormVec4F32(p.scratch + (uint64_t(2u * chunk + 1u) * p.cols + 4u * v) * 4ul).v = gb;
  }
#else  // ROWS_PG_COMBINE
  for (uint v = uint(nn_group_id()) * lanes + lane; v < nvec; v += uint(nn_group_count()) * lanes) {
    vec4 gw = vec4(0.0), gb = vec4(0.0);
    for (uint k = 0u; k < p.chunks; ++k) {
      gw += NormVec4F32(p.scratch + (uint64_t(2u * k) * p.cols + 4u * v) * 4ul).v;
      gb += NormVec4F32(p.scratch + (uint64_t(2u * k + 1u) * p.cols + 4u * v) * 4ul).v;
    }
    for (uint e = 0u; e < 4u; ++e) {
      if (has(p, ROWS_GW)) st1(p, ROWS_GW, 4u * v + e, gw[e]);
      if (has(p, ROWS_GB)) st1(p, ROWS_GB, 4u * v + e, gb[e]);
    }
  }
#endif
}
