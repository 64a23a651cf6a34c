#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Winograd F(2x2, 3x3) transforms for a 3x3, stride-1, undilated 2-D convolution (Lavin & Gray,
// 2015). The convolution becomes 16 GEMMs, M[xi] = U[xi] (K x C) * V[xi] (C x T), over T tiles
// of 2x2 outputs, with 2.25x fewer multiplies than direct. Every transform coefficient is 0, +-1
// or 1/2, so each transformed value is exact up to a rounding or two (fp32 accuracy as direct).
// One build per stage:
//   WINO_INPUT:  V[xi][c][t] = (B^T d B)[xi], d the 4x4 input patch of tile t (0 outside).
//   WINO_WEIGHT: U[xi][k][c] = (G g G^T)[xi], g = w[k][c] (or, VKML_CONV_WINO_FLIP, the input
//                gradient's kernel: w[c][k] rotated by 180 degrees).
//   WINO_OUTPUT: y[n][k][2x2 tile t] = (A^T M[.][k][t] A) (+ bias[k]).
// The weight gradient runs the same algebra backwards: dU = sum over tiles of (A dY A^T) * V,
// 16 GEMMs over the tiles, then dg = G^T dU G:
//   WINO_DY:     Y'[xi][k][t] = (A dy A^T)[xi], dy the 2x2 output-gradient tile t (0 outside).
//   WINO_WGRAD:  gw[k][c] = (G^T dU[.][k][c] G), dU at col as [xi][k][c].
// ConvParams: x the source (C = in_channels), y the destination (K = out_channels), col the
// transformed buffer, in/out_size the spatial sizes (leading dim 1), pad the tiles' offset.
#include "vkml_common.glsl"
#include "conv_params.h"
#include "conv_common.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { ConvParams p; } pc;

void main() {
  ConvParams p = pc.p;
  const int tiles_h = (p.out_size[1] + 1) / 2, tiles_w = (p.out_size[2] + 1) / 2;
  const int T = p.batch * tiles_h * tiles_w;  // tiles in this dispatch (< 2^31, host-checked)
#if defined(WINO_INPUT)
  int64_t xs[5] = p.x_strides;
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int t = int(i) % T, c = int(i) / T;
    const int tw = t % tiles_w, nh = t / tiles_w;
    const int th = nh % tiles_h, n = nh / tiles_h;
    const int h0 = 2 * th - p.pad[1], w0 = 2 * tw - p.pad[2];
    const uint64_t base = p.x + uint64_t((n * xs[0] + c * xs[1]) * DT_SIZE);
    float d[4][4];
    [[unroll]] for (int r = 0; r < 4; ++r) {
      [[unroll]] for (int s = 0; s < 4; ++s) {
        const int h = h0 + r, w = w0 + s;
        const bool in_src = uint(h) < uint(p.in_size[1]) && uint(w) < uint(p.in_size[2]);
        d[r][s] = in_src ? load_t(base + uint64_t((h * xs[3] + w * xs[4]) * DT_SIZE)) : 0.0;
      }
    }
    // B^T d (rows), then (B^T d) B (columns): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
    float e[4][4];
    [[unroll]] for (int s = 0; s < 4; ++s) {
      e[0][s] = d[0][s] - d[2][s];
      e[1][s] = d[1][s] + d[2][s];
      e[2][s] = d[2][s] - d[1][s];
      e[3][s] = d[1][s] - d[3][s];
    }
    const uint64_t plane = uint64_t(p.in_channels) * uint64_t(T);
    const uint64_t at = p.col + (uint64_t(c) * uint64_t(T) + uint64_t(t)) * 4;
    [[unroll]] for (int r = 0; r < 4; ++r) {
      const float v[4] = {e[r][0] - e[r][2], e[r][1] + e[r][2], e[r][2] - e[r][1],
                          e[r][1] - e[r][3]};
      [[unroll]] for (int s = 0; s < 4; ++s) PF32(at + uint64_t(r * 4 + s) * plane * 4).v = v[s];
    }
  }
#elif defined(WINO_WEIGHT)
  int64_t ws[5] = p.w_strides;
  const int C = p.in_channels, K = p.out_channels;
  const bool flip = (p.flags & VKML_CONV_WINO_FLIP) != 0u;
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int c = int(i) % C, k = int(i) / C;
    // The forward kernel w[k][c]; the input gradient's is w[c][k] turned by 180 degrees.
    const uint64_t base =
        p.w + uint64_t(((flip ? c : k) * ws[0] + (flip ? k : c) * ws[1]) * DT_SIZE);
    float g[3][3];
    [[unroll]] for (int r = 0; r < 3; ++r) {
      [[unroll]] for (int s = 0; s < 3; ++s) {
        const int rr = flip ? 2 - r : r, ss = flip ? 2 - s : s;
        g[r][s] = load_t(base + uint64_t((rr * ws[3] + ss * ws[4]) * DT_SIZE));
      }
    }
    // G g (rows), then (G g) G^T (columns): G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
    float e[4][3];
    [[unroll]] for (int s = 0; s < 3; ++s) {
      e[0][s] = g[0][s];
      e[1][s] = 0.5 * (g[0][s] + g[1][s] + g[2][s]);
      e[2][s] = 0.5 * (g[0][s] - g[1][s] + g[2][s]);
      e[3][s] = g[2][s];
    }
    const uint64_t plane = uint64_t(K) * uint64_t(C);
    const uint64_t at = p.col + (uint64_t(k) * uint64_t(C) + uint64_t(c)) * 4;
    [[unroll]] for (int r = 0; r < 4; ++r) {
      const float u[4] = {e[r][0], 0.5 * (e[r][0] + e[r][1] + e[r][2]),
                          0.5 * (e[r][0] - e[r][1] + e[r][2]), e[r][2]};
      [[unroll]] for (int s = 0; s < 4; ++s) PF32(at + uint64_t(r * 4 + s) * plane * 4).v = u[s];
    }
  }
#elif defined(WINO_OUTPUT)
  int64_t ys[5] = p.y_strides;
  const bool has_bias = (p.flags & VKML_CONV_HAS_BIAS) != 0u;
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int t = int(i) % T, k = int(i) / T;
    const int tw = t % tiles_w, nh = t / tiles_w;
    const int th = nh % tiles_h, n = nh / tiles_h;
    const uint64_t plane = uint64_t(p.out_channels) * uint64_t(T);
    const uint64_t at = p.col + (uint64_t(k) * uint64_t(T) + uint64_t(t)) * 4;
    float m[4][4];
    [[unroll]] for (int r = 0; r < 4; ++r) {
      [[unroll]] for (int s = 0; s < 4; ++s) m[r][s] = PF32(at + uint64_t(r * 4 + s) * plane * 4).v;
    }
    // A^T m A with A^T = [1 1 1 0; 0 1 -1 -1].
    float e[2][4];
    [[unroll]] for (int s = 0; s < 4; ++s) {
      e[0][s] = m[0][s] + m[1][s] + m[2][s];
      e[1][s] = m[1][s] - m[2][s] - m[3][s];
    }
    const float b = has_bias ? load_t(p.bias + uint64_t(k * p.bias_stride * DT_SIZE)) : 0.0;
    const uint64_t base = p.y + uint64_t((n * ys[0] + k * ys[1]) * DT_SIZE);
    [[unroll]] for (int r = 0; r < 2; ++r) {
      const float o[2] = {e[r][0] + e[r][1] + e[r][2], e[r][1] - e[r][2] - e[r][3]};
      [[unroll]] for (int s = 0; s < 2; ++s) {
        const int h = 2 * th + r, w = 2 * tw + s;
        if (h < p.out_size[1] && w < p.out_size[2]) {
          store_t(base + uint64_t((h * ys[3] + w * ys[4]) * DT_SIZE), o[s] + b);
        }
      }
    }
  }
#elif defined(WINO_DY)
  int64_t ys[5] = p.y_strides;
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int t = int(i) % T, k = int(i) / T;
    const int tw = t % tiles_w, nh = t / tiles_w;
    const int th = nh % tiles_h, n = nh / tiles_h;
    const uint64_t base = p.y + uint64_t((n * ys[0] + k * ys[1]) * DT_SIZE);
    float d[2][2];
    [[unroll]] for (int r = 0; r < 2; ++r) {
      [[unroll]] for (int s = 0; s < 2; ++s) {
        const int h = 2 * th + r, w = 2 * tw + s;
        const bool in_dst = h < p.out_size[1] && w < p.out_size[2];
        d[r][s] = in_dst ? load_t(base + uint64_t((h * ys[3] + w * ys[4]) * DT_SIZE)) : 0.0;
      }
    }
    // A d (rows), then (A d) A^T (columns): A = [1 0; 1 1; 1 -1; 0 -1].
    const float e[4][2] = {{d[0][0], d[0][1]}, {d[0][0] + d[1][0], d[0][1] + d[1][1]},
                           {d[0][0] - d[1][0], d[0][1] - d[1][1]}, {-d[1][0], -d[1][1]}};
    const uint64_t plane = uint64_t(p.out_channels) * uint64_t(T);
    const uint64_t at = p.col + (uint64_t(k) * uint64_t(T) + uint64_t(t)) * 4;
    [[unroll]] for (int r = 0; r < 4; ++r) {
      const float v[4] = {e[r][0], e[r][0] + e[r][1], e[r][0] - e[r][1], -e[r][1]};
      [[unroll]] for (int s = 0; s < 4; ++s) PF32(at + uint64_t(r * 4 + s) * plane * 4).v = v[s];
    }
  }
#elif defined(WINO_WGRAD)
  int64_t ws[5] = p.w_strides;
  const int C = p.in_channels, K = p.out_channels;
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int c = int(i) % C, k = int(i) / C;
    const uint64_t plane = uint64_t(K) * uint64_t(C);
    const uint64_t at = p.col + (uint64_t(k) * uint64_t(C) + uint64_t(c)) * 4;
    float m[4][4];
    [[unroll]] for (int r = 0; r < 4; ++r) {
      [[unroll]] for (int s = 0; s < 4; ++s) m[r][s] = PF32(at + uint64_t(r * 4 + s) * plane * 4).v;
    }
    // G^T m G with G^T = [1 1/2 1/2 0; 0 1/2 -1/2 0; 0 1/2 1/2 1].
    float e[3][4];
    [[unroll]] for (int s = 0; s < 4; ++s) {
      e[0][s] = m[0][s] + 0.5 * (m[1][s] + m[2][s]);
      e[1][s] = 0.5 * (m[1][s] - m[2][s]);
      e[2][s] = 0.5 * (m[1][s] + m[2][s]) + m[3][s];
    }
    const uint64_t base = p.w + uint64_t((k * ws[0] + c * ws[1]) * DT_SIZE);
    [[unroll]] for (int r = 0; r < 3; ++r) {
      const float g[3] = {e[r][0] + 0.5 * (e[r][1] + e[r][2]), 0.5 * (e[r][1] - e[r][2]),
                          0.5 * (e[r][1] + e[r][2]) + e[r][3]};
      [[unroll]] for (int s = 0; s < 3; ++s) {
        store_t(base + uint64_t((r * ws[3] + s * ws[4]) * DT_SIZE), g[s]);
      }
    }
  }
#endif
}
