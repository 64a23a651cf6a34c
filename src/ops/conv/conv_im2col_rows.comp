#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// im2col with one row of the column matrix per workgroup row (gl_WorkGroupID.y = c * KV + k), so
// the channel and kernel offset are decoded once per thread instead of per element, and each
// thread writes COLS consecutive columns (n, o) stepping o incrementally (no divisions inside the
// loop). Same layout as conv_im2col.comp: col[c * KV + k][n * P + o]. Parameters are read into
// registers before any store, since a store through another pointer could alias them.
#include "vkml_common.glsl"
#include "conv_params.h"
#include "conv_common.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { ConvParams p; } pc;

#if ELEM_BITS == 16
#define RAW uint16_t
#define PRAW PU16
#elif ELEM_BITS == 32
#define RAW uint
#define PRAW PU32
#else
#define RAW uint64_t
#define PRAW PU64
#endif
#define COLS 4

void main() {
  ConvParams p = pc.p;
  const Geometry g = load_geometry(p);
  const int kv = volume(g.kernel), P = volume(g.out_size);
  const int cols = p.batch * P;
  const int64_t s0 = p.x_strides[0], s1 = p.x_strides[1];
  const ivec3 ss = ivec3(p.x_strides[2], p.x_strides[3], p.x_strides[4]);  // host: fits int32
  const uint64_t x = p.x, col_base = p.col;
  const int rows = p.in_channels * kv;

  for (int row = int(gl_WorkGroupID.y); row < rows; row += int(gl_NumWorkGroups.y)) {
    const int c = row / kv;
    const ivec3 k = unflatten(row % kv, g.kernel);
    const ivec3 shift = k * g.dilation - g.pad;
    const uint64_t out_row = col_base + uint64_t(int64_t(row) * cols) * (ELEM_BITS / 8);
    for (int c0 = int(gl_GlobalInvocationID.x) * COLS; c0 < cols;
         c0 += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x) * COLS) {
      int n = c0 / P;
      ivec3 o = unflatten(c0 - n * P, g.out_size);
      uint64_t plane = x + uint64_t(n * s0 + c * s1) * (ELEM_BITS / 8);
      [[unroll]] for (int e = 0; e < COLS; ++e) {
        if (c0 + e >= cols) break;
        const ivec3 at = o * g.stride + shift;
        RAW v = RAW(0);
        if (inside(at, g.in_size)) {
          v = PRAW(plane + uint64_t(int64_t(at.x * ss.x + at.y * ss.y + at.z * ss.z)) *
                               (ELEM_BITS / 8)).v;
        }
        PRAW(out_row + uint64_t(c0 + e) * (ELEM_BITS / 8)).v = v;
        // Next column: w, then h, then d, then the next sample.
        if (++o.z == g.out_size.z) {
          o.z = 0;
          if (++o.y == g.out_size.y) {
            o.y = 0;
            if (++o.x == g.out_size.x) {
              o.x = 0;
              ++n;
              plane = x + uint64_t(n * s0 + c * s1) * (ELEM_BITS / 8);
            }
          }
        }
      }
    }
  }
}
