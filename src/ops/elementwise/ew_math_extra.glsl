// Float helpers behind the parametrised, ternary and special rows of elementwise_ops.def;
// included by ew_math.glsl with T = float or double. Formulas follow PyTorch's CPU kernels
// (computed in float for f16/bf16, as its opmath does).

// ---- binary -------------------------------------------------------------------------------

T ew_logaddexp(T a, T b) {
  if (isinf(a) && a == b) return a;
  return ew_max(a, b) + ew_log1p(ew_exp(-abs(a - b)));
}
T ew_logaddexp2(T a, T b) {
  if (isinf(a) && a == b) return a;
  return ew_max(a, b) + ew_log1p(ew_exp2(-abs(a - b))) * EW_LOG2E;
}

T ew_xlog1py(T x, T y) {
  if (isnan(y)) return ew_nan();
  return (x == T(0)) ? T(0) : x * ew_log1p(y);
}

// The bits of x in the storage dtype (nextafter steps in that dtype's ulps, not fp32's).
#if defined(DT_BF16)
uint64_t ew_storage_bits(T x) { return uint64_t(float_to_bf16(x)); }
T ew_from_storage_bits(uint64_t u) { return bf16_to_float(uint16_t(u)); }
#elif defined(DT_F16)
uint64_t ew_storage_bits(T x) { return uint64_t(packHalf2x16(vec2(x, 0.0)) & 0xFFFFu); }
T ew_from_storage_bits(uint64_t u) { return unpackHalf2x16(uint(u)).x; }
#elif defined(EW_DOUBLE)
uint64_t ew_storage_bits(T x) {
  uvec2 u = unpackDouble2x32(x);
  return (uint64_t(u.y) << 32) | uint64_t(u.x);
}
T ew_from_storage_bits(uint64_t u) { return packDouble2x32(uvec2(uint(u), uint(u >> 32))); }
#else
uint64_t ew_storage_bits(T x) { return uint64_t(floatBitsToUint(x)); }
T ew_from_storage_bits(uint64_t u) { return uintBitsToFloat(uint(u)); }
#endif

// x rounded to the storage dtype (identity for f32/f64).
T ew_round_storage(T x) {
#if defined(DT_BF16)
  return bf16_to_float(float_to_bf16(x));
#elif defined(DT_F16)
  return round_to_f16(x);
#else
  return x;
#endif
}

// C's frexp: x = m 2^e with |m| in [0.5, 1); zero, infinities and NaN give (x, 0).
T ew_frexp_mantissa(T x) {
  if (x == T(0) || isinf(x) || isnan(x)) return x;
  int e;
  return ew_frexp(x, e);
}
T ew_frexp_exponent(T x) {
  if (x == T(0) || isinf(x) || isnan(x)) return T(0);
  int e;
  ew_frexp(x, e);
  return T(e);
}

// Sign-magnitude stepping: one ulp away from or towards zero.
T ew_nextafter(T a, T b) {
  if (isnan(a) || isnan(b)) return ew_nan();
  if (a == b) return b;
  if (a == T(0)) return ew_copysign(ew_from_storage_bits(1ul), b);
  uint64_t u = ew_storage_bits(a);
  u = ((a < b) == (a > T(0))) ? u + 1ul : u - 1ul;
  return ew_from_storage_bits(u);
}

// PyTorch's lerp: two formulas so that weight 1 gives `end` exactly, each one fused multiply-add
// as the CPU's vectorised kernel computes them (where the device fuses: Vulkan does not promise).
T ew_lerp(T s, T e, T w) {
  T d = e - s;
  precise T r = (abs(w) < T(0.5)) ? fma(w, d, s) : fma(-d, T(1) - w, e);
  return r;
}

// self + value * t1 * t2 as the CPU's compiled kernel: (value * t1) * t2 + self, fused.
T ew_addcmul(T a, T b, T c, T alpha) {
  precise T r = fma(alpha * b, c, a);
  return r;
}

// ---- parametrised activations ---------------------------------------------------------------

// elu(x; alpha, scale, input_scale), as celu and selu reach it.
T ew_elu(T x, T alpha, T scale, T input_scale) {
  return (x <= T(0)) ? ew_expm1(x * input_scale) * (alpha * scale) : x * scale;
}
T ew_elu_backward(T g, T x, T alpha, T scale, T input_scale) {
  return (x <= T(0)) ? g * input_scale * (alpha * scale) * ew_exp(x * input_scale) : g * scale;
}
// The same from the forward result y (elu_backward's is_result form).
T ew_elu_backward_result(T g, T y, T alpha, T scale, T input_scale) {
  return (y <= T(0)) ? g * input_scale * (y + alpha * scale) : g * scale;
}

T ew_softplus_beta(T x, T beta, T threshold) {
  return (x * beta > threshold) ? x : ew_log1p(ew_exp(x * beta)) / beta;
}
T ew_softplus_backward(T g, T x, T beta, T threshold) {
  T z = ew_exp(x * beta);
  return (x * beta > threshold) ? g : g * z / (z + T(1));
}

T ew_log_sigmoid_backward(T g, T x) {
  T z = ew_exp(-abs(x));
  T s = z / (T(1) + z);
  return (x < T(0)) ? g * (T(1) - s) : g * s;
}

// The middle is x * 0 on the CPU: +-0 by x's sign, NaN for NaN (spelled out: drivers fold x * 0).
T ew_softshrink(T x, T lambd) {
  if (x > lambd) return x - lambd;
  if (x < -lambd) return x + lambd;
  return isnan(x) ? x : ew_copysign(T(0), x);
}

// logit with eps >= 0 clamps x to [eps, 1 - eps]; a negative eps means none.
T ew_logit(T x, T eps) {
  // isnan first: a driver may lower the compare-selects to min/max, which drop NaN
  if (eps >= T(0) && !isnan(x)) x = (x < eps) ? eps : ((x > T(1) - eps) ? T(1) - eps : x);
  return ew_log(ew_div(x, T(1) - x));
}
T ew_logit_backward(T g, T x, T eps) {
  T lo = (eps < T(0)) ? T(0) : eps, hi = (eps < T(0)) ? T(1) : T(1) - eps;
  if (x < lo || x > hi) return (eps < T(0)) ? ew_nan() : T(0);
  if (x == T(0) || x == T(1)) return g * ew_inf();
  return g / (x * (T(1) - x));
}

T ew_nan_to_num(T x, T nan, T posinf, T neginf) {
  if (isnan(x)) return nan;
  if (isinf(x)) return (x > T(0)) ? posinf : neginf;
  return x;
}

// round(x, decimals): ten_pow = 10^|decimals| in the compute type, neg = decimals < 0.
T ew_round_decimals(T x, T ten_pow, T neg) {
  return (neg != T(0)) ? ew_round_even(cr_div_rn(x, ten_pow)) * ten_pow
                       : cr_div_rn(ew_round_even(x * ten_pow), ten_pow);
}

// ---- special functions ----------------------------------------------------------------------

T ew_sinc(T x) {
  if (x == T(0)) return T(1);
  T p = EW_PI_HI * x;
  return ew_div(ew_sin(p), p);
}

T ew_entr(T x) {
  if (isnan(x)) return x;
  if (x > T(0)) return -x * ew_log(x);
  return (x == T(0)) ? T(0) : -ew_inf();
}

// exp(x^2) without the rounding error of x^2 (as ew_exp_neg_sq).
T ew_exp_sq(T x) {
  T hi, lo;
  cr_split(x, hi, lo);
  return ew_exp(hi * hi) * ew_exp(lo * (x + hi));
}

// erfc(x) exp(x^2): the fitted kernel on [1/2, XMAX], its asymptotic series above (terms to
// (15!!)/(2x^2)^7, below half an ulp there), exp(x^2) erfc(x) near 0 and the reflection
// 2 exp(x^2) - erfcx(-x) below.
T ew_erfcx_pos(T x) {  // x >= 0
  if (x < T(0.5)) return ew_exp_sq(x) * (T(1) - ew_erf_poly(x));
  if (x <= EW_ERFC_XMAX) return ew_erfcx(x);
  if (isinf(x)) return T(0);
  T r = T(1) / (T(2) * x * x), term = T(1), sum = T(1);
  for (int k = 1; k <= 7; ++k) {
    term *= -T(2 * k - 1) * r;
    sum += term;
  }
  return sum * (T(0.5) * EW_2_SQRTPI) / x;  // 1/sqrt(pi) = (2/sqrt(pi)) / 2
}
T ew_erfcx_full(T x) {
  if (isnan(x)) return x;
  if (x >= T(0)) return ew_erfcx_pos(x);
  if (x < T(-27)) return ew_inf();  // 2 exp(x^2) overflows even in double
  T e = ew_exp_sq(x);
  return isinf(e) ? e : T(2) * e - ew_erfcx_pos(-x);
}
