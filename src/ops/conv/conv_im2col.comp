#version 460
#extension GL_GOOGLE_include_directive : require
// im2col: col[c * KV + k][n * P + o] = x[n, c, o * stride - pad + k * dilation] (0 outside),
// with KV = kernel volume and P = output volume; copies raw ELEM_BITS-wide elements.
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

void main() {
  ConvParams p = pc.p;
  const Geometry g = load_geometry(p);
  const int kv = volume(g.kernel), P = volume(g.out_size);
  const int cols = p.batch * P;
  int64_t xs[5] = p.x_strides;
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int row = int(i) / cols, colidx = int(i) % cols;
    const int n = colidx / P, c = row / kv;
    const ivec3 o = unflatten(colidx % P, g.out_size), k = unflatten(row % kv, g.kernel);
    const ivec3 at = o * g.stride - g.pad + k * g.dilation;
    RAW v = RAW(0);
    if (inside(at, g.in_size)) v = PRAW(p.x + uint64_t(offset5(xs, n, c, at) * (ELEM_BITS / 8))).v;
    PRAW(p.col + uint64_t(i) * (ELEM_BITS / 8)).v = v;
  }
}
