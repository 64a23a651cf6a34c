// Gamma-family, Bessel and normal-distribution special functions for T = float or double;
// included by ew_math.glsl. Constants and fitted kernels: ew_special_f32/f64.glsl (generated).
// digamma, trigamma and zeta follow the recurrences and series of PyTorch's CPU kernels (same
// cutoffs), so results agree to rounding; the others are our own formulations, checked against
// float64 references.
#if defined(EW_DOUBLE)
#include "ew_special_f64.glsl"
#else
#include "ew_special_f32.glsl"
#endif

// ---- lgamma -----------------------------------------------------------------------------------

// lgamma(x) for x > 0: the series of lgamma(2 + e) around 1 and 2, the recurrence down to
// [1.5, 2.5) below Stirling's range, Stirling's series above.
T ew_lgamma_pos(T x) {
  if (isinf(x)) return x;
  if (x < T(0.5)) return x * ew_lgamma2_poly(x) - ew_log1p(x) - ew_log(x);  // lgamma(x + 1) - log x
  if (x < T(1.5)) {
    T e = x - T(1);  // exact
    return e * ew_lgamma2_poly(e) - ew_log1p(e);
  }
  if (x < T(2.5)) {
    T e = x - T(2);
    return e * ew_lgamma2_poly(e);
  }
  if (x < EW_LGAMMA_STIRLING) {
    T prod = T(1);
    while (x >= T(2.5)) {
      x -= T(1);
      prod *= x;
    }
    T e = x - T(2);
    return e * ew_lgamma2_poly(e) + ew_log(prod);
  }
  T lx = ew_log(x);
  T z = T(1) / (x * x);
  return (x - T(0.5)) * lx - x + EW_HALF_LOG_2PI + ew_stirling_poly(z) / x;
}

// x - round(x), exact: sin(pi x) and tan(pi x) from it keep their accuracy next to integers,
// where pi * x would carry the rounding error of a large product.
T ew_frac_near(T x) { return x - ew_round_even(x); }
T ew_abs_sinpi(T x) { return abs(ew_sin(EW_PI_HI * ew_frac_near(x))); }

T ew_lgamma(T x) {
  if (isnan(x)) return x;
  if (x > T(0)) return ew_lgamma_pos(x);
  if (isinf(x) || x == floor(x)) return ew_inf();  // poles, -inf included
  // Reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x).
  return EW_LOG_PI - ew_log(ew_abs_sinpi(x)) - ew_lgamma_pos(T(1) - x);
}

// ---- digamma, trigamma, Hurwitz zeta, polygamma ---------------------------------------------

T ew_digamma_pos(T x) {  // x > 0 or NaN
  T result = T(0);
  while (x < T(10)) {
    result -= T(1) / x;
    x += T(1);
  }
  if (x == T(10)) return result + EW_PSI_10;
  T y = T(0);
  if (x < T(1e17)) {
    T z = T(1) / (x * x);
    y = z * ew_digamma_poly(z);
  }
  return result + ew_log(x) - T(0.5) / x - y;
}

T ew_digamma(T x) {
  if (x == T(0)) return ew_copysign(ew_inf(), -x);  // digamma(+-0) = -+inf
  if (x < T(0)) {
    if (x == trunc(x)) return ew_nan();
    // digamma(1 - x) - pi / tan(pi x), tan's argument reduced exactly to [-pi/2, pi/2] (the
    // CPU computes this term in double for float inputs: accurate next to the poles too).
    return ew_digamma_pos(T(1) - x) - EW_PI_HI / ew_tan(EW_PI_HI * ew_frac_near(x));
  }
  return ew_digamma_pos(x);
}

T ew_trigamma(T x) {
  T sign = T(1), result = T(0);
  if (x < T(0.5)) {
    sign = T(-1);
    // The CPU's sin(pi * x) and pi * pi in the compute type, kept for parity: pi * x carries a
    // rounding error that matters next to the poles, on the CPU alike.
    T s = ew_sin(EW_PI_HI * x);
    result -= ew_div(EW_PI_HI * EW_PI_HI, s * s);
    x = T(1) - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += T(1) / (x * x);
    x += T(1);
  }
  T ixx = T(1) / (x * x);
  result += (T(1) + T(1) / (T(2) * x) +
             ixx * (T(1) / T(6) - ixx * (T(1) / T(30) - ixx * (T(1) / T(42))))) / x;
  return sign * result;
}

// Hurwitz zeta(s, q) by Euler-Maclaurin summation (direct terms to q + 9, then 12 corrections
// with the coefficients (2k)! / B_2k).
T ew_zeta(T s, T q) {
  const T machep = EW_EPS * T(0.5);  // PyTorch's double epsilon; float's is coarser
  if (s == T(1)) return ew_inf();
  if (s < T(1)) return ew_nan();
  if (q <= T(0)) {
    if (q == floor(q)) return ew_inf();
    if (s != floor(s)) return ew_nan();
  }
  T sum = ew_pow(q, -s), a = q, b = T(0);
  int i = 0;
  while (i < 9 || a <= T(9)) {
    i += 1;
    a += T(1);
    b = ew_pow(a, -s);
    sum += b;
    if (-machep * sum < b && b < machep * sum) return sum;
  }
  T w = a;
  sum += b * w / (s - T(1));
  sum -= T(0.5) * b;
  a = T(1);
  T k = T(0);
  for (int j = 0; j < 12; ++j) {
    a *= s + k;
    b /= w;
    T t = a * b / EW_ZETA_A[j];
    sum += t;
    if (abs(t / sum) < machep) return sum;
    k += T(1);
    a *= s + k;
    b /= w;
    k += T(1);
  }
  return sum;
}

// polygamma(n, x); signed_factorial = (-1)^(n+1) n! (from the host, in double).
T ew_polygamma(T x, T n, T signed_factorial) {
  if (n == T(0)) return ew_digamma(x);
  if (n == T(1)) return ew_trigamma(x);
  return signed_factorial * ew_zeta(n + T(1), x);
}

// ---- modified Bessel functions I0, I1 ------------------------------------------------------

// I0(x) and I1(x) / (x / 2) for |x| <= 8 by their power series in (x/2)^2: positive terms, so
// the sum is accurate to a few ulp. The ratios are correctly rounded divisions: a driver's 2.5-ulp
// division, compounded over some 30 terms, can put float32 I0 off by 1e-5.
T ew_i0_series(T x) {
  T y = T(0.25) * x * x, term = T(1), sum = T(1);
  for (int k = 1; k < 40; ++k) {
    term *= cr_div_rn(y, T(k * k));
    sum += term;
    if (term < sum * T(0.25) * EW_EPS) break;
  }
  return sum;
}
T ew_i1_series(T x) {
  T y = T(0.25) * x * x, term = T(1), sum = T(1);
  for (int k = 1; k < 40; ++k) {
    term *= cr_div_rn(y, T(k * (k + 1)));
    sum += term;
    if (term < sum * T(0.25) * EW_EPS) break;
  }
  return sum;
}

// exp(ax) * g for g < 1 where exp(ax) alone may overflow before the product does: h * g * h with
// h = exp(ax / 2), one h scaled by 2^-64 (exact) so that no order of the three factors leaves the
// float range (h * g * h may give inf for I0(89), whose value is finite), then 2^64 back.
T ew_exp_times(T ax, T g) {
  T h = ew_exp(T(0.5) * ax);
  precise T hs = h * T(5.42101086242752217e-20);  // 2^-64
  precise T r = (h * g) * hs;
  return r * T(18446744073709551616.0);  // 2^64: overflows to inf only when the result does
}

// scaled: multiply by exp(-|x|) (i0e, i1e) instead of exp(|x|) above 8.
T ew_bessel_i0(T x, bool scaled) {
  if (isnan(x)) return x;
  T ax = abs(x);
  if (ax <= T(8)) return scaled ? ew_i0_series(ax) * ew_exp(-ax) : ew_i0_series(ax);
  T g = cr_div_rn(ew_i0_asym(cr_div_rn(T(8), ax)), cr_sqrt_rn(ax));
  if (scaled) return g;
  return ew_exp_times(ax, g);
}
T ew_bessel_i1(T x, bool scaled) {
  if (isnan(x)) return x;
  T ax = abs(x), r;
  if (ax <= T(8)) {
    r = T(0.5) * ax * ew_i1_series(ax);
    if (scaled) r *= ew_exp(-ax);
  } else {
    T g = cr_div_rn(ew_i1_asym(cr_div_rn(T(8), ax)), cr_sqrt_rn(ax));
    r = scaled ? g : ew_exp_times(ax, g);
  }
  return (x < T(0)) ? -r : r;
}

// ---- normal distribution and erfinv --------------------------------------------------------

// log(Phi(x)): log(erfcx(-x/sqrt2) / 2) - x^2/2 in the left tail, log1p(-erfc(x/sqrt2) / 2)
// elsewhere (as the CPU computes it).
T ew_log_ndtr(T x) {
  T t = x * EW_SQRT1_2;
  if (x < T(-1)) return ew_log(ew_erfcx_full(-t) * T(0.5)) - t * t;
  return ew_log1p(T(-0.5) * ew_erfc(t));
}

// Abramowitz-Stegun 26.2.23: -Phi^-1(p) for 0 < p <= 1/2 to 4.5e-4, the start for Halley.
T ew_ndtri_guess(T p) {
  T t = sqrt(T(-2) * ew_log(p));
  T num = T(2.515517) + t * (T(0.802853) + t * T(0.010328));
  T den = T(1) + t * (T(1.432788) + t * (T(0.189269) + t * T(0.001308)));
  return t - num / den;
}

// Phi^-1(p): the guess, then Halley steps on Phi(x) - p with Phi from erfc (relative accuracy
// in the tail, where p is tiny); cubic convergence, three steps reach double precision.
T ew_ndtri(T p) {
  if (isnan(p) || p < T(0) || p > T(1)) return ew_nan();
  if (p == T(0)) return -ew_inf();
  if (p == T(1)) return ew_inf();
  bool upper = p > T(0.5);
  T q = upper ? T(1) - p : p;  // exact
  T x = -ew_ndtri_guess(q);
  for (int i = 0; i < 3; ++i) {
    T phi = EW_INV_SQRT2PI * ew_exp_neg_sq(x * EW_SQRT1_2);
    T r = (T(0.5) * ew_erfc(-x * EW_SQRT1_2) - q) / phi;  // f / f'
    x -= r / (T(1) + T(0.5) * x * r);                    // f'' / f' = -x
  }
  return upper ? -x : x;
}

// erfinv(y): Halley on erf(x) - |y| below 1/2 and on erfc(x) - (1 - |y|) above, so the tail
// keeps relative accuracy; starts from the Maclaurin series or the normal-quantile guess.
T ew_erfinv(T y) {
  if (isnan(y) || abs(y) > T(1)) return ew_nan();
  T a = abs(y);
  if (a == T(1)) return ew_copysign(ew_inf(), y);
  bool tail = a >= T(0.5);
  T q = T(1) - a;  // exact for a >= 1/2
  T x;
  if (tail) {
    x = ew_ndtri_guess(T(0.5) * q) * EW_SQRT1_2;
  } else {
    T z = a * a;  // sqrt(pi)/2 (a + pi/12 a^3 + 7 pi^2/480 a^5 + 127 pi^3/40320 a^7)
    x = EW_SQRT_PI_2 * a *
        (T(1) + z * (T(0.2617993877991494) + z * (T(0.14393173084921979) +
                                                 z * T(0.09766361950392052))));
  }
  for (int i = 0; i < 3; ++i) {
    T d = EW_2_SQRTPI * ew_exp_neg_sq(x);
    T r = tail ? (ew_erfc(x) - q) / -d : (ew_erf(x) - a) / d;
    x -= r / (T(1) + x * r);
  }
  return ew_copysign(x, y);
}
