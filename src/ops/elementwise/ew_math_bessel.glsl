// Bessel J, Y, K of orders 0 and 1, spherical j0 and Airy Ai for T = float or double; included
// by ew_math.glsl. Our own formulation (power series near 0, fitted asymptotic amplitudes beyond,
// see gen_math_kernels.py) with the CPU's domain rules (NaN below 0 for Y and K, inf at 0,
// NaN for J and Y at infinity).
// Phases use sin x and cos x separately, so x - pi/4 is never rounded.

// Power series in y = x^2/4 around 0 (x <= 5 for J/Y: terms stay below 10, so float loses at
// most a digit to cancellation; x <= 2 for K): out = (sum a_k, sum d_k a_k) where
// a_k = (sgn y)^k / (k! (k+nu)!) and d_k = psi(k+1) + psi(k+1+nu).
void ew_bessel_series(T y, int nu, out T plain, out T weighted) {
  T term = T(1);  // y^k / (k! (k+nu)!) at k = 0
  T psi_a = -EW_EULER, psi_b = (nu == 0) ? -EW_EULER : T(1) - EW_EULER;
  plain = term;
  weighted = term * (psi_a + psi_b);
  for (int k = 1; k < 40; ++k) {
    term *= y / (T(k) * T(k + nu));
    psi_a += T(1) / T(k);
    psi_b += T(1) / T(k + nu);
    plain += term;
    weighted += term * (psi_a + psi_b);
    if (abs(term) < EW_EPS * T(1e-3)) break;
  }
}

T ew_hankel_p(T s, int nu) { return (nu == 0) ? ew_hankel_p0(s) : ew_hankel_p1(s); }
T ew_hankel_q(T s, int nu) { return (nu == 0) ? ew_hankel_q0(s) : ew_hankel_q1(s); }

// J_nu(x), nu = 0 or 1.
T ew_bessel_j(T x, int nu) {
  if (isnan(x)) return x;
  T ax = abs(x), r;
  if (ax <= T(5)) {
    T plain, weighted;
    ew_bessel_series(-T(0.25) * ax * ax, nu, plain, weighted);
    r = (nu == 0) ? plain : T(0.5) * ax * plain;
  } else {  // NaN at infinity, as on the CPU (cos and sin of inf)
    T s = T(25) / (ax * ax), c = ew_cos(ax), sn = ew_sin(ax);
    // theta = x - pi/4 (nu = 0) or x - 3pi/4 (nu = 1), times sqrt2.
    T cth = (nu == 0) ? c + sn : sn - c, sth = (nu == 0) ? sn - c : -(sn + c);
    T p = ew_hankel_p(s, nu), q = ew_hankel_q(s, nu) / ax;
    r = (p * cth - q * sth) * EW_SQRT1_2 * sqrt(EW_2_OVER_PI / ax);
  }
  return (nu == 1 && x < T(0)) ? -r : r;
}

// Y_nu(x): -inf at 0, NaN below.
T ew_bessel_y(T x, int nu) {
  if (isnan(x)) return x;
  if (x == T(0)) return -ew_inf();
  if (x < T(0)) return ew_nan();
  if (x <= T(5)) {
    T plain, weighted;
    ew_bessel_series(-T(0.25) * x * x, nu, plain, weighted);
    T lg = ew_log(T(0.5) * x);
    if (nu == 0) return EW_2_OVER_PI * (lg * plain - T(0.5) * weighted);
    T j1 = T(0.5) * x * plain;
    return EW_2_OVER_PI * (lg * j1 - T(1) / x) - x * weighted / (T(2) * EW_PI_HI);
  }
  T s = T(25) / (x * x), c = ew_cos(x), sn = ew_sin(x);  // NaN at inf, as on the CPU
  T cth = (nu == 0) ? c + sn : sn - c, sth = (nu == 0) ? sn - c : -(sn + c);
  T p = ew_hankel_p(s, nu), q = ew_hankel_q(s, nu) / x;
  return (p * sth + q * cth) * EW_SQRT1_2 * sqrt(EW_2_OVER_PI / x);
}

// K_nu(x) (scaled: times exp(x)): inf at 0, NaN below.
T ew_bessel_k(T x, int nu, bool scaled) {
  if (isnan(x)) return x;
  if (x == T(0)) return ew_inf();
  if (x < T(0)) return ew_nan();
  if (x <= T(2)) {
    T plain, weighted;
    ew_bessel_series(T(0.25) * x * x, nu, plain, weighted);
    T lg = ew_log(T(0.5) * x), r;
    if (nu == 0) {
      r = T(0.5) * weighted - lg * plain;  // plain = I0(x)
    } else {
      r = T(1) / x + lg * (T(0.5) * x * plain) - T(0.25) * x * weighted;
    }
    return scaled ? r * ew_exp(x) : r;
  }
  if (isinf(x)) return T(0);
  T g = ((nu == 0) ? ew_k0_asym(T(2) / x) : ew_k1_asym(T(2) / x)) / sqrt(x);
  return scaled ? g : g * ew_exp(-x);
}

// sin(x) / x, with the CPU's Taylor polynomial below 1/2 and 0 at infinity.
T ew_spherical_j0(T x) {
  if (isinf(x)) return T(0);
  if (abs(x) < T(0.5)) {
    T z = x * x;
    return T(1) + z * (T(-1) / T(6) + z * (T(1) / T(120) + z * (T(-1) / T(5040) +
           z * (T(1) / T(362880) + z * (T(-1) / T(39916800) + z * (T(1) / T(6227020800.0)))))));
  }
  return ew_sin(x) / x;
}

// Airy Ai: Maclaurin series c1 f(x) - c2 g(x) on |x| < 2, fitted amplitudes beyond; NaN at
// +-inf and 0 above 103.892, as on the CPU.
T ew_airy_ai(T x) {
  if (isnan(x) || isinf(x)) return ew_nan();
  if (x > T(103.892)) return T(0);
  T ax = abs(x);
  if (ax < T(2)) {
    T z = x * x * x, f = T(1), g = x, tf = T(1), tg = x;
    for (int k = 0; k < 40; ++k) {
      tf *= z / (T(3 * k + 2) * T(3 * k + 3));
      tg *= z / (T(3 * k + 3) * T(3 * k + 4));
      f += tf;
      g += tg;
      if (abs(tf) + abs(tg) < EW_EPS * T(1e-3)) break;
    }
    return EW_AIRY_C1 * f - EW_AIRY_C2 * g;
  }
  T zeta = T(2) / T(3) * ax * sqrt(ax), t = EW_AIRY_ZETA2 / zeta, q4 = sqrt(sqrt(ax));
  if (x > T(0)) {
    // exp(-zeta) in two halves: zeta alone may underflow before Ai does.
    T h = ew_exp(T(-0.5) * zeta);
    return ew_airy_pos(t) * T(0.5) * EW_INV_SQRT_PI / q4 * h * h;
  }
  // sin(zeta + pi/4) and cos(zeta + pi/4), times sqrt2.
  T c = ew_cos(zeta), s = ew_sin(zeta);
  return (ew_airy_p(t) * (s + c) - ew_airy_q(t) * (c - s)) * EW_SQRT1_2 * EW_INV_SQRT_PI / q4;
}
