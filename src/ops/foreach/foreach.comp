#version 460
#extension GL_GOOGLE_include_directive : require
// One _foreach_* op (specialization constant OP) over a list of tensor groups of dtype DST_*:
// each workgroup takes chunks of one group at a time, computes in the op math type (float for
// f32/f16/bf16, double for f64) and rounds once on store.
#include "vkml_common.glsl"
#include "foreach_params.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = VKML_FOREACH_ADD;
layout(push_constant) uniform Push { ForeachParams p; } pc;

#if defined(DST_F64)
#define T double
#define CR_SPLITTER 134217729.0lf  // 2^27 + 1
#define CR_RESIDUAL_MAX 1.0e150lf
#define CR_RESIDUAL_MIN 1.0e-140lf
T load_val(uint64_t a) { return PF64(a).v; }
bool sign_bit(T v) { return (doubleBitsToUint64(v) >> 63) != 0ul; }
#define NAN_T uint64BitsToDouble(0x7FF8000000000000ul)
#define INF_T uint64BitsToDouble(0x7FF0000000000000ul)
#else
#define T float
#define CR_SPLITTER 4097.0  // 2^12 + 1
#define CR_RESIDUAL_MAX 1.0e15
#define CR_RESIDUAL_MIN 1.0e-15
bool sign_bit(T v) { return (floatBitsToUint(v) >> 31) != 0u; }
#define NAN_T uintBitsToFloat(0x7FC00000u)
#define INF_T uintBitsToFloat(0x7F800000u)
#if defined(DST_F32)
T load_val(uint64_t a) { return PF32(a).v; }
#elif defined(DST_F16)
T load_val(uint64_t a) { return float(PF16(a).v); }
#elif defined(DST_BF16)
T load_val(uint64_t a) { return bf16_to_float(PU16(a).v); }
#endif
#endif
#define VAL T
#include "store_cast.glsl"

#if defined(DST_F16)
float round_dst(float x) { return round_to_f16(x); }
#elif defined(DST_BF16)
float round_dst(float x) { return bf16_to_float(float_to_bf16(x)); }
#endif

T load_scalar_tensor(uint64_t a, uint dtype) {
  if (dtype == VKML_FOREACH_SCALAR_F16) return T(float(PF16(a).v));
  if (dtype == VKML_FOREACH_SCALAR_BF16) return T(bf16_to_float(PU16(a).v));
#if defined(DST_F64)
  if (dtype == VKML_FOREACH_SCALAR_F64) return PF64(a).v;
#endif
  return T(PF32(a).v);
}

#include "correct_rounding.glsl"  // the elementwise family's division and square root, as on the CPU

T div_rn(T a, T b) {
  if (b == T(0)) {  // IEEE spelled out: Vulkan leaves x / 0 undefined
    if (a == T(0) || isnan(a)) return NAN_T;
    return (sign_bit(a) != sign_bit(b)) ? -INF_T : INF_T;
  }
  return cr_div_rn(a, b);
}

T apply(T x, T y, T z, T s, T alpha) {
  switch (OP) {
    case VKML_FOREACH_ADD: {
      precise T r = fma(alpha, y, x);
      return r;
    }
    case VKML_FOREACH_MUL:
      return x * y;
    case VKML_FOREACH_DIV:
      return div_rn(x, y);
    // Zeros as ew_maximum/ew_minimum (IEEE 754-2019): max(-0, +0) = +0, min(-0, +0) = -0.
    case VKML_FOREACH_MAXIMUM:
      if (isnan(x) || isnan(y)) return x + y;
      return (x == y) ? (sign_bit(x) ? y : x) : max(x, y);
    case VKML_FOREACH_MINIMUM:
      if (isnan(x) || isnan(y)) return x + y;
      return (x == y) ? (sign_bit(x) ? x : y) : min(x, y);
    case VKML_FOREACH_LERP: {  // PyTorch's two formulas: weight 1 gives `end` exactly
      T d = y - x;
      precise T r = (abs(s) < T(0.5)) ? fma(s, d, x) : fma(-d, T(1) - s, y);
      return r;
    }
    case VKML_FOREACH_ADDCMUL: {
      precise T r = fma(s * y, z, x);
      return r;
    }
    case VKML_FOREACH_ADDCDIV:
      return x + div_rn(s * y, z);
    case VKML_FOREACH_SQRT:
      return cr_sqrt_rn(x);
    case VKML_FOREACH_NEG:
      return -x;
    case VKML_FOREACH_COPY:
      return x;
    default:  // VKML_FOREACH_FILL
      return s;
  }
}

void main() {
  ForeachParams p = pc.p;
  const bool scalar_operand = (p.flags & VKML_FOREACH_FLAG_SCALAR_OPERAND) != 0u;
  const bool device_scalar = p.scalar_tensor != 0ul;
  const T dev_y = device_scalar ? load_scalar_tensor(p.scalar_tensor, p.scalar_dtype) : T(0);
#if defined(DST_F64)
  const T alpha = uint64BitsToDouble(p.alpha_f64);
#else
  const T alpha = p.alpha;
#endif
  for (uint c = gl_WorkGroupID.x; c < p.chunks; c += gl_NumWorkGroups.x) {
    const uint g = p.chunk[c] & 0xFFu;
    const int64_t begin = int64_t(p.chunk[c] >> 8) * VKML_FOREACH_CHUNK;
    const int64_t end = min(begin + VKML_FOREACH_CHUNK, p.tensors[g].numel);
    const uint64_t dst = p.tensors[g].dst;
    const uint64_t a0 = p.tensors[g].src[0], a1 = p.tensors[g].src[1], a2 = p.tensors[g].src[2];
#if defined(DST_F64)
    const T s = uint64BitsToDouble(p.tensors[g].scalar_f64);
#else
    const T s = p.tensors[g].scalar;
#endif
    T sy = device_scalar ? dev_y : s, alpha_g = alpha;
#if defined(DST_F16) || defined(DST_BF16)
    // The CPU adds a scalar in the tensor's dtype: y and alpha rounded to it, then their product.
    if (OP == VKML_FOREACH_ADD && scalar_operand) {
      sy = round_dst(round_dst(alpha) * round_dst(sy));
      alpha_g = T(1);
    }
#endif
    for (int64_t i = begin + int64_t(gl_LocalInvocationID.x); i < end;
         i += int64_t(gl_WorkGroupSize.x)) {
      const uint64_t off = uint64_t(i) * uint64_t(DST_SIZE);
      T x = a0 != 0ul ? load_val(a0 + off) : T(0);
      T y = scalar_operand ? sy : (a1 != 0ul ? load_val(a1 + off) : T(0));
      T z = a2 != 0ul ? load_val(a2 + off) : T(0);
      store_dst(dst + off, apply(x, y, z, s, alpha_g));
    }
  }
}
