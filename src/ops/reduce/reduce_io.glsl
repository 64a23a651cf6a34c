// Typed loads and stores for the reduce family. The dtype of each tensor is a specialization
// constant (a vkml::DType code), so the driver folds these switches away when it builds the
// pipeline. Needs V (the accumulator type: float, double or int64_t) and V_INT for int64_t.
#define DT_F32 0u
#define DT_F16 1u
#define DT_BF16 2u
#define DT_F64 3u
#define DT_I8 4u
#define DT_U8 5u
#define DT_I16 6u
#define DT_I32 7u
#define DT_I64 8u
#define DT_BOOL 9u

#ifdef V_INT
bool is_nan(V x) { return false; }
#else
bool is_nan(V x) { return isnan(x); }
#endif

// PyTorch's truth value: NaN is true.
bool nonzero(V x) { return is_nan(x) || x != V(0); }

uint64_t elem_addr(uint64_t base, int64_t index, uint bytes) {
  return base + uint64_t(index) * uint64_t(bytes);
}

// Element `index` (in elements) of a tensor of dtype dt, converted to V.
V load_as(uint dt, uint64_t base, int64_t index) {
  if (dt == DT_F32) return V(PF32(elem_addr(base, index, 4)).v);
  if (dt == DT_F16) return V(float(PF16(elem_addr(base, index, 2)).v));
  if (dt == DT_BF16) return V(bf16_to_float(PU16(elem_addr(base, index, 2)).v));
#ifdef VKML_USE_FP64
  if (dt == DT_F64) return V(PF64(elem_addr(base, index, 8)).v);
#endif
  if (dt == DT_I8) return V(PI8(elem_addr(base, index, 1)).v);
  if (dt == DT_U8) return V(PU8(elem_addr(base, index, 1)).v);
  if (dt == DT_I16) return V(PI16(elem_addr(base, index, 2)).v);
  if (dt == DT_I32) return V(PI32(elem_addr(base, index, 4)).v);
  if (dt == DT_I64) return V(PI64(elem_addr(base, index, 8)).v);
  return uint(PU8(elem_addr(base, index, 1)).v) != 0u ? V(1) : V(0);  // DT_BOOL
}

// The VEC mode's 16-byte loads of f32/f16/bf16 src: 16 / element size values into xs, converted
// as load_as converts them (f16 through 16-bit storage, bf16 by shifting its bits up).
layout(buffer_reference, scalar, buffer_reference_align = 16) readonly buffer RedVecU4 { uvec4 v; };
layout(buffer_reference, scalar, buffer_reference_align = 16) readonly buffer RedVecF16 {
  f16vec4 lo;
  f16vec4 hi;
};
void load_vec(uint dt, uint64_t p, out V xs[8]) {
  if (dt == DT_F16) {
    RedVecF16 h = RedVecF16(p);
    vec4 lo = vec4(h.lo), hi = vec4(h.hi);
    for (int k = 0; k < 4; ++k) {
      xs[k] = V(lo[k]);
      xs[k + 4] = V(hi[k]);
    }
    return;
  }
  uvec4 u = RedVecU4(p).v;
  for (int k = 0; k < 8; ++k) {
    if (dt == DT_F32) {
      xs[k] = V(uintBitsToFloat(u[k % 4]));  // only the first four are used
    } else {
      xs[k] = V(uintBitsToFloat((k % 2) == 0 ? u[k / 2] << 16 : u[k / 2] & 0xFFFF0000u));
    }
  }
}

// The column layout's 16-byte loads: load_vec's types, int16 (eight), int32 (four), int64 and f64
// (two).
void load_cols(uint dt, uint64_t p, out V xs[8]) {
  if (dt == DT_F32 || dt == DT_F16 || dt == DT_BF16) {
    load_vec(dt, p, xs);
    return;
  }
  uvec4 u = RedVecU4(p).v;
  for (int k = 0; k < 8; ++k) xs[k] = V(0);
  if (dt == DT_I16) {
    for (int k = 0; k < 8; ++k) xs[k] = V(bitfieldExtract(int(u[k / 2]), 16 * (k % 2), 16));
  } else if (dt == DT_I32) {
    for (int k = 0; k < 4; ++k) xs[k] = V(int(u[k]));
  } else if (dt == DT_I64) {
    xs[0] = V(int64_t(packUint2x32(u.xy)));
    xs[1] = V(int64_t(packUint2x32(u.zw)));
#ifdef VKML_USE_FP64
  } else if (dt == DT_F64) {
    xs[0] = V(packDouble2x32(u.xy));
    xs[1] = V(packDouble2x32(u.zw));
#endif
  }
}

uint dtype_bytes(uint dt) {
  if (dt == DT_F64 || dt == DT_I64) return 8u;
  if (dt == DT_F32 || dt == DT_I32) return 4u;
  if (dt == DT_I8 || dt == DT_U8 || dt == DT_BOOL) return 1u;
  return 2u;
}

// Two's-complement wrap of an integer to `bits` bits (bit arithmetic keeps 8/16-bit types out
// of registers, so no Int8/Int16 capability is needed).
int64_t wrap_signed(int64_t x, int bits) {
  int64_t m = (1l << bits) - 1l, h = 1l << (bits - 1);
  return ((x & m) ^ h) - h;
}

// x rounded through dtype dt, as PyTorch casts the input to the computation dtype first.
V round_through(uint dt, V x) {
  if (dt == DT_F32) return V(float(x));
  if (dt == DT_F16) return V(round_to_f16(float(x)));
  if (dt == DT_BF16) return V(bf16_to_float(float_to_bf16(float(x))));
#ifdef VKML_USE_FP64
  if (dt == DT_F64) return V(double(x));
#endif
  if (dt == DT_I64) return V(int64_t(x));
  if (dt == DT_BOOL) return nonzero(x) ? V(1) : V(0);
#ifdef V_INT
  int64_t i = x;
#else
  int64_t i = dt == DT_U8 ? int64_t(x) : int64_t(int32_t(x));  // c10's float -> int casts
#endif
  if (dt == DT_I32) return V(wrap_signed(i, 32));
  if (dt == DT_I16) return V(wrap_signed(i, 16));
  if (dt == DT_I8) return V(wrap_signed(i, 8));
  return V(i & 0xFFl);  // DT_U8
}

// Writes v as element `index` of a tensor of dtype dt, with C++ static_cast semantics.
void store_as(uint dt, uint64_t base, int64_t index, V v) {
  if (dt == DT_F32) {
    PF32(elem_addr(base, index, 4)).v = float(v);
  } else if (dt == DT_F16) {
    PF16(elem_addr(base, index, 2)).v = float16_t(float(v));
  } else if (dt == DT_BF16) {
    PU16(elem_addr(base, index, 2)).v = float_to_bf16(float(v));
#ifdef VKML_USE_FP64
  } else if (dt == DT_F64) {
    PF64(elem_addr(base, index, 8)).v = double(v);
#endif
  } else if (dt == DT_I64) {
    PI64(elem_addr(base, index, 8)).v = int64_t(v);
  } else if (dt == DT_I32) {
    PI32(elem_addr(base, index, 4)).v = int32_t(v);
  } else if (dt == DT_BOOL) {
    PU8(elem_addr(base, index, 1)).v = uint8_t(nonzero(v) ? 1u : 0u);
  } else {
    // Narrow integers: c10's float casts go through int32 (int8/int16) or int64 (uint8).
#ifdef V_INT
    int64_t i = v;
#else
    int64_t i = dt == DT_U8 ? int64_t(v) : int64_t(int32_t(v));
#endif
    if (dt == DT_I16) {
      PI16(elem_addr(base, index, 2)).v = int16_t(int32_t(i));
    } else if (dt == DT_I8) {
      PI8(elem_addr(base, index, 1)).v = int8_t(int32_t(i));
    } else {
      PU8(elem_addr(base, index, 1)).v = uint8_t(uint(i));
    }
  }
}

// Special values of V.
#if defined(V_INT)
V v_pos_inf() { return V(0x7FFFFFFFFFFFFFFFl); }
V v_nan() { return V(0); }
#elif defined(V_DOUBLE)
V v_pos_inf() { return packDouble2x32(uvec2(0u, 0x7FF00000u)); }
V v_nan() { return packDouble2x32(uvec2(0u, 0x7FF80000u)); }
#else
V v_pos_inf() { return uintBitsToFloat(0x7F800000u); }
V v_nan() { return uintBitsToFloat(0x7FC00000u); }
#endif
