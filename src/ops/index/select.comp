#version 460
#extension GL_GOOGLE_include_directive : require
// out = cond ? a : b (where, masked_fill): raw bits, so every dtype of one size shares a
// variant (ELEM_BITS). Operands broadcast through zero strides; address 0 means a scalar.
#include "vkml_common.glsl"
#include "select_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { SelectParams p; } pc;

#if ELEM_BITS == 8
#define LOAD(a) uint64_t(PU8(a).v)
#define STORE(a, v) PU8(a).v = uint8_t(v)
#elif ELEM_BITS == 16
#define LOAD(a) uint64_t(PU16(a).v)
#define STORE(a, v) PU16(a).v = uint16_t(v)
#elif ELEM_BITS == 32
#define LOAD(a) uint64_t(PU32(a).v)
#define STORE(a, v) PU32(a).v = uint(v)
#else
#define LOAD(a) PU64(a).v
#define STORE(a, v) PU64(a).v = (v)
#endif
#define ELEM_BYTES (ELEM_BITS / 8)

void main() {
  const uint nd = pc.p.ndim;
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < pc.p.numel; i += VKML_GRID_STRIDE) {
    int64_t o = 0, c = 0, a = 0, b = 0, rem = i;
    for (int d = int(nd) - 1; d >= 0; --d) {
      int64_t x = rem % pc.p.sizes[d];
      rem /= pc.p.sizes[d];
      o += x * pc.p.out_strides[d];
      c += x * pc.p.cond_strides[d];
      a += x * pc.p.a_strides[d];
      b += x * pc.p.b_strides[d];
    }
    bool take_a = pc.p.cond != 0ul ? PU8(pc.p.cond + uint64_t(c)).v != uint8_t(0)
                                    : pc.p.cond_bits != 0ul;
    if (!take_a && pc.p.keep_unselected != 0u) continue;
    uint64_t v;
    if (take_a) {
      v = pc.p.a != 0ul ? LOAD(pc.p.a + uint64_t(a * ELEM_BYTES)) : pc.p.a_bits;
    } else {
      v = pc.p.b != 0ul ? LOAD(pc.p.b + uint64_t(b * ELEM_BYTES)) : pc.p.b_bits;
    }
    STORE(pc.p.dst + uint64_t(o * ELEM_BYTES), v);
  }
}
