// Integer helpers behind rows of elementwise_ops.def, for VAL = int (i8/u8/i16/i32/bool) or
// int64_t (i64). Semantics follow PyTorch's CPU kernels; narrow types wrap on store.
#define EW_BITS (EW_BYTES * 8)

// C division without the traps of x / 0 and MIN / -1 (a CPU driver would fault): x / 0 is 0.
VAL ew_idiv(VAL a, VAL b) {
  if (b == VAL(0)) return VAL(0);
  if (b == VAL(-1)) return -a;
  return a / b;
}

// C's % (sign of the dividend); GLSL's % is undefined for negative operands.
VAL ew_ifmod(VAL a, VAL b) { return a - ew_idiv(a, b) * b; }

// Python's floor division and %.
VAL ew_idiv_floor(VAL a, VAL b) {
  VAL q = ew_idiv(a, b);
  VAL r = a - q * b;
  return (r != VAL(0) && ((r < VAL(0)) != (b < VAL(0)))) ? q - VAL(1) : q;
}
VAL ew_iremainder(VAL a, VAL b) {
  VAL r = ew_ifmod(a, b);
  return (r != VAL(0) && ((r < VAL(0)) != (b < VAL(0)))) ? r + b : r;
}

// Exponentiation by squaring; negative exponents give 0 except for bases 1 and -1.
VAL ew_ipow(VAL a, VAL b) {
  if (b < VAL(0)) {
    if (a == VAL(1)) return VAL(1);
    if (a == VAL(-1)) return ((b & VAL(1)) != VAL(0)) ? VAL(-1) : VAL(1);
    return VAL(0);
  }
  VAL r = VAL(1);
  while (b != VAL(0)) {
    if ((b & VAL(1)) != VAL(0)) r *= a;
    b >>= 1;
    a *= a;
  }
  return r;
}

// Shifts past the element width give 0 (left) or the sign fill (right), as in PyTorch.
VAL ew_lshift(VAL a, VAL b) {
  if (b < VAL(0) || b >= VAL(EW_BITS)) return VAL(0);
  return a << b;
}
VAL ew_rshift(VAL a, VAL b) {
  const VAL max_shift = VAL(EW_BITS - EW_SIGNED);
  if (b < VAL(0) || b >= max_shift) return a >> max_shift;
  return a >> b;
}

VAL ew_bnot(VAL x) {
#ifdef EW_BOOL
  return x ^ 1;  // ~true is false for bool tensors
#else
  return ~x;
#endif
}

// Euclid on magnitudes; lcm = |a / gcd * b| (0 when both are 0), as PyTorch computes them.
VAL ew_gcd(VAL a, VAL b) {
  a = abs(a);
  b = abs(b);
  while (a != VAL(0)) {
    VAL t = a;
    a = ew_ifmod(b, a);
    b = t;
  }
  return b;
}
VAL ew_lcm(VAL a, VAL b) {
  VAL g = ew_gcd(a, b);
  return (g == VAL(0)) ? VAL(0) : abs(ew_idiv(a, g) * b);
}
