// IEEE double arithmetic on 64-bit integers, for the few kernels that reproduce a CPU result
// computed in double (then rounded to float) on devices without fp64 arithmetic: arange's
// start + step * i and GradScaler's scale * factor. Each operation rounds to nearest even at 53
// bits, as the CPU's double operation does, so the final float is the CPU's bit for bit.
// Operands are finite; a value is (-1)^neg * m * 2^e with an integer m below 2^53, normalized
// (m >= 2^52) unless e is the least exponent (zero and subnormals).

struct SoftDouble {
  bool neg;
  uint64_t m;
  int e;
};

const int kSoftDoublePrecision = 53;
const int kSoftDoubleMinExponent = -1074;

// ---- 128-bit unsigned integers as (low, high) halves ------------------------------------------

u64vec2 sd_mul_64x64(uint64_t a, uint64_t b) {
  uint64_t a0 = a & 0xFFFFFFFFul, a1 = a >> 32, b0 = b & 0xFFFFFFFFul, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFul) + (p10 & 0xFFFFFFFFul);
  return u64vec2((mid << 32) | (p00 & 0xFFFFFFFFul), p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32));
}

int sd_msb64(uint64_t x) {  // -1 for 0
  uint hi = uint(x >> 32);
  return hi != 0u ? 32 + findMSB(hi) : findMSB(uint(x));
}

int sd_msb128(u64vec2 v) { return v.y != 0ul ? 64 + sd_msb64(v.y) : sd_msb64(v.x); }

u64vec2 sd_shr128(u64vec2 v, int s) {
  if (s <= 0) return v;
  if (s >= 128) return u64vec2(0ul);
  if (s >= 64) return u64vec2(v.y >> (s - 64), 0ul);
  return u64vec2((v.x >> s) | (v.y << (64 - s)), v.y >> s);
}

u64vec2 sd_shl128(u64vec2 v, int s) {
  if (s <= 0) return v;
  if (s >= 128) return u64vec2(0ul);
  if (s >= 64) return u64vec2(0ul, v.x << (s - 64));
  return u64vec2(v.x << s, (v.y << s) | (v.x >> (64 - s)));
}

bool sd_low_bits_set(u64vec2 v, int s) {  // any of the lowest s bits
  if (s <= 0) return false;
  if (s >= 128) return v.x != 0ul || v.y != 0ul;
  u64vec2 low = sd_shl128(v, 128 - s);
  return low.x != 0ul || low.y != 0ul;
}

u64vec2 sd_add128(u64vec2 a, u64vec2 b) {
  uint64_t lo = a.x + b.x;
  return u64vec2(lo, a.y + b.y + (lo < a.x ? 1ul : 0ul));
}

u64vec2 sd_sub128(u64vec2 a, u64vec2 b) {  // a >= b
  return u64vec2(a.x - b.x, a.y - b.y - (a.x < b.x ? 1ul : 0ul));
}

bool sd_less128(u64vec2 a, u64vec2 b) { return a.y < b.y || (a.y == b.y && a.x < b.x); }

// ---- rounding and conversions -----------------------------------------------------------------

// (-1)^neg * v * 2^e rounded to nearest even with `bits` significant bits and an exponent of
// at least min_exponent (below it, the subnormal spacing).
SoftDouble sd_round(bool neg, u64vec2 v, int e, int bits, int min_exponent) {
  SoftDouble r;
  r.neg = neg;
  int top = sd_msb128(v);
  if (top < 0) {
    r.m = 0ul;
    r.e = min_exponent;
    return r;
  }
  int shift = max(top + 1 - bits, min_exponent - e);
  if (shift <= 0) {  // exact: normalize upwards
    r.m = sd_shl128(v, -shift).x;
    r.e = e + shift;
    return r;
  }
  uint64_t m = sd_shr128(v, shift).x;
  bool round_bit = (sd_shr128(v, shift - 1).x & 1ul) != 0ul;
  if (round_bit && (sd_low_bits_set(v, shift - 1) || (m & 1ul) != 0ul)) m += 1ul;
  int exponent = e + shift;
  if (m == (1ul << bits)) {
    m >>= 1;
    exponent += 1;
  }
  r.m = m;
  r.e = exponent;
  return r;
}

SoftDouble sd_normalize(bool neg, uint64_t m, int e) {
  return sd_round(neg, u64vec2(m, 0ul), e, kSoftDoublePrecision, kSoftDoubleMinExponent);
}

// A finite double from its bits.
SoftDouble sd_from_bits(uint64_t bits) {
  int biased = int((bits >> 52) & 0x7FFul);
  uint64_t fraction = bits & 0xFFFFFFFFFFFFFul;
  SoftDouble d;
  d.neg = (bits >> 63) != 0ul;
  d.m = biased == 0 ? fraction : (fraction | (1ul << 52));
  d.e = (biased == 0 ? 1 : biased) - 1075;
  return d;
}

SoftDouble sd_from_uint(uint64_t i) { return sd_normalize(false, i, 0); }

// A finite float, exactly.
SoftDouble sd_from_float(float x) {
  uint bits = floatBitsToUint(x);
  int biased = int((bits >> 23) & 0xFFu);
  uint fraction = bits & 0x7FFFFFu;
  uint64_t m = uint64_t(biased == 0 ? fraction : (fraction | 0x800000u));
  return sd_normalize((bits >> 31) != 0u, m, (biased == 0 ? 1 : biased) - 150);
}

// The double rounded to float (nearest even; overflow gives an infinity).
float sd_to_float(SoftDouble d) {
  SoftDouble f = sd_round(d.neg, u64vec2(d.m, 0ul), d.e, 24, -149);
  uint sign = d.neg ? 0x80000000u : 0u;
  if (f.m < 0x800000ul) return uintBitsToFloat(sign | uint(f.m));  // zero or subnormal
  int biased = f.e + 150;
  if (biased >= 255) return uintBitsToFloat(sign | 0x7F800000u);
  return uintBitsToFloat(sign | (uint(biased) << 23) | uint(f.m & 0x7FFFFFul));
}

// ---- arithmetic ---------------------------------------------------------------------------------

SoftDouble sd_mul(SoftDouble a, SoftDouble b) {
  return sd_round(a.neg != b.neg, sd_mul_64x64(a.m, b.m), a.e + b.e, kSoftDoublePrecision,
                  kSoftDoubleMinExponent);
}

SoftDouble sd_add(SoftDouble a, SoftDouble b) {
  if (b.m == 0ul) {
    if (a.m == 0ul) a.neg = a.neg && b.neg;  // -0 + -0 = -0; other zero sums are +0
    return a;
  }
  if (a.m == 0ul) return b;
  if (a.e < b.e) {
    SoftDouble t = a;
    a = b;
    b = t;
  }
  // a's exponent is the larger, so a is normalized. b more than 74 binary places below a's last
  // bit is under half an ulp of any result: it only decides the rounding, as one low bit does.
  int d = a.e - b.e;
  u64vec2 va, vb;
  int e;
  if (d > 74) {
    va = sd_shl128(u64vec2(a.m, 0ul), 74);
    vb = u64vec2(1ul, 0ul);
    e = a.e - 74;
  } else {
    va = sd_shl128(u64vec2(a.m, 0ul), d);
    vb = u64vec2(b.m, 0ul);
    e = b.e;
  }
  if (a.neg == b.neg) {
    return sd_round(a.neg, sd_add128(va, vb), e, kSoftDoublePrecision, kSoftDoubleMinExponent);
  }
  bool b_larger = sd_less128(va, vb);
  u64vec2 diff = b_larger ? sd_sub128(vb, va) : sd_sub128(va, vb);
  if (diff.x == 0ul && diff.y == 0ul) return sd_normalize(false, 0ul, 0);  // x - x = +0
  return sd_round(b_larger ? b.neg : a.neg, diff, e, kSoftDoublePrecision, kSoftDoubleMinExponent);
}
