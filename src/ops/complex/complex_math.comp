#version 460
#extension GL_GOOGLE_include_directive : require
// out = op(a) or op(a, b) over strided complex tensors (see complex_params.h), one invocation per
// element in a grid-stride loop. DT_F32 variants read complex64 and compute in float; DT_F64
// (with VKML_USE_FP64) read complex128 and compute in double.
#include "vkml_common.glsl"
#include "complex_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { ComplexMathParams p; } pc;

#include "ew_math.glsl"
#if defined(EW_DOUBLE)
#define T double
#else
#define T float
#endif
#include "complex_math.glsl"

#if defined(EW_DOUBLE)
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PC { dvec2 v; };
#define CSIZE 16
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PC { vec2 v; };
#define CSIZE 8
#endif

void main() {
  ComplexMathParams p = pc.p;
  const int64_t step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y) *
                       int64_t(gl_WorkGroupSize.x);
  const int64_t first =
      (int64_t(gl_WorkGroupID.x) + int64_t(gl_WorkGroupID.y) * int64_t(gl_NumWorkGroups.x)) *
          int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
  const bool binary = p.op >= CM_POW;
  for (int64_t e = first; e < p.numel; e += step) {
    int64_t rem = e, oa = 0, ob = 0, od = 0;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      const int64_t i = rem % p.sizes[d];
      rem /= p.sizes[d];
      oa += i * p.a_strides[d];
      ob += i * p.b_strides[d];
      od += i * p.dst_strides[d];
    }
    C z = PC(p.a + uint64_t(oa) * CSIZE).v;
    C b = binary ? PC(p.b + uint64_t(ob) * CSIZE).v : C(0);
    PC(p.dst + uint64_t(od) * CSIZE).v = c_apply(p.op, z, b);
  }
}
