#version 460
#extension GL_GOOGLE_include_directive : require
// Contiguous copy of 16-byte vectors: the bandwidth path (and the benchmark's shader copy).
#include "vkml_common.glsl"

layout(buffer_reference, scalar, buffer_reference_align = 16) buffer PV4 { uvec4 v; };
layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { uint64_t dst; uint64_t src; int64_t count; } pc;

void main() {
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < pc.count; i += VKML_GRID_STRIDE) {
    PV4(pc.dst + uint64_t(i) * 16ul).v = PV4(pc.src + uint64_t(i) * 16ul).v;
  }
}
