// Linear algebra on vkml for float32/float64 and complex64/complex128 (the 64-bit ones where the
// device has fp64): LU (factor, solve, unpack, linalg_lu), solve/inv through LU, det/slogdet
// from LU, Cholesky (factor, cholesky_solve's helper, cholesky_inverse), triangular solves,
// Householder QR (geqrf, householder_product, ormqr, linalg_qr) and LDL^T (symmetric or
// Hermitian); eigh/SVD live in eigh_svd.cpp. Complex inputs with lazy conj/neg bits are resolved first.
// Shapes, strides and input errors of the structured ops come from PyTorch's own meta kernels;
// the composite wrappers (linalg.solve, linalg.inv, linalg.cholesky, ...) then raise LinAlgError
// from `info` as on the CPU (one host read, as on CUDA). Kernels work through strides: no
// contiguous copies of the inputs.
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_cholesky_solve_helper_native.h>
#include <ATen/ops/_linalg_check_errors.h>
#include <ATen/ops/_linalg_det.h>
#include <ATen/ops/_linalg_slogdet.h>
#include <ATen/ops/_linalg_solve_ex.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/linalg_cholesky_ex.h>
#include <ATen/ops/linalg_inv_ex.h>
#include <ATen/ops/linalg_ldl_factor_ex.h>
#include <ATen/ops/linalg_ldl_solve.h>
#include <ATen/ops/linalg_lu.h>
#include <ATen/ops/linalg_lu_factor_ex.h>
#include <ATen/ops/linalg_lu_solve.h>
#include <ATen/ops/linalg_qr.h>
#include <ATen/ops/linalg_solve_ex.h>
#include <ATen/ops/lu_unpack.h>
#include <ATen/ops/triangular_solve.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <tuple>

#include "common/index_util.h"
#include "ops/linalg/linalg_bridge.h"
#include "vkml/linalg.h"

namespace torch_vkml::ops_factorizations {

using vkml::TensorDesc;
using namespace linalg;

// ---- LU -------------------------------------------------------------------------------------

void lu_factor_into(const at::Tensor& A, bool pivot, const at::Tensor& LU,
                    const at::Tensor& pivots, const at::Tensor& info) {
  check_linalg_dtype(A, "linalg_lu_factor_ex");
  const at::Tensor A_ = resolved(A);
  run(A, [&](vkml::Device& d) {
    vkml::ops::lu_factor(d, desc(LU), desc(pivots), desc(info), desc(A_), pivot);
  });
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> lu_factor_ex_out(
    const at::Tensor& A, bool pivot, bool check_errors, at::Tensor& LU, at::Tensor& pivots,
    at::Tensor& info) {
  auto [mLU, mp, mi] = at::linalg_lu_factor_ex(meta(A), pivot, false);
  fit_out(LU, mLU, A);
  fit_out(pivots, mp, A);
  fit_out(info, mi, A);
  lu_factor_into(A, pivot, LU, pivots, info);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.lu_factor_ex", A.dim() == 2);
  return {LU, pivots, info};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lu_factor_ex(const at::Tensor& A, bool pivot,
                                                            bool check_errors) {
  auto [mLU, mp, mi] = at::linalg_lu_factor_ex(meta(A), pivot, false);
  at::Tensor LU = like_meta(mLU, A), pivots = like_meta(mp, A), info = like_meta(mi, A);
  lu_factor_ex_out(A, pivot, check_errors, LU, pivots, info);
  return {LU, pivots, info};
}

// x <- A^-1 x, A^-T x (transpose), A^-H x (transpose, conj) or conj(A)^-1 x (conj) for
// A = P L U given by (LU, pivots), all with x's batch dims.
void lu_solve_in_place(const at::Tensor& x, const at::Tensor& LU, const at::Tensor& pivots,
                       bool transpose, bool conj) {
  check_linalg_dtype(x, "linalg_lu_solve");
  run(x, [&](vkml::Device& d) {
    TensorDesc X = desc(x), P = desc(pivots);
    if (!transpose) {
      TensorDesc F = desc(LU);
      vkml::ops::permute_rows(d, X, P, false);
      vkml::ops::triangular_solve(d, X, F, X, /*upper=*/false, /*unit=*/true, conj);
      vkml::ops::triangular_solve(d, X, F, X, /*upper=*/true, /*unit=*/false, conj);
    } else {
      TensorDesc Ft = desc(LU.mT());  // U^T is lower, L^T unit upper
      vkml::ops::triangular_solve(d, X, Ft, X, /*upper=*/false, /*unit=*/false, conj);
      vkml::ops::triangular_solve(d, X, Ft, X, /*upper=*/true, /*unit=*/true, conj);
      vkml::ops::permute_rows(d, X, P, true);
    }
  });
}

at::Tensor& lu_solve_out(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                         bool left, bool adjoint, at::Tensor& result) {
  at::Tensor m = at::linalg_lu_solve(meta(LU), meta(pivots), meta(B), left, adjoint);
  fit_out(result, m, LU);
  if (result.numel() == 0) return result;
  auto batch = batch_of(result, 2);
  if (!result.is_same(B)) result.copy_(B.expand(result.sizes()));
  at::Tensor F = expand_batch(resolved(LU), batch, 2), P = expand_batch(pivots, batch, 1);
  // X A = B is A^T X^T = B^T, and X A^H = B is conj(A) X^T = B^T.
  lu_solve_in_place(left ? result : result.mT(), F, P, left ? adjoint : !adjoint,
                    adjoint && LU.is_complex());
  return result;
}

at::Tensor lu_solve(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                    bool left, bool adjoint) {
  at::Tensor m = at::linalg_lu_solve(meta(LU), meta(pivots), meta(B), left, adjoint);
  at::Tensor result = like_meta(m, LU);
  return lu_solve_out(LU, pivots, B, left, adjoint, result);
}

// As the CPU: factor A itself (its autograd formula solves with the saved LU), then solve.
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> solve_ex_out(
    const at::Tensor& A, const at::Tensor& B, bool left, bool check_errors, at::Tensor& result,
    at::Tensor& LU, at::Tensor& pivots, at::Tensor& info) {
  auto [mr, mLU, mp, mi] = at::_linalg_solve_ex(meta(A), meta(B), left, false);
  fit_out(result, mr, A);
  fit_out(LU, mLU, A);
  fit_out(pivots, mp, A);
  fit_out(info, mi, A);
  at::linalg_lu_factor_ex_out(LU, pivots, info, A);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.solve_ex", A.dim() == 2);
  const bool vector_case = at::native::linalg_solve_is_vector_rhs(LU, B);
  at::Tensor result_ = vector_case ? result.unsqueeze(-1) : result;
  at::Tensor B_ = vector_case ? B.unsqueeze(-1) : B;
  at::linalg_lu_solve_out(result_, LU, pivots, B_, left, /*adjoint=*/false);
  return {result, LU, pivots, info};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> solve_ex(const at::Tensor& A,
                                                                    const at::Tensor& B,
                                                                    bool left, bool check_errors) {
  auto [mr, mLU, mp, mi] = at::_linalg_solve_ex(meta(A), meta(B), left, false);
  at::Tensor r = like_meta(mr, A), LU = like_meta(mLU, A), p = like_meta(mp, A),
             i = like_meta(mi, A);
  solve_ex_out(A, B, left, check_errors, r, LU, p, i);
  return {r, LU, p, i};
}

std::tuple<at::Tensor&, at::Tensor&> inv_ex_out(const at::Tensor& A, bool check_errors,
                                                at::Tensor& inverse, at::Tensor& info) {
  auto [mi, minfo] = at::linalg_inv_ex(meta(A), false);
  fit_out(inverse, mi, A);
  fit_out(info, minfo, A);
  inverse.zero_();
  inverse.diagonal(0, -2, -1).fill_(1.);
  at::linalg_solve_ex_out(inverse, info, A, inverse, /*left=*/true);
  if (check_errors) at::_linalg_check_errors(info, "linalg.inv_ex", A.dim() == 2);
  return {inverse, info};
}

std::tuple<at::Tensor, at::Tensor> inv_ex(const at::Tensor& A, bool check_errors) {
  auto [mi, minfo] = at::linalg_inv_ex(meta(A), false);
  at::Tensor inverse = like_meta(mi, A), info = like_meta(minfo, A);
  inv_ex_out(A, check_errors, inverse, info);
  return {inverse, info};
}

// LU of A (of A^T when A is real and row-major, as the CPU does: the determinant is the same,
// and the backward formulas expect that factor).
void det_factor(const at::Tensor& A, at::Tensor& LU, at::Tensor& pivots) {
  at::Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  at::linalg_lu_factor_ex_out(LU, pivots, info,
                              A.is_contiguous() && !A.is_complex() ? A.mT() : A);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> det_out(const at::Tensor& A,
                                                          at::Tensor& result, at::Tensor& LU,
                                                          at::Tensor& pivots) {
  auto [mr, mLU, mp] = at::_linalg_det(meta(A));
  fit_out(result, mr, A);
  fit_out(LU, mLU, A);
  fit_out(pivots, mp, A);
  det_factor(A, LU, pivots);
  run(A, [&](vkml::Device& d) {
    vkml::ops::lu_det(d, desc(result), desc(LU), desc(pivots));
  });
  return {result, LU, pivots};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> det(const at::Tensor& A) {
  auto [mr, mLU, mp] = at::_linalg_det(meta(A));
  at::Tensor r = like_meta(mr, A), LU = like_meta(mLU, A), p = like_meta(mp, A);
  det_out(A, r, LU, p);
  return {r, LU, p};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> slogdet_out(
    const at::Tensor& A, at::Tensor& sign, at::Tensor& logabsdet, at::Tensor& LU,
    at::Tensor& pivots) {
  auto [ms, ml, mLU, mp] = at::_linalg_slogdet(meta(A));
  fit_out(sign, ms, A);
  fit_out(logabsdet, ml, A);
  fit_out(LU, mLU, A);
  fit_out(pivots, mp, A);
  det_factor(A, LU, pivots);
  run(A, [&](vkml::Device& d) {
    vkml::ops::lu_slogdet(d, desc(sign), desc(logabsdet), desc(LU), desc(pivots));
  });
  return {sign, logabsdet, LU, pivots};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> slogdet(const at::Tensor& A) {
  auto [ms, ml, mLU, mp] = at::_linalg_slogdet(meta(A));
  at::Tensor s = like_meta(ms, A), l = like_meta(ml, A), LU = like_meta(mLU, A),
             p = like_meta(mp, A);
  slogdet_out(A, s, l, LU, p);
  return {s, l, LU, p};
}

// P, L, U from getrf's factor: L and U by triangle copies, P by undoing the swaps on I.
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> lu_unpack_out(
    const at::Tensor& LU, const at::Tensor& pivots, bool unpack_data, bool unpack_pivots,
    at::Tensor& P, at::Tensor& L, at::Tensor& U) {
  auto [mP, mL, mU] = at::lu_unpack(meta(LU), meta(pivots), unpack_data, unpack_pivots);
  fit_out(P, mP, LU);
  fit_out(L, mL, LU);
  fit_out(U, mU, LU);
  const int64_t m = LU.size(-2), n = LU.size(-1);
  if (unpack_data) {
    if (m > n) {
      triangle_out(L, LU, /*upper=*/false, -1);
      triangle_out(U, LU.narrow(-2, 0, n), /*upper=*/true);
    } else {
      triangle_out(L, LU.narrow(-1, 0, m), /*upper=*/false, -1);
      triangle_out(U, LU, /*upper=*/true);
    }
    L.diagonal(0, -2, -1).fill_(1.);
  }
  if (unpack_pivots && P.numel() > 0) {
    check_linalg_dtype(P, "lu_unpack");
    P.zero_();
    P.diagonal(0, -2, -1).fill_(1.);
    at::Tensor piv = expand_batch(pivots, batch_of(P, 2), 1);
    run(LU, [&](vkml::Device& d) { vkml::ops::permute_rows(d, desc(P), desc(piv), true); });
  }
  return {P, L, U};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lu_unpack(const at::Tensor& LU,
                                                         const at::Tensor& pivots,
                                                         bool unpack_data, bool unpack_pivots) {
  auto [mP, mL, mU] = at::lu_unpack(meta(LU), meta(pivots), unpack_data, unpack_pivots);
  at::Tensor P = like_meta(mP, LU), L = like_meta(mL, LU), U = like_meta(mU, LU);
  lu_unpack_out(LU, pivots, unpack_data, unpack_pivots, P, L, U);
  return {P, L, U};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_lu_out(const at::Tensor& A, bool pivot,
                                                                at::Tensor& P, at::Tensor& L,
                                                                at::Tensor& U) {
  auto [mP, mL, mU] = at::linalg_lu(meta(A), pivot);
  fit_out(P, mP, A);
  fit_out(L, mL, A);
  fit_out(U, mU, A);
  auto [LU, pivots, info] = lu_factor_ex(A, pivot, false);
  at::lu_unpack_out(P, L, U, LU, pivots, true, pivot);
  return {P, L, U};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> linalg_lu(const at::Tensor& A, bool pivot) {
  auto [mP, mL, mU] = at::linalg_lu(meta(A), pivot);
  at::Tensor P = like_meta(mP, A), L = like_meta(mL, A), U = like_meta(mU, A);
  linalg_lu_out(A, pivot, P, L, U);
  return {P, L, U};
}

// ---- LDL^T (Bunch-Kaufman) ---------------------------------------------------------------

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> ldl_factor_ex_out(const at::Tensor& A,
                                                                    bool hermitian,
                                                                    bool check_errors,
                                                                    at::Tensor& LD,
                                                                    at::Tensor& pivots,
                                                                    at::Tensor& info) {
  auto [mLD, mp, mi] = at::linalg_ldl_factor_ex(meta(A), hermitian, false);
  fit_out(LD, mLD, A);
  fit_out(pivots, mp, A);
  fit_out(info, mi, A);
  check_linalg_dtype(A, "linalg_ldl_factor_ex");
  if (LD.numel() == 0) {
    info.zero_();
    return {LD, pivots, info};
  }
  const at::Tensor A_ = resolved(A);
  run(A, [&](vkml::Device& d) {  // real matrices: hermitian and symmetric are the same
    vkml::ops::ldl_factor(d, desc(LD), desc(pivots), desc(info), desc(A_), hermitian);
  });
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.ldl_factor_ex", A.dim() == 2);
  return {LD, pivots, info};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ldl_factor_ex(const at::Tensor& A, bool hermitian,
                                                             bool check_errors) {
  auto [mLD, mp, mi] = at::linalg_ldl_factor_ex(meta(A), hermitian, false);
  at::Tensor LD = like_meta(mLD, A), p = like_meta(mp, A), i = like_meta(mi, A);
  ldl_factor_ex_out(A, hermitian, check_errors, LD, p, i);
  return {LD, p, i};
}

at::Tensor& ldl_solve_out(const at::Tensor& LD, const at::Tensor& pivots, const at::Tensor& B,
                          bool hermitian, at::Tensor& result) {
  at::Tensor m = at::linalg_ldl_solve(meta(LD), meta(pivots), meta(B), hermitian);
  fit_out(result, m, LD);
  check_linalg_dtype(LD, "linalg_ldl_solve");
  if (result.numel() == 0) return result;
  auto batch = batch_of(result, 2);
  at::Tensor F = expand_batch(resolved(LD), batch, 2), P = expand_batch(pivots, batch, 1);
  at::Tensor Bx = resolved(B).expand(result.sizes());
  run(LD, [&](vkml::Device& d) {
    vkml::ops::ldl_solve(d, desc(result), desc(F), desc(P), desc(Bx), hermitian);
  });
  return result;
}

at::Tensor ldl_solve(const at::Tensor& LD, const at::Tensor& pivots, const at::Tensor& B,
                     bool hermitian) {
  at::Tensor m = at::linalg_ldl_solve(meta(LD), meta(pivots), meta(B), hermitian);
  at::Tensor result = like_meta(m, LD);
  return ldl_solve_out(LD, pivots, B, hermitian, result);
}

// ---- triangular solves ------------------------------------------------------------------------

// out <- A^-1 out (left) or out A^-1 (right) for triangular A with out's batch dims.
void solve_triangular_in_place(const at::Tensor& out, const at::Tensor& A, bool upper, bool left,
                               bool unit) {
  if (out.numel() == 0) return;
  check_linalg_dtype(out, "linalg_solve_triangular");
  at::Tensor X = left ? out : out.mT();
  const at::Tensor A_ = resolved(A);
  at::Tensor T = left ? A_ : A_.mT();
  run(out, [&](vkml::Device& d) {
    vkml::ops::triangular_solve(d, desc(X), desc(T), desc(X), left ? upper : !upper, unit);
  });
}

at::Tensor& solve_triangular_out(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                                 bool unitriangular, at::Tensor& out) {
  at::native::checkInputsSolver(A, B, left, "linalg.solve_triangular");
  auto [B_, A_] = at::native::_linalg_broadcast_batch_dims(B, A, nullptr);
  at::native::checkSameDevice("linalg.solve_triangular", out, A);
  at::native::checkLinalgCompatibleDtype("linalg.solve_triangular", out, A);
  at::native::resize_output(out, B_.sizes());
  if (!out.is_same(B)) out.copy_(B_);  // B in out's dtype, as the CPU casts it
  solve_triangular_in_place(out, A_, upper, left, unitriangular);
  return out;
}

at::Tensor solve_triangular(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                            bool unitriangular) {
  at::Tensor out = at::empty({0}, A.options());
  return solve_triangular_out(A, B, upper, left, unitriangular, out);
}

std::tuple<at::Tensor&, at::Tensor&> triangular_solve_out(const at::Tensor& self,
                                                          const at::Tensor& A, bool upper,
                                                          bool transpose, bool unitriangular,
                                                          at::Tensor& X, at::Tensor& M) {
  auto [mX, mM] = at::triangular_solve(meta(self), meta(A), upper, transpose, unitriangular);
  fit_out(X, mX, self);
  fit_out(M, mM, self);
  if (X.numel() == 0 && M.numel() == 0) return {X, M};
  M.copy_(A.expand(M.sizes()));
  X.copy_(self.expand(X.sizes()));
  if (X.numel() == 0) return {X, M};
  check_linalg_dtype(X, "triangular_solve");
  at::Tensor T = transpose ? M.mT() : M;
  run(X, [&](vkml::Device& d) {
    vkml::ops::triangular_solve(d, desc(X), desc(T), desc(X), transpose ? !upper : upper,
                                unitriangular);
  });
  return {X, M};
}

std::tuple<at::Tensor, at::Tensor> triangular_solve(const at::Tensor& self, const at::Tensor& A,
                                                    bool upper, bool transpose,
                                                    bool unitriangular) {
  auto [mX, mM] = at::triangular_solve(meta(self), meta(A), upper, transpose, unitriangular);
  at::Tensor X = like_meta(mX, self), M = like_meta(mM, self);
  triangular_solve_out(self, A, upper, transpose, unitriangular, X, M);
  return {X, M};
}

// ---- Cholesky ---------------------------------------------------------------------------------

std::tuple<at::Tensor&, at::Tensor&> cholesky_ex_out(const at::Tensor& A, bool upper,
                                                     bool check_errors, at::Tensor& L,
                                                     at::Tensor& info) {
  auto [mL, mi] = at::linalg_cholesky_ex(meta(A), upper, false);
  fit_out(L, mL, A);
  fit_out(info, mi, A);
  if (L.numel() == 0) {
    info.zero_();
    return {L, info};
  }
  check_linalg_dtype(A, "linalg_cholesky_ex");
  // Upper: U^H U = A, and U^T = conj(U^H) is the lower factor of A^T = conj(A) (A's upper
  // triangle).
  const at::Tensor A_ = resolved(A);
  run(A, [&](vkml::Device& d) {
    vkml::ops::cholesky(d, desc(upper ? L.mT() : L), desc(info), desc(upper ? A_.mT() : A_));
  });
  if (check_errors) at::_linalg_check_errors(info, "linalg.cholesky_ex", A.dim() == 2);
  return {L, info};
}

std::tuple<at::Tensor, at::Tensor> cholesky_ex(const at::Tensor& A, bool upper,
                                               bool check_errors) {
  auto [mL, mi] = at::linalg_cholesky_ex(meta(A), upper, false);
  at::Tensor L = like_meta(mL, A), info = like_meta(mi, A);
  cholesky_ex_out(A, upper, check_errors, L, info);
  return {L, info};
}

// The legacy torch.cholesky: linalg's factor, raising on a non-positive-definite input.
at::Tensor legacy_cholesky(const at::Tensor& self, bool upper) {
  auto [L, info] = cholesky_ex(self, upper, false);
  at::_linalg_check_errors(info, "cholesky", self.dim() == 2);
  return L;
}

at::Tensor& legacy_cholesky_out(const at::Tensor& self, bool upper, at::Tensor& out) {
  at::native::checkSameDevice("cholesky", out, self);
  at::native::checkLinalgCompatibleDtype("cholesky", out, self);
  at::Tensor L = legacy_cholesky(self, upper);
  at::native::resize_output(out, L.sizes());
  out.copy_(L);
  return out;
}

// x <- (F F^H)^-1 x for lower F, or (F^H F)^-1 x for upper F (F with x's batch dims); F^H is
// F's transposed view read conjugated.
void cholesky_solve_in_place(const at::Tensor& x, const at::Tensor& F, bool upper) {
  if (x.numel() == 0) return;
  check_linalg_dtype(x, "cholesky_solve");
  const at::Tensor F_ = resolved(F);
  run(x, [&](vkml::Device& d) {
    TensorDesc X = desc(x), Fd = desc(F_), Ft = desc(F_.mT());
    vkml::ops::triangular_solve(d, X, upper ? Ft : Fd, X, /*upper=*/false, false, upper);
    vkml::ops::triangular_solve(d, X, upper ? Fd : Ft, X, /*upper=*/true, false, !upper);
  });
}

at::Tensor cholesky_solve_helper(const at::Tensor& self, const at::Tensor& A, bool upper) {
  at::Tensor result = resolved(at::native::cloneBatchedColumnMajor(self));
  cholesky_solve_in_place(result, expand_batch(A, batch_of(result, 2), 2), upper);
  return result;
}

at::Tensor& cholesky_inverse_out(const at::Tensor& input, bool upper, at::Tensor& result) {
  at::native::squareCheckInputs(input, "cholesky_inverse");
  at::native::checkSameDevice("cholesky_inverse", result, input);
  at::native::checkLinalgCompatibleDtype("cholesky_inverse", result, input);
  at::native::resize_output(result, input.sizes());
  result.zero_();
  result.diagonal(0, -2, -1).fill_(1.);
  cholesky_solve_in_place(result, input, upper);
  return result;
}

at::Tensor cholesky_inverse(const at::Tensor& input, bool upper) {
  at::Tensor result = at::empty({0}, input.options());
  return cholesky_inverse_out(input, upper, result);
}

// ---- Householder QR ---------------------------------------------------------------------------

std::vector<int64_t> tau_shape(const at::Tensor& A) {
  auto s = batch_of(A, 2);
  s.push_back(std::min(A.size(-2), A.size(-1)));
  return s;
}

std::tuple<at::Tensor&, at::Tensor&> geqrf_out(const at::Tensor& input, at::Tensor& QR,
                                               at::Tensor& tau) {
  TORCH_CHECK(input.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  at::native::checkSameDevice("torch.geqrf", QR, input, "a");
  at::native::checkSameDevice("torch.geqrf", tau, input, "tau");
  at::native::checkLinalgCompatibleDtype("torch.geqrf", QR, input, "a");
  at::native::checkLinalgCompatibleDtype("torch.geqrf", tau, input, "tau");
  check_linalg_dtype(input, "geqrf");
  at::native::resize_output(QR, input.sizes());
  at::native::resize_output(tau, tau_shape(input));
  const at::Tensor input_ = resolved(input);
  run(input, [&](vkml::Device& d) { vkml::ops::geqrf(d, desc(QR), desc(tau), desc(input_)); });
  return {QR, tau};
}

std::tuple<at::Tensor, at::Tensor> geqrf(const at::Tensor& input) {
  at::Tensor QR = at::empty({0}, input.options()), tau = at::empty({0}, input.options());
  geqrf_out(input, QR, tau);
  return {QR, tau};
}

at::Tensor& householder_product_out(const at::Tensor& input, const at::Tensor& tau,
                                    at::Tensor& result) {
  const char* f = "torch.linalg.householder_product";
  TORCH_CHECK(input.dim() >= 2, f, ": input must have at least 2 dimensions.");
  TORCH_CHECK(input.size(-2) >= input.size(-1), f,
              ": input.shape[-2] must be greater than or equal to input.shape[-1]");
  TORCH_CHECK(input.size(-1) >= tau.size(-1), f,
              ": input.shape[-1] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(input.dim() - tau.dim() == 1, f,
              ": Expected tau to have one dimension less than input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(batch_of(tau, 1) == batch_of(input, 2), f,
              ": Expected batch dimensions of tau to be equal to input.shape[:-2], but got ",
              tau.sizes().slice(0, tau.dim() - 1));
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(), f, ": tau dtype ", tau.scalar_type(),
              " does not match input dtype ", input.scalar_type());
  at::native::checkSameDevice(f, tau, input, "tau");
  at::native::checkSameDevice(f, result, input);
  at::native::checkLinalgCompatibleDtype(f, result, input);
  check_linalg_dtype(input, "linalg_householder_product");
  at::native::resize_output(result, input.sizes());
  const at::Tensor input_ = resolved(input), tau_ = resolved(tau);
  run(input, [&](vkml::Device& d) {
    vkml::ops::householder_product(d, desc(result), desc(input_), desc(tau_));
  });
  return result;
}

at::Tensor householder_product(const at::Tensor& input, const at::Tensor& tau) {
  at::Tensor result = at::empty({0}, input.options());
  return householder_product_out(input, tau, result);
}

at::Tensor& ormqr_out(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other,
                      bool left, bool transpose, at::Tensor& result) {
  const char* f = "torch.ormqr";
  TORCH_CHECK(input.dim() >= 2, f, ": input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 2, f, ": other must have at least 2 dimensions.");
  const int64_t side = left ? -2 : -1;
  TORCH_CHECK(other.size(side) >= tau.size(-1), f, ": other.shape[", side,
              "] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(other.size(side) == input.size(-2), f, ": other.shape[", side,
              "] must be equal to input.shape[-2]");
  TORCH_CHECK(tau.size(-1) <= input.size(-1), f,
              ": tau.shape[-1] must be less than or equal to input.shape[-1]");
  TORCH_CHECK(input.dim() - tau.dim() == 1, f,
              ": Expected tau to have one dimension less than input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(input.dim() == other.dim(), f,
              ": Expected other to have the same number of dimensions as input, but got "
              "other.ndim equal to ", other.dim(), " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(batch_of(tau, 1) == batch_of(input, 2), f,
              ": Expected batch dimensions of tau to be equal to input.shape[:-2], but got ",
              tau.sizes().slice(0, tau.dim() - 1));
  TORCH_CHECK(batch_of(other, 2) == batch_of(input, 2), f,
              ": Expected batch dimensions of other to be equal to input.shape[:-2], but got ",
              other.sizes().slice(0, other.dim() - 2));
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(), f,
              ": Expected input and tau to have the same dtype, but input has dtype ",
              input.scalar_type(), " and tau has dtype ", tau.scalar_type());
  TORCH_CHECK(other.scalar_type() == input.scalar_type(), f,
              ": Expected input and other to have the same dtype, but input has dtype ",
              input.scalar_type(), " and other has dtype ", other.scalar_type());
  at::native::checkSameDevice(f, tau, input, "tau");
  at::native::checkSameDevice(f, other, input, "other");
  at::native::checkSameDevice(f, result, input);
  at::native::checkLinalgCompatibleDtype(f, result, input);
  check_linalg_dtype(input, "ormqr");
  at::native::resize_output(result, other.sizes());
  // C Q = (Q^T C^T)^T and C Q^H = (conj(Q) C^T)^T (apply_householder's conjugations).
  const at::Tensor input_ = resolved(input), tau_ = resolved(tau), other_ = resolved(other);
  at::Tensor x = left ? result : result.mT(), c = left ? other_ : other_.mT();
  run(input, [&](vkml::Device& d) {
    vkml::ops::apply_householder(d, desc(x), desc(input_), desc(tau_), desc(c),
                                 left ? transpose : !transpose, /*conj_tau=*/transpose,
                                 /*conj_reflectors=*/!left);
  });
  return result;
}

at::Tensor ormqr(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other,
                 bool left, bool transpose) {
  at::Tensor result = at::empty({0}, input.options());
  return ormqr_out(input, tau, other, left, transpose, result);
}

std::tuple<at::Tensor&, at::Tensor&> qr_out(const at::Tensor& A, c10::string_view mode,
                                            at::Tensor& Q, at::Tensor& R) {
  auto [mQ, mR] = at::linalg_qr(meta(A), mode);
  fit_out(Q, mQ, A);
  fit_out(R, mR, A);
  check_linalg_dtype(A, "linalg_qr");
  auto [compute_q, reduced] = at::native::_parse_qr_mode(mode);
  (void)reduced;
  // Householder vectors and R in a column-major scratch, as LAPACK would hold them.
  auto mt = A.sizes().vec();
  std::swap(mt[mt.size() - 1], mt[mt.size() - 2]);
  at::Tensor QR = at::empty(mt, A.options()).mT();
  at::Tensor tau = at::empty(tau_shape(A), A.options());
  const at::Tensor A_ = resolved(A);
  run(A, [&](vkml::Device& d) { vkml::ops::geqrf(d, desc(QR), desc(tau), desc(A_)); });
  triangle_out(R, QR.narrow(-2, 0, R.size(-2)), /*upper=*/true);
  if (compute_q) {
    run(A, [&](vkml::Device& d) {
      vkml::ops::householder_product(d, desc(Q), desc(QR), desc(tau));
    });
  }
  return {Q, R};
}

std::tuple<at::Tensor, at::Tensor> qr(const at::Tensor& A, c10::string_view mode) {
  auto [mQ, mR] = at::linalg_qr(meta(A), mode);
  at::Tensor Q = like_meta(mQ, A), R = like_meta(mR, A);
  qr_out(A, mode, Q, R);
  return {Q, R};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_lu_factor_ex", lu_factor_ex);
  m.impl("linalg_lu_factor_ex.out", lu_factor_ex_out);
  m.impl("linalg_lu_solve", lu_solve);
  m.impl("linalg_lu_solve.out", lu_solve_out);
  m.impl("linalg_lu", linalg_lu);
  m.impl("linalg_lu.out", linalg_lu_out);
  m.impl("linalg_ldl_factor_ex", ldl_factor_ex);
  m.impl("linalg_ldl_factor_ex.out", ldl_factor_ex_out);
  m.impl("linalg_ldl_solve", ldl_solve);
  m.impl("linalg_ldl_solve.out", ldl_solve_out);
  m.impl("lu_unpack", lu_unpack);
  m.impl("lu_unpack.out", lu_unpack_out);
  m.impl("_linalg_solve_ex", solve_ex);
  m.impl("_linalg_solve_ex.result", solve_ex_out);
  m.impl("linalg_inv_ex", inv_ex);
  m.impl("linalg_inv_ex.inverse", inv_ex_out);
  m.impl("_linalg_det", det);
  m.impl("_linalg_det.result", det_out);
  m.impl("_linalg_slogdet", slogdet);
  m.impl("_linalg_slogdet.sign", slogdet_out);
  m.impl("linalg_solve_triangular", solve_triangular);
  m.impl("linalg_solve_triangular.out", solve_triangular_out);
  m.impl("triangular_solve", triangular_solve);
  m.impl("triangular_solve.X", triangular_solve_out);
  m.impl("linalg_cholesky_ex", cholesky_ex);
  m.impl("linalg_cholesky_ex.L", cholesky_ex_out);
  m.impl("cholesky", legacy_cholesky);
  m.impl("cholesky.out", legacy_cholesky_out);
  m.impl("_cholesky_solve_helper", cholesky_solve_helper);
  m.impl("cholesky_inverse", cholesky_inverse);
  m.impl("cholesky_inverse.out", cholesky_inverse_out);
  m.impl("geqrf", geqrf);
  m.impl("geqrf.a", geqrf_out);
  m.impl("linalg_householder_product", householder_product);
  m.impl("linalg_householder_product.out", householder_product_out);
  m.impl("ormqr", ormqr);
  m.impl("ormqr.out", ormqr_out);
  m.impl("linalg_qr", qr);
  m.impl("linalg_qr.out", qr_out);
}


}  // namespace torch_vkml::ops_factorizations
