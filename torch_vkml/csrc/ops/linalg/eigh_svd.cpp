// Spectral linear algebra on vkml for float32/float64 and complex64/complex128: symmetric and
// Hermitian eigendecomposition (eigh, eigvalsh) and SVD (svd, svdvals, and through them pinv,
// matrix_rank, cond, nuclear norms) by Jacobi rotations, least squares through the SVD (real),
// and the matrix exponential. Eigen- and singular vectors are correct up to sign (a unit phase
// for complex ones); LAPACK's signs are not reproduced.
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/ops/_linalg_eigh.h>
#include <ATen/ops/_linalg_svd.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linalg_qr.h>
#include <ATen/ops/linalg_solve.h>
#include <ATen/ops/linalg_svd.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "common/index_util.h"
#include "ops/linalg/linalg_bridge.h"
#include "vkml/linalg.h"

namespace torch_vkml::ops_eigh_svd {

using vkml::TensorDesc;
using namespace linalg;

// ---- symmetric eigen and SVD (Jacobi) -------------------------------------------------------

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
  // The upper triangle of A is the lower triangle of A^H.
  const at::Tensor src = resolved((uplo == "U" || uplo == "u") ? A.mH() : A);
  run(A, [&](vkml::Device& d) {
    TensorDesc v = compute_v ? desc(vectors) : TensorDesc{};
    vkml::ops::symmetric_eigen(d, desc(values), compute_v ? &v : nullptr, desc(src), desc(work),
                               desc(rot));
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

// A = U S V^H through the SVD of the tall one of A and A^H (A^H = V S U^H); full_matrices
// completes the tall factor's basis with the trailing columns of a complete QR of its first k.
// V goes into Vh's transposed view, so complex Vh is conjugated in place at the end.
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
  const at::Tensor At = resolved(tall ? A : A.mH());
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
    TensorDesc v = compute_uv ? desc(Vk) : TensorDesc{};
    vkml::ops::svd_jacobi(d, desc(S), desc(Uk), compute_uv ? &v : nullptr, desc(At), desc(rot));
  });
  if (compute_uv && full_matrices && p > k) {
    at::Tensor Q = std::get<0>(at::linalg_qr(Uk, "complete"));
    at::Tensor full = tall ? U : Vh.mT();
    full.narrow(-1, k, p - k).copy_(Q.narrow(-1, k, p - k));
  }
  if (compute_uv && Vh.is_complex()) Vh.conj_physical_();
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

// Least squares through the SVD: X = V S^+ U^H B, singular values under rcond * max(S) dropped
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
  const bool single = input.scalar_type() == at::kFloat || input.scalar_type() == at::kComplexFloat;
  const double eps = single ? std::numeric_limits<float>::epsilon()
                            : std::numeric_limits<double>::epsilon();
  const double rc = rcond.value_or(eps * static_cast<double>(std::max(m, n)));
  auto [Bb, Ab] = at::native::_linalg_broadcast_batch_dims(B2, input, nullptr);
  auto [U, S, Vh] = at::linalg_svd(Ab, /*full_matrices=*/false);
  at::Tensor keep = k > 0 ? S.gt(S.narrow(-1, 0, 1).mul(rc)) : at::zeros_like(S, at::kBool);
  at::Tensor inv_s = at::where(keep, S.reciprocal(), at::zeros({}, S.options()));
  at::Tensor X = at::matmul(Vh.mH(), inv_s.unsqueeze(-1).mul(at::matmul(U.mH(), Bb)));
  at::Tensor rk = driver == "gels" ? at::empty({0}, input.options().dtype(at::kLong))
                                   : keep.sum(-1);
  at::Tensor sv = (driver == "gelsd" || driver == "gelss") ? S : at::empty({0}, S.options());
  at::Tensor res = at::empty({0}, S.options());  // real, as S
  if (m > n && driver != "gelsy") {
    const bool full_rank = driver == "gels" || rk.numel() == 0 || rk.eq(n).all().item().toBool();
    if (full_rank) res = at::matmul(Ab, X).sub(Bb).abs().square().sum(-2);
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
  const bool f32 = A.scalar_type() == at::kFloat || A.scalar_type() == at::kComplexFloat;
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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_linalg_eigh", eigh);
  m.impl("_linalg_eigh.eigenvalues", eigh_out);
  m.impl("_linalg_svd", svd);
  m.impl("_linalg_svd.U", svd_out);
  m.impl("linalg_lstsq.out", lstsq_out);
  m.impl("linalg_matrix_exp", matrix_exponential);
}

}  // namespace torch_vkml::ops_eigh_svd
