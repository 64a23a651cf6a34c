// Float helpers behind rows of elementwise_ops.def that are more than one expression; included by
// ew_math.glsl with T = float or double. Semantics follow PyTorch's CPU kernels.

// Error-free transformations (Dekker, Knuth): results as hi + lo with no rounding error.
// They need exact IEEE + and * (no fusing), hence `precise`; fma would be simpler but Vulkan
// does not promise a fused one.
void ew_fast_two_sum(T a, T b, out T hi, out T lo) {  // |a| >= |b|
  precise T s = a + b;
  precise T e = b - (s - a);
  hi = s;
  lo = e;
}

// IEEE division by zero spelled out: Vulkan leaves x / 0 undefined.
T ew_div_by_zero(T a, T b) {
  if (a == T(0) || isnan(a)) return ew_nan();
  return (ew_signbit(a) != ew_signbit(b)) ? -ew_inf() : ew_inf();
}

// a / b with IEEE division by zero; cr_div_rn (correct_rounding.glsl) corrects the driver's 2.5 ulp.
T ew_div(T a, T b) { return (b == T(0)) ? ew_div_by_zero(a, b) : cr_div_rn(a, b); }

// C's fmod, exact: subtract y * 2^k for k from the exponent gap down to 0 (Sterbenz: no error).
T ew_fmod(T x, T y) {
  if (isnan(x) || isnan(y) || isinf(x) || y == T(0)) return ew_nan();
  T ax = abs(x), ay = abs(y);
  if (isinf(y) || ax < ay) return x;
  int ex, ey;
  ew_frexp(ax, ex);
  ew_frexp(ay, ey);
  T ys = ew_ldexp(ay, ex - ey);
  for (int k = ex - ey; k >= 0; --k) {
    if (ax >= ys) ax -= ys;
    ys *= T(0.5);
  }
  return ew_copysign(ax, x);
}

// Python's %: the result takes the divisor's sign.
T ew_remainder(T a, T b) {
  T m = ew_fmod(a, b);
  if (m != T(0) && ((b < T(0)) != (m < T(0)))) m += b;
  return m;
}

// PyTorch's div_floor_floating: floor(a / b) computed from fmod so that it is exact.
T ew_div_floor(T a, T b) {
  if (b == T(0)) return ew_div_by_zero(a, b);
  T m = ew_fmod(a, b);
  precise T d = (a - m) / b;
  if (m != T(0) && ((b < T(0)) != (m < T(0)))) d -= T(1);
  if (d == T(0)) return ew_copysign(T(0), a / b);
  T f = floor(d);
  if (d - f > T(0.5)) f += T(1);
  return f;
}

// NaN-propagating max/min (torch.maximum) and NaN-ignoring ones (torch.fmax).
// Ties (+0 and -0) keep a, as std::max does; GLSL's max leaves them to the implementation.
T ew_max(T a, T b) { return (a < b) ? b : a; }
T ew_min(T a, T b) { return (b < a) ? b : a; }
// Zeros follow IEEE 754-2019 maximum/minimum: max(-0, +0) = +0 and min(-0, +0) = -0 whatever the
// operand order (the CPU's answer depends on its vector or scalar path; the order must not matter).
T ew_max_signed(T a, T b) { return (a == b) ? (ew_signbit(a) ? b : a) : ew_max(a, b); }
T ew_min_signed(T a, T b) { return (a == b) ? (ew_signbit(a) ? a : b) : ew_min(a, b); }
T ew_maximum(T a, T b) { return isnan(a) ? a : (isnan(b) ? b : ew_max_signed(a, b)); }
T ew_minimum(T a, T b) { return isnan(a) ? a : (isnan(b) ? b : ew_min_signed(a, b)); }
T ew_fmax(T a, T b) { return isnan(a) ? b : (isnan(b) ? a : ew_max_signed(a, b)); }
T ew_fmin(T a, T b) { return isnan(a) ? b : (isnan(b) ? a : ew_min_signed(a, b)); }

T ew_hypot(T a, T b) {
  if (isinf(a) || isinf(b)) return ew_inf();
  if (isnan(a) || isnan(b)) return ew_nan();
  T x = abs(a), y = abs(b);
  T m = max(x, y), n = min(x, y);
  if (m == T(0)) return T(0);
  T r = n / m;
  return m * sqrt(T(1) + r * r);
}

T ew_xlogy(T a, T b) {
  if (isnan(b)) return b;
  return (a == T(0)) ? T(0) : a * ew_log(b);
}

// log2(1 + f) as hi + lo with about twice T's precision, f in [sqrt(1/2) - 1, sqrt(2) - 1]:
// 2 atanh(s), s = f / (2 + f), with s itself carried as hi + lo.
void ew_log2_1p_ext(T f, out T hi, out T lo) {
  T u_hi, u_lo, p, pe;
  ew_fast_two_sum(T(2), f, u_hi, u_lo);  // 2 + f exactly
  T s_hi = f / u_hi;
  cr_two_prod(s_hi, u_hi, p, pe);
  precise T s_lo = (((f - p) - pe) - s_hi * u_lo) / u_hi;  // f - p is exact (Sterbenz)
  precise T tail = T(2) * s_lo + s_hi * ew_log_r(s_hi * s_hi);
  T l_hi, l_lo;
  ew_fast_two_sum(T(2) * s_hi, tail, l_hi, l_lo);  // natural log of 1 + f
  cr_two_prod(l_hi, EW_LOG2E_HI, p, pe);
  precise T rest = pe + (l_hi * EW_LOG2E_LO + l_lo * EW_LOG2E_HI);
  ew_fast_two_sum(p, rest, hi, lo);
}

// a^b for finite a > 0 and finite b: the exponent b * log2(a) is carried in extended precision
// and its integer parts are taken off exactly, so large exponents keep the result accurate.
T ew_pow_pos(T a, T b) {
  int e;
  T f = ew_log_split(a, e);
  T k = T(e);
  if (abs(b) > T(1e18)) return ew_exp2(b * (k + f * EW_LOG2E));  // certainly 0, 1 or inf
  T l_hi, l_lo, bh, bl, q, qe;
  ew_log2_1p_ext(f, l_hi, l_lo);
  cr_split(b, bh, bl);
  cr_two_prod(b, l_hi, q, qe);
  // b * (k + l) = bh*k + bl*k + q + qe + b*l_lo; the first three are exact, so their integer
  // parts come off exactly and only the small remainders are summed with rounding.
  precise T p1 = bh * k;
  precise T p2 = bl * k;
  T n1 = ew_round_even(p1), n2 = ew_round_even(p2), n3 = ew_round_even(q);
  precise T frac = ((p1 - n1) + (p2 - n2) + (q - n3)) + (qe + b * l_lo);
  return ew_exp2_plus(frac, n1 + n2 + n3);
}

// C's pow, special cases included.
T ew_pow(T a, T b) {
  if (b == T(0) || a == T(1)) return T(1);
  if (isnan(a) || isnan(b)) return ew_nan();
  T aa = abs(a);
  if (isinf(b)) {
    if (aa == T(1)) return T(1);
    return ((aa < T(1)) == (b > T(0))) ? T(0) : ew_inf();
  }
  bool b_int = trunc(b) == b;
  bool b_odd = b_int && trunc(b * T(0.5)) != b * T(0.5);
  if (a == T(0)) {
    T r = (b > T(0)) ? T(0) : ew_inf();
    return b_odd ? ew_copysign(r, a) : r;
  }
  if (isinf(a)) {
    T r = (b > T(0)) ? ew_inf() : T(0);
    return (a < T(0) && b_odd) ? -r : r;
  }
  if (a < T(0) && !b_int) return ew_nan();
  T r = ew_pow_pos(aa, b);
  return (a < T(0) && b_odd) ? -r : r;
}

// ---- activations --------------------------------------------------------------------------

// e^x for a result that is rounded to fp16/bf16 (DT_F16/DT_BF16 variants): the driver's exp2
// (a few fp32 ulps, ~2^-21 relative) is far below half an fp16 ulp (2^-12), so the rounded value
// differs from the correctly rounded one only within ~2^-9 ulp of a tie, where the CPU's own float
// evaluation (its vectorised exp, ~1 ulp) is no more exact. About a tenth of ew_exp's work, which
// keeps fp16 activations memory-bound (docs/design/elementwise.md#half-exp).
T ew_exp_for_half(T x) {
#if defined(DT_F16) || defined(DT_BF16)
  return exp2(x * EW_LOG2E);
#else
  return ew_exp(x);
#endif
}

// sigmoid's result is itself subnormal where its divisor passes 2^126, and flushes on NVIDIA
// whatever the division does; silu's and gelu-tanh's quotients stay normal (cr_div_fast).
T ew_sigmoid(T x) { return T(1) / (T(1) + ew_exp_for_half(-x)); }
T ew_silu(T x) { return cr_div_fast(x, T(1) + ew_exp_for_half(-x)); }
// relu keeps NaN and -0 like PyTorch's clamp_min(x, 0). The test reads the sign bit: NVIDIA's
// compiler turns `x < 0 ? 0 : x` into max(x, 0), which gives +0 for -0.
T ew_relu(T x) { return (ew_signbit(x) && x != T(0) && !isnan(x)) ? T(0) : x; }
// 0.5 x (1 + erf(x / sqrt 2)) written with erfc, which does not cancel for negative x.
// gelu(inf) = inf, gelu(-inf) = NaN (-inf * 0) as on the CPU.
T ew_gelu(T x) {
  T unused_density;
  T r = ew_erfc_neg_scaled(x, T(0.5) * x, T(0), unused_density);
  return isinf(x) ? ((x > T(0)) ? x : ew_nan()) : r;
}
// The argument of tanh in the tanh approximation of gelu.
T ew_gelu_inner(T x) { return EW_SQRT_2_OVER_PI * (x + EW_GELU_KAPPA * x * x * x); }
// 0.5 x (1 + tanh(u)) = x * sigmoid(2u), without cancellation for negative x.
T ew_gelu_tanh(T x) { return cr_div_fast(x, T(1) + ew_exp(T(-2) * ew_gelu_inner(x))); }

// hardsigmoid/hardswish: NaN passes through, as std::min/std::max let it in PyTorch. Tested
// first: NVIDIA's compiler makes the two selects a clamp, which drops NaN (hardsigmoid(NaN) = 1).
T ew_relu6_shift(T x) {
  T t = x + T(3);
  if (isnan(t)) return t;
  t = (t < T(0)) ? T(0) : t;
  return (t > T(6)) ? T(6) : t;
}
T ew_hardsigmoid(T x) { return ew_relu6_shift(x) / T(6); }
T ew_hardswish(T x) { return x * ew_relu6_shift(x) / T(6); }

T ew_softplus(T x) { return (x > T(20)) ? x : ew_log1p(ew_exp(x)); }
T ew_mish(T x) { return x * ew_tanh(ew_softplus(x)); }
T ew_log_sigmoid(T x) { return min(x, T(0)) - ew_log1p(ew_exp(-abs(x))); }

// ---- backward helpers: g is the incoming gradient, x the forward input ---------------------

T ew_silu_backward(T g, T x) {
  T s = ew_sigmoid(x);
  return g * s * (T(1) + x * (T(1) - s));
}

// Phi(x) + x phi(x); the density shares the tail's exp(-x^2 / 2).
// NaN at infinite x (x * pdf = inf * 0), as on the CPU.
T ew_gelu_backward(T g, T x) {
  T x_density, cdf = ew_erfc_neg_scaled(x, T(0.5), x * EW_INV_SQRT2PI, x_density);
  return isinf(x) ? ew_nan() : g * (cdf + x_density);
}

T ew_hardsigmoid_backward(T g, T x) { return (x > T(-3) && x < T(3)) ? g / T(6) : T(0); }
T ew_hardswish_backward(T g, T x) {
  return x < T(-3) ? T(0) : (x <= T(3) ? g * (x / T(3) + T(0.5)) : g);
}
T ew_mish_backward(T g, T x) {
  T t = ew_tanh(ew_softplus(x));
  return g * (t + x * ew_sigmoid(x) * (T(1) - t * t));
}

// d/dx [x sigmoid(2u)] with 1 + tanh(u) = 2 s and 1 - tanh(u)^2 = 4 s (1 - s), s = sigmoid(2u).
T ew_gelu_tanh_backward(T g, T x) {
  T u = ew_gelu_inner(x);
  T s = ew_sigmoid(T(2) * u), sm = ew_sigmoid(T(-2) * u);
  T du = EW_SQRT_2_OVER_PI * (T(1) + T(3) * EW_GELU_KAPPA * x * x);
  return g * (s + T(2) * x * s * sm * du);
}
