#version 460
#extension GL_GOOGLE_include_directive : require
// dst[c] = src[remap(c)] (flip, roll) or dst = triangle of src (TRIANGLE: tril/triu), moving raw
// bits: variants by ELEM_BITS only.
#include "vkml_common.glsl"
#include "shape_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { RemapParams p; } pc;

#if ELEM_BITS == 8
#define P PU8
#define ZERO uint8_t(0)
#elif ELEM_BITS == 16
#define P PU16
#define ZERO uint16_t(0)
#elif ELEM_BITS == 32
#define P PU32
#define ZERO 0u
#else
#define P PU64
#define ZERO 0ul
#endif
#define ELEM_BYTES (ELEM_BITS / 8)

void main() {
  const int nd = int(pc.p.ndim);
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < pc.p.numel; i += VKML_GRID_STRIDE) {
    int64_t dst = 0, src = 0, rem = i;
#ifdef TRIANGLE
    int64_t row = 0, col = 0;
#endif
    for (int d = nd - 1; d >= 0; --d) {
      int64_t size = pc.p.sizes[d];
      int64_t c = rem % size;
      rem /= size;
      dst += c * pc.p.dst_strides[d];
#ifdef TRIANGLE
      if (d == nd - 1) col = c;
      if (d == nd - 2) row = c;
      src += c * pc.p.src_strides[d];
#else
      int64_t s = (pc.p.flags & (1u << uint(d))) != 0u ? size - 1 - c : c;
      s += pc.p.shift[d];
      if (s >= size) s -= size;
      src += s * pc.p.src_strides[d];
#endif
    }
    uint64_t da = pc.p.dst + uint64_t(dst * ELEM_BYTES);
#ifdef TRIANGLE
    bool keep = pc.p.flags != 0u ? col - row >= pc.p.diagonal : col - row <= pc.p.diagonal;
    if (keep) {
      if (pc.p.dst != pc.p.src || dst != src) P(da).v = P(pc.p.src + uint64_t(src * ELEM_BYTES)).v;
    } else {
      P(da).v = ZERO;
    }
#else
    P(da).v = P(pc.p.src + uint64_t(src * ELEM_BYTES)).v;
#endif
  }
}
