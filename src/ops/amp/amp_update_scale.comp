#version 460
#extension GL_GOOGLE_include_directive : require
// GradScaler's scale update, one invocation: back off after an inf/NaN step, grow after
// growth_interval clean steps in a row (unless the grown scale overflows float32).
// scale * factor is computed in double before rounding, as PyTorch's kernels do: in fp64 with
// VKML_USE_FP64, otherwise on integers (soft_double.glsl).
#include "vkml_common.glsl"
#include "amp_params.h"

layout(local_size_x = 1) in;
layout(push_constant) uniform Push { AmpUpdateScaleParams p; } pc;

#ifdef VKML_USE_FP64
float scaled(float s, uint64_t factor_f64, float factor) {
  return float(double(s) * uint64BitsToDouble(factor_f64));
}
#else
#include "soft_double.glsl"
float scaled(float s, uint64_t factor_f64, float factor) {
  // An infinite or NaN operand gives the same result in float as in double.
  bool factor_finite = ((factor_f64 >> 52) & 0x7FFul) != 0x7FFul;
  if (isinf(s) || isnan(s) || !factor_finite) return s * factor;
  return sd_to_float(sd_mul(sd_from_float(s), sd_from_bits(factor_f64)));
}
#endif

void main() {
  AmpUpdateScaleParams p = pc.p;
  PF32 scale = PF32(p.scale);
  PI32 tracker = PI32(p.growth_tracker);
  if (PF32(p.found_inf).v != 0.0) {
    scale.v = scaled(scale.v, p.backoff_factor_f64, p.backoff_factor);
    tracker.v = 0;
    return;
  }
  int successful = tracker.v + 1;
  if (int64_t(successful) == p.growth_interval) {
    float grown = scaled(scale.v, p.growth_factor_f64, p.growth_factor);
    if (!isinf(grown) && !isnan(grown)) scale.v = grown;
    tracker.v = 0;
  } else {
    tracker.v = successful;
  }
}
