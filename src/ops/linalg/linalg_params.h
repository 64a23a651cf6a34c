// Parameters of linalg.comp (LU, triangular solves, row permutations, Cholesky, determinants,
// Householder QR) on real or complex matrices, shared by C++ and GLSL. Every tensor has the
// same batch dims (broadcast ones carry stride 0) followed by its matrix dims (rows, cols) or,
// for pivots/tau, one vector dim. One workgroup owns one matrix of the batch and works on it in
// global memory.
#ifndef VKML_OPS_LINALG_PARAMS_H_
#define VKML_OPS_LINALG_PARAMS_H_

#define VKML_LINALG_MAX_BATCH 6

// Modes.
#define LINALG_LU 0u          // x = LU of a (m x n), piv (int32, 1-based), info
#define LINALG_TRSM 1u        // x = a^-1 b for triangular a (n x n), b/x (n x k), left side
#define LINALG_PERMUTE 2u     // rows of x (n x k) swapped by piv, forward or backward
#define LINALG_CHOLESKY 3u    // x = lower Cholesky factor of a's lower triangle, info
#define LINALG_DET 4u         // from LU x and piv: det into a, or slogdet (sign a, log|det| b)
#define LINALG_GEQRF 5u       // x = Householder QR of a (m x n) in LAPACK's form, tau
#define LINALG_ORGQR 6u       // x (m x n) = first n columns of H_1 ... H_k (reflectors in a)
#define LINALG_ORMQR 7u       // x (m x k) = Q x or Q^T x, reflectors in a (m x r), tau
#define LINALG_LDL 10u        // x = Bunch-Kaufman L D L^T (or L D L^H) of lower(a), piv, info
#define LINALG_LDL_SOLVE 11u  // x (n x k) = A^-1 b for A = L D L^T given by a (LD) and piv
// linalg_jacobi.comp; `info` there is a rotation scratch of n + 1 elements per matrix.
#define LINALG_EIGH 8u        // eigenvalues (piv, ascending) and vectors (b) of a's lower triangle
#define LINALG_SVD 9u         // a (m x n, m >= n) = x S b^T: x = U (m x n), S in piv, b = V

// Flags.
#define LINALG_UPPER 1u       // TRSM: a is upper triangular
#define LINALG_UNIT 2u        // TRSM: a's diagonal is taken as ones
#define LINALG_PIVOT 4u       // LU: partial pivoting
#define LINALG_BACKWARD 8u    // PERMUTE: undo the swaps (last first); ORMQR: apply Q^T
#define LINALG_SLOGDET 16u    // DET: sign and log|det| instead of det
#define LINALG_COPY 32u       // copy the input matrix into x before working in place
#define LINALG_VECTORS 64u    // EIGH/SVD: compute the vectors too (b, and SVD's x as U)
#define LINALG_CONJ_A 128u    // TRSM: a read conjugated; ORMQR: the reflectors conjugated
#define LINALG_CONJ_TAU 256u  // ORMQR: tau conjugated (Q^H's factors)
#define LINALG_HERMITIAN 512u // LDL/LDL_SOLVE: L D L^H of a Hermitian matrix (else L D L^T)

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct LinalgParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer LinalgParams {
#endif
  uint64_t a;     // input matrix (LU/CHOLESKY/GEQRF/TRSM/ORGQR/ORMQR); DET: first output
  uint64_t b;     // TRSM: right-hand sides (copied into x); DET: log|det|
  uint64_t x;     // the matrix worked on in place
  uint64_t piv;   // int32 pivots; GEQRF/ORGQR/ORMQR: tau (element type)
  uint64_t info;  // int32 info per matrix
  int64_t batch_sizes[VKML_LINALG_MAX_BATCH];
  int64_t a_strides[VKML_LINALG_MAX_BATCH + 2];
  int64_t b_strides[VKML_LINALG_MAX_BATCH + 2];
  int64_t x_strides[VKML_LINALG_MAX_BATCH + 2];
  int64_t piv_strides[VKML_LINALG_MAX_BATCH + 2];
  int64_t info_strides[VKML_LINALG_MAX_BATCH + 2];
  int64_t m;      // rows of x
  int64_t n;      // columns of x (TRSM/PERMUTE: rows of x are n, columns k)
  int64_t k;      // TRSM/PERMUTE: right-hand sides; GEQRF/ORGQR/ORMQR: reflectors
  int64_t batch;  // matrices
  uint32_t batch_ndim;
  uint32_t mode;
  uint32_t flags;
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(sizeof(LinalgParams) == 5 * 8 + 8 * VKML_LINALG_MAX_BATCH +
                                          5 * 8 * (VKML_LINALG_MAX_BATCH + 2) + 4 * 8 + 4 * 4);
static_assert(offsetof(LinalgParams, batch_ndim) == sizeof(LinalgParams) - 16);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_LINALG_PARAMS_H_
