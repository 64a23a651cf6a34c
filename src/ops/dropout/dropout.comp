#version 460
#extension GL_GOOGLE_include_directive : require
// Dropout's elementwise step. Forward (DROPOUT_FORWARD): c arrives holding Bernoulli(1 - p)
// draws; writes c = a * keep * scale (NaN inputs stay NaN, as in PyTorch) and the mask b = keep.
// Backward: c = a * mask * scale.
#include "vkml_common.glsl"
#include "dropout_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { DropoutParams p; } pc;

#include "nn_common.glsl"

void main() {
  DropoutParams p = pc.p;
#ifdef VKML_USE_FP64
  ACC scale = packDouble2x32(uvec2(uint(p.scale_bits), uint(p.scale_bits >> 32)));
#else
  ACC scale = p.scale_f;
#endif
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t oa = 0, ob = 0, oc = 0, rem = e;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      int64_t i = rem % p.sizes[d];
      rem /= p.sizes[d];
      oa += i * p.a_strides[d];
      ob += i * p.b_strides[d];
      oc += i * p.c_strides[d];
    }
#ifdef DROPOUT_FORWARD
    bool keep = nn_load(p.c, oc, p.c_dtype) != ACC(0);
    PU8(p.b + uint64_t(ob)).v = keep ? uint8_t(1) : uint8_t(0);
#else
    bool keep = PU8(p.b + uint64_t(ob)).v != uint8_t(0);
#endif
    ACC v = nn_load(p.a, oa, p.a_dtype) * (keep ? ACC(1) : ACC(0)) * scale;
    nn_store(p.c, oc, p.c_dtype, v);
  }
}
