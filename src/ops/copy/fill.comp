#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Every element of a strided dst = one bit pattern. Variants by element size: ELEM_BITS.
#include "vkml_common.glsl"
#include "copy_params.h"
#include "strided_index.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { StridedParams p; } pc;

void main() {
  StridedParams p = pc.p;
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.numel; i += VKML_GRID_STRIDE) {
    int64_t d, s;
    strided_offsets(p, i, d, s);
    uint64_t a = p.dst + uint64_t(d * (ELEM_BITS / 8));
#if ELEM_BITS == 8
    PU8(a).v = uint8_t(p.value);
#elif ELEM_BITS == 16
    PU16(a).v = uint16_t(p.value);
#elif ELEM_BITS == 32
    PU32(a).v = uint(p.value);
#else
    PU64(a).v = p.value;
#endif
  }
}
