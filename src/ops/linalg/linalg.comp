#version 460
#extension GL_GOOGLE_include_directive : require
// Dense linear algebra on small batched matrices: one workgroup per matrix, working in place in
// global memory (coherent pointers, a buffer barrier between dependent steps), so any size runs
// without a shared-memory limit. Algorithms follow LAPACK's unblocked ones (getf2, trsm, potf2,
// geqr2/larfg, org2r, orm2r), so pivots, info codes and Householder signs match the CPU. With
// LINALG_COMPLEX the same code runs on complex elements (zgetf2, zpotf2, zlarfg, zsytf2/zhetf2,
// ...).
#include "vkml_common.glsl"
#include "linalg_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { LinalgParams p; } pc;

#include "nn_common.glsl"

#include "linalg_common.glsl"

void lu(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const int64_t m = p.m, n = p.n, kmin = min(m, n);
  if (has(p, LINALG_COPY)) {
    for (int64_t e = t; e < m * n; e += W) X(e / n, e % n) = A(e / n, e % n);
  }
  sync();
  int info = 0;
  for (int64_t j = 0; j < kmin; ++j) {
    int64_t r = has(p, LINALG_PIVOT) ? pivot_row(p, j) : j;
    T pv = X(r, j);
    if (t == 0u) PIV(j) = int(r + 1);
    if (el_is_zero(pv)) {
      if (info == 0) info = int(j + 1);
      continue;  // LAPACK leaves a zero column unscaled
    }
    sync();  // every invocation read the pivot before the swap moves it
    if (r != j) {
      for (int64_t c = t; c < n; c += W) {
        T tmp = X(j, c);
        X(j, c) = X(r, c);
        X(r, c) = tmp;
      }
      sync();
    }
    for (int64_t i = j + 1 + t; i < m; i += W) X(i, j) = el_div(X(i, j), pv);
    sync();
    const int64_t rows = m - j - 1, cols = n - j - 1;
    for (int64_t e = t; e < rows * cols; e += W) {
      int64_t i = j + 1 + e / cols, c = j + 1 + e % cols;
      X(i, c) -= el_mul(X(i, j), X(j, c));
    }
    sync();
  }
  if (t == 0u) CI32(p.info + uint64_t(io) * 4ul).v = info;
}

// Left-side triangular solve: x (n x k) <- a^-1 x (conj(a)^-1 x with LINALG_CONJ_A),
// column-oriented (one axpy step per row).
void trsm(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const int64_t n = p.n, k = p.k;
  const bool upper = has(p, LINALG_UPPER), unit = has(p, LINALG_UNIT);
  const bool conj_a = has(p, LINALG_CONJ_A);
  if (has(p, LINALG_COPY)) {
    for (int64_t e = t; e < n * k; e += W) X(e / k, e % k) = B(e / k, e % k);
  }
  sync();
  for (int64_t s = 0; s < n; ++s) {
    const int64_t j = upper ? n - 1 - s : s;
    if (!unit) {
      T d = el_conj_if(A(j, j), conj_a);
      for (int64_t c = t; c < k; c += W) X(j, c) = el_div(X(j, c), d);
      sync();
    }
    const int64_t rows = n - 1 - s;  // rows still to update: below j (lower) or above (upper)
    for (int64_t e = t; e < rows * k; e += W) {
      int64_t i = (upper ? 0 : j + 1) + e / k, c = e % k;
      X(i, c) -= el_mul(el_conj_if(A(i, j), conj_a), X(j, c));
    }
    sync();
  }
}

// Row interchanges of x (n x k) by the m pivots, in order or undone last first.
void permute(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const bool back = has(p, LINALG_BACKWARD);
  for (int64_t c = t; c < p.k; c += W) {
    for (int64_t s = 0; s < p.m; ++s) {
      int64_t i = back ? p.m - 1 - s : s;
      int64_t r = int64_t(PIV(i)) - 1;
      if (r != i && r >= 0 && r < p.n) {
        T tmp = X(i, c);
        X(i, c) = X(r, c);
        X(r, c) = tmp;
      }
    }
  }
}

// Lower Cholesky factor of the lower triangle of a (upper triangle of x zeroed; a Hermitian
// matrix's diagonal taken as real, as zpotf2 does); info = order of the first leading minor that
// is not positive definite.
void cholesky(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const int64_t n = p.n;
  for (int64_t e = t; e < n * n; e += W) {
    int64_t i = e / n, c = e % n;
    if (c > i) {
      X(i, c) = T(0);
    } else if (has(p, LINALG_COPY)) {
      X(i, c) = A(i, c);
    }
  }
  sync();
  int info = 0;
  for (int64_t j = 0; j < n; ++j) {
    R d = el_re(X(j, j));
    if (!(d > R(0))) {
      info = int(j + 1);
      break;
    }
    d = sqrt(d);
    sync();
    if (t == 0u) X(j, j) = el(d);
    for (int64_t i = j + 1 + t; i < n; i += W) X(i, j) = X(i, j) / d;
    sync();
    const int64_t r = n - j - 1;
    for (int64_t e = t; e < r * r; e += W) {
      int64_t i = j + 1 + e / r, c = j + 1 + e % r;
      if (c <= i) X(i, c) -= el_mul(X(i, j), el_conj(X(c, j)));
    }
    sync();
  }
  if (t == 0u) CI32(p.info + uint64_t(io) * 4ul).v = info;
}

// d / |d| (0 for 0, NaN stays NaN): the sign slogdet multiplies up.
#ifdef LINALG_COMPLEX
T el_sign(T d) {
  R a = el_abs(d);
  return a == R(0) ? T(0) : d / a;
}
#else
T el_sign(T d) { return d > T(0) ? T(1) : (d < T(0) ? T(-1) : (d == T(0) ? T(0) : d)); }
#endif

// det (or sign and log|det|) of P L U from the factor x and the pivots, as the CPU forms it.
void det(LinalgParams p) {
  if (gl_LocalInvocationID.x != 0u) return;
  const int64_t n = p.n;
  T prod = el(R(1)), sgn = el(R(1));
  R logabs = R(0);
  for (int64_t i = 0; i < n; ++i) {
    T d = X(i, i);
    if (PIV(i) != int(i + 1)) sgn = -sgn;
    prod = el_mul(prod, d);
    sgn = el_mul(sgn, el_sign(d));
    logabs += nn_log(el_abs(d));
  }
  if (has(p, LINALG_SLOGDET)) {
    A(0, 0) = sgn;
    B_REAL(0, 0) = logabs;
  } else {
    bool odd = false;
    for (int64_t i = 0; i < n; ++i) odd = odd != (PIV(i) != int(i + 1));
    A(0, 0) = odd ? -prod : prod;
  }
}

// x(j:m, c) <- H x(j:m, c) for H = I - tau v v^H, v = (1, a(j+1:m, j)) (conjugated where
// conj_v), columns c in [c0, n).
void apply_reflector(LinalgParams p, int64_t j, T tau, int64_t c0, bool v_in_x, bool conj_v) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  if (el_is_zero(tau)) return;
  for (int64_t c = c0 + t; c < p.n; c += W) {
    T w = X(j, c);
    for (int64_t i = j + 1; i < p.m; ++i) {
      T v = el_conj_if(v_in_x ? X(i, j) : A(i, j), !conj_v);  // v^H reads conj(v)
      w += el_mul(v, X(i, c));
    }
    w = el_mul(tau, w);
    X(j, c) -= w;
    for (int64_t i = j + 1; i < p.m; ++i) {
      T v = el_conj_if(v_in_x ? X(i, j) : A(i, j), conj_v);
      X(i, c) -= el_mul(v, w);
    }
  }
}

void geqrf(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const int64_t m = p.m, n = p.n, kmin = min(m, n);
  if (has(p, LINALG_COPY)) {
    for (int64_t e = t; e < m * n; e += W) X(e / n, e % n) = A(e / n, e % n);
  }
  sync();
  for (int64_t j = 0; j < kmin; ++j) {
    R ss = R(0);
    for (int64_t i = j + 1 + t; i < m; i += W) ss += el_abs2(X(i, j));
    ss = wg_sum(ss);
    T alpha = X(j, j);
    T tau = T(0);
    sync();
    if (ss != R(0) || el_im(alpha) != R(0)) {  // (z/d)larfg: otherwise H = I
      const R ar = el_re(alpha);
      R beta = sqrt(el_abs2(alpha) + ss);
      if (ar >= R(0)) beta = -beta;
      tau = (el(beta) - alpha) / beta;
      T scale = el_div(el(R(1)), alpha - el(beta));
      for (int64_t i = j + 1 + t; i < m; i += W) X(i, j) = el_mul(X(i, j), scale);
      if (t == 0u) X(j, j) = el(beta);
    }
    if (t == 0u) TAU(j) = tau;
    sync();
    apply_reflector(p, j, el_conj(tau), j + 1, true, false);  // H^H on the trailing columns
    sync();
  }
}

void orgqr(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  for (int64_t e = t; e < p.m * p.n; e += W) {
    int64_t i = e / p.n, c = e % p.n;
    X(i, c) = el(R(i == c ? 1 : 0));
  }
  sync();
  for (int64_t j = p.k - 1; j >= 0; --j) {
    apply_reflector(p, j, TAU(j), 0, false, false);
    sync();
  }
}

void ormqr(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  if (has(p, LINALG_COPY)) {
    for (int64_t e = t; e < p.m * p.n; e += W) X(e / p.n, e % p.n) = B(e / p.n, e % p.n);
  }
  sync();
  const bool transpose = has(p, LINALG_BACKWARD);  // Q^H = H_k^H ... H_1^H: H_1 applies first
  const bool conj_tau = has(p, LINALG_CONJ_TAU), conj_v = has(p, LINALG_CONJ_A);
  for (int64_t s = 0; s < p.k; ++s) {
    int64_t j = transpose ? s : p.k - 1 - s;
    apply_reflector(p, j, el_conj_if(TAU(j), conj_tau), 0, false, conj_v);
    sync();
  }
}

shared int s_ldl[3];  // pivot row, block size (0: singular column, no update), info

// Bunch-Kaufman's magnitudes: |re| + |im| (LAPACK's cabs1), and for a Hermitian matrix's
// diagonal |re| (its imaginary part is taken as zero).
R ldl_abs(T z) { return el_pivot_abs(z); }
R ldl_abs_diag(T z, bool herm) { return herm ? abs(el_re(z)) : el_pivot_abs(z); }
T real_part(T z) { return el(el_re(z)); }

// Bunch-Kaufman pivot choice and interchange of step k (LAPACK sytf2, or hetf2 where `herm`;
// lower), by one thread.
void ldl_pivot(LinalgParams p, int64_t k, bool herm, inout int info) {
  const int64_t n = p.n;
  const R alpha = (R(1) + sqrt(R(17))) / R(8);
  int kstep = 1;
  int64_t kp = k;
  R absakk = ldl_abs_diag(X(k, k), herm), colmax = R(0);
  int64_t imax = k;
  for (int64_t i = k + 1; i < n; ++i) {
    if (ldl_abs(X(i, k)) > colmax || i == k + 1) {
      colmax = ldl_abs(X(i, k));
      imax = i;
    }
  }
  if (max(absakk, colmax) == R(0) || isnan(absakk)) {
    if (info == 0) info = int(k + 1);
    kstep = 0;
    if (herm) X(k, k) = real_part(X(k, k));
  } else {
    if (absakk < alpha * colmax) {
      R rowmax = R(-1);
      for (int64_t j = k; j < imax; ++j) rowmax = max(rowmax, ldl_abs(X(imax, j)));
      for (int64_t j = imax + 1; j < n; ++j) rowmax = max(rowmax, ldl_abs(X(j, imax)));
      if (absakk >= alpha * colmax * (colmax / rowmax)) {
        kp = k;
      } else if (ldl_abs_diag(X(imax, imax), herm) >= alpha * rowmax) {
        kp = imax;
      } else {
        kp = imax;
        kstep = 2;
      }
    }
    const int64_t kk = k + kstep - 1;
    if (kp != kk) {
      for (int64_t i = kp + 1; i < n; ++i) {
        T tmp = X(i, kk);
        X(i, kk) = X(i, kp);
        X(i, kp) = tmp;
      }
      for (int64_t j = kk + 1; j < kp; ++j) {  // the Hermitian mirror conjugates
        T tmp = el_conj_if(X(j, kk), herm);
        X(j, kk) = el_conj_if(X(kp, j), herm);
        X(kp, j) = tmp;
      }
      if (herm) X(kp, kk) = el_conj(X(kp, kk));
      T tmp = X(kk, kk);
      X(kk, kk) = X(kp, kp);
      X(kp, kp) = tmp;
      if (herm) {
        X(kk, kk) = real_part(X(kk, kk));
        X(kp, kp) = real_part(X(kp, kp));
        X(k, k) = real_part(X(k, k));
      }
      if (kstep == 2) {
        tmp = X(k + 1, k);
        X(k + 1, k) = X(kp, k);
        X(kp, k) = tmp;
      }
    } else if (herm) {
      X(k, k) = real_part(X(k, k));
      if (kstep == 2) X(k + 1, k + 1) = real_part(X(k + 1, k + 1));
    }
  }
  if (kstep == 2) {
    PIV(k) = int(-(kp + 1));
    PIV(k + 1) = int(-(kp + 1));
  } else {
    PIV(k) = int(kp + 1);
  }
  s_ldl[0] = int(kp);
  s_ldl[1] = kstep;
  s_ldl[2] = info;
}

// L D L^T (symmetric) or L D L^H (LINALG_HERMITIAN) of a's lower triangle.
void ldl(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const int64_t n = p.n;
  const bool herm = has(p, LINALG_HERMITIAN);
  for (int64_t e = t; e < n * n; e += W) {
    int64_t i = e / n, c = e % n;
    if (c > i) {
      X(i, c) = T(0);
    } else if (has(p, LINALG_COPY)) {
      X(i, c) = A(i, c);
    }
  }
  sync();
  int info = 0;
  for (int64_t k = 0; k < n;) {
    if (t == 0u) ldl_pivot(p, k, herm, info);
    sync();
    const int kstep = s_ldl[1];
    info = s_ldl[2];
    const int64_t r = n - k - kstep;  // trailing order
    if (kstep == 1 && r > 0) {
      const T d11 = herm ? el(R(1) / el_re(X(k, k))) : el_div(el(R(1)), X(k, k));
      for (int64_t e = t; e < r * r; e += W) {
        int64_t i = k + 1 + e / r, j = k + 1 + e % r;
        if (j > i) continue;
        X(i, j) += el_mul(X(i, k), el_mul(-d11, el_conj_if(X(j, k), herm)));  // (s/h)yr
        if (herm && i == j) X(i, i) = real_part(X(i, i));
      }
      sync();
      for (int64_t i = k + 1 + t; i < n; i += W) X(i, k) = el_mul(d11, X(i, k));
    } else if (kstep == 2 && r > 0) {
      // w_k = scale (d11 x_k - d21 x_k+1), w_k+1 = scale (d22 x_k+1 - d21c x_k)
      T d11, d22, d21, d21c, scale;
      if (herm) {
        const R d = el_abs(X(k + 1, k));
        d11 = el(el_re(X(k + 1, k + 1)) / d);
        d22 = el(el_re(X(k, k)) / d);
        d21 = X(k + 1, k) / d;
        d21c = el_conj(d21);
        scale = el((R(1) / (el_re(d11) * el_re(d22) - R(1))) / d);
      } else {
        const T e21 = X(k + 1, k);
        d11 = el_div(X(k + 1, k + 1), e21);
        d22 = el_div(X(k, k), e21);
        d21 = el(R(1));
        d21c = d21;
        scale = el_div(el_div(el(R(1)), el_mul(d11, d22) - el(R(1))), e21);
      }
      for (int64_t e = t; e < r * r; e += W) {
        int64_t i = k + 2 + e / r, j = k + 2 + e % r;
        if (j > i) continue;
        T wk = el_mul(scale, el_mul(d11, X(j, k)) - el_mul(d21, X(j, k + 1)));
        T wkp1 = el_mul(scale, el_mul(d22, X(j, k + 1)) - el_mul(d21c, X(j, k)));
        X(i, j) = X(i, j) - el_mul(X(i, k), el_conj_if(wk, herm)) -
                  el_mul(X(i, k + 1), el_conj_if(wkp1, herm));
        if (herm && i == j) X(i, i) = real_part(X(i, i));
      }
      sync();
      for (int64_t j = k + 2 + t; j < n; j += W) {
        T wk = el_mul(scale, el_mul(d11, X(j, k)) - el_mul(d21, X(j, k + 1)));
        T wkp1 = el_mul(scale, el_mul(d22, X(j, k + 1)) - el_mul(d21c, X(j, k)));
        X(j, k) = wk;
        X(j, k + 1) = wkp1;
      }
    }
    sync();
    k += kstep == 0 ? 1 : kstep;
  }
  if (t == 0u) CI32(p.info + uint64_t(io) * 4ul).v = info;
}

#define SWAP_ROWS(a, b, c) \
  {                        \
    T tmp_ = X(a, c);      \
    X(a, c) = X(b, c);     \
    X(b, c) = tmp_;        \
  }

// x (n x k) <- (P L D L^T P^T)^-1 x (L D L^H with LINALG_HERMITIAN) from LAPACK's lower LD and
// pivots (sytrs / hetrs), one column each.
void ldl_solve(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const int64_t n = p.n;
  const bool herm = has(p, LINALG_HERMITIAN);
  if (has(p, LINALG_COPY)) {
    for (int64_t e = t; e < n * p.k; e += W) X(e / p.k, e % p.k) = B(e / p.k, e % p.k);
  }
  sync();
  for (int64_t c = t; c < p.k; c += W) {
    for (int64_t k = 0; k < n;) {  // L D y = b
      int piv = PIV(k);
      if (piv > 0) {
        int64_t kp = piv - 1;
        if (kp != k) SWAP_ROWS(k, kp, c);
        for (int64_t i = k + 1; i < n; ++i) X(i, c) -= el_mul(A(i, k), X(k, c));
        X(k, c) = herm ? X(k, c) / el_re(A(k, k)) : el_div(X(k, c), A(k, k));
        k += 1;
      } else {
        int64_t kp = -piv - 1;
        if (kp != k + 1) SWAP_ROWS(k + 1, kp, c);
        for (int64_t i = k + 2; i < n; ++i) X(i, c) -= el_mul(A(i, k), X(k, c));
        for (int64_t i = k + 2; i < n; ++i) X(i, c) -= el_mul(A(i, k + 1), X(k + 1, c));
        T akm1k = A(k + 1, k), akm1k_up = el_conj_if(akm1k, herm);
        T akm1 = el_div(A(k, k), akm1k_up), ak = el_div(A(k + 1, k + 1), akm1k);
        T denom = el_mul(akm1, ak) - el(R(1));
        T bkm1 = el_div(X(k, c), akm1k_up), bk = el_div(X(k + 1, c), akm1k);
        X(k, c) = el_div(el_mul(ak, bkm1) - bk, denom);
        X(k + 1, c) = el_div(el_mul(akm1, bk) - bkm1, denom);
        k += 2;
      }
    }
    for (int64_t k = n - 1; k >= 0;) {  // L^T x = y (L^H x = y)
      int piv = PIV(k);
      T acc = X(k, c);
      for (int64_t i = k + 1; i < n; ++i) acc -= el_mul(el_conj_if(A(i, k), herm), X(i, c));
      X(k, c) = acc;
      if (piv > 0) {
        if (piv - 1 != k) SWAP_ROWS(k, piv - 1, c);
        k -= 1;
      } else {
        acc = X(k - 1, c);
        for (int64_t i = k + 1; i < n; ++i) acc -= el_mul(el_conj_if(A(i, k - 1), herm), X(i, c));
        X(k - 1, c) = acc;
        if (-piv - 1 != k) SWAP_ROWS(k, -piv - 1, c);
        k -= 2;
      }
    }
  }
}

void main() {
  LinalgParams p = pc.p;
  for (int64_t bi = nn_group_id(); bi < p.batch; bi += nn_group_count()) {
    locate(p, bi);
    if (p.mode == LINALG_LU) {
      lu(p);
    } else if (p.mode == LINALG_TRSM) {
      trsm(p);
    } else if (p.mode == LINALG_PERMUTE) {
      permute(p);
    } else if (p.mode == LINALG_CHOLESKY) {
      cholesky(p);
    } else if (p.mode == LINALG_DET) {
      det(p);
    } else if (p.mode == LINALG_GEQRF) {
      geqrf(p);
    } else if (p.mode == LINALG_ORGQR) {
      orgqr(p);
    } else if (p.mode == LINALG_ORMQR) {
      ormqr(p);
    } else if (p.mode == LINALG_LDL) {
      ldl(p);
    } else if (p.mode == LINALG_LDL_SOLVE) {
      ldl_solve(p);
    }
    sync();  // the next matrix reuses shared memory
  }
}
