// Dense linear algebra for small batched matrices: LU with partial pivoting, triangular solves,
// row permutations, Cholesky, determinants from LU, Householder QR (geqrf, orgqr, ormqr).
// Float32, float64, complex64 and complex128 (float64/complex128 where the device has fp64).
// Every tensor is [batch..., rows, cols] (or [batch..., len] for pivots/tau, [batch...] for info/det) with the same batch dims; broadcast
// batch dims carry stride 0; any strides. One workgroup per matrix, so these suit many small
// matrices; a large single matrix runs, but on one workgroup.
#pragma once
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// lu [.., m, n] = P L U factor of a (LAPACK getrf's layout: unit L below the diagonal);
// pivots [.., min(m, n)] int32, 1-based; info [..] int32 (first zero pivot, 1-based, else 0).
// `lu` may be `a` itself (same address and strides: factored in place).
void lu_factor(Device& dev, const TensorDesc& lu, const TensorDesc& pivots, const TensorDesc& info,
               const TensorDesc& a, bool pivot);

// x [.., n, k] = a^-1 b for a [.., n, n] upper or lower triangular (unit: diagonal taken as
// ones; conj_a: a's complex entries read conjugated, so a transposed view gives a^H). Left side
// only: callers solve x a = b as a^T x^T = b^T through transposed views. `x` may be `b` itself.
void triangular_solve(Device& dev, const TensorDesc& x, const TensorDesc& a, const TensorDesc& b,
                      bool upper, bool unit, bool conj_a = false);

// Swaps rows of x [.., n, k] as getrf's pivots [.., p] say: rows i and pivots[i]-1 for
// i = 0..p-1 (P^T x), or in reverse order (`backward`: P x).
void permute_rows(Device& dev, const TensorDesc& x, const TensorDesc& pivots, bool backward);

// l [.., n, n] = lower Cholesky factor (l l^H = a) of the lower triangle of a (upper triangle
// zeroed; a complex diagonal's imaginary parts ignored);
// info [..] int32: order of the first minor that is not positive definite, else 0.
void cholesky(Device& dev, const TensorDesc& l, const TensorDesc& info, const TensorDesc& a);

// det [..] of P L U from lu [.., n, n] and pivots [.., n].
void lu_det(Device& dev, const TensorDesc& det, const TensorDesc& lu, const TensorDesc& pivots);

// sign [..] (d / |d| for complex) and log|det| [..] (of the real type) of P L U.
void lu_slogdet(Device& dev, const TensorDesc& sign, const TensorDesc& logabsdet,
                const TensorDesc& lu, const TensorDesc& pivots);

// qr [.., m, n] = R above the diagonal and Householder vectors below (LAPACK geqrf's form),
// tau [.., min(m, n)]. `qr` may be `a` itself.
void geqrf(Device& dev, const TensorDesc& qr, const TensorDesc& tau, const TensorDesc& a);

// q [.., m, n] = first n columns of H_1 ... H_k, reflectors [.., m, >= k] below their diagonal,
// tau [.., k], k <= n <= m (LAPACK orgqr).
void householder_product(Device& dev, const TensorDesc& q, const TensorDesc& reflectors,
                         const TensorDesc& tau);

// x [.., m, c] = Q c, Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H from reflectors [.., m, >= k]
// and tau [.., k] (LAPACK ormqr, left side); `transpose` applies the factors in reverse order
// (H_1 first), `conj_tau` and `conj_reflectors` conjugate tau and v of complex ones: Q^H is
// (transpose, conj_tau), Q^T (transpose, conj_reflectors), conj(Q) both conjugations.
// `x` may be `c` itself.
void apply_householder(Device& dev, const TensorDesc& x, const TensorDesc& reflectors,
                       const TensorDesc& tau, const TensorDesc& c, bool transpose,
                       bool conj_tau = false, bool conj_reflectors = false);

// ld [.., n, n] = Bunch-Kaufman factor of the symmetric (complex `hermitian`: Hermitian)
// matrix in a's lower triangle (LAPACK sytrf / hetrf, lower: L below the diagonal, D's 1x1/2x2
// blocks on and under it, upper triangle zeroed); pivots [.., n] int32 (negative pairs mark
// 2x2 blocks); info [..] int32. ld may be a.
void ldl_factor(Device& dev, const TensorDesc& ld, const TensorDesc& pivots,
                const TensorDesc& info, const TensorDesc& a, bool hermitian = false);

// x [.., n, k] = A^-1 b for A given by ldl_factor's ld and pivots (LAPACK sytrs / hetrs).
// x may be b.
void ldl_solve(Device& dev, const TensorDesc& x, const TensorDesc& ld, const TensorDesc& pivots,
               const TensorDesc& b, bool hermitian = false);

// values [.., n] (ascending, of a's real type) and, when `vectors` is given, orthonormal
// eigenvectors [.., n, n] (columns; each one's largest entry real and positive) of the
// symmetric or Hermitian matrix whose lower triangle is in a [.., n, n]. Cyclic Jacobi.
// work [.., n, n] and rot [.., n + 1] (a's dtype) are scratch.
void symmetric_eigen(Device& dev, const TensorDesc& values, const TensorDesc* vectors,
                     const TensorDesc& a, const TensorDesc& work, const TensorDesc& rot);

// One-sided Jacobi SVD of a [.., m, n], m >= n: s [.., n] descending (a's real type);
// u [.., m, n] receives U when `v` [.., n, n] is given (V, not V^H), else serves as scratch.
// u may be a itself.
// rot [.., n + 1] is scratch. Columns of U for zero singular values are left zero.
void svd_jacobi(Device& dev, const TensorDesc& s, const TensorDesc& u, const TensorDesc* v,
                const TensorDesc& a, const TensorDesc& rot);

}  // namespace vkml::ops
