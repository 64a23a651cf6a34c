// Complex functions on C = (real, imaginary) pairs of T, built on the real functions of
// ew_math.glsl. Results follow PyTorch's CPU kernels: C99 Annex G (glibc's cexp, clog, csqrt,
// csinh, ccosh, ctanh, casinh, catanh) for infinities, NaNs and signed zeros, c10::complex's
// division for reciprocal, sigmoid and rsqrt, and componentwise division by ln 2 / ln 10 for
// log2 / log10. Trigonometric functions go through their hyperbolic twins:
// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz), asin z = -i asinh(iz),
// atan z = -i atanh(iz), acos z = pi/2 - asin z, acosh z = +-i acos z.
#if defined(EW_DOUBLE)
#define C dvec2
#define CM_ASYMPTOTIC 1.0e17lf  // |z| past which asinh z = log(2z) to the last bit
#define CM_LN10 2.302585092994046lf
#define CM_BIG 709.0lf  // int((max exponent - 1) ln 2): e^x (cos y, sin y) goes in factors past it
#define CM_MAX 1.7976931348623157e308lf
#define CM_HALF_BIG 354.0lf  // int((max exponent - 1) ln 2 / 2): tanh's threshold
#define CM_EPS 2.220446049250313e-16lf
#else
#define C vec2
#define CM_ASYMPTOTIC 1.0e9
#define CM_LN10 2.302585093
#define CM_BIG 88.0
#define CM_MAX 3.402823466e38
#define CM_HALF_BIG 44.0
#define CM_EPS 1.192092896e-07
#endif

C c_mul(C a, C b) { return C(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

// v / +0 spelled out: a driver may compute a division as v * (1 / d), which gives 0 / 0 = 0.
T c_div_by_zero(T v) { return (v == T(0) || isnan(v)) ? ew_nan() : ew_copysign(ew_inf(), v); }

// c10::complex's division: Smith's scaling; a zero divisor gives inf or NaN parts.
C c_div(C a, C b) {
  T ac = abs(b.x), ad = abs(b.y);
  if (ac >= ad) {
    if (ac == T(0) && ad == T(0)) return C(c_div_by_zero(a.x), c_div_by_zero(a.y));
    T rat = b.y / b.x;
    T scl = T(1) / (b.x + b.y * rat);
    return C((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }
  T rat = b.x / b.y;
  T scl = T(1) / (b.y + b.x * rat);
  return C((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}

// c_div(1, b) with the zero terms of the constant numerator spelled out: compilers fold 0 - v
// into -v and 0 + v into v, which flips the sign of zero results (0 - 0 is +0).
T c_plus_zero(T v) { return v == T(0) ? T(0) : v; }
C c_recip(C b) {
  T ac = abs(b.x), ad = abs(b.y);
  if (ac >= ad) {
    if (ac == T(0) && ad == T(0)) return C(ew_inf(), ew_nan());
    T rat = b.y / b.x;  // |rat| <= 1 or NaN
    T scl = T(1) / (b.x + b.y * rat);
    return C((isnan(rat) ? rat : T(1)) * scl, c_plus_zero(-rat) * scl);
  }
  T rat = b.x / b.y;
  T scl = T(1) / (b.y + b.x * rat);
  return C(c_plus_zero(rat) * scl, (isnan(rat) ? rat : T(-1)) * scl);
}

// i z and -i z.
C c_times_i(C z) { return C(-z.y, z.x); }
C c_times_minus_i(C z) { return C(z.y, -z.x); }

// z = 2^k s with the larger part of s in [1/2, 1): |s| neither overflows nor underflows.
// z finite and not zero.
void c_scale(C z, out C s, out int k) {
  T m = max(abs(z.x), abs(z.y));
  int e;
  ew_frexp(m, e);
  k = e;
  s = C(ew_ldexp(z.x, -k), ew_ldexp(z.y, -k));
}

// e^rx (c, s) for rx > CM_BIG without overflowing where the result fits, as glibc: (c, s) take
// the factor `first` (e^CM_BIG, or half of it for sinh and cosh), then e^(rx - CM_BIG), with one
// more e^CM_BIG factor when that is still past CM_BIG.
C c_exp_big(T rx, T cos_y, T sin_y, T first) {
  // precise: folding the factors into one constant would turn 0 * (factor overflowing) into NaN.
  precise T c = cos_y, s = sin_y;
  T exp_t = ew_exp(CM_BIG);
  rx -= CM_BIG;
  s *= first;
  c *= first;
  if (rx > CM_BIG) {
    rx -= CM_BIG;
    s *= exp_t;
    c *= exp_t;
  }
  precise C r;
  if (rx > CM_BIG) {
    r = C(CM_MAX * c, CM_MAX * s);
  } else {
    T e = ew_exp(rx);
    r = C(e * c, e * s);
  }
  return r;
}

C c_exp(C z) {
  T x = z.x, y = z.y;
  if (isnan(x)) return C(x, y == T(0) ? y : ew_nan());
  if (isinf(x)) {
    if (isinf(y) || isnan(y)) return x > T(0) ? C(x, ew_nan()) : C(T(0), ew_copysign(T(0), y));
    if (y == T(0)) return C(x > T(0) ? x : T(0), y);
    T m = x > T(0) ? x : T(0);
    return C(m * ew_cos(y), m * ew_sin(y));
  }
  if (isinf(y) || isnan(y)) return C(ew_nan(), ew_nan());
  if (y == T(0)) return C(ew_exp(x), y);
  T c = ew_cos(y), s = ew_sin(y);
  if (x > CM_BIG) return c_exp_big(x, c, s, ew_exp(CM_BIG));
  T e = ew_exp(x);
  return C(e * c, e * s);
}

// c10::complex's expm1: (e^x - 1) cos y - 2 sin^2(y / 2) + i e^x sin y.
C c_expm1(C z) {
  T a = ew_sin(T(0.5) * z.y);
  return C(ew_expm1(z.x) * ew_cos(z.y) - T(2) * a * a, ew_exp(z.x) * ew_sin(z.y));
}

C c_log(C z) {
  T x = z.x, y = z.y;
  if (isnan(x) || isnan(y)) {
    return (isinf(x) || isinf(y)) ? C(ew_inf(), ew_nan()) : C(ew_nan(), ew_nan());
  }
  T arg = ew_atan2(y, x);
  if (isinf(x) || isinf(y)) return C(ew_inf(), arg);
  if (x == T(0) && y == T(0)) return C(-ew_inf(), arg);
  C s;
  int k;
  c_scale(z, s, k);
  T m = max(abs(s.x), abs(s.y)), n = min(abs(s.x), abs(s.y));
  T re;
  if (k == 0 || k == 1) {
    // |z| near 1: log|z| = log1p(|z|^2 - 1) / 2 with |z|^2 - 1 = (m - 1)(m + 1) + n^2.
    T am = ew_ldexp(m, k), an = ew_ldexp(n, k);
    precise T d = (am - T(1)) * (am + T(1)) + an * an;
    re = T(0.5) * ew_log1p(d);
  } else {
    re = T(0.5) * ew_log(m * m + n * n) + T(k) * EW_LN2;
  }
  return C(re, arg);
}

// c10::complex's log1p on the CPU (Kahan's): u = 1 + z; z where u rounds to 1, log u where
// u - 1 gives z back, else log u * (z / (u - 1)), the rounding of 1 + z cancelling.
C c_log1p(C z) {
  precise C u = C(z.x + T(1), z.y);
  if (u.x == T(1) && u.y == T(0)) return z;
  C lu = c_log(u);
  precise C um1 = C(u.x - T(1), u.y);
  if (um1.x == z.x && um1.y == z.y) return lu;
  return c_mul(lu, c_div(z, um1));
}

C c_sqrt(C z) {
  T x = z.x, y = z.y;
  if (isinf(y)) return C(ew_inf(), y);
  if (isinf(x)) {
    if (x > T(0)) return C(x, isnan(y) ? y : ew_copysign(T(0), y));
    return C(isnan(y) ? y : T(0), ew_copysign(ew_inf(), y));
  }
  if (isnan(x) || isnan(y)) return C(ew_nan(), ew_nan());
  if (y == T(0)) {
    if (x == T(0)) return C(T(0), y);
    return x > T(0) ? C(sqrt(x), y) : C(T(0), ew_copysign(sqrt(-x), y));
  }
  // Kahan: r = sqrt((|z| + |x|) / 2), the other part y / (2 r); scaled by an even power of two.
  C s;
  int k;
  c_scale(z, s, k);
  if ((k & 1) != 0) {
    s *= T(2);
    k -= 1;
  }
  T t = sqrt(T(0.5) * (sqrt(s.x * s.x + s.y * s.y) + abs(s.x)));
  T u = abs(s.y) / (T(2) * t);
  t = ew_ldexp(t, k / 2);
  u = ew_ldexp(u, k / 2);
  return x > T(0) ? C(t, ew_copysign(u, y)) : C(u, ew_copysign(t, y));
}

C c_sinh(C z) {
  T x = z.x, y = z.y;
  if (isnan(x)) return C(x, y == T(0) ? y : ew_nan());
  if (isinf(y) || isnan(y)) {
    if (isinf(x) || x == T(0)) return C(x, ew_nan());
    return C(ew_nan(), ew_nan());
  }
  if (isinf(x) && y == T(0)) return C(x, y);
  T c = ew_cos(y), s = ew_sin(y);
  if (abs(x) > CM_BIG && !isinf(x)) {  // sinh x = sign(x) cosh x = sign(x) e^|x| / 2
    return c_exp_big(abs(x), ew_signbit(x) ? -c : c, s, ew_exp(CM_BIG) / T(2));
  }
  return C(ew_sinh(x) * c, ew_cosh(x) * s);
}

C c_cosh(C z) {
  T x = z.x, y = z.y;
  if (isnan(x)) return C(x, y == T(0) ? y : ew_nan());
  if (isinf(y) || isnan(y)) {
    if (isinf(x)) return C(ew_inf(), ew_nan());
    if (x == T(0)) return C(ew_nan(), T(0));
    return C(ew_nan(), ew_nan());
  }
  if (isinf(x) && y == T(0)) return C(ew_inf(), x > T(0) ? y : -y);
  T c = ew_cos(y), s = ew_sin(y);
  if (abs(x) > CM_BIG && !isinf(x)) {
    return c_exp_big(abs(x), c, ew_signbit(x) ? -s : s, ew_exp(CM_BIG) / T(2));
  }
  return C(ew_cosh(x) * c, ew_sinh(x) * s);
}

C c_tanh(C z) {
  T x = z.x, y = z.y;
  if (isnan(x)) return C(x, y == T(0) ? y : ew_nan());
  if (isinf(x)) {
    T im = (isinf(y) || isnan(y)) ? ew_copysign(T(0), y)
                                   : ew_copysign(T(0), ew_sin(y) * ew_cos(y));
    return C(ew_copysign(T(1), x), im);
  }
  if (isinf(y) || isnan(y)) return x == T(0) ? C(x, ew_nan()) : C(ew_nan(), ew_nan());
  T s = ew_sin(y), c = ew_cos(y);
  if (abs(x) > CM_HALF_BIG) {  // tanh x is 1 to the last bit; Im = 4 sin y cos y e^(-2|x|)
    T exp_2t = ew_exp(T(2) * CM_HALF_BIG), rx = abs(x) - CM_HALF_BIG;
    T im = T(4) * s * c / exp_2t;
    im = rx > CM_HALF_BIG ? im / exp_2t : im / ew_exp(T(2) * rx);
    return C(ew_copysign(T(1), x), im);
  }
  T sh = ew_sinh(x), ch = ew_cosh(x);
  T den = abs(sh) > abs(c) * CM_EPS ? sh * sh + c * c : c * c;
  return C(sh * ch / den, s * c / den);
}

// asinh: Annex G's table for non-finite parts; log(z + sqrt(z^2 + 1)) in the right half-plane
// (no cancellation there), odd symmetry for the left; log(2z) where z^2 + 1 rounds to z^2.
C c_asinh(C z) {
  T x = z.x, y = z.y;
  if (isnan(x)) return C(isinf(y) ? ew_inf() : x, y == T(0) ? y : ew_nan());
  if (isnan(y)) return C(isinf(x) ? x : ew_nan(), ew_nan());
  if (isinf(x) || isinf(y)) {
    T im = isinf(x) ? (isinf(y) ? EW_PI_4_HI : T(0)) : EW_PI_2_HI;
    return C(ew_copysign(ew_inf(), x), ew_copysign(im, y));
  }
  if (y == T(0)) return C(ew_asinh(x), y);  // the real axis
  if (x == T(0)) {  // the imaginary axis: i asin y inside the cut, acosh |y| + i pi/2 on it
    if (abs(y) <= T(1)) return C(x, ew_asin(y));
    return C(ew_copysign(ew_acosh(abs(y)), x), ew_copysign(EW_PI_2_HI, y));
  }
  bool neg = ew_signbit(x);
  C w = neg ? -z : z;
  C r;
  if (max(abs(w.x), abs(w.y)) > CM_ASYMPTOTIC) {
    r = c_log(w);
    r.x += EW_LN2;
  } else {
    C sq = C(T(1) + (w.x - w.y) * (w.x + w.y), T(2) * w.x * w.y);
    r = c_log(w + c_sqrt(sq));
  }
  if (w.y == T(0)) r.y = w.y;  // real axis: a signed zero imaginary part, as glibc's
  return neg ? -r : r;
}

// atanh: Re = log(((1 + x)^2 + y^2) / ((1 - x)^2 + y^2)) / 4, Im = atan2(2y, (1 - x)(1 + x) - y^2) / 2.
C c_atanh(C z) {
  T x = z.x, y = z.y;
  if (isinf(x) || isinf(y)) {
    return C(ew_copysign(T(0), x), isnan(y) ? y : ew_copysign(EW_PI_2_HI, y));
  }
  if (isnan(x) || isnan(y)) return x == T(0) ? C(x, ew_nan()) : C(ew_nan(), ew_nan());
  if (y == T(0) && abs(x) == T(1)) return C(ew_copysign(ew_inf(), x), y);
  if (abs(x) == T(1) && abs(y) < CM_EPS * CM_EPS) {  // (1 - x)^2 + y^2 underflows: glibc's limit
    T re = ew_copysign(T(0.5), x) * (EW_LN2 - ew_log(abs(y)));
    return C(re, T(0.5) * ew_atan2(T(2) * y, (T(1) - x) * (T(1) + x) - y * y));
  }
  if (max(abs(x), abs(y)) > CM_ASYMPTOTIC) {  // atanh z = 1/z + i pi/2 sign(y), to the last bit
    return C(ew_copysign(c_recip(z).x, x), ew_copysign(EW_PI_2_HI, y));
  }
  // glibc's real part: log(num / den) / 4 where the quotient is small, else log1p(4x / den) / 4.
  T omx = T(1) - x, opx = T(1) + x, y2 = y * y;
  T num = opx * opx + y2, den = omx * omx + y2;
  T f = num / den;
  T re = f < T(0.5) ? T(0.25) * ew_log(f) : T(0.25) * ew_log1p(T(4) * x / den);
  T im = T(0.5) * ew_atan2(T(2) * y, omx * (T(1) + x) - y * y);
  return C(re, im);
}

C c_acos(C z) {
  C w = c_times_minus_i(c_asinh(c_times_i(z)));  // asin z
  T re = EW_PI_2_HI - w.x;
  return C(re == T(0) ? T(0) : re, -w.y);
}

C c_acosh(C z) {
  C w = c_acos(z);
  return ew_signbit(z.y) ? C(w.y, -w.x) : C(-w.y, w.x);
}

// glibc's cpow: exp(b log a).
C c_pow(C a, C b) { return c_exp(c_mul(b, c_log(a))); }

C c_apply(uint op, C z, C b) {
  switch (op) {
    case CM_EXP: return c_exp(z);
    case CM_EXP2: return c_exp(z * EW_LN2);
    case CM_EXPM1: return c_expm1(z);
    case CM_LOG: return c_log(z);
    case CM_LOG2: return c_log(z) / EW_LN2;
    case CM_LOG10: return c_log(z) / CM_LN10;
    case CM_LOG1P: return c_log1p(z);
    case CM_SQRT: return c_sqrt(z);
    case CM_RSQRT: return c_recip(c_sqrt(z));
    case CM_RECIPROCAL: return c_recip(z);
    case CM_SIGMOID: {
      C w = c_exp(-z);
      return c_recip(C(T(1) + w.x, c_plus_zero(w.y)));
    }
    case CM_SIN: return c_times_minus_i(c_sinh(c_times_i(z)));
    case CM_COS: return c_cosh(c_times_i(z));
    case CM_TAN: return c_times_minus_i(c_tanh(c_times_i(z)));
    case CM_SINH: return c_sinh(z);
    case CM_COSH: return c_cosh(z);
    case CM_TANH: return c_tanh(z);
    case CM_ASIN: return c_times_minus_i(c_asinh(c_times_i(z)));
    case CM_ACOS: return c_acos(z);
    case CM_ATAN: return c_times_minus_i(c_atanh(c_times_i(z)));
    case CM_ASINH: return c_asinh(z);
    case CM_ACOSH: return c_acosh(z);
    case CM_ATANH: return c_atanh(z);
    case CM_POW: return c_pow(z, b);
  }
  return C(ew_nan(), ew_nan());
}
