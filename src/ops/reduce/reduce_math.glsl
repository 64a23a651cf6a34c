// exp/log/pow/sqrt on the accumulator type V. GLSL has no double exp/log/pow, so the double
// versions are written here (range reduction plus series, accurate to a few ulp).
#if defined(V_DOUBLE)
double v_exp(double x) {
  if (isnan(x)) return x;
  if (x > 709.8) return v_pos_inf();
  if (x < -745.2) return 0.0lf;
  // x = k ln2 + r, |r| <= ln2 / 2; ln2 split in two parts keeps r exact.
  double k = floor(x * 1.4426950408889634lf + 0.5lf);
  double r = (x - k * 6.93147180369123816490e-01lf) - k * 1.90821492927058770002e-10lf;
  double term = 1.0lf, sum = 1.0lf;
  for (int i = 1; i <= 16; ++i) {
    term *= r / double(i);
    sum += term;
  }
  int ki = int(k);
  // Two steps so that 2^ki stays representable near the ends of the range.
  return ldexp(ldexp(sum, ki / 2), ki - ki / 2);
}

double v_log(double x) {
  if (isnan(x) || x < 0.0lf) return v_nan();
  if (x == 0.0lf) return -v_pos_inf();
  if (isinf(x)) return x;
  int e;
  double m = frexp(x, e);  // x = m 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752lf) {
    m *= 2.0lf;
    e -= 1;
  }
  // log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172
  double s = (m - 1.0lf) / (m + 1.0lf);
  double s2 = s * s, term = s, sum = 0.0lf;
  for (int i = 0; i < 12; ++i) {
    sum += term / double(2 * i + 1);
    term *= s2;
  }
  return 2.0lf * sum + double(e) * 6.93147180559945309417e-01lf;
}

double v_log1p(double x) {
  // log(1 + x) loses digits for tiny x: use the series there.
  if (abs(x) < 1e-4lf) return x * (1.0lf - x * (0.5lf - x * (1.0lf / 3.0lf - x * 0.25lf)));
  return v_log(1.0lf + x);
}

double v_pow(double base, double e) {
  if (e == 0.0lf) return 1.0lf;
  if (isnan(base)) return base;
  if (base == 0.0lf) return e > 0.0lf ? 0.0lf : v_pos_inf();
  return v_exp(e * v_log(base));
}
double v_sqrt(double x) { return sqrt(x); }
#elif !defined(V_INT)
float v_exp(float x) { return exp(x); }
float v_log(float x) { return log(x); }
float v_log1p(float x) {
  // log(1 + x) loses digits for tiny x: use the series there.
  if (abs(x) < 1e-3) return x * (1.0 - x * (0.5 - x * (1.0 / 3.0)));
  return log(1.0 + x);
}
float v_pow(float base, float e) {
  if (e == 0.0) return 1.0;
  if (isnan(base)) return base;  // the driver's pow may drop a NaN (lavapipe does)
  if (base == 0.0) return e > 0.0 ? 0.0 : v_pos_inf();
  return pow(base, e);
}
float v_sqrt(float x) { return sqrt(x); }
#endif
