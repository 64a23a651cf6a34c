#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Direct depthwise convolution (groups == C_in, C_out = multiplier * C_in), accumulating in
// ACC. One define picks the pass:
//   DW_FORWARD:     y[n, oc, o] = sum_k x[n, oc / mult, o * stride - pad + k * dil] * w[oc, 0, k]
//                                 (+ bias[oc]); one thread per y element
//   DW_BACKWARD_DATA: x[n, c, i] = sum_{m, k} y[n, c * mult + m, o] * w[c * mult + m, 0, k]
//                                 over taps with i + pad - k * dil = o * stride; one per x element
//   DW_BACKWARD_WEIGHT: w[oc, 0, k] = sum_{n, o} y[n, oc, o] * x[n, oc / mult, o*stride-pad+k*dil]
//                                 one workgroup per weight element, reduced in shared memory
#include "vkml_common.glsl"
#include "conv_params.h"
#include "conv_common.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { ConvParams p; } pc;

#if defined(DW_BACKWARD_WEIGHT)
shared ACC partial[gl_WorkGroupSize.x];
#endif

void main() {
  ConvParams p = pc.p;
  const Geometry g = load_geometry(p);
  const int kv = volume(g.kernel), P = volume(g.out_size), V = volume(g.in_size);
  const int mult = p.multiplier;
  int64_t xs[5] = p.x_strides, ys[5] = p.y_strides, ws[5] = p.w_strides;
#if defined(DW_FORWARD)
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int o_flat = int(i) % P, noc = int(i) / P;
    const int oc = noc % p.out_channels, n = noc / p.out_channels, c = oc / mult;
    const ivec3 o = unflatten(o_flat, g.out_size);
    ACC sum = ACC(0);
    for (int k = 0; k < kv; ++k) {
      const ivec3 kk = unflatten(k, g.kernel);
      const ivec3 at = o * g.stride - g.pad + kk * g.dilation;
      if (!inside(at, g.in_size)) continue;
      sum += load_t(p.x + uint64_t(offset5(xs, n, c, at) * DT_SIZE)) *
             load_t(p.w + uint64_t(offset5(ws, oc, 0, kk) * DT_SIZE));
    }
    if ((p.flags & VKML_CONV_HAS_BIAS) != 0u) {
      sum += load_t(p.bias + uint64_t(oc * p.bias_stride * DT_SIZE));
    }
    store_t(p.y + uint64_t(offset5(ys, n, oc, o) * DT_SIZE), sum);
  }
#elif defined(DW_BACKWARD_DATA)
  for (uint i = gl_GlobalInvocationID.x; i < p.work; i += CONV_GRID_STRIDE) {
    const int v = int(i) % V, nc = int(i) / V;
    const int c = nc % p.in_channels, n = nc / p.in_channels;
    const ivec3 at = unflatten(v, g.in_size);
    ACC sum = ACC(0);
    for (int k = 0; k < kv; ++k) {
      const ivec3 kk = unflatten(k, g.kernel);
      const ivec3 t = at + g.pad - kk * g.dilation;
      if (any(lessThan(t, ivec3(0))) || any(notEqual(t % g.stride, ivec3(0)))) continue;
      const ivec3 o = t / g.stride;
      if (any(greaterThanEqual(o, g.out_size))) continue;
      for (int m = 0; m < mult; ++m) {
        const int oc = c * mult + m;
        sum += load_t(p.y + uint64_t(offset5(ys, n, oc, o) * DT_SIZE)) *
               load_t(p.w + uint64_t(offset5(ws, oc, 0, kk) * DT_SIZE));
      }
    }
    store_t(p.x + uint64_t(offset5(xs, n, c, at) * DT_SIZE), sum);
  }
#elif defined(DW_BACKWARD_WEIGHT)
  const uint tid = gl_LocalInvocationID.x;
  for (uint e = gl_WorkGroupID.x; e < p.work; e += gl_NumWorkGroups.x) {
    const int oc = int(e) / kv, c = oc / mult;
    const ivec3 kk = unflatten(int(e) % kv, g.kernel);
    ACC sum = ACC(0);
    for (int n = 0; n < p.batch; ++n) {
      for (int of = int(tid); of < P; of += int(gl_WorkGroupSize.x)) {
        const ivec3 o = unflatten(of, g.out_size);
        const ivec3 at = o * g.stride - g.pad + kk * g.dilation;
        if (!inside(at, g.in_size)) continue;
        sum += load_t(p.y + uint64_t(offset5(ys, n, oc, o) * DT_SIZE)) *
               load_t(p.x + uint64_t(offset5(xs, n, c, at) * DT_SIZE));
      }
    }
    partial[tid] = sum;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
      if (tid < s) partial[tid] += partial[tid + s];
      barrier();
    }
    if (tid == 0) store_t(p.w + uint64_t(offset5(ws, oc, 0, kk) * DT_SIZE), partial[0]);
    barrier();
  }
#endif
}
