// How rows of elementwise_ops.def become GLSL: each row's expression for this variant's kind
// (float or integer), NA (no kernel; the host never selects it), B(cond) and the out kinds.
// A row becomes a switch case through EW_CASE_<group>, which each variant defines (see
// shaders.cmake) as EW_CASE_ON for the groups it holds and EW_CASE_OFF for the rest.
#define NA VAL(0)
#define B(c) ((c) ? VAL(1) : VAL(0))
#define NZ(v) ((v) != VAL(0))
// Helpers shared by the float and integer expressions of a row.
VAL ew_threshold(VAL grad, VAL x, VAL threshold) { return (x <= threshold) ? VAL(0) : grad; }
// std::min(std::max(x, lo), hi): NaN in x propagates, lo > hi gives hi (hardtanh, clamp).
VAL ew_clamp_scalar(VAL x, VAL lo, VAL hi) {
#ifdef EW_FLOAT
  if (isnan(x)) return x;  // a driver may lower the compare-selects to min/max, which drop NaN
#endif
  VAL r = (x < lo) ? lo : x;
  return (hi < r) ? hi : r;
}
VAL ew_sign(VAL x) { return B(x > VAL(0)) - B(x < VAL(0)); }  // sign(NaN) = 0 as in PyTorch
#define EW_OUT_SAME false
#define EW_OUT_BOOL true
#define EW_CASE_ON(id, e) case id: return e;
#define EW_CASE_OFF(id, e)
#ifdef EW_FLOAT
#define EW_PICK(f, i) f
#else
#define EW_PICK(f, i) i
#endif
