#version 460
#extension GL_GOOGLE_include_directive : require
// arange / linspace / logspace into a strided 1-D tensor of dtype DST_*, with PyTorch's CPU
// arithmetic: arange accumulates in double (f32, f64; float for 16-bit floats; f32 without fp64
// emulates the two double operations on integers) or int64;
// linspace steps in the dtype itself for floats (RND rounds after every operation like c10's
// Half) and in double for integers. VKML_USE_FP64 variants have double; others use float.
#include "vkml_common.glsl"
#include "shape_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { RangeParams p; } pc;

#ifdef VKML_USE_FP64
#define WIDE double
#define PARAM(name) packDouble2x32(uvec2(uint(pc.p.name##_bits), uint(pc.p.name##_bits >> 32)))
#else
#define WIDE float
#define PARAM(name) pc.p.name##_f32
#endif

#if defined(DST_F16)
#define FUSED 0
#define ELEM float
float RND(float x) { return round_to_f16(x); }
#define ARANGE_ACC float
#elif defined(DST_BF16)
#define FUSED 0
#define ELEM float
float RND(float x) { return bf16_to_float(float_to_bf16(x)); }
#define ARANGE_ACC float
#elif defined(DST_F32)
#define FUSED 1
#define ELEM float
float RND(float x) { return x; }
#define ARANGE_ACC WIDE
#elif defined(DST_F64)
#define FUSED 1
#define ELEM double
double RND(double x) { return x; }
#define ARANGE_ACC double
#else
#define INTEGRAL
#endif

#ifdef INTEGRAL
#define VAL int64_t
#define SRC_KIND_INT
#else
#define VAL ELEM
#endif
#include "store_cast.glsl"
#if defined(DST_F32) && !defined(VKML_USE_FP64)
#include "soft_double.glsl"
#endif

#define ELEM_AT(i) (pc.p.dst + uint64_t((i) * pc.p.stride * DST_SIZE))

void main() {
  const int64_t n = pc.p.numel;
  const int64_t halfway = n / 2;
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < n; i += VKML_GRID_STRIDE) {
    if (pc.p.mode == VKML_RANGE_ARANGE) {
#ifdef INTEGRAL
      store_dst(ELEM_AT(i), pc.p.start_i + pc.p.step_i * i);
#elif defined(DST_F32) && !defined(VKML_USE_FP64)
      // The CPU's double start + step * i, each operation rounded to double, then to float.
      SoftDouble v = sd_add(sd_from_bits(pc.p.start_bits),
                            sd_mul(sd_from_bits(pc.p.step_bits), sd_from_uint(uint64_t(i))));
      store_dst(ELEM_AT(i), sd_to_float(v));
#else
      // precise: the CPU multiplies then adds; GPU compilers would fuse into one fma and round
      // once (NVIDIA's does, which gives 1-ulp float16 differences).
      precise ARANGE_ACC v = ARANGE_ACC(PARAM(start)) + ARANGE_ACC(PARAM(step)) * ARANGE_ACC(i);
      store_dst(ELEM_AT(i), ELEM(v));
#endif
      continue;
    }
#ifdef INTEGRAL
    WIDE step = (WIDE(PARAM(end)) - WIDE(PARAM(start))) / WIDE(n - 1);
    // fma: x86 builds of PyTorch contract these (compiled with -mfma).
    WIDE x = i < halfway ? fma(step, WIDE(i), WIDE(PARAM(start)))
                         : fma(-step, WIDE(n - i - 1), WIDE(PARAM(end)));
    if (n == 1) x = WIDE(PARAM(start));  // PyTorch fills start; the step would be 0 / 0
#else
    ELEM start = RND(ELEM(PARAM(start))), end = RND(ELEM(PARAM(end)));
    ELEM step = RND(RND(end - start) / RND(ELEM(n - 1)));
#if FUSED
    // fma: x86 builds of PyTorch contract these (compiled with -mfma).
    ELEM x = i < halfway ? fma(step, ELEM(i), start) : fma(-step, ELEM(n - i - 1), end);
#else
    // c10's 16-bit float operators round after every operation: no contraction.
    precise ELEM x = i < halfway ? RND(start + RND(step * RND(ELEM(i))))
                                 : RND(end - RND(step * RND(ELEM(n - i - 1))));
#endif
    if (n == 1) x = start;  // PyTorch fills start; the step would be 0 / 0
#endif
    if (pc.p.mode == VKML_RANGE_LOGSPACE) {
      // float pow: logspace of f64 is refused by the host.
      float y = exp2(float(x) * log2(float(PARAM(base))));
#ifdef INTEGRAL
      store_dst(ELEM_AT(i), int64_t(y));
#else
      store_dst(ELEM_AT(i), ELEM(y));
#endif
    } else {
#ifdef INTEGRAL
      store_dst(ELEM_AT(i), int64_t(x));
#else
      store_dst(ELEM_AT(i), x);
#endif
    }
  }
}
