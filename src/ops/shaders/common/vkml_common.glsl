// Shared by every vkml shader: extensions, typed pointers (buffer device address) and casts.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_scalar_block_layout : require
#extension GL_EXT_shader_explicit_arithmetic_types : require

// One element behind a 64-bit device address: P<T>(base + index * sizeof(T)).v
layout(buffer_reference, scalar, buffer_reference_align = 1) buffer PU8 { uint8_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 1) buffer PI8 { int8_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 2) buffer PU16 { uint16_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 2) buffer PI16 { int16_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 2) buffer PF16 { float16_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer PU32 { uint v; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer PI32 { int v; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer PF32 { float v; };
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PU64 { uint64_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PI64 { int64_t v; };
#ifdef VKML_USE_FP64
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PF64 { double v; };
#endif

// bfloat16 is stored as its 16 upper float bits; rounding is to nearest even, NaN stays NaN.
float bf16_to_float(uint16_t b) { return uintBitsToFloat(uint(b) << 16); }
uint16_t float_to_bf16(float f) {
  uint u = floatBitsToUint(f);
  if (isnan(f)) return uint16_t((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

// x rounded to the nearest fp16 value (ties to even), kept in float. Integer arithmetic on purpose:
// a driver may fold float(float16_t(x)) into x (NVIDIA's does), which loses the rounding.
float round_to_f16(float x) {
  uint u = floatBitsToUint(x), sign = u & 0x80000000u, mag = u & 0x7FFFFFFFu;
  if (mag >= 0x7F800000u) return x;                                 // inf, NaN
  if (mag >= 0x477FF000u) return uintBitsToFloat(sign | 0x7F800000u);  // rounds past 65504
  if (mag < 0x38800000u) {  // fp16 subnormal or zero: a multiple of 2^-24, exact in float
    float q = roundEven(uintBitsToFloat(mag) * 16777216.0) * (1.0 / 16777216.0);
    return uintBitsToFloat(sign | floatBitsToUint(q));
  }
  mag = (mag + 0xFFFu + ((mag >> 13) & 1u)) & ~0x1FFFu;  // keep 10 mantissa bits, ties to even
  return uintBitsToFloat(sign | mag);
}

// x * 2^e for any e (ldexp may be x * exp2(e), whose factor overflows past |e| = 127), exact
// while the result is a normal number: applied in steps of at most 2^100.
float scale_by_pow2(float x, int e) {
  for (; e > 100; e -= 100) x *= 1.2676506002282294e30;  // 2^100
  for (; e < -100; e += 100) x *= 7.888609052210118e-31;  // 2^-100
  return x * uintBitsToFloat(uint(e + 127) << 23);  // 2^e exactly (exp2 may approximate)
}

// Grid-stride loop bounds: any number of elements with at most 65535 workgroups.
#define VKML_GRID_STRIDE int64_t(gl_NumWorkGroups.x) * int64_t(gl_WorkGroupSize.x)
