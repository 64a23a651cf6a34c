// Orthogonal polynomials of torch.special for T = float or double; included by ew_math.glsl.
// They follow the CPU kernels' case analysis (degree truncated to an integer, closed forms in
// acos above a degree threshold, three-term recurrences below), so results agree to rounding.

// The degree as the CPU's cast to int64 gives it: NaN, infinities and out-of-range values
// become negative (x86 yields INT64_MIN), which every polynomial maps to 0. Degrees are capped
// at 2^24: beyond that T cannot count the recurrence's steps exactly.
int ew_poly_degree(T n) {
  T t = trunc(n);
  if (!(t > T(-9.2e18) && t < T(9.2e18))) return -1;
  return int(clamp(t, T(-1), T(16777216)));
}

// Chebyshev polynomials of the first to fourth kinds (kind 0..3 = T, U, V, W) at y; the shifted
// ones pass y = 2x - 1. Above `closed_from` the CPU uses the trigonometric closed forms on |y| < 1.
T ew_chebyshev(T y, T nf, int kind, int closed_from) {
  int n = ew_poly_degree(nf);
  if (n < 0) return T(0);
  T odd = ((n & 1) == 1) ? T(-1) : T(1);  // (-1)^n
  T n1 = T(n) + T(1), n21 = T(n) + T(n) + T(1);
  if (abs(y) == T(1)) {
    bool pos = y > T(0);
    if (kind == 0) return pos ? T(1) : odd;
    if (kind == 1) return pos ? n1 : odd * n1;
    if (kind == 2) return pos ? T(1) : odd * n21;
    return pos ? n21 : odd;
  }
  if (n > closed_from && abs(y) < T(1)) {
    T th = ew_acos(y);
    if (kind == 0) return ew_cos(T(n) * th);
    if (kind == 1) {
      T s = ew_sin(th);
      if (s != T(0)) return ew_sin(n1 * th) / s;
      return n1 * ew_cos(n1 * th) / y;
    }
    if (kind == 2) {
      if (ew_sin(th / T(2)) != T(1)) return ew_cos((T(n) + T(0.5)) * th) / ew_cos(th / T(2));
      return odd * n21;
    }
    if (ew_cos(th / T(2)) != T(1)) return ew_sin((T(n) + T(0.5)) * th) / ew_sin(th / T(2));
    return (y > T(0)) ? n21 : odd;
  }
  if (n == 0) return T(1);
  T first = (kind == 0) ? y : (kind == 1) ? y + y : (kind == 2) ? y + y - T(1) : y + y + T(1);
  T p = T(1), q = first, r = first;
  for (int k = 2; k <= n && !isnan(q); ++k) {
    r = (y + y) * q - p;
    p = q;
    q = r;
  }
  return r;
}

// Physicists' (h) and probabilists' (he) Hermite polynomials; NaN above the CPU's degree limit
// (128 in float, 512 in double), where the CPU gives up too.
T ew_hermite(T x, T nf, bool physicists) {
  int n = ew_poly_degree(nf);
  if (n < 0) return T(0);
  if (n == 0) return T(1);
  if (n == 1) return physicists ? x + x : x;
#if defined(EW_DOUBLE)
  if (n > 512) return ew_nan();
#else
  if (n > 128) return ew_nan();
#endif
  T p = T(1), q = physicists ? x + x : x, r = q;
  if (physicists) {
    for (int k = 2; k < n + n; k += 2) {
      r = (x + x) * q - T(k) * p;
      p = q;
      q = r;
    }
  } else {
    for (int k = 1; k < n; ++k) {
      r = x * q - T(k) * p;
      p = q;
      q = r;
    }
  }
  return r;
}

T ew_laguerre(T x, T nf) {
  int n = ew_poly_degree(nf);
  if (n < 0) return T(0);
  if (x == T(0) || n == 0) return T(1);
  T p = T(1), q = T(1) - x, r = q;
  for (int k = 1; k < n && !isnan(q); ++k) {
    r = ((T(k + k) + (T(1) - x)) * q - T(k) * p) / T(k + 1);
    p = q;
    q = r;
  }
  return r;
}

T ew_legendre(T x, T nf) {
  int n = ew_poly_degree(nf);
  if (n < 0) return T(0);
  if (abs(x) == T(1)) return (x > T(0) || (n & 1) == 0) ? T(1) : T(-1);
  if (n == 0) return T(1);
  T p = T(1), q = x, r = x;
  for (int k = 1; k < n && !isnan(q); ++k) {
    r = (T(k + k + 1) * x * q - T(k) * p) / T(k + 1);
    p = q;
    q = r;
  }
  return r;
}
