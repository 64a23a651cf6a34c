#version 460
#extension GL_GOOGLE_include_directive : require
// Symmetric eigendecomposition (cyclic two-sided Jacobi) and SVD (one-sided Jacobi, Hestenes),
// one workgroup per matrix. Each step rotates n/2 disjoint index pairs in parallel (round-robin
// "circle" ordering, so a sweep of n-1 steps meets every pair once); sweeps repeat until no
// off-diagonal entry (eigh) or column pair (SVD) is above the type's epsilon. Results are sorted
// (eigenvalues ascending, singular values descending) and each vector's largest entry made
// positive; LAPACK fixes signs differently, so vectors match the CPU only up to sign. With
// LINALG_COMPLEX (Hermitian eigen, complex SVD) each rotation first turns the pair's coupling
// real by a phase on its second index, then rotates as for real matrices; values are real.
#include "vkml_common.glsl"
#include "linalg_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { LinalgParams p; } pc;

#include "nn_common.glsl"
#include "linalg_common.glsl"

#if defined(VKML_USE_FP64)
#define EPS 2.220446049250313e-16
#else
#define EPS 1.1920929e-07
#endif
#define MAX_SWEEPS 60

#define ROT(i) CT(p.info + uint64_t(io + (i)) * TSIZE).v
#define V(i, j) B(i, j)
// Eigen/singular values: a vector of the real type.
#define VALUE(i) CR(p.piv + uint64_t(po + (i) * ps0) * RSIZE).v

// Pair i's rotation in the scratch: (c, s) and the phase that multiplies the second index first
// (complex: two slots, (c, s) as one element; real: c and s, no phase).
#ifdef LINALG_COMPLEX
void store_rotation(LinalgParams p, int64_t i, R c, R s, T phase) {
  ROT(2 * i) = T(c, s);
  ROT(2 * i + 1) = phase;
}
void load_rotation(LinalgParams p, int64_t i, out R c, out R s, out T phase) {
  T cs = ROT(2 * i);
  c = cs.x;
  s = cs.y;
  phase = ROT(2 * i + 1);
}
#else
void store_rotation(LinalgParams p, int64_t i, R c, R s, T phase) {
  ROT(2 * i) = c;
  ROT(2 * i + 1) = s;
}
void load_rotation(LinalgParams p, int64_t i, out R c, out R s, out T phase) {
  c = ROT(2 * i);
  s = ROT(2 * i + 1);
  phase = T(1);
}
#endif

// The unit phase that makes z * phase real and non-negative (1 for 0).
T phase_of(T z) {
  R a = el_abs(z);
  return a == R(0) ? el(R(1)) : el_conj(z) / a;
}

// A pair's coupling as the real number the rotation zeroes: complex z becomes |z| once the
// second index is multiplied by `phase`; a real z stays as it is (phase 1).
R coupling(T z, out T phase) {
#ifdef LINALG_COMPLEX
  phase = phase_of(z);
  return el_abs(z);
#else
  phase = T(1);
  return z;
#endif
}

shared int s_rotated;

// The pair of round-robin step r at position i among N (even) players; -1 for the dummy.
ivec2 pair_of(int64_t r, int64_t i, int64_t N, int64_t n) {
  int64_t a = i == 0 ? N - 1 : (r + i) % (N - 1);
  int64_t b = (r + N - 1 - i) % (N - 1);
  if (a >= n || b >= n) return ivec2(-1);
  return a < b ? ivec2(int(a), int(b)) : ivec2(int(b), int(a));
}

// (c, s) with t = sign(z) / (|z| + sqrt(1 + z^2)) for z = num / den: the rotation that zeroes
// the pair. A ratio that is not finite (den flushed to zero) means no rotation.
void rotation(R num, R den, out R c, out R s) {
  R z = num / den;
  c = R(1);
  s = R(0);
  if (isnan(z) || isinf(z)) return;
  R t = abs(z) > R(1e18) ? R(0.5) / z : (z >= R(0) ? R(1) : R(-1)) / (abs(z) + sqrt(R(1) + z * z));
  c = R(1) / sqrt(R(1) + t * t);
  s = c * t;
}

void init_vectors(LinalgParams p, int64_t n) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  for (int64_t e = t; e < n * n; e += W) V(e / n, e % n) = el(R(e / n == e % n ? 1 : 0));
}

// Swaps columns i and j of x (rows [0, m)) and of V (rows [0, n)).
void swap_columns(LinalgParams p, int64_t i, int64_t j, int64_t m, int64_t n, bool in_x) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  if (i == j) return;
  if (in_x) {
    for (int64_t r = t; r < m; r += W) {
      T tmp = X(r, i);
      X(r, i) = X(r, j);
      X(r, j) = tmp;
    }
  }
  if (has(p, LINALG_VECTORS)) {
    for (int64_t r = t; r < n; r += W) {
      T tmp = V(r, i);
      V(r, i) = V(r, j);
      V(r, j) = tmp;
    }
  }
}

void eigh(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const int64_t n = p.n, N = n + (n & 1), npairs = N / 2;
  const bool vectors = has(p, LINALG_VECTORS);
  R frob = R(0);
  for (int64_t e = t; e < n * n; e += W) {
    int64_t i = e / n, j = e % n;
    T v = i >= j ? A(i, j) : el_conj(A(j, i));  // Hermitian: the upper triangle mirrors
    if (i == j) v = el(el_re(v));
    X(i, j) = v;
    frob += el_abs2(v);
  }
  frob = wg_sum(frob);
  if (vectors) init_vectors(p, n);
  sync();
  for (int sweep = 0; sweep < MAX_SWEEPS; ++sweep) {
    R off = R(0);
    for (int64_t e = t; e < n * n; e += W) {
      if (e / n != e % n) off += el_abs2(X(e / n, e % n));
    }
    off = wg_sum(off);
    if (!(off > EPS * EPS * frob)) break;  // also stops on NaN
    for (int64_t r = 0; r < N - 1; ++r) {
      for (int64_t i = t; i < npairs; i += W) {
        ivec2 pq = pair_of(r, i, N, n);
        R c = R(1), s = R(0);
        T phase = el(R(1));
        if (pq.x >= 0) {
          T apq = X(pq.x, pq.y);
          if (!el_is_zero(apq)) {
            const R g = coupling(apq, phase);
            rotation(el_re(X(pq.y, pq.y)) - el_re(X(pq.x, pq.x)), R(2) * g, c, s);
          }
        }
        store_rotation(p, i, c, s, phase);
      }
      sync();
      // J = D R with D = the phase at index q: rows take J^H = R^T D^H, columns and V take J.
      for (int64_t e = t; e < npairs * n; e += W) {  // rows: J^H A
        int64_t i = e / n, k = e % n;
        ivec2 pq = pair_of(r, i, N, n);
        R c, s;
        T phase;
        load_rotation(p, i, c, s, phase);
        if (pq.x < 0 || s == R(0)) continue;
        T x = X(pq.x, k), y = el_mul(el_conj(phase), X(pq.y, k));
        X(pq.x, k) = c * x - s * y;
        X(pq.y, k) = s * x + c * y;
      }
      sync();
      for (int64_t e = t; e < npairs * n; e += W) {  // columns: (J^H A) J, and V J
        int64_t i = e % npairs, k = e / npairs;
        ivec2 pq = pair_of(r, i, N, n);
        R c, s;
        T phase;
        load_rotation(p, i, c, s, phase);
        if (pq.x < 0 || s == R(0)) continue;
        T x = X(k, pq.x), y = el_mul(X(k, pq.y), phase);
        X(k, pq.x) = c * x - s * y;
        X(k, pq.y) = s * x + c * y;
        if (vectors) {
          x = V(k, pq.x);
          y = el_mul(V(k, pq.y), phase);
          V(k, pq.x) = c * x - s * y;
          V(k, pq.y) = s * x + c * y;
        }
      }
      sync();
    }
  }
  // Ascending selection sort of the diagonal, moving the vectors along.
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = i;
    for (int64_t j = i + 1; j < n; ++j) {
      if (el_re(X(j, j)) < el_re(X(best, best))) best = j;
    }
    sync();
    if (best != i) {
      if (t == 0u) {
        T tmp = X(i, i);
        X(i, i) = X(best, best);
        X(best, best) = tmp;
      }
      swap_columns(p, i, best, n, n, false);
    }
    sync();
  }
  for (int64_t i = t; i < n; i += W) VALUE(i) = el_re(X(i, i));
}

// Makes each column's largest-magnitude entry of `x` (or of V) real and positive, multiplying
// x's and V's column by the same sign (real) or unit phase (complex).
void fix_signs(LinalgParams p, int64_t m, int64_t n, bool by_x) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const bool vectors = has(p, LINALG_VECTORS);
  for (int64_t j = t; j < n; j += W) {
    T big = T(0);
    const int64_t rows = by_x ? m : n;
    for (int64_t r = 0; r < rows; ++r) {
      T v = by_x ? X(r, j) : V(r, j);
      if (el_abs(v) > el_abs(big)) big = v;
    }
    const T phase = phase_of(big);
    if (phase != el(R(1))) {
      if (by_x) {
        for (int64_t r = 0; r < m; ++r) X(r, j) = el_mul(X(r, j), phase);
      }
      if (vectors) {
        for (int64_t r = 0; r < n; ++r) V(r, j) = el_mul(V(r, j), phase);
      }
    }
  }
}

void svd(LinalgParams p) {
  const uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  const int64_t m = p.m, n = p.n, N = n + (n & 1), npairs = N / 2;
  const bool vectors = has(p, LINALG_VECTORS);
  if (has(p, LINALG_COPY)) {
    for (int64_t e = t; e < m * n; e += W) X(e / n, e % n) = A(e / n, e % n);
  }
  if (vectors) init_vectors(p, n);
  sync();
  for (int sweep = 0; sweep < MAX_SWEEPS; ++sweep) {
    if (t == 0u) s_rotated = 0;
    barrier();
    for (int64_t r = 0; r < N - 1; ++r) {
      for (int64_t i = t; i < npairs; i += W) {
        ivec2 pq = pair_of(r, i, N, n);
        R c = R(1), s = R(0);
        T phase = el(R(1));
        if (pq.x >= 0) {
          R alpha = R(0), beta = R(0);
          T gamma = T(0);
          for (int64_t k = 0; k < m; ++k) {
            T x = X(k, pq.x), y = X(k, pq.y);
            alpha += el_abs2(x);
            beta += el_abs2(y);
            gamma += el_mul(el_conj(x), y);
          }
          // sqrt of each norm apart: their product may underflow for tiny columns
          if (el_abs(gamma) > EPS * sqrt(alpha) * sqrt(beta)) {
            const R g = coupling(gamma, phase);  // x^H (y phase) = g
            rotation(beta - alpha, R(2) * g, c, s);
            if (s != R(0)) s_rotated = 1;
          }
        }
        store_rotation(p, i, c, s, phase);
      }
      sync();
      for (int64_t e = t; e < npairs * max(m, n); e += W) {
        int64_t i = e % npairs, k = e / npairs;
        ivec2 pq = pair_of(r, i, N, n);
        R c, s;
        T phase;
        load_rotation(p, i, c, s, phase);
        if (pq.x < 0 || s == R(0)) continue;
        if (k < m) {
          T x = X(k, pq.x), y = el_mul(X(k, pq.y), phase);
          X(k, pq.x) = c * x - s * y;
          X(k, pq.y) = s * x + c * y;
        }
        if (vectors && k < n) {
          T x = V(k, pq.x), y = el_mul(V(k, pq.y), phase);
          V(k, pq.x) = c * x - s * y;
          V(k, pq.y) = s * x + c * y;
        }
      }
      sync();
    }
    bool again = s_rotated != 0;
    barrier();
    if (!again) break;
  }
  // Singular values are the column norms; U's columns the normalised columns.
  for (int64_t j = t; j < n; j += W) {
    R ss = R(0);
    for (int64_t k = 0; k < m; ++k) ss += el_abs2(X(k, j));
    R sv = sqrt(ss);
    ROT(j) = el(sv);
    if (vectors && sv > R(0)) {
      for (int64_t k = 0; k < m; ++k) X(k, j) = X(k, j) / sv;
    }
  }
  sync();
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = i;
    for (int64_t j = i + 1; j < n; ++j) {
      if (el_re(ROT(j)) > el_re(ROT(best))) best = j;
    }
    sync();
    if (best != i) {
      if (t == 0u) {
        T tmp = ROT(i);
        ROT(i) = ROT(best);
        ROT(best) = tmp;
      }
      if (vectors) swap_columns(p, i, best, m, n, true);
    }
    sync();
  }
  if (vectors) fix_signs(p, m, n, true);
  for (int64_t i = t; i < n; i += W) VALUE(i) = el_re(ROT(i));
}

void main() {
  LinalgParams p = pc.p;
  for (int64_t bi = nn_group_id(); bi < p.batch; bi += nn_group_count()) {
    locate(p, bi);
    if (p.mode == LINALG_EIGH) {
      eigh(p);
      sync();
      if (has(p, LINALG_VECTORS)) fix_signs(p, p.n, p.n, false);
    } else if (p.mode == LINALG_SVD) {
      svd(p);
    }
    sync();
  }
}
