// Shared by the linalg shaders: element type, coherent pointers into the matrices of the current
// batch item, workgroup sync, pivot search and sums. Include after nn_common.glsl.
#ifndef VKML_LINALG_COMMON_GLSL_
#define VKML_LINALG_COMMON_GLSL_

#ifdef VKML_USE_FP64
#define T double
layout(buffer_reference, scalar, buffer_reference_align = 8) coherent buffer CT { double v; };
#define TSIZE 8ul
#else
#define T float
layout(buffer_reference, scalar, buffer_reference_align = 4) coherent buffer CT { float v; };
#define TSIZE 4ul
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

shared T s_val[256];
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
  T best = T(-1);
  int bi = -1;
  for (int64_t i = j + t; i < p.m; i += W) {
    T v = abs(X(i, j));
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
      T v = s_val[t + s];
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

T wg_sum(T v) {
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
