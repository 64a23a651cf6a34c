#version 460
#extension GL_GOOGLE_include_directive : require
// col2im as a gather (deterministic, no atomics):
//   x[n, c, i] = sum over kernel taps k with i + pad - k * dilation = o * stride, 0 <= o < out,
//                of col[c * KV + k][n * P + o]   (+ bias[c])
// col holds ACC values (fp32, or f64); x is stored in DT_*.
#include "vkml_common.glsl"
#include "conv_params.h"
#include "conv_common.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { ConvParams p; } pc;

void main() {
  ConvParams p = pc.p;
  const Geometry g = load_geometry(p);
  const int kv = volume(g.kernel), P = volume(g.out_size), V = volume(g.in_size);
  const int cols = p.batch * P;
  int64_t xs[5] = p.x_strides;
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int v = int(i) % V, nc = int(i) / V;
    const int c = nc % p.in_channels, n = nc / p.in_channels;
    const ivec3 at = unflatten(v, g.in_size);
    ACC sum = ACC(0);
    for (int k = 0; k < kv; ++k) {
      const ivec3 kk = unflatten(k, g.kernel);
      const ivec3 t = at + g.pad - kk * g.dilation;
      if (any(lessThan(t, ivec3(0)))) continue;
      if (any(notEqual(t % g.stride, ivec3(0)))) continue;
      const ivec3 o = t / g.stride;
      if (any(greaterThanEqual(o, g.out_size))) continue;
      const uint64_t idx =
          uint64_t(c * kv + k) * uint64_t(cols) + uint64_t(n * P + flatten(o, g.out_size));
#if defined(DT_F64)
      sum += PF64(p.col + idx * 8).v;
#else
      sum += PF32(p.col + idx * 4).v;
#endif
    }
    if ((p.flags & VKML_CONV_HAS_BIAS) != 0u) {
      sum += load_t(p.bias + uint64_t(c * p.bias_stride * DT_SIZE));
    }
    store_t(p.x + uint64_t(offset5(xs, n, c, at) * DT_SIZE), sum);
  }
}
