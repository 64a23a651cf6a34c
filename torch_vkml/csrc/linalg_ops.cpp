// Linear algebra on vkml for float32/float64 (float64 where the device has it): LU (factor,
// solve, unpack, linalg_lu), solve/inv through LU, det/slogdet from LU, Cholesky (factor,
// cholesky_solve's helper, cholesky_inverse), triangular solves, Householder QR (geqrf,
// householder_product, ormqr, linalg_qr). Shapes, strides and input errors of the structured
// ops come from PyTorch's own meta kernels; the composite wrappers (linalg.solve, linalg.inv,
// linalg.cholesky, ...) then raise LinAlgError from `info` exactly as on the CPU (one host read,
// as on CUDA). Kernels work through strides: no contiguous copies of the inputs.
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_cholesky_solve_helper_native.h>
#include <ATen/ops/_linalg_check_errors.h>
#include <ATen/ops/_linalg_det.h>
#include <ATen/ops/_linalg_eigh.h>
#include <ATen/ops/_linalg_svd.h>
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
#include <ATen/ops/linalg_solve.h>
#include <ATen/ops/linalg_solve_ex.h>
#include <ATen/ops/linalg_svd.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/where.h>
#include <ATen/ops/lu_unpack.h>
#include <ATen/ops/triangular_solve.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "index_util.h"
#include "nn_bridge.h"
#include "vkml/linalg.h"

namespace torch_vkml {

namespace {

using vkml::TensorDesc;

// The kernels compute in float32 or float64 only (as LAPACK does), with AT_DISPATCH's message.
void check_linalg_dtype(const at::Tensor& t, const char* op) {
  auto s = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(s == at::kFloat || s == at::kDouble, "\"", op,
                              "\" not implemented for '", c10::toString(s), "'");
}

// An out= tensor as structured kernels treat it: dtype and device checked, resized to the meta
// result's sizes and, when resized, given the meta result's strides.
void fit_out(const at::Tensor& out, const at::Tensor& like, const at::Tensor& self) {
  TORCH_CHECK(out.scalar_type() == like.scalar_type(), "Expected out tensor to have dtype ",
              like.scalar_type(), ", but got ", out.scalar_type(), " instead");
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to have device ",
              self.device(), ", but got ", out.device(), " instead");
  if (at::native::resize_output(out, like.sizes())) {
    out.as_strided_(like.sizes(), like.strides());
  }
}

// A new vkml tensor laid out like the meta result.
at::Tensor like_meta(const at::Tensor& m, const at::Tensor& self) {
  return at::empty_strided(m.sizes(), m.strides(), m.options().device(self.device()));
}

std::vector<int64_t> batch_of(const at::Tensor& t, int trailing) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - trailing);
}

// `t` expanded to `batch` followed by its own last `trailing` dims (a view; stride 0 where
// broadcast).
at::Tensor expand_batch(const at::Tensor& t, const std::vector<int64_t>& batch, int trailing) {
  std::vector<int64_t> s = batch;
  s.insert(s.end(), t.sizes().end() - trailing, t.sizes().end());
  return t.expand(s);
}

template <typename Fn>
void run(const at::Tensor& t, Fn&& fn) {
  nn::run_on(t, std::forward<Fn>(fn));
}

// ---- LU -------------------------------------------------------------------------------------

void lu_factor_into(const at::Tensor& A, bool pivot, const at::Tensor& LU,
                    const at::Tensor& pivots, const at::Tensor& info) {
  check_linalg_dtype(A, "linalg_lu_factor_ex");
  run(A, [&](vkml::Device& d) {
    vkml::ops::lu_factor(d, to_desc(LU), to_desc(pivots), to_desc(info), to_desc(A), pivot);
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

// x <- A^-1 x (or A^-T x) for A = P L U given by (LU, pivots), all with x's batch dims.
void lu_solve_in_place(const at::Tensor& x, const at::Tensor& LU, const at::Tensor& pivots,
                       bool adjoint) {
  check_linalg_dtype(x, "linalg_lu_solve");
  run(x, [&](vkml::Device& d) {
    TensorDesc X = to_desc(x), P = to_desc(pivots);
    if (!adjoint) {
      TensorDesc F = to_desc(LU);
      vkml::ops::permute_rows(d, X, P, false);
      vkml::ops::triangular_solve(d, X, F, X, /*upper=*/false, /*unit=*/true);
      vkml::ops::triangular_solve(d, X, F, X, /*upper=*/true, /*unit=*/false);
    } else {
      TensorDesc Ft = to_desc(LU.mT());  // U^T is lower, L^T unit upper
      vkml::ops::triangular_solve(d, X, Ft, X, /*upper=*/false, /*unit=*/false);
      vkml::ops::triangular_solve(d, X, Ft, X, /*upper=*/true, /*unit=*/true);
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
  at::Tensor F = expand_batch(LU, batch, 2), P = expand_batch(pivots, batch, 1);
  // X A = B is A^T X^T = B^T.
  lu_solve_in_place(left ? result : result.mT(), F, P, left ? adjoint : !adjoint);
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

// LU of A (of A^T when A is row-major, as the CPU does: the determinant is the same).
void det_factor(const at::Tensor& A, at::Tensor& LU, at::Tensor& pivots) {
  at::Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  at::linalg_lu_factor_ex_out(LU, pivots, info, A.is_contiguous() ? A.mT() : A);
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
    vkml::ops::lu_det(d, to_desc(result), to_desc(LU), to_desc(pivots));
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
    vkml::ops::lu_slogdet(d, to_desc(sign), to_desc(logabsdet), to_desc(LU), to_desc(pivots));
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
      at::tril_out(L, LU, -1);
      at::triu_out(U, LU.narrow(-2, 0, n));
    } else {
      at::tril_out(L, LU.narrow(-1, 0, m), -1);
      at::triu_out(U, LU);
    }
    L.diagonal(0, -2, -1).fill_(1.);
  }
  if (unpack_pivots && P.numel() > 0) {
    check_linalg_dtype(P, "lu_unpack");
    P.zero_();
    P.diagonal(0, -2, -1).fill_(1.);
    at::Tensor piv = expand_batch(pivots, batch_of(P, 2), 1);
    run(LU, [&](vkml::Device& d) { vkml::ops::permute_rows(d, to_desc(P), to_desc(piv), true); });
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

// ---- LDL^T (Bunch-Kaufman) -----------------------------------------------------------------------

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
  run(A, [&](vkml::Device& d) {  // real matrices: hermitian and symmetric are the same
    vkml::ops::ldl_factor(d, to_desc(LD), to_desc(pivots), to_desc(info), to_desc(A));
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
  at::Tensor F = expand_batch(LD, batch, 2), P = expand_batch(pivots, batch, 1);
  at::Tensor Bx = B.expand(result.sizes());
  run(LD, [&](vkml::Device& d) {
    vkml::ops::ldl_solve(d, to_desc(result), to_desc(F), to_desc(P), to_desc(Bx));
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
  at::Tensor T = left ? A : A.mT();
  run(out, [&](vkml::Device& d) {
    vkml::ops::triangular_solve(d, to_desc(X), to_desc(T), to_desc(X), left ? upper : !upper,
                                unit);
  });
}

at::Tensor& solve_triangular_out(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                                 bool unitriangular, at::Tensor& out) {
  at::native::checkInputsSolver(A, B, left, "linalg.solve_triangular");
  auto [B_, A_] = at::native::_linalg_broadcast_batch_dims(B, A, nullptr);
  at::native::checkSameDevice("linalg.solve_triangular", out, A);
  at::native::checkLinalgCompatibleDtype("linalg.solve_triangular", out, A);
  TORCH_CHECK(A.scalar_type() == B.scalar_type(),
              "linalg.solve_triangular: Expected A and B to have the same dtype, but found A of "
              "type ", A.scalar_type(), " and B of type ", B.scalar_type(), " instead");
  at::native::resize_output(out, B_.sizes());
  if (!out.is_same(B)) out.copy_(B_);
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
    vkml::ops::triangular_solve(d, to_desc(X), to_desc(T), to_desc(X), transpose ? !upper : upper,
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
  // Upper: U^T U = A, and U^T is the lower factor of A^T (A's upper triangle).
  run(A, [&](vkml::Device& d) {
    vkml::ops::cholesky(d, to_desc(upper ? L.mT() : L), to_desc(info),
                        to_desc(upper ? A.mT() : A));
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

// x <- (F F^T)^-1 x for lower F, or (F^T F)^-1 x for upper F (F with x's batch dims).
void cholesky_solve_in_place(const at::Tensor& x, const at::Tensor& F, bool upper) {
  if (x.numel() == 0) return;
  check_linalg_dtype(x, "cholesky_solve");
  run(x, [&](vkml::Device& d) {
    TensorDesc X = to_desc(x), Fd = to_desc(F), Ft = to_desc(F.mT());
    vkml::ops::triangular_solve(d, X, upper ? Ft : Fd, X, /*upper=*/false, false);
    vkml::ops::triangular_solve(d, X, upper ? Fd : Ft, X, /*upper=*/true, false);
  });
}

at::Tensor cholesky_solve_helper(const at::Tensor& self, const at::Tensor& A, bool upper) {
  at::Tensor result = at::native::cloneBatchedColumnMajor(self);
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
  run(input, [&](vkml::Device& d) {
    vkml::ops::geqrf(d, to_desc(QR), to_desc(tau), to_desc(input));
  });
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
  run(input, [&](vkml::Device& d) {
    vkml::ops::householder_product(d, to_desc(result), to_desc(input), to_desc(tau));
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
  // C Q = (Q^T C^T)^T.
  at::Tensor x = left ? result : result.mT(), c = left ? other : other.mT();
  run(input, [&](vkml::Device& d) {
    vkml::ops::apply_householder(d, to_desc(x), to_desc(input), to_desc(tau), to_desc(c),
                                 left ? transpose : !transpose);
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
  run(A, [&](vkml::Device& d) { vkml::ops::geqrf(d, to_desc(QR), to_desc(tau), to_desc(A)); });
  at::triu_out(R, QR.narrow(-2, 0, R.size(-2)));
  if (compute_q) {
    run(A, [&](vkml::Device& d) {
      vkml::ops::householder_product(d, to_desc(Q), to_desc(QR), to_desc(tau));
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

// ---- symmetric eigen and SVD (Jacobi) -------------------------------------------------------

std::vector<int64_t> with_tail(std::vector<int64_t> batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

std::tuple<at::Tensor&, at::Tensor&> eigh_out(const at::Tensor& A, c10::string_view uplo,
                                              bool compute_v, at::Tensor& values,
                                              at::Tensor& vectors) {
  auto [mw, mv] = at::_linalg_eigh(meta(A), uplo, compute_v);
  fit_out(values, mw, A);
  fit_out(vectors, mv, A);
  check_linalg_dtype(A, "linalg_eigh");
  const int64_t n = A.size(-1);
  if (values.numel() == 0) return {values, vectors};
  auto batch = batch_of(A, 2);
  at::Tensor work = at::empty(A.sizes(), A.options());
  at::Tensor rot = at::empty(with_tail(batch, {n + 1}), A.options());
  // The upper triangle of A is the lower triangle of A^T.
  at::Tensor src = (uplo == "U" || uplo == "u") ? A.mT() : A;
  run(A, [&](vkml::Device& d) {
    TensorDesc v = compute_v ? to_desc(vectors) : TensorDesc{};
    vkml::ops::symmetric_eigen(d, to_desc(values), compute_v ? &v : nullptr, to_desc(src),
                               to_desc(work), to_desc(rot));
  });
  return {values, vectors};
}

std::tuple<at::Tensor, at::Tensor> eigh(const at::Tensor& A, c10::string_view uplo,
                                        bool compute_v) {
  auto [mw, mv] = at::_linalg_eigh(meta(A), uplo, compute_v);
  at::Tensor w = like_meta(mw, A), v = like_meta(mv, A);
  eigh_out(A, uplo, compute_v, w, v);
  return {w, v};
}

// A = U S V^T through the SVD of the tall one of A and A^T (A^T = V S U^T); full_matrices
// completes the tall factor's basis with the trailing columns of a complete QR of its first k.
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> svd_out(const at::Tensor& A, bool full_matrices,
                                                          bool compute_uv,
                                                          std::optional<c10::string_view> driver,
                                                          at::Tensor& U, at::Tensor& S,
                                                          at::Tensor& Vh) {
  auto [mU, mS, mVh] = at::_linalg_svd(meta(A), full_matrices, compute_uv, driver);
  fit_out(U, mU, A);
  fit_out(S, mS, A);
  fit_out(Vh, mVh, A);
  check_linalg_dtype(A, "linalg_svd");
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  if (A.numel() == 0) {
    if (compute_uv && full_matrices) {
      for (at::Tensor* t : {&U, &Vh}) {
        if (t->numel() == 0) continue;
        t->zero_();
        t->diagonal(0, -2, -1).fill_(1.);
      }
    }
    return {U, S, Vh};
  }
  const bool tall = m >= n;
  const int64_t p = tall ? m : n;
  at::Tensor At = tall ? A : A.mT();
  auto batch = batch_of(A, 2);
  at::Tensor Uk, Vk;
  if (compute_uv) {
    Uk = tall ? U.narrow(-1, 0, k) : Vh.narrow(-2, 0, k).mT();
    Vk = tall ? Vh.mT() : U;
  } else {
    Uk = at::empty(with_tail(batch, {p, k}), A.options());
  }
  at::Tensor rot = at::empty(with_tail(batch, {k + 1}), A.options());
  run(A, [&](vkml::Device& d) {
    TensorDesc v = compute_uv ? to_desc(Vk) : TensorDesc{};
    vkml::ops::svd_jacobi(d, to_desc(S), to_desc(Uk), compute_uv ? &v : nullptr, to_desc(At),
                          to_desc(rot));
  });
  if (compute_uv && full_matrices && p > k) {
    at::Tensor Q = std::get<0>(at::linalg_qr(Uk, "complete"));
    at::Tensor full = tall ? U : Vh.mT();
    full.narrow(-1, k, p - k).copy_(Q.narrow(-1, k, p - k));
  }
  return {U, S, Vh};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> svd(const at::Tensor& A, bool full_matrices,
                                                   bool compute_uv,
                                                   std::optional<c10::string_view> driver) {
  auto [mU, mS, mVh] = at::_linalg_svd(meta(A), full_matrices, compute_uv, driver);
  at::Tensor U = like_meta(mU, A), S = like_meta(mS, A), Vh = like_meta(mVh, A);
  svd_out(A, full_matrices, compute_uv, driver, U, S, Vh);
  return {U, S, Vh};
}

// Least squares through the SVD: X = V S^+ U^T B, singular values under rcond * max(S) dropped
// (the minimum-norm solution every LAPACK driver returns on inputs of full or clear rank).
// Outputs follow the CPU per driver: rank except for gels, singular values for gelsd/gelss,
// residuals for m > n except gelsy (and only when every matrix has full rank: one host read).
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> lstsq_out(
    const at::Tensor& input, const at::Tensor& other, std::optional<double> rcond,
    std::optional<c10::string_view> driver_opt, at::Tensor& solution, at::Tensor& residuals,
    at::Tensor& rank, at::Tensor& singular_values) {
  const char* f = "torch.linalg.lstsq";
  TORCH_CHECK(input.dim() >= 2, f, ": input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 1, f, ": other must have at least 1 dimension.");
  TORCH_CHECK(input.scalar_type() == other.scalar_type(), f,
              ": Expected input and other to have the same dtype, but got input's dtype ",
              input.scalar_type(), " and other's dtype ", other.scalar_type());
  const int64_t dim_diff = input.dim() - other.dim();
  TORCH_CHECK(0 <= dim_diff && dim_diff <= 1, f,
              ": input.dim() must be greater or equal to other.dim() and (input.dim() - "
              "other.dim()) <= 1");
  at::Tensor B2 = dim_diff ? other.unsqueeze(-1) : other;
  TORCH_CHECK(input.size(-2) == B2.size(-2), f,
              dim_diff ? ": input.size(-2) should match other.size(-1)"
                       : ": input.size(-2) should match other.size(-2)");
  const std::string driver(driver_opt.value_or("gelsy"));
  TORCH_CHECK(driver == "gels" || driver == "gelsy" || driver == "gelsd" || driver == "gelss", f,
              ": parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  for (const at::Tensor* t : {&solution, &residuals, &rank, &singular_values}) {
    at::native::checkSameDevice(f, *t, input);
  }
  check_linalg_dtype(input, "linalg_lstsq");
  const int64_t m = input.size(-2), n = input.size(-1), k = std::min(m, n);
  const double eps = input.scalar_type() == at::kFloat ? std::numeric_limits<float>::epsilon()
                                                       : std::numeric_limits<double>::epsilon();
  const double rc = rcond.value_or(eps * static_cast<double>(std::max(m, n)));
  auto [Bb, Ab] = at::native::_linalg_broadcast_batch_dims(B2, input, nullptr);
  auto [U, S, Vh] = at::linalg_svd(Ab, /*full_matrices=*/false);
  at::Tensor keep = k > 0 ? S.gt(S.narrow(-1, 0, 1).mul(rc)) : at::zeros_like(S, at::kBool);
  at::Tensor inv_s = at::where(keep, S.reciprocal(), at::zeros({}, S.options()));
  at::Tensor X = at::matmul(Vh.mT(), inv_s.unsqueeze(-1).mul(at::matmul(U.mT(), Bb)));
  at::Tensor rk = driver == "gels" ? at::empty({0}, input.options().dtype(at::kLong))
                                   : keep.sum(-1);
  at::Tensor sv = (driver == "gelsd" || driver == "gelss") ? S : at::empty({0}, S.options());
  at::Tensor res = at::empty({0}, input.options());
  if (m > n && driver != "gelsy") {
    const bool full_rank = driver == "gels" || rk.numel() == 0 || rk.eq(n).all().item().toBool();
    if (full_rank) res = at::matmul(Ab, X).sub(Bb).square().sum(-2);
  }
  if (dim_diff) X = X.squeeze(-1);  // the CPU keeps the residuals' column dim
  at::native::resize_output(solution, X.sizes());
  solution.copy_(X);
  at::native::resize_output(residuals, res.sizes());
  residuals.copy_(res);
  at::native::resize_output(rank, rk.sizes());
  rank.copy_(rk);
  at::native::resize_output(singular_values, sv.sizes());
  singular_values.copy_(sv);
  return {solution, residuals, rank, singular_values};
}

// exp(A) by scaling and squaring with a diagonal Pade approximant (Higham 2005): the degree and
// the squarings follow the largest 1-norm of the batch, read on the host as CUDA's kernel does.
at::Tensor matrix_exponential(const at::Tensor& A) {
  at::native::squareCheckInputs(A, "linalg.matrix_exp");
  at::native::checkFloatingOrComplex(A, "linalg.matrix_exp");
  if (A.scalar_type() == at::kHalf || A.scalar_type() == at::kBFloat16) {
    return matrix_exponential(A.to(at::kFloat)).to(A.scalar_type());  // the CPU's dtypes, in float
  }
  check_linalg_dtype(A, "linalg_matrix_exp");
  const int64_t n = A.size(-1);
  if (A.numel() == 0) return at::empty_like(A);
  if (n == 1) return A.exp();
  const bool f32 = A.scalar_type() == at::kFloat;
  // Degrees and the largest 1-norm each one is accurate for (single / double precision).
  static const std::vector<std::pair<int, double>> kF32 = {
      {3, 4.258730016922831e-1}, {5, 1.880152677804762e0}, {7, 3.925724783138660e0}};
  static const std::vector<std::pair<int, double>> kF64 = {{3, 1.495585217958292e-2},
                                                           {5, 2.539398330063230e-1},
                                                           {7, 9.504178996162932e-1},
                                                           {9, 2.097847961257068e0},
                                                           {13, 5.371920351148152e0}};
  const auto& table = f32 ? kF32 : kF64;
  const double norm = A.abs().sum(-2).amax().item().toDouble();
  int degree = table.back().first, squarings = 0;
  for (const auto& [m, theta] : table) {
    if (norm <= theta) {
      degree = m;
      break;
    }
  }
  if (norm > table.back().second) {
    squarings = static_cast<int>(std::ceil(std::log2(norm / table.back().second)));
  }
  if (!std::isfinite(norm)) squarings = 0;  // NaN/inf propagate through the approximant
  at::Tensor X = squarings ? A.mul(std::ldexp(1.0, -squarings)) : A;
  static const double kB3[] = {120, 60, 12, 1};
  static const double kB5[] = {30240, 15120, 3360, 420, 30, 1};
  static const double kB7[] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
  static const double kB9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                               2162160., 110880., 3960., 90., 1.};
  static const double kB13[] = {64764752532480000., 32382376266240000., 7771770303897600.,
                                1187353796428800.,  129060195264000.,   10559470521600.,
                                670442572800.,      33522128640.,       1323241920.,
                                40840800.,          960960.,            16380.,
                                182.,               1.};
  at::Tensor eye = at::zeros_like(X);
  eye.diagonal(0, -2, -1).fill_(1.);
  at::Tensor X2 = at::matmul(X, X), U, V;
  if (degree == 13) {
    const double* b = kB13;
    at::Tensor X4 = at::matmul(X2, X2), X6 = at::matmul(X4, X2);
    at::Tensor u_inner = X6.mul(b[13]).add(X4, b[11]).add(X2, b[9]);
    U = at::matmul(X, at::matmul(X6, u_inner).add(X6, b[7]).add(X4, b[5]).add(X2, b[3])
                          .add(eye, b[1]));
    at::Tensor v_inner = X6.mul(b[12]).add(X4, b[10]).add(X2, b[8]);
    V = at::matmul(X6, v_inner).add(X6, b[6]).add(X4, b[4]).add(X2, b[2]).add(eye, b[0]);
  } else {
    const double* b = degree == 3 ? kB3 : degree == 5 ? kB5 : degree == 7 ? kB7 : kB9;
    at::Tensor power = eye;  // X^(2j)
    at::Tensor u_sum = eye.mul(b[1]), v_sum = eye.mul(b[0]);
    for (int j = 1; 2 * j <= degree; ++j) {
      power = j == 1 ? X2 : at::matmul(power, X2);
      u_sum = u_sum.add(power, b[2 * j + 1]);
      v_sum = v_sum.add(power, b[2 * j]);
    }
    U = at::matmul(X, u_sum);
    V = v_sum;
  }
  at::Tensor R = at::linalg_solve(V.sub(U), V.add(U));
  for (int i = 0; i < squarings; ++i) R = at::matmul(R, R);
  return R;
}

}  // namespace

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
  m.impl("_linalg_eigh", eigh);
  m.impl("_linalg_eigh.eigenvalues", eigh_out);
  m.impl("_linalg_svd", svd);
  m.impl("_linalg_svd.U", svd_out);
  m.impl("linalg_lstsq.out", lstsq_out);
  m.impl("linalg_matrix_exp", matrix_exponential);
}

}  // namespace torch_vkml
