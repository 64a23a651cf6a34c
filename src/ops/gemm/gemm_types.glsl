// Element types of the gemm shaders. IN_* picks A/B's dtype, OUT_* C's (C_in and bias share it).
// ACC is the accumulator: float, or double for f64. Loads widen to ACC; stores round from it.
#if defined(IN_F64) || defined(OUT_F64)
#define ACC double
#else
#define ACC float
#endif

// Split-K partial sums are stored as ACC.
#if defined(IN_F64) || defined(OUT_F64)
#define ACC_SIZE 8
void store_partial(uint64_t a, ACC v) { PF64(a).v = v; }
ACC load_partial(uint64_t a) { return PF64(a).v; }
#else
#define ACC_SIZE 4
void store_partial(uint64_t a, ACC v) { PF32(a).v = v; }
ACC load_partial(uint64_t a) { return PF32(a).v; }
#endif

// Element index of split-K slice `slice`'s partial product for C[r][c] of batch z: slices of
// nbatch M x N matrices, the layout every split-K kernel writes and the reductions read.
int64_t partial_index(int64_t slice, int64_t nbatch, int64_t z, int64_t M, int64_t N, int64_t r,
                      int64_t c) {
  return ((slice * nbatch + z) * M + r) * N + c;
}

#if defined(IN_F32)
#define IN_SIZE 4
ACC load_in(uint64_t a) { return ACC(PF32(a).v); }
#elif defined(IN_F16)
#define IN_SIZE 2
ACC load_in(uint64_t a) { return ACC(unpackHalf2x16(uint(PU16(a).v)).x); }
#elif defined(IN_BF16)
#define IN_SIZE 2
ACC load_in(uint64_t a) { return ACC(bf16_to_float(PU16(a).v)); }
#elif defined(IN_F64)
#define IN_SIZE 8
ACC load_in(uint64_t a) { return PF64(a).v; }
#endif

#if defined(OUT_F32)
#define OUT_SIZE 4
ACC load_out(uint64_t a) { return ACC(PF32(a).v); }
void store_out(uint64_t a, ACC v) { PF32(a).v = float(v); }
#elif defined(OUT_F16)
#define OUT_SIZE 2
ACC load_out(uint64_t a) { return ACC(unpackHalf2x16(uint(PU16(a).v)).x); }
void store_out(uint64_t a, ACC v) { PF16(a).v = float16_t(float(v)); }
#elif defined(OUT_BF16)
#define OUT_SIZE 2
ACC load_out(uint64_t a) { return ACC(bf16_to_float(PU16(a).v)); }
void store_out(uint64_t a, ACC v) { PU16(a).v = float_to_bf16(float(v)); }
#elif defined(OUT_F64)
#define OUT_SIZE 8
ACC load_out(uint64_t a) { return PF64(a).v; }
void store_out(uint64_t a, ACC v) { PF64(a).v = v; }
#endif

// Address of element (r, c) of operand o in batch (b0, b1).
uint64_t elem_addr(GemmOperand o, int64_t b0, int64_t b1, int64_t r, int64_t c, int size) {
  return o.address + uint64_t((b0 * o.batch0 + b1 * o.batch1 + r * o.row + c * o.col) * size);
}

// Rows of 16-byte aligned runs of `per` elements: contiguous along rows, every other stride a
// multiple of `per`, the base 16-byte aligned (the epilogues' vector loads and stores).
bool dense_rows(GemmOperand o, int per) {
  return o.col == 1 && (o.row % per) == 0 && (o.batch0 % per) == 0 && (o.batch1 % per) == 0 &&
         (o.address % 16) == 0;
}

// Everything the epilogue needs, read once from the parameter block.
struct Epilogue {
  GemmOperand c, c_in, bias;
  uint flags;
  ACC alpha, beta;
};

Epilogue load_epilogue(GemmParams p) {
  Epilogue e;
  e.c = p.c;
  e.c_in = p.c_in;
  e.bias = p.bias;
  e.flags = p.flags;
#if defined(IN_F64) || defined(OUT_F64)
  e.alpha = p.alpha_f64;
  e.beta = p.beta_f64;
#else
  e.alpha = p.alpha;
  e.beta = p.beta;
#endif
  return e;
}

// C, and C_in and bias where the epilogue reads them, in dense_rows runs of `per` elements.
bool epilogue_dense(Epilogue e, int per) {
  return dense_rows(e.c, per) &&
         ((e.flags & VKML_GEMM_HAS_CIN) == 0u || dense_rows(e.c_in, per)) &&
         ((e.flags & VKML_GEMM_HAS_BIAS) == 0u || dense_rows(e.bias, per));
}

// alpha * acc + beta * C_in + bias, stored into C at (r, c) of batch (b0, b1).
void store_result(Epilogue e, int64_t b0, int64_t b1, int64_t r, int64_t c, ACC acc) {
  ACC v = e.alpha * acc;
  // beta == 0 ignores C_in entirely (NaN in C_in must not leak), as BLAS and PyTorch do.
  if ((e.flags & VKML_GEMM_HAS_CIN) != 0u) {
    v += e.beta * load_out(elem_addr(e.c_in, b0, b1, r, c, OUT_SIZE));
  }
  if ((e.flags & VKML_GEMM_HAS_BIAS) != 0u) {
    v += load_out(elem_addr(e.bias, b0, b1, r, c, OUT_SIZE));
  }
  store_out(elem_addr(e.c, b0, b1, r, c, OUT_SIZE), v);
}
