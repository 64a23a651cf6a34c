#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// dst = src bit for bit over strided tensors (same dtype). Variants by element size: ELEM_BITS
// (128: rows of small elements copied 16 bytes at a time, see copy() in copy.cc).
#include "vkml_common.glsl"
#include "copy_params.h"
#include "strided_index.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { StridedParams p; } pc;

#if ELEM_BITS == 8
#define P PU8
#elif ELEM_BITS == 16
#define P PU16
#elif ELEM_BITS == 32
#define P PU32
#elif ELEM_BITS == 64
#define P PU64
#else
layout(buffer_reference, scalar, buffer_reference_align = 16) buffer PU128 { uvec4 v; };
#define P PU128
#endif
#define ELEM_BYTES (ELEM_BITS / 8)

void main() {
  StridedParams p = pc.p;
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.numel; i += VKML_GRID_STRIDE) {
    int64_t d, s;
    strided_offsets(p, i, d, s);
    P(p.dst + uint64_t(d * ELEM_BYTES)).v = P(p.src + uint64_t(s * ELEM_BYTES)).v;
  }
}
