// Regularised incomplete gamma functions P(a, x) (igamma) and Q(a, x) = 1 - P (igammac) for
// T = float or double; included by ew_math.glsl. Edge cases follow the CPU; values come from the
// power series of P where x <= max(1, a) and the continued fraction of Q elsewhere.

// x^a e^-x / Gamma(a). For a in Stirling's range the exponent is formed as
// a log1p((x-a)/a) - (x-a) - stirling(a), which stays accurate where a log x and x nearly cancel.
T ew_igamma_prefactor(T a, T x) {
  if (a < EW_LGAMMA_STIRLING) return ew_exp(a * ew_log(x) - x - ew_lgamma(a));
  T d = x - a;
  T e = a * ew_log1p(d / a) - d - ew_stirling_poly(T(1) / (a * a)) / a;
  return ew_exp(e) * sqrt(a) * ew_exp(-EW_HALF_LOG_2PI);
}

// sum_n x^n / ((a+1)...(a+n)): P(a, x) = series * prefactor / a.
T ew_igamma_series(T a, T x) {
  T r = a, c = T(1), sum = T(1);
  for (int i = 0; i < 4000; ++i) {
    r += T(1);
    c *= x / r;
    sum += c;
    if (c <= sum * EW_EPS * T(0.5)) break;
  }
  return sum;
}

// Q(a, x) / prefactor by the continued fraction 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...)))
// evaluated with the modified Lentz method.
T ew_igammac_fraction(T a, T x) {
  const T tiny = EW_EPS * EW_EPS * EW_EPS;
  T b = x + T(1) - a, c = T(1) / tiny, d = T(1) / b, h = d;
  for (int i = 1; i < 4000; ++i) {
    T an = -T(i) * (T(i) - a);
    b += T(2);
    d = an * d + b;
    if (abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (abs(c) < tiny) c = tiny;
    d = T(1) / d;
    T del = d * c;
    h *= del;
    if (abs(del - T(1)) < EW_EPS * T(0.5)) break;
  }
  return h;
}

// complement = false: P(a, x); true: Q(a, x).
T ew_igamma(T a, T x, bool complement) {
  // The CPU's order of edge cases: a NaN operand reaches past some of them (igamma(NaN, 0) = 0).
  if (x < T(0) || a < T(0)) return ew_nan();
  if (a == T(0)) {
    if (x > T(0)) return complement ? T(0) : T(1);
    return ew_nan();
  }
  if (x == T(0)) return complement ? T(1) : T(0);
  if (isinf(a)) return isinf(x) ? ew_nan() : (complement ? T(1) : T(0));
  if (isinf(x)) return complement ? T(0) : T(1);
  if (isnan(a) || isnan(x)) return ew_nan();
  T fac = ew_igamma_prefactor(a, x);
  if (x > T(1) && x > a) {
    T q = fac * ew_igammac_fraction(a, x);
    return complement ? q : T(1) - q;
  }
  T p = fac * ew_igamma_series(a, x) / a;
  return complement ? T(1) - p : p;
}
