// Shared by the linalg shaders: element type and arithmetic, coherent pointers into the
// matrices of the current batch item, workgroup sync, pivot search and sums. Include after
// nn_common.glsl.
#ifndef VKML_LINALG_COMMON_GLSL_
#define VKML_LINALG_COMMON_GLSL_

// T is the element type and R its real type: float/double, or with LINALG_COMPLEX the
// complex64/complex128 (real, imaginary) pair. Element arithmetic goes through the el_*
// helpers below, so each algorithm reads the same for both.
#if defined(LINALG_COMPLEX) && defined(VKML_USE_FP64)
#define T dvec2
#define R double
layout(buffer_reference, scalar, buffer_reference_align = 16) coherent buffer CT { dvec2 v; };
layout(buffer_reference, scalar, buffer_reference_align = 8) coherent buffer CR { double v; };
#define TSIZE 16ul
#define RSIZE 8ul
#elif defined(LINALG_COMPLEX)
#define T vec2
#define R float
layout(buffer_reference, scalar, buffer_reference_align = 8) coherent buffer CT { vec2 v; };
layout(buffer_reference, scalar, buffer_reference_align = 4) coherent buffer CR { float v; };
#define TSIZE 8ul
#define RSIZE 4ul
#elif defined(VKML_USE_FP64)
#define T double
#define R double
layout(buffer_reference, scalar, buffer_reference_align = 8) coherent buffer CT { double v; };
#define CR CT
#define TSIZE 8ul
#define RSIZE 8ul
#else
#define T float
#define R float
layout(buffer_reference, scalar, buffer_reference_align = 4) coherent buffer CT { float v; };
#define CR CT
#define TSIZE 4ul
#define RSIZE 4ul
#endif
layout(buffer_reference, scalar, buffer_reference_align = 4) coherent buffer CI32 { int v; };

// Element offsets of the current matrix in each tensor, and its row/column strides.
int64_t ao, bo, xo, po, io;
int64_t as0, as1, bs0, bs1, xs0, xs1, ps0;

#define A(i, j) CT(p.a + uint64_t(ao + (i) * as0 + (j) * as1) * TSIZE).v
#define B(i, j) CT(p.b + uint64_t(bo + (i) * bs0 + (j) * bs1) * TSIZE).v
#define X(i, j) CT(p.x + uint64_t(xo + (i) * xs0 + (j) * xs1) * TSIZE).v
#define PIV(i) CI32(p.piv + uint64_t(po + (i) * ps0) * 4ul).v
#define TAU(i) CT(p.piv + uint64_t(po + (i) * ps0) * TSIZE).v
// B as a tensor of the real type (slogdet's log|det| of complex matrices).
#define B_REAL(i, j) CR(p.b + uint64_t(bo + (i) * bs0 + (j) * bs1) * RSIZE).v

#ifdef LINALG_COMPLEX
T el(R re) { return T(re, R(0)); }
R el_re(T a) { return a.x; }
R el_im(T a) { return a.y; }
T el_conj(T a) { return T(a.x, -a.y); }
T el_mul(T a, T b) { return T(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
// a / b with Smith's scaling, as c10::complex divides.
T el_div(T a, T b) {
  if (abs(b.x) >= abs(b.y)) {
    R rat = b.y / b.x, scl = R(1) / (b.x + b.y * rat);
    return T((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }
  R rat = b.x / b.y, scl = R(1) / (b.y + b.x * rat);
  return T((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
// |a| without overflow or underflow of the squares.
R el_abs(T a) {
  R big = max(abs(a.x), abs(a.y)), small = min(abs(a.x), abs(a.y));
  if (big == R(0) || isinf(big)) return big;
  R r = small / big;
  return big * sqrt(R(1) + r * r);
}
// |re| + |im|: the magnitude LAPACK's izamax compares when it picks a pivot.
R el_pivot_abs(T a) { return abs(a.x) + abs(a.y); }
R el_abs2(T a) { return a.x * a.x + a.y * a.y; }
bool el_is_zero(T a) { return a.x == R(0) && a.y == R(0); }
#else
T el(R re) { return re; }
R el_re(T a) { return a; }
R el_im(T a) { return R(0); }
T el_conj(T a) { return a; }
T el_mul(T a, T b) { return a * b; }
T el_div(T a, T b) { return a / b; }
R el_abs(T a) { return abs(a); }
R el_pivot_abs(T a) { return abs(a); }
R el_abs2(T a) { return a * a; }
bool el_is_zero(T a) { return a == T(0); }
#endif
T el_conj_if(T a, bool conjugate) { return conjugate ? el_conj(a) : a; }

shared R s_val[256];
shared int s_idx[256];

void sync() {
  memoryBarrierBuffer();
  barrier();
}

void locate(LinalgParams p, int64_t bi) {
  ao = bo = xo = po = io = 0;
  int64_t rem = bi;
  for (int d = int(p.batch_ndim) - 1; d >= 0; --d) {
    int64_t i = rem % p.batch_sizes[d];
    rem /= p.batch_sizes[d];
    ao += i * p.a_strides[d];
    bo += i * p.b_strides[d];
    xo += i * p.x_strides[d];
    po += i * p.piv_strides[d];
    io += i * p.info_strides[d];
  }
  const uint nb = p.batch_ndim;
  as0 = p.a_strides[nb];
  as1 = p.a_strides[nb + 1];
  bs0 = p.b_strides[nb];
  bs1 = p.b_strides[nb + 1];
  xs0 = p.x_strides[nb];
  xs1 = p.x_strides[nb + 1];
  ps0 = p.piv_strides[nb];
}

bool has(LinalgParams p, uint f) { return (p.flags & f) != 0u; }

// Row index of the largest |X(i, j)| for i in [j, m); ties go to the first (LAPACK's idamax).
int64_t pivot_row(LinalgParams p, int64_t j) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  R best = R(-1);
  int bi = -1;
  for (int64_t i = j + t; i < p.m; i += W) {
    R v = el_pivot_abs(X(i, j));
    if (v > best) {
      best = v;
      bi = int(i);
    }
  }
  s_val[t] = best;
  s_idx[t] = bi;
  barrier();
  for (uint s = W / 2u; s > 0u; s >>= 1) {
    if (t < s) {
      R v = s_val[t + s];
      int i = s_idx[t + s];
      if (i >= 0 && (s_idx[t] < 0 || v > s_val[t] || (v == s_val[t] && i < s_idx[t]))) {
        s_val[t] = v;
        s_idx[t] = i;
      }
    }
    barrier();
  }
  int r = s_idx[0];
  barrier();
  return r < 0 ? j : int64_t(r);  // all NaN: keep the diagonal
}

R wg_sum(R v) {
  const uint t = gl_LocalInvocationID.x;
  s_val[t] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
    if (t < s) s_val[t] += s_val[t + s];
    barrier();
  }
  v = s_val[0];
  barrier();
  return v;
}

#endif  // VKML_LINALG_COMMON_GLSL_
