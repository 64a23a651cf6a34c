// Elementwise float math for T = float (f32/f16/bf16 variants) or double (f64), built only from
// +, -, *, /, sqrt, frexp and ldexp. Vulkan's exp/log/sin builtins may be a few ulp off (sin and
// cos only to 2^-11 absolute) and have no double versions, so PyTorch CPU parity needs our own.
// `precise` marks error-compensating arithmetic the compiler must not reassociate or fuse.
#if defined(EW_DOUBLE)
#define T double
#include "ew_math_f64.glsl"
T ew_inf() { return packDouble2x32(uvec2(0u, 0x7FF00000u)); }
T ew_nan() { return packDouble2x32(uvec2(0u, 0x7FF80000u)); }
bool ew_signbit(T x) { return (unpackDouble2x32(x).y >> 31) != 0u; }
T ew_copysign(T a, T b) {
  uvec2 u = unpackDouble2x32(a);
  u.y = (u.y & 0x7FFFFFFFu) | (unpackDouble2x32(b).y & 0x80000000u);
  return packDouble2x32(u);
}
#else
#define T float
#include "ew_math_f32.glsl"
T ew_inf() { return uintBitsToFloat(0x7F800000u); }
T ew_nan() { return uintBitsToFloat(0x7FC00000u); }
bool ew_signbit(T x) { return (floatBitsToUint(x) >> 31) != 0u; }
T ew_copysign(T a, T b) {
  return uintBitsToFloat((floatBitsToUint(a) & 0x7FFFFFFFu) | (floatBitsToUint(b) & 0x80000000u));
}
#endif

// Round half to even. The double builtin is wrong on lavapipe on some x86 hosts (Mesa 22.3 gives
// roundEven(1.5) = 1), so doubles go through floor, whose remainder x - floor(x) is exact; a zero
// result keeps x's sign.
T ew_round_even(T x) {
#if defined(EW_DOUBLE)
  const T f = floor(x), d = x - f;
  T r = d > T(0.5) ? f + T(1) : d < T(0.5) ? f : (floor(f * T(0.5)) * T(2) == f ? f : f + T(1));
  if (isinf(x) || isnan(x)) r = x;
  return r == T(0) ? ew_copysign(T(0), x) : r;
#else
  return roundEven(x);
#endif
}

// ldexp is undefined once 2^n itself is out of range, so scale in two halves.
T ew_ldexp(T x, int n) {
  int h = n / 2;
  return ldexp(ldexp(x, h), n - h);
}

// frexp for every finite x: GLSL leaves frexp of a denormal undefined (lavapipe reads its exponent
// field as a normal number's), so denormals are scaled up first.
T ew_frexp(T x, out int e) {
  if (x == T(0) || abs(x) >= ldexp(T(1), EW_MIN_EXP + EW_MANT_BITS - 1)) return frexp(x, e);
  T m = frexp(x * ldexp(T(1), EW_MANT_BITS), e);
  e -= EW_MANT_BITS;
  return m;
}

T ew_sqrt(T x) { return (x < T(0)) ? ew_nan() : sqrt(x); }

// ---- exponentials and logarithms ----------------------------------------------------------

// 2^n * exp(r) for |r| <= ln2/2, n an integer-valued T (clamped: 2^n may be out of range).
#if defined(EW_DOUBLE)
T ew_exp_scaled(T r, T n) {
  n = clamp(n, T(2 * EW_MIN_EXP), T(2 * EW_MAX_EXP));
  return ew_ldexp(T(1) + r * ew_expm1_q(r), int(n));
}
#else
// In float, 2^n is two normal factors built from their exponent bits: fewer instructions than
// ldexp's range checks, and the same single rounding (the first product is exact).
T ew_exp_scaled(T r, T n) {
  int k = int(clamp(n, T(-252), T(254)));
  int k1 = k >> 1;
  T s1 = uintBitsToFloat(uint(k1 + 127) << 23), s2 = uintBitsToFloat(uint(k - k1 + 127) << 23);
  return (T(1) + r * ew_expm1_q(r)) * s1 * s2;
}
#endif

T ew_exp(T x) {
  if (isnan(x)) return x;
  if (x > EW_EXP_OVERFLOW) return ew_inf();
  if (x < EW_EXP_UNDERFLOW) return T(0);
  T n = ew_round_even(x * EW_LOG2E);
  precise T r = (x - n * EW_LN2_HI) - n * EW_LN2_LO;  // Cody-Waite: n * EW_LN2_HI is exact
  return ew_exp_scaled(r, n);
}

// 2^(x + n) with n integer-valued; pow passes the exact integer part of its exponent as n.
T ew_exp2_plus(T x, T n) {
  if (isnan(x)) return x;
  if (isinf(x)) return (x > T(0)) ? x : T(0);
  T k = ew_round_even(x);
  precise T f = x - k;
  return ew_exp_scaled(f * EW_LN2, n + k);
}
T ew_exp2(T x) { return ew_exp2_plus(x, T(0)); }

T ew_expm1(T x) {
  if (isnan(x)) return x;
  if (abs(x) <= EW_HALF_LN2) return x * ew_expm1_q(x);  // |x| <= ln2/2: no reduction
  if (x > EW_EXP_OVERFLOW) return ew_inf();
  if (x < -T(EW_MANT_BITS)) return T(-1);  // e^x is below half an ulp of 1
  T n = ew_round_even(x * EW_LOG2E);
  precise T r = (x - n * EW_LN2_HI) - n * EW_LN2_LO;
  T em1 = r * ew_expm1_q(r);
  int k = int(n);
  if (k > EW_MANT_BITS + 1) return ew_ldexp(T(1) + em1, k);  // the -1 is below half an ulp
  // 2^k e^r - 1 = 2^k (e^r - 1) + (2^k - 1), where 2^k - 1 is exact.
  precise T res = ew_ldexp(em1, k) + (ew_ldexp(T(1), k) - T(1));
  return res;
}

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1] (fdlibm's formulation).
T ew_log1p_kernel(T f) {
  precise T s = f / (T(2) + f);
  precise T hfsq = T(0.5) * f * f;
  precise T res = f - (hfsq - s * (hfsq + ew_log_r(s * s)));
  return res;
}

// x = 2^e * m with m in [sqrt(1/2), sqrt(2)); returns m - 1 (exact).
T ew_log_split(T x, out int e) {
  T m = ew_frexp(x, e);
  if (m < EW_SQRT1_2) {
    m *= T(2);
    e -= 1;
  }
  return m - T(1);
}

// NaN for x < 0, -inf at 0, x at +inf and NaN; else 0 and `ok` = true.
T ew_log_special(T x, out bool ok) {
  ok = false;
  if (isnan(x)) return x;
  if (x < T(0)) return ew_nan();
  if (x == T(0)) return -ew_inf();
  if (isinf(x)) return x;
  ok = true;
  return T(0);
}

T ew_log(T x) {
  bool ok;
  T s = ew_log_special(x, ok);
  if (!ok) return s;
  int e;
  T f = ew_log_split(x, e);
  T k = T(e);
  precise T res = k * EW_LN2_HI + (k * EW_LN2_LO + ew_log1p_kernel(f));
  return res;
}

T ew_log2(T x) {
  bool ok;
  T s = ew_log_special(x, ok);
  if (!ok) return s;
  int e;
  T f = ew_log_split(x, e);
  precise T res = T(e) + ew_log1p_kernel(f) * EW_LOG2E;  // exact for powers of two
  return res;
}

T ew_log10(T x) {
  bool ok;
  T s = ew_log_special(x, ok);
  if (!ok) return s;
  int e;
  T f = ew_log_split(x, e);
  precise T res = T(e) * EW_LOG10_2 + ew_log1p_kernel(f) * EW_LOG10E;
  return res;
}

// Kahan's log1p: the rounding error of 1 + x cancels in x / ((1 + x) - 1).
T ew_log1p(T x) {
  if (isnan(x) || isinf(x)) return (x < T(0)) ? ew_nan() : x;
  if (x < T(-1)) return ew_nan();
  precise T u = T(1) + x;
  if (u == T(1)) return x;
  precise T d = u - T(1);
  return ew_log(u) * (x / d);
}

// ---- trigonometry -------------------------------------------------------------------------

// |x| = (mh * 2^32 + ml) * 2^e with an integer mantissa (x normal, nonzero).
void ew_decompose(T ax, out uint mh, out uint ml, out int e) {
#if defined(EW_DOUBLE)
  uvec2 u = unpackDouble2x32(ax);
  e = int((u.y >> 20) & 0x7FFu) - 1075;
  mh = (u.y & 0xFFFFFu) | 0x100000u;
  ml = u.x;
#else
  uint u = floatBitsToUint(ax);
  e = int((u >> 23) & 0xFFu) - 150;
  mh = 0u;
  ml = (u & 0x7FFFFFu) | 0x800000u;
#endif
}

// Payne-Hanek: |x| * 2/pi mod 4 from 192 bits of 2/pi starting where the bits stop
// contributing multiples of 4; exact for any |x|. Returns r in [-pi/4, pi/4], q = n mod 4.
T ew_trig_reduce_huge(T x, out int q) {
  uint mh, ml;
  int e;
  ew_decompose(abs(x), mh, ml, e);
  // The window starts at bit 2^(1-e) of 2/pi (earlier bits add multiples of 4); the table
  // starts with 64 zero bits, so that bit sits at index e + 62.
  int o = e + 62;
  int j = o >> 5, s = o & 31;
  uint w[6];  // the window, least significant word first
  for (int i = 0; i < 6; ++i) {
    uint hi = EW_TWO_OVER_PI[j + 5 - i], lo = EW_TWO_OVER_PI[j + 6 - i];
    w[i] = (s == 0) ? hi : ((hi << s) | (lo >> (32 - s)));
  }
  // P = (mh * 2^32 + ml) * window, schoolbook in 32-bit limbs; |x| * 2/pi = P * 2^-190 mod 4.
  uint p[6];
  uint64_t carry = 0ul, prev_l = 0ul, prev_h = 0ul, prev2_h = 0ul;
  for (int t = 0; t < 6; ++t) {
    uint64_t pl = uint64_t(w[t]) * uint64_t(ml);
    uint64_t ph = uint64_t(w[t]) * uint64_t(mh);
    uint64_t acc = carry + (pl & 0xFFFFFFFFul) + (prev_l >> 32) + (prev_h & 0xFFFFFFFFul) +
                   (prev2_h >> 32);
    p[t] = uint(acc);
    carry = acc >> 32;
    prev2_h = prev_h;
    prev_l = pl;
    prev_h = ph;
  }
  // Bits 190-191 are n mod 4; the fraction follows in f1 (bits 126-189) and f2 (62-125).
  q = int(p[5] >> 30);
  uint64_t f1 = (uint64_t(p[5] & 0x3FFFFFFFu) << 34) | (uint64_t(p[4]) << 2) | uint64_t(p[3] >> 30);
  uint64_t f2 = (uint64_t(p[3] & 0x3FFFFFFFu) << 34) | (uint64_t(p[2]) << 2) | uint64_t(p[1] >> 30);
  T sign = T(1);
  if ((f1 >> 63) != 0ul) {  // fraction >= 1/2: round n up and negate the 128-bit fraction
    q += 1;
    sign = T(-1);
    f2 = ~f2 + 1ul;
    f1 = ~f1 + ((f2 == 0ul) ? 1ul : 0ul);
  }
#if defined(EW_DOUBLE)
  T f = ldexp(T(f1), -64) + ldexp(T(f2), -128);
#else
  T f = ldexp(T(f1), -64);  // 2^-64 resolution: r keeps 24 bits even next to a multiple of pi/2
#endif
  precise T r = sign * (f * EW_PI_2_HI + f * EW_PI_2_LO);
  if (x < T(0)) {
    r = -r;
    q = -q;
  }
  q &= 3;
  return r;
}

// x - n*pi/2 with |result| <= pi/4 and q = n mod 4: Cody-Waite with pi/2 in four parts below
// EW_PH_THRESHOLD (where its products stay exact), Payne-Hanek above.
T ew_trig_reduce(T x, out int q) {
  q = 0;
  if (abs(x) <= EW_PI_4_HI) return x;  // keeps -0
  if (abs(x) >= EW_PH_THRESHOLD) return ew_trig_reduce_huge(x, q);
  T n = ew_round_even(x * EW_2_OVER_PI);
  precise T r = (((x - n * EW_PIO2_1) - n * EW_PIO2_2) - n * EW_PIO2_3) - n * EW_PIO2_4;
  q = int(n - T(4) * floor(n * T(0.25)));
  return r;
}

T ew_sin(T x) {
  if (isnan(x) || isinf(x)) return ew_nan();
  if (x == T(0)) return x;  // the polynomial would turn -0 into +0
  int q;
  T r = ew_trig_reduce(x, q);
  T s = ((q & 1) == 0) ? ew_sin_poly(r) : ew_cos_poly(r);
  return ((q & 2) == 0) ? s : -s;
}

T ew_cos(T x) {
  if (isnan(x) || isinf(x)) return ew_nan();
  int q;
  T r = ew_trig_reduce(x, q);
  q += 1;  // cos(x) = sin(x + pi/2)
  T s = ((q & 1) == 0) ? ew_sin_poly(r) : ew_cos_poly(r);
  return ((q & 2) == 0) ? s : -s;
}

T ew_tan(T x) {
  if (isnan(x) || isinf(x)) return ew_nan();
  if (x == T(0)) return x;
  int q;
  T r = ew_trig_reduce(x, q);
  T s = ew_sin_poly(r), c = ew_cos_poly(r);
  return ((q & 1) == 0) ? s / c : -c / s;
}

T ew_atan(T x) {
  if (isnan(x)) return x;
  T t = abs(x);
  bool inv = t > T(1);
  if (inv) t = T(1) / t;
  bool shift = t > EW_TAN_PI_8;
  if (shift) t = (t - T(1)) / (t + T(1));  // atan(t) = pi/4 + atan((t - 1) / (t + 1))
  T u = t / (T(1) + sqrt(T(1) + t * t));   // atan(t) = 2 atan(u), |u| <= tan(pi/16)
  precise T a = T(2) * ew_atan_poly(u);
  if (shift) a = EW_PI_4_HI + (EW_PI_4_LO + a);
  if (inv) a = EW_PI_2_HI - (a - EW_PI_2_LO);
  return ew_copysign(a, x);
}

// C's atan2, signed zeros and infinities included.
T ew_atan2(T y, T x) {
  if (isnan(x) || isnan(y)) return ew_nan();
  if (isinf(x)) {
    if (isinf(y)) return ew_copysign(x > T(0) ? EW_PI_4_HI : EW_3PI_4_HI, y);
    return ew_copysign(x > T(0) ? T(0) : EW_PI_HI, y);
  }
  if (y == T(0)) return (x > T(0) || (x == T(0) && !ew_signbit(x))) ? y : ew_copysign(EW_PI_HI, y);
  if (x == T(0) || isinf(y)) return ew_copysign(EW_PI_2_HI, y);
  precise T a = ew_atan(abs(y / x));
  if (x < T(0)) a = EW_PI_HI - (a - EW_PI_LO);
  return ew_copysign(a, y);
}

T ew_asin(T x) {
  if (isnan(x)) return x;
  if (abs(x) > T(1)) return ew_nan();
  return ew_atan2(x, sqrt((T(1) - x) * (T(1) + x)));
}

T ew_acos(T x) {
  if (isnan(x)) return x;
  if (abs(x) > T(1)) return ew_nan();
  return T(2) * ew_atan2(sqrt(T(1) - x), sqrt(T(1) + x));
}

// ---- hyperbolic ---------------------------------------------------------------------------

// exp(|x|) / 2 without overflowing where the result still fits: (e^(|x|/2) / 2) * e^(|x|/2).
T ew_half_exp(T ax) {
  T h = ew_exp(T(0.5) * ax);
  return (T(0.5) * h) * h;
}

T ew_sinh(T x) {
  if (isnan(x)) return x;
  T ax = abs(x);
  T r;
  if (ax < T(1)) {
    T t = ew_expm1(ax);
    r = T(0.5) * (t + t / (t + T(1)));
  } else if (ax < T(22)) {
    T e = ew_exp(ax);
    r = T(0.5) * (e - T(1) / e);
  } else {
    r = ew_half_exp(ax);
  }
  return ew_copysign(r, x);
}

T ew_cosh(T x) {
  if (isnan(x)) return x;
  T ax = abs(x);
  if (ax < T(22)) {
    T e = ew_exp(ax);
    return T(0.5) * (e + T(1) / e);
  }
  return ew_half_exp(ax);
}

T ew_tanh(T x) {
  if (isnan(x)) return x;
  T ax = abs(x);
  T r = T(1);
  if (ax < T(22)) {
    T t = ew_expm1(T(2) * ax);
    r = t / (t + T(2));
  }
  return ew_copysign(r, x);
}

T ew_asinh(T x) {
  if (isnan(x) || isinf(x)) return x;
  T ax = abs(x);
  T r;
  if (ax > EW_ASINH_BIG) {
    r = ew_log(ax) + EW_LN2;
  } else {
    T x2 = ax * ax;
    r = ew_log1p(ax + x2 / (T(1) + sqrt(T(1) + x2)));
  }
  return ew_copysign(r, x);
}

T ew_acosh(T x) {
  if (isnan(x)) return x;
  if (x < T(1)) return ew_nan();
  if (x > EW_ASINH_BIG) return isinf(x) ? x : ew_log(x) + EW_LN2;
  precise T t = x - T(1);
  return ew_log1p(t + sqrt(T(2) * t + t * t));
}

T ew_atanh(T x) {
  if (isnan(x)) return x;
  T ax = abs(x);
  if (ax > T(1)) return ew_nan();
  if (ax == T(1)) return ew_copysign(ew_inf(), x);
  return ew_copysign(T(0.5) * ew_log1p(T(2) * ax / (T(1) - ax)), x);
}

// ---- error function -----------------------------------------------------------------------

// cr_split, cr_two_prod, cr_div_rn, cr_sqrt_rn: shared with the foreach kernels.
#define CR_SPLITTER EW_SPLIT
#if defined(EW_DOUBLE)
#define CR_RESIDUAL_MAX 1.0e150lf
#define CR_RESIDUAL_MIN 1.0e-140lf
#else
#define CR_RESIDUAL_MAX 1.0e15
#define CR_RESIDUAL_MIN 1.0e-15
#endif
#include "correct_rounding.glsl"

// exp(-x^2) without the rounding error of x^2.
T ew_exp_neg_sq(T x) {
  T hi, lo;
  cr_split(x, hi, lo);
  return ew_exp(-(hi * hi)) * ew_exp(-(lo * (x + hi)));
}

// exp(-x^2) for 0 <= x <= EW_ERFC_XMAX, as ew_exp_neg_sq but with the small factor
// exp(-lo (x + hi)) by Taylor (|lo (x + hi)| < 2^-11 x^2 <= 0.05 in float) and no range checks.
T ew_exp_neg_sq_bounded(T x) {
  T hi, lo;
  cr_split(x, hi, lo);
  T t = -(lo * (x + hi));
  T small = T(1) + t * (T(1) + t * (T(0.5) + t * (T(1.0 / 6.0) + t * T(1.0 / 24.0))));
  T y = -(hi * hi);  // exact: hi has half the mantissa
  T n = ew_round_even(y * EW_LOG2E);
  precise T r = (y - n * EW_LN2_HI) - n * EW_LN2_LO;
  return ew_exp_scaled(r, n) * small;
}

// The factors of erfc(a) = exp(-a^2) erfcx(a) for a >= 0: returns erfcx and sets e = exp(-a^2),
// both at a clamped into erfcx's range [1/2, EW_ERFC_XMAX] (e only above). No branch on the
// value: activations put a warp's lanes on both sides of 1/2, 2 and EW_ERFC_XMAX, and branches
// would run each path; callers select past the range, and below 1/2 (erf's polynomial).
T ew_erfc_factors(T a, out T e) {
  T c = min(a, EW_ERFC_XMAX);
  e = ew_exp_neg_sq_bounded(c);
  return ew_erfcx(max(c, T(0.5)));
}

// erfc(x) for x >= 1/2.
T ew_erfc_pos(T x) {
  T e, cx = ew_erfc_factors(x, e);
  return (x > EW_ERFC_XMAX) ? T(0) : e * cx;
}

T ew_erf(T x) {
  T ax = abs(x);
  T big = ew_copysign(T(1) - ew_erfc_pos(ax), x);
  T r = (ax < T(0.5)) ? ew_erf_poly(x) : big;
  return isnan(x) ? x : r;
}

T ew_erfc(T x) {
  T ax = abs(x), tail = ew_erfc_pos(ax);
  T big = (x < T(0)) ? T(2) - tail : tail;
  T r = (ax < T(0.5)) ? T(1) - ew_erf_poly(x) : big;
  return isnan(x) ? x : r;
}

// f * erfc(-x / sqrt 2), with the rounding error of -x / sqrt 2 taken into the tail (its
// relative effect grows like 2 z zl); also fd * exp(-(x^2 / 2)) for gelu's gradient. The
// factors multiply before exp(-z^2) does: a normal result never passes through a subnormal
// intermediate, which NVIDIA's driver flushes to zero (gelu(-13.2) would read 0).
T ew_erfc_neg_scaled(T x, T f, T fd, out T density) {
  T z = -x * EW_SQRT1_2, zh, zl;
  cr_two_prod(-x, EW_SQRT1_2_HI, zh, zl);  // NaN for |x| > 1e34: a > EW_ERFC_XMAX selects then
  zl += -x * EW_SQRT1_2_LO;
  T a = abs(z), s_zl = (z < T(0)) ? -zl : zl;
  T e, cx = ew_erfc_factors(abs(zh), e);
  T tail = e * (f * (cx - s_zl * EW_2_SQRTPI));
  // Past EW_ERFC_XMAX: zeros with f's and fd's signs, as 0 * f (callers handle infinite x).
  tail = (a > EW_ERFC_XMAX) ? ew_copysign(T(0), f) : tail;
  // exp(-(zh + zl)^2) = exp(-zh^2) (1 - 2 zh zl) to first order.
  density = (a > EW_ERFC_XMAX) ? ew_copysign(T(0), fd) : e * (fd * (T(1) - T(2) * zh * zl));
  T big = (z < T(0)) ? T(2) * f - tail : tail;
  return (a < T(0.5)) ? f * (T(1) - ew_erf_poly(z)) : big;
}

#include "ew_math_ops.glsl"
#include "ew_math_extra.glsl"
#include "ew_math_special.glsl"
#include "ew_math_poly.glsl"
#include "ew_math_bessel.glsl"
#include "ew_math_igamma.glsl"

#undef T
