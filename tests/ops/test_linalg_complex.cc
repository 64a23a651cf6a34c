// Linalg family on complex64/complex128 matrices: LU with LAPACK's |re| + |im| pivots (zgetf2),
// triangular solves with conjugated a, Hermitian Cholesky, det/slogdet, Householder QR (geqrf,
// orgqr, ormqr's four forms), Hermitian Jacobi eigen and one-sided Jacobi SVD, against
// double-precision host computations; strided and batched descriptors, and the dtype errors.
#include <algorithm>
#include <cmath>
#include <complex>

#include "linalg_test_util.h"
#include "nn_test_util.h"
#include "vkml/errors.h"
#include "vkml/linalg.h"

namespace vkml::testing {

namespace {

using C = std::complex<double>;
using CMat = std::vector<C>;  // row-major m x n on the host

// A complex device tensor: a real DevTensor [..., 2] holding the (real, imaginary) pairs, and
// the complex descriptor over the same memory (strides in complex elements).
struct ComplexTensor {
  DevTensor parts;
  TensorDesc d;
  ComplexTensor(Device& dev, DType real, std::vector<int64_t> sizes,
                std::vector<int64_t> strides = {})
      : parts(dev, real, with_pair(sizes), pair_strides(sizes, strides)),
        d(desc(parts.buf.address, real == DType::kF32 ? DType::kC64 : DType::kC128, sizes,
               strides)) {}

  static std::vector<int64_t> with_pair(std::vector<int64_t> sizes) {
    sizes.push_back(2);
    return sizes;
  }
  static std::vector<int64_t> pair_strides(const std::vector<int64_t>& sizes,
                                           std::vector<int64_t> strides) {
    if (strides.empty()) strides = desc(0, DType::kF32, sizes).strides;
    for (auto& s : strides) s *= 2;
    strides.push_back(1);
    return strides;
  }

  // Uploads row-major values; returns what the device holds.
  CMat upload(Device& dev, const CMat& v) {
    std::vector<double> flat;
    for (const C& z : v) {
      flat.push_back(z.real());
      flat.push_back(z.imag());
    }
    return pairs(parts.upload(dev, flat));
  }
  CMat read(Device& dev) const { return pairs(parts.read(dev)); }
  static CMat pairs(const std::vector<double>& flat) {
    CMat out(flat.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) out[i] = C(flat[2 * i], flat[2 * i + 1]);
    return out;
  }
};

CMat random_complex(size_t n, uint32_t seed) {
  auto re = random_values(n, seed), im = random_values(n, seed + 1000);
  CMat v(n);
  for (size_t i = 0; i < n; ++i) v[i] = C(re[i], im[i]);
  return v;
}

// (m x k) @ (k x n), with op = conj-transpose of `a` where `adjoint_a`.
CMat matmul(const CMat& a, const CMat& b, int64_t m, int64_t k, int64_t n,
            bool adjoint_a = false) {
  CMat out(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      C s = 0;
      for (int64_t t = 0; t < k; ++t) s += (adjoint_a ? std::conj(a[t * m + i]) : a[i * k + t]) *
                                           b[t * n + j];
      out[i * n + j] = s;
    }
  return out;
}

std::vector<DType> real_types(Device& dev) {
  std::vector<DType> t = {DType::kF32};
  if (dev.caps().supports_dtype(DType::kC128)) t.push_back(DType::kF64);
  return t;
}

// Hermitian positive definite n x n: r r^H + n I.
CMat hermitian_pd(int64_t n, uint32_t seed) {
  CMat r = random_complex(n * n, seed), h(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      C s = i == j ? C(double(n)) : C(0);
      for (int64_t t = 0; t < n; ++t) s += r[i * n + t] * std::conj(r[j * n + t]);
      h[i * n + j] = s;
    }
  return h;
}

}  // namespace

using LinalgComplexTest = DeviceTest;

TEST_F(LinalgComplexTest, LuPivotsLikeZgetf2BatchedStridedRectangular) {
  for (DType rt : real_types(dev())) {
    for (auto [m, n] : {std::pair<int64_t, int64_t>{23, 23}, {9, 5}, {4, 11}, {1, 1}}) {
      const int64_t B = 2, k = std::min(m, n);
      ComplexTensor a(dev(), rt, {B, m, n}, {m * n, 1, m});  // column-major per matrix
      ComplexTensor lu(dev(), rt, {B, m, n});
      DevTensor piv(dev(), DType::kI32, {B, k});
      DevTensor info(dev(), DType::kI32, {B});
      CMat v = random_complex(B * m * n, 11);
      if (m == 9) std::fill(v.begin(), v.begin() + m * n, C(0));  // singular first matrix
      CMat av = a.upload(dev(), v);
      ops::lu_factor(dev(), lu.d, piv.d, info.d, a.d, true);
      CMat got = lu.read(dev());
      auto gp = piv.read(dev()), gi = info.read(dev());
      for (int64_t b = 0; b < B; ++b) {
        CMat h(av.begin() + b * m * n, av.begin() + (b + 1) * m * n);
        std::vector<int> hp;
        EXPECT_EQ(gi[b], host_lu(h, m, n, hp));
        for (int64_t j = 0; j < k; ++j) EXPECT_EQ(gp[b * k + j], hp[j]) << "pivot " << j;
        expect_near_all(CMat(got.begin() + b * m * n, got.begin() + (b + 1) * m * n), h,
                        tol(rt), "lu");
      }
    }
  }
}

TEST_F(LinalgComplexTest, TriangularSolveConjugatedAndDet) {
  for (DType rt : real_types(dev())) {
    const int64_t n = 7, kr = 3;
    CMat t = random_complex(n * n, 21);
    for (int64_t i = 0; i < n; ++i) t[i * n + i] += C(4, 1);
    ComplexTensor a(dev(), rt, {n, n}), b(dev(), rt, {n, kr}), x(dev(), rt, {n, kr}, {1, n});
    CMat av = a.upload(dev(), t), bv = b.upload(dev(), random_complex(n * kr, 22));
    for (bool upper : {false, true}) {
      for (bool conj : {false, true}) {
        ops::triangular_solve(dev(), x.d, a.d, b.d, upper, /*unit=*/false, conj);
        CMat xv = x.read(dev()), tri(n * n, C(0));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j)
            if (upper ? j >= i : j <= i) tri[i * n + j] = conj ? std::conj(av[i * n + j])
                                                               : av[i * n + j];
        expect_near_all(matmul(tri, xv, n, n, kr), bv, tol(rt) * 10, "op(a) x = b");
      }
    }
    // det and slogdet from the LU of the same matrix.
    ComplexTensor lu(dev(), rt, {n, n}), det(dev(), rt, {}), sign(dev(), rt, {});
    DevTensor logabs(dev(), rt, {}), piv(dev(), DType::kI32, {n}), info(dev(), DType::kI32, {});
    ops::lu_factor(dev(), lu.d, piv.d, info.d, a.d, true);
    ops::lu_det(dev(), det.d, lu.d, piv.d);
    ops::lu_slogdet(dev(), sign.d, logabs.d, lu.d, piv.d);
    CMat h = av;
    std::vector<int> hp;
    host_lu(h, n, n, hp);
    C d = 1;
    for (int64_t i = 0; i < n; ++i) d *= (hp[i] != i + 1 ? -1.0 : 1.0) * h[i * n + i];
    expect_near_all(det.read(dev()), {d}, tol(rt), "det");
    expect_near_all(sign.read(dev()), {d / std::abs(d)}, tol(rt), "sign");
    EXPECT_NEAR(logabs.read(dev())[0], std::log(std::abs(d)), tol(rt) * 10);
  }
}

TEST_F(LinalgComplexTest, HermitianCholeskyAndInfo) {
  for (DType rt : real_types(dev())) {
    const int64_t n = 17, B = 2;
    CMat h = hermitian_pd(n, 31), both(B * n * n);
    std::copy(h.begin(), h.end(), both.begin());
    std::copy(h.begin(), h.end(), both.begin() + n * n);
    both[n * n + 4 * n + 4] = C(-1e6, 0);  // second matrix: minor 5 is not positive definite
    ComplexTensor a(dev(), rt, {B, n, n}), l(dev(), rt, {B, n, n}, {n * n, 1, n});
    DevTensor info(dev(), DType::kI32, {B});
    CMat av = a.upload(dev(), both);
    ops::cholesky(dev(), l.d, info.d, a.d);
    auto gi = info.read(dev());
    EXPECT_EQ(gi[0], 0);
    EXPECT_EQ(gi[1], 5);
    CMat L = l.read(dev());
    L.resize(n * n);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(L[i * n + i].imag(), 0.0);
      for (int64_t j = i + 1; j < n; ++j) EXPECT_EQ(L[i * n + j], C(0));
    }
    // L L^H = A, i.e. (L^H)^H L^H.
    CMat LH(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) LH[i * n + j] = std::conj(L[j * n + i]);
    expect_near_all(matmul(L, LH, n, n, n), CMat(av.begin(), av.begin() + n * n), tol(rt) * 10,
                    "L L^H");
  }
}

TEST_F(LinalgComplexTest, HouseholderQrAndEveryOrmqrForm) {
  for (DType rt : real_types(dev())) {
    for (auto [m, n] : {std::pair<int64_t, int64_t>{12, 5}, {6, 6}, {4, 9}}) {
      const int64_t k = std::min(m, n);
      ComplexTensor a(dev(), rt, {m, n}, {1, m}), qr(dev(), rt, {m, n}), tau(dev(), rt, {k});
      CMat av = a.upload(dev(), random_complex(m * n, 41));
      ops::geqrf(dev(), qr.d, tau.d, a.d);
      CMat f = qr.read(dev()), R(k * n, C(0));
      for (int64_t i = 0; i < k; ++i) {
        EXPECT_LE(std::fabs(f[i * n + i].imag()), tol(rt)) << "R's diagonal is real";
        for (int64_t j = i; j < n; ++j) R[i * n + j] = f[i * n + j];
      }
      // Q (m x m) from the k reflectors: unitary, and its first k columns times R give A.
      ComplexTensor q(dev(), rt, {m, m});
      ops::householder_product(dev(), q.d, qr.d, tau.d);
      CMat Q = q.read(dev()), Qk(m * k);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) Qk[i * k + j] = Q[i * m + j];
      expect_near_all(matmul(Qk, R, m, k, n), av, tol(rt) * 10, "Q R");
      CMat eye(m * m, C(0));
      for (int64_t i = 0; i < m; ++i) eye[i * m + i] = 1;
      expect_near_all(matmul(Q, Q, m, m, m, /*adjoint_a=*/true), eye, tol(rt) * 10, "Q^H Q");
      // ormqr: Q c, Q^H c, Q^T c and conj(Q) c against the explicit Q.
      ComplexTensor c(dev(), rt, {m, 3}), x(dev(), rt, {m, 3});
      CMat cv = c.upload(dev(), random_complex(m * 3, 42));
      for (int form = 0; form < 4; ++form) {
        const bool transpose = form == 1 || form == 2, conj_tau = form == 1 || form == 3,
                   conj_v = form >= 2;
        ops::apply_householder(dev(), x.d, qr.d, tau.d, c.d, transpose, conj_tau, conj_v);
        CMat op(m * m);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < m; ++j) {
            C e = transpose ? Q[j * m + i] : Q[i * m + j];
            op[i * m + j] = (form == 1 || form == 3) ? std::conj(e) : e;
          }
        expect_near_all(x.read(dev()), matmul(op, cv, m, m, 3), tol(rt) * 10, "ormqr");
      }
    }
  }
}

TEST_F(LinalgComplexTest, HermitianJacobiEigenAndSvd) {
  for (DType rt : real_types(dev())) {
    const int64_t n = 9, m = 13;
    CMat r = random_complex(n * n, 61);
    ComplexTensor a(dev(), rt, {n, n}, {1, n}), v(dev(), rt, {n, n});
    ComplexTensor work(dev(), rt, {n, n}), rot(dev(), rt, {n + 1});
    DevTensor w(dev(), rt, {n});
    CMat av = a.upload(dev(), r);  // only the lower triangle is read
    ops::symmetric_eigen(dev(), w.d, &v.d, a.d, work.d, rot.d);
    auto wv = w.read(dev());
    CMat vv = v.read(dev()), herm(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        herm[i * n + j] = i > j ? av[i * n + j] : i == j ? C(av[i * n + i].real())
                                                          : std::conj(av[j * n + i]);
    CMat hv = matmul(herm, vv, n, n, n), wvv(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) wvv[i * n + j] = wv[j] * vv[i * n + j];
    for (int64_t j = 1; j < n; ++j) EXPECT_LE(wv[j - 1], wv[j]);  // ascending
    expect_near_all(hv, wvv, tol(rt) * 50, "H v = w v");
    // SVD of a tall matrix: A = U S V^H with orthonormal U columns.
    ComplexTensor b(dev(), rt, {m, n}), u(dev(), rt, {m, n}), vs(dev(), rt, {n, n});
    ComplexTensor rot2(dev(), rt, {n + 1});
    DevTensor s(dev(), rt, {n});
    CMat bv = b.upload(dev(), random_complex(m * n, 62));
    ops::svd_jacobi(dev(), s.d, u.d, &vs.d, b.d, rot2.d);
    auto sv = s.read(dev());
    CMat U = u.read(dev()), V = vs.read(dev()), US(m * n), VH(n * n);
    for (int64_t j = 1; j < n; ++j) EXPECT_GE(sv[j - 1], sv[j]);  // descending
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) US[i * n + j] = U[i * n + j] * sv[j];
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) VH[i * n + j] = std::conj(V[j * n + i]);
    expect_near_all(matmul(US, VH, m, n, n), bv, tol(rt) * 50, "U S V^H");
  }
}

TEST_F(LinalgComplexTest, RejectsRealComplexMixesAndComplexValues) {
  const int64_t n = 3;
  ComplexTensor a(dev(), DType::kF32, {n, n}), lu(dev(), DType::kF32, {n, n});
  ComplexTensor sign(dev(), DType::kF32, {}), clog(dev(), DType::kF32, {});
  ComplexTensor cvalues(dev(), DType::kF32, {n}), work(dev(), DType::kF32, {n, n});
  ComplexTensor rot(dev(), DType::kF32, {n + 1});
  DevTensor piv(dev(), DType::kI32, {n}), info(dev(), DType::kI32, {}), real(dev(), DType::kF32,
                                                                                {n, n});
  // log|det| and eigenvalues of complex matrices are real; complex ones are refused.
  EXPECT_THROW(ops::lu_slogdet(dev(), sign.d, clog.d, lu.d, piv.d), InvalidArgument);
  EXPECT_THROW(ops::symmetric_eigen(dev(), cvalues.d, nullptr, a.d, work.d, rot.d),
               InvalidArgument);
  // Real and complex operands do not mix.
  EXPECT_THROW(ops::lu_factor(dev(), lu.d, piv.d, info.d, real.d, true), InvalidArgument);
  EXPECT_THROW(ops::ldl_factor(dev(), lu.d, piv.d, info.d, real.d, true), InvalidArgument);
}

}  // namespace vkml::testing
