#version 460
#extension GL_GOOGLE_include_directive : require
// Counter-based random numbers (Philox4x32-10) written into a strided tensor of dtype DST_*.
// Element i uses counter (i / 4, offset) and lane i % 4, so results depend only on the seed,
// the offset and the element's index: reproducible and independent of the launch shape.
#include "vkml_common.glsl"
#include "random_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { RandomParams p; } pc;

#if defined(VKML_INT_VALUES)
#define VAL int64_t
#define SRC_KIND_INT
#elif defined(DST_F64)
#define VAL double
#else
#define VAL float
#endif
// The distribution's parameters a and b in VAL: double from their bits in the f64 variant, the
// float copies elsewhere (so that float variants need no fp64 arithmetic).
#ifdef DST_F64
#define PARAM_A packDouble2x32(uvec2(uint(p.a_bits), uint(p.a_bits >> 32)))
#define PARAM_B packDouble2x32(uvec2(uint(p.b_bits), uint(p.b_bits >> 32)))
#else
#define PARAM_A p.a_f
#define PARAM_B p.b_f
#endif
#include "store_cast.glsl"

uvec4 philox(uvec4 ctr, uvec2 key) {
  for (int r = 0; r < 10; ++r) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, ctr.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, ctr.z, hi1, lo1);
    ctr = uvec4(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
    key += uvec2(0x9E3779B9u, 0xBB67AE85u);
  }
  return ctr;
}

// Uniform in (0, 1], never 0, so log() below is finite.
float unit_open0(uint bits) { return (float(bits >> 8) + 1.0) * (1.0 / 16777216.0); }
float unit(uint bits) { return float(bits >> 8) * (1.0 / 16777216.0); }

void main() {
  RandomParams p = pc.p;
  uvec2 key = uvec2(uint(p.seed), uint(p.seed >> 32));
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.numel; i += VKML_GRID_STRIDE) {
    uint64_t group = uint64_t(i) >> 2;
    uint lane = uint(i) & 3u;
    uvec4 r = philox(uvec4(uint(group), uint(group >> 32), uint(p.offset), uint(p.offset >> 32)),
                     key);
    int64_t off = 0, rem = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      off += (rem % p.sizes[d]) * p.strides[d];
      rem /= p.sizes[d];
    }
    uint bits = r[lane];
#if defined(VKML_INT_VALUES)
    uint64_t wide = (uint64_t(bits) << 32) | uint64_t(r[(lane + 1u) & 3u]);
    VAL v = p.base + int64_t(p.range == 0ul ? wide : wide % p.range);
#else
    VAL v;
    if (p.kind == VKML_RANDOM_NORMAL) {
      // Box-Muller on the lane pair (0,1) or (2,3): both lanes of a pair use the same two draws.
      uint pair = lane & 2u;
      float u1 = unit_open0(r[pair]), u2 = unit(r[pair + 1u]);
      float radius = sqrt(-2.0 * log(u1));
      float z = (lane & 1u) == 0u ? radius * cos(6.2831853071795864 * u2)
                                  : radius * sin(6.2831853071795864 * u2);
      v = PARAM_A + PARAM_B * VAL(z);
    } else if (p.kind == VKML_RANDOM_BERNOULLI) {
      v = unit(bits) < p.a_f ? VAL(1) : VAL(0);
    } else if (p.kind == VKML_RANDOM_EXPONENTIAL) {
      v = VAL(-log(unit_open0(bits)) / p.a_f);
    } else {
      v = PARAM_A + (PARAM_B - PARAM_A) * VAL(unit(bits));
    }
#endif
    store_dst(p.dst + uint64_t(off * DST_SIZE), v);
  }
}
