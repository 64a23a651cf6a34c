// Error-free products and correctly rounded division and square root, for T = float or double.
// The includer defines T, CR_SPLITTER (2^12 + 1 or 2^27 + 1), CR_RESIDUAL_MAX and CR_RESIDUAL_MIN.
// Vulkan lets a driver's division and square root be 2.5 ulp off (NVIDIA's are), so one residual
// step, with the residual a - q * b exact by Dekker's product, gives the CPU's correctly rounded
// result. The transformations need exact IEEE + and * (no fusing, no folding), hence `precise`;
// fma would be simpler but Vulkan does not promise a fused one.

// x = hi + lo with hi holding half the significand bits, so hi * hi is exact (Veltkamp split).
void cr_split(T x, out T hi, out T lo) {
  precise T c = CR_SPLITTER * x;
  precise T h = c - (c - x);
  precise T l = x - h;
  hi = h;
  lo = l;
}

// a * b = hi + lo exactly (Dekker).
void cr_two_prod(T a, T b, out T hi, out T lo) {
  T ah, al, bh, bl;
  cr_split(a, ah, al);
  cr_split(b, bh, bl);
  precise T p = a * b;
  precise T e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  hi = p;
  lo = e;
}

T cr_residual(T a, T q, T b) {  // a - q * b
  T p, e;
  cr_two_prod(q, b, p, e);
  precise T r = (a - p) - e;
  return r;
}

// Huge or tiny operands keep the driver's result: the residual's products would leave the range.
bool cr_residual_safe(T q, T b) {
  T aq = abs(q), ab = abs(b);
  return aq < CR_RESIDUAL_MAX && ab < CR_RESIDUAL_MAX && aq > CR_RESIDUAL_MIN && ab > CR_RESIDUAL_MIN;
}

// Past 2^126 a divisor's reciprocal is subnormal, which GPUs that flush subnormals (NVIDIA) drop
// even for a normal quotient (silu(-87.5) gives -0 there, not -8.8e-37); quartering both
// operands is exact and keeps the quotient.
void cr_unflush_divisor(inout T a, inout T b) {
  if (abs(b) > T(8.507059173023462e37)) {
    a *= T(0.25);
    b *= T(0.25);
  }
}

// The driver's a / b, with cr_unflush_divisor's guard.
T cr_div_fast(T a, T b) {
  cr_unflush_divisor(a, b);
  return a / b;
}

// a / b for b != 0 (Vulkan leaves x / 0 undefined: callers spell IEEE's result out).
T cr_div_rn(T a, T b) {
  cr_unflush_divisor(a, b);
  T q = a / b;
  if (!cr_residual_safe(q, b)) return q;
  precise T c = q + cr_residual(a, q, b) / b;
  return c;
}

T cr_sqrt_rn(T x) {
  T s = sqrt(x);
  if (!cr_residual_safe(s, s)) return s;
  precise T c = s + cr_residual(x, s, s) / (s + s);
  return c;
}
