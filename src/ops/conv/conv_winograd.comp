#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Winograd F(m x m, 3x3) transforms for a 3x3, stride-1, undilated 2-D convolution (Lavin & Gray,
// 2015), m = WINO_M (2 or 4) and tiles of a = m + 2. The convolution becomes a * a GEMMs,
// M[xi] = U[xi] (K x C) * V[xi] (C x T), over T tiles of m x m outputs: 2.25x (m = 2) or 4x
// (m = 4) fewer multiplies than direct. F(2x2)'s coefficients are 0, +-1 and 1/2 (fp32 as
// direct); F(4x4)'s reach 8 and 1/24, about 10x direct's rounding error (still ~1e-5 relative,
// against TF32's ~1e-3).
// One build per stage:
//   WINO_INPUT:  V[xi][c][t] = (B^T d B)[xi], d the a x a input patch of tile t (0 outside).
//   WINO_WEIGHT: U[xi][k][c] = (G g G^T)[xi], g = w[k][c] (or, VKML_CONV_WINO_FLIP, the input
//                gradient's kernel: w[c][k] rotated by 180 degrees).
//   WINO_OUTPUT: y[n][k][m x m tile t] = (A^T M[.][k][t] A) (+ bias[k]).
// The weight gradient runs the same algebra backwards: dU = sum over tiles of (A dY A^T) * V,
// a * a GEMMs over the tiles, then dg = G^T dU G:
//   WINO_DY:     Y'[xi][k][t] = (A dy A^T)[xi], dy the m x m output-gradient tile t (0 outside).
//   WINO_WGRAD:  gw[k][c] = (G^T dU[.][k][c] G), dU at col as [xi][k][c].
// ConvParams: x the source (C = in_channels), y the destination (K = out_channels), col the
// transformed buffer, in/out_size the spatial sizes (leading dim 1), pad the tiles' offset.
// The products below run over the whole constant matrices; the compiler drops the zeros only
// where it may, and the stages are bound by memory either way.
#include "vkml_common.glsl"
#include "conv_params.h"
#include "conv_common.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { ConvParams p; } pc;

const int M = WINO_M;
const int A = M + 2;
#if WINO_M == 2
const float BT[A][A] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
const float G[A][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
const float AT[M][A] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
#else
const float BT[A][A] = {{4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                        {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
const float G[A][3] = {{1.0 / 4, 0, 0},
                       {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                       {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                       {1.0 / 24, 1.0 / 12, 1.0 / 6},
                       {1.0 / 24, -1.0 / 12, 1.0 / 6},
                       {0, 0, 1}};
const float AT[M][A] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0},
                        {0, 1, -1, 8, -8, 1}};
#endif

// (n, tile row, tile column) of tile t of this dispatch's samples.
ivec3 tile_of(int t, int tiles_h, int tiles_w) {
  const int nh = t / tiles_w;
  return ivec3(nh / tiles_h, nh % tiles_h, t % tiles_w);
}

// Transformed value xi of one (channel, tile) or (k, c) pair at `at`: the planes of the
// buffer's [xi][.][.] layout lie `plane` floats apart.
uint64_t xi_address(uint64_t at, uint64_t plane, int xi) { return at + uint64_t(xi) * plane * 4; }

// The a x a transformed values of one pair.
float[A][A] load_transformed(uint64_t at, uint64_t plane) {
  float m[A][A];
  [[unroll]] for (int r = 0; r < A; ++r) {
    [[unroll]] for (int s = 0; s < A; ++s) m[r][s] = PF32(xi_address(at, plane, r * A + s)).v;
  }
  return m;
}

void main() {
  ConvParams p = pc.p;
  const int tiles_h = (p.out_size[1] + M - 1) / M, tiles_w = (p.out_size[2] + M - 1) / M;
  const int T = p.batch * tiles_h * tiles_w;  // tiles in this dispatch (< 2^31, host-checked)
#if defined(WINO_INPUT)
  int64_t xs[5] = p.x_strides;
  const uint64_t plane = uint64_t(p.in_channels) * uint64_t(T);
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int t = int(i) % T, c = int(i) / T;
    const ivec3 tl = tile_of(t, tiles_h, tiles_w);
    const int h0 = M * tl.y - p.pad[1], w0 = M * tl.z - p.pad[2];
    const uint64_t base = p.x + uint64_t((tl.x * xs[0] + c * xs[1]) * DT_SIZE);
    float d[A][A];
    [[unroll]] for (int r = 0; r < A; ++r) {
      [[unroll]] for (int s = 0; s < A; ++s) {
        const int h = h0 + r, w = w0 + s;
        const bool in_src = uint(h) < uint(p.in_size[1]) && uint(w) < uint(p.in_size[2]);
        d[r][s] = in_src ? load_t(base + uint64_t((h * xs[3] + w * xs[4]) * DT_SIZE)) : 0.0;
      }
    }
    float e[A][A];  // B^T d
    [[unroll]] for (int r = 0; r < A; ++r) {
      [[unroll]] for (int s = 0; s < A; ++s) {
        float v = 0.0;
        [[unroll]] for (int j = 0; j < A; ++j) v += BT[r][j] * d[j][s];
        e[r][s] = v;
      }
    }
    const uint64_t at = p.col + (uint64_t(c) * uint64_t(T) + uint64_t(t)) * 4;
    [[unroll]] for (int r = 0; r < A; ++r) {
      [[unroll]] for (int s = 0; s < A; ++s) {  // (B^T d) B
        float v = 0.0;
        [[unroll]] for (int j = 0; j < A; ++j) v += e[r][j] * BT[s][j];
        PF32(xi_address(at, plane, r * A + s)).v = v;
      }
    }
  }
#elif defined(WINO_WEIGHT)
  int64_t ws[5] = p.w_strides;
  const int C = p.in_channels, K = p.out_channels;
  const bool flip = (p.flags & VKML_CONV_WINO_FLIP) != 0u;
  const uint64_t plane = uint64_t(K) * uint64_t(C);
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
    float e[A][3];  // G g
    [[unroll]] for (int r = 0; r < A; ++r) {
      [[unroll]] for (int s = 0; s < 3; ++s) {
        e[r][s] = G[r][0] * g[0][s] + G[r][1] * g[1][s] + G[r][2] * g[2][s];
      }
    }
    const uint64_t at = p.col + (uint64_t(k) * uint64_t(C) + uint64_t(c)) * 4;
    [[unroll]] for (int r = 0; r < A; ++r) {
      [[unroll]] for (int s = 0; s < A; ++s) {  // (G g) G^T
        const float u = e[r][0] * G[s][0] + e[r][1] * G[s][1] + e[r][2] * G[s][2];
        PF32(xi_address(at, plane, r * A + s)).v = u;
      }
    }
  }
#elif defined(WINO_OUTPUT)
  int64_t ys[5] = p.y_strides;
  const bool has_bias = (p.flags & VKML_CONV_HAS_BIAS) != 0u;
  const uint64_t plane = uint64_t(p.out_channels) * uint64_t(T);
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int t = int(i) % T, k = int(i) / T;
    const ivec3 tl = tile_of(t, tiles_h, tiles_w);
    const uint64_t at = p.col + (uint64_t(k) * uint64_t(T) + uint64_t(t)) * 4;
    const float m[A][A] = load_transformed(at, plane);
    float e[M][A];  // A^T m
    [[unroll]] for (int r = 0; r < M; ++r) {
      [[unroll]] for (int s = 0; s < A; ++s) {
        float v = 0.0;
        [[unroll]] for (int j = 0; j < A; ++j) v += AT[r][j] * m[j][s];
        e[r][s] = v;
      }
    }
    const float b = has_bias ? load_t(p.bias + uint64_t(k * p.bias_stride * DT_SIZE)) : 0.0;
    const uint64_t base = p.y + uint64_t((tl.x * ys[0] + k * ys[1]) * DT_SIZE);
    [[unroll]] for (int r = 0; r < M; ++r) {
      [[unroll]] for (int s = 0; s < M; ++s) {  // (A^T m) A
        const int h = M * tl.y + r, w = M * tl.z + s;
        if (h < p.out_size[1] && w < p.out_size[2]) {
          float v = b;
          [[unroll]] for (int j = 0; j < A; ++j) v += e[r][j] * AT[s][j];
          store_t(base + uint64_t((h * ys[3] + w * ys[4]) * DT_SIZE), v);
        }
      }
    }
  }
#elif defined(WINO_DY)
  int64_t ys[5] = p.y_strides;
  const uint64_t plane = uint64_t(p.out_channels) * uint64_t(T);
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int t = int(i) % T, k = int(i) / T;
    const ivec3 tl = tile_of(t, tiles_h, tiles_w);
    const uint64_t base = p.y + uint64_t((tl.x * ys[0] + k * ys[1]) * DT_SIZE);
    float d[M][M];
    [[unroll]] for (int r = 0; r < M; ++r) {
      [[unroll]] for (int s = 0; s < M; ++s) {
        const int h = M * tl.y + r, w = M * tl.z + s;
        const bool in_dst = h < p.out_size[1] && w < p.out_size[2];
        d[r][s] = in_dst ? load_t(base + uint64_t((h * ys[3] + w * ys[4]) * DT_SIZE)) : 0.0;
      }
    }
    float e[A][M];  // A d, A = AT^T
    [[unroll]] for (int r = 0; r < A; ++r) {
      [[unroll]] for (int s = 0; s < M; ++s) {
        float v = 0.0;
        [[unroll]] for (int j = 0; j < M; ++j) v += AT[j][r] * d[j][s];
        e[r][s] = v;
      }
    }
    const uint64_t at = p.col + (uint64_t(k) * uint64_t(T) + uint64_t(t)) * 4;
    [[unroll]] for (int r = 0; r < A; ++r) {
      [[unroll]] for (int s = 0; s < A; ++s) {  // (A d) A^T
        float v = 0.0;
        [[unroll]] for (int j = 0; j < M; ++j) v += e[r][j] * AT[j][s];
        PF32(xi_address(at, plane, r * A + s)).v = v;
      }
    }
  }
#elif defined(WINO_WGRAD)
  int64_t ws[5] = p.w_strides;
  const int C = p.in_channels, K = p.out_channels;
  const uint64_t plane = uint64_t(K) * uint64_t(C);
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int c = int(i) % C, k = int(i) / C;
    const uint64_t at = p.col + (uint64_t(k) * uint64_t(C) + uint64_t(c)) * 4;
    const float m[A][A] = load_transformed(at, plane);
    float e[3][A];  // G^T m
    [[unroll]] for (int r = 0; r < 3; ++r) {
      [[unroll]] for (int s = 0; s < A; ++s) {
        float v = 0.0;
        [[unroll]] for (int j = 0; j < A; ++j) v += G[j][r] * m[j][s];
        e[r][s] = v;
      }
    }
    const uint64_t base = p.w + uint64_t((k * ws[0] + c * ws[1]) * DT_SIZE);
    [[unroll]] for (int r = 0; r < 3; ++r) {
      [[unroll]] for (int s = 0; s < 3; ++s) {  // (G^T m) G
        float v = 0.0;
        [[unroll]] for (int j = 0; j < A; ++j) v += e[r][j] * G[j][s];
        store_t(base + uint64_t((r * ws[3] + s * ws[4]) * DT_SIZE), v);
      }
    }
  }
#endif
}
