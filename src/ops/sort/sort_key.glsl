// Order-preserving uint64 keys of SRC_* values: NaN largest, -0 == +0 (the CPU sort order).
const uint64_t kAllOnes = 0xFFFFFFFFFFFFFFFFul;

uint64_t float_key(float x) {
  if (isnan(x)) return kAllOnes;
  if (x == 0.0) x = 0.0;  // -0 and +0 compare equal
  uint u = floatBitsToUint(x);
  return uint64_t((u & 0x80000000u) != 0u ? ~u : (u | 0x80000000u));
}

uint64_t value_key(uint64_t addr) {
#if defined(SRC_F32)
  return float_key(PF32(addr).v);
#elif defined(SRC_F16)
  return float_key(float(PF16(addr).v));
#elif defined(SRC_BF16)
  return float_key(bf16_to_float(PU16(addr).v));
#elif defined(SRC_F64)
  double x = PF64(addr).v;
  if (isnan(x)) return kAllOnes;
  if (x == 0.0) return 0x8000000000000000ul;
  uint64_t u = doubleBitsToUint64(x);
  return (u & 0x8000000000000000ul) != 0ul ? ~u : (u | 0x8000000000000000ul);
#elif defined(SRC_I8)
  return uint64_t(int64_t(PI8(addr).v)) ^ 0x8000000000000000ul;
#elif defined(SRC_I16)
  return uint64_t(int64_t(PI16(addr).v)) ^ 0x8000000000000000ul;
#elif defined(SRC_I32)
  return uint64_t(int64_t(PI32(addr).v)) ^ 0x8000000000000000ul;
#elif defined(SRC_I64)
  return uint64_t(PI64(addr).v) ^ 0x8000000000000000ul;
#else  // u8, bool
  return uint64_t(PU8(addr).v);
#endif
}

// Radix keys: the same order, but only as wide as the dtype (RADIX_KEY_BITS) so that a radix
// sort runs one 8-bit pass per byte; NaN is the all-ones key of that width.
#if defined(SRC_F64) || defined(SRC_I64)
#define RADIX_KEY_BITS 64
#elif defined(SRC_F32) || defined(SRC_I32)
#define RADIX_KEY_BITS 32
#elif defined(SRC_F16) || defined(SRC_BF16) || defined(SRC_I16)
#define RADIX_KEY_BITS 16
#else
#define RADIX_KEY_BITS 8
#endif

// 16-bit float bits (sign, then magnitude) to an order-preserving key; nan_above: the smallest
// magnitude pattern that is a NaN.
uint half_key(uint u, uint nan_above) {
  if ((u & 0x7FFFu) > nan_above) return 0xFFFFu;
  if (u == 0x8000u) u = 0u;  // -0 == +0
  return (u & 0x8000u) != 0u ? (~u & 0xFFFFu) : (u | 0x8000u);
}

uint64_t radix_value_key(uint64_t addr) {
#if defined(SRC_F32)
  return float_key(PF32(addr).v) & 0xFFFFFFFFul;
#elif defined(SRC_F16)
  return uint64_t(half_key(uint(PU16(addr).v), 0x7C00u));
#elif defined(SRC_BF16)
  return uint64_t(half_key(uint(PU16(addr).v), 0x7F80u));
#elif defined(SRC_I8)
  return uint64_t(uint(int(PI8(addr).v) + 128));
#elif defined(SRC_I16)
  return uint64_t(uint(int(PI16(addr).v) + 32768));
#elif defined(SRC_I32)
  return uint64_t(uint(PI32(addr).v) ^ 0x80000000u);
#else  // f64, i64, u8, bool: value_key is already as wide as the dtype
  return value_key(addr);
#endif
}
