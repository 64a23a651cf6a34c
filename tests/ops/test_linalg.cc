// Linalg family: LU with partial pivoting (pivots, info, rectangular, strided in/out), triangular
// solves (upper/lower, unit), row permutations, Cholesky (info for non-PD), det/slogdet and
// Householder QR (geqrf, orgqr, ormqr), against double-precision host versions of LAPACK's
// unblocked algorithms.
#include <algorithm>
#include <cmath>

#include "linalg_test_util.h"
#include "nn_test_util.h"
#include "vkml/errors.h"
#include "vkml/linalg.h"

namespace vkml::testing {

namespace {

// Row-major m x n matrices on the host.
using Mat = std::vector<double>;

// geqr2: R and reflectors in place, tau (LAPACK's dlarfg signs).
void host_qr(Mat& a, int64_t m, int64_t n, std::vector<double>& tau) {
  const int64_t k = std::min(m, n);
  tau.assign(k, 0);
  for (int64_t j = 0; j < k; ++j) {
    double ss = 0;
    for (int64_t i = j + 1; i < m; ++i) ss += a[i * n + j] * a[i * n + j];
    if (ss == 0) continue;
    double alpha = a[j * n + j], beta = std::sqrt(alpha * alpha + ss);
    if (alpha >= 0) beta = -beta;
    tau[j] = (beta - alpha) / beta;
    for (int64_t i = j + 1; i < m; ++i) a[i * n + j] /= alpha - beta;
    a[j * n + j] = beta;
    for (int64_t c = j + 1; c < n; ++c) {
      double w = a[j * n + c];
      for (int64_t i = j + 1; i < m; ++i) w += a[i * n + j] * a[i * n + c];
      w *= tau[j];
      a[j * n + c] -= w;
      for (int64_t i = j + 1; i < m; ++i) a[i * n + c] -= a[i * n + j] * w;
    }
  }
}

std::vector<DType> float_types(Device& dev) {
  std::vector<DType> t = {DType::kF32};
  if (dev.caps().supports_dtype(DType::kF64)) t.push_back(DType::kF64);
  return t;
}

}  // namespace

using LinalgTest = DeviceTest;

TEST_F(LinalgTest, LuMatchesGetf2BatchedStridedRectangular) {
  for (DType dt : float_types(dev())) {
    for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 37}, {9, 5}, {4, 11}, {1, 1}}) {
      const int64_t B = 3, k = std::min(m, n);
      // a column-major per matrix; lu row-major
      DevTensor a(dev(), dt, {B, m, n}, {m * n, 1, m});
      DevTensor lu(dev(), dt, {B, m, n});
      DevTensor piv(dev(), DType::kI32, {B, k});
      DevTensor info(dev(), DType::kI32, {B});
      auto av = a.upload(dev(), random_values(B * m * n, 11));
      if (m == 9) std::fill(av.begin(), av.end(), 0.0);  // singular: info at the first column
      if (m == 9) a.upload(dev(), av);
      ops::lu_factor(dev(), lu.d, piv.d, info.d, a.d, true);
      auto got = lu.read(dev()), gp = piv.read(dev()), gi = info.read(dev());
      for (int64_t b = 0; b < B; ++b) {
        Mat h(av.begin() + b * m * n, av.begin() + (b + 1) * m * n);
        std::vector<int> hp;
        int hi = host_lu(h, m, n, hp);
        EXPECT_EQ(gi[b], hi);
        for (int64_t j = 0; j < k; ++j) EXPECT_EQ(gp[b * k + j], hp[j]) << "pivot " << j;
        expect_near_all(Mat(got.begin() + b * m * n, got.begin() + (b + 1) * m * n), h, tol(dt),
                        "lu");
      }
    }
  }
}

TEST_F(LinalgTest, LuInPlaceWithoutPivoting) {
  const int64_t n = 6;
  DevTensor a(dev(), DType::kF32, {n, n});
  DevTensor piv(dev(), DType::kI32, {n});
  DevTensor info(dev(), DType::kI32, {});
  auto v = random_values(n * n, 5);
  for (int64_t i = 0; i < n; ++i) v[i * n + i] += 10;  // dominant diagonal: no pivoting needed
  auto av = a.upload(dev(), v);
  ops::lu_factor(dev(), a.d, piv.d, info.d, a.d, false);
  auto got = a.read(dev()), gp = piv.read(dev());
  std::vector<int> hp;
  Mat h = av;
  host_lu(h, n, n, hp);  // partial pivoting picks the diagonal here too
  for (int64_t j = 0; j < n; ++j) EXPECT_EQ(gp[j], j + 1);
  expect_near_all(got, h, 2e-4, "lu in place");
  EXPECT_EQ(info.read(dev())[0], 0);
}

TEST_F(LinalgTest, TriangularSolveAllForms) {
  for (DType dt : float_types(dev())) {
    const int64_t n = 45, k = 3;
    for (bool upper : {false, true}) {
      for (bool unit : {false, true}) {
        DevTensor a(dev(), dt, {n, n}, {1, n});  // transposed storage
        DevTensor b(dev(), dt, {n, k});
        DevTensor x(dev(), dt, {n, k}, {1, n});
        auto v = random_values(n * n, 21);
        for (int64_t i = 0; i < n; ++i) v[i * n + i] = 3 + std::fabs(v[i * n + i]);
        auto av = a.upload(dev(), v);
        auto bv = b.upload(dev(), random_values(n * k, 22));
        ops::triangular_solve(dev(), x.d, a.d, b.d, upper, unit);
        // host substitution
        Mat want = bv;
        for (int64_t c = 0; c < k; ++c) {
          for (int64_t s = 0; s < n; ++s) {
            int64_t i = upper ? n - 1 - s : s;
            double acc = want[i * k + c];
            for (int64_t j = 0; j < n; ++j) {
              if ((upper && j > i) || (!upper && j < i)) acc -= av[i * n + j] * want[j * k + c];
            }
            want[i * k + c] = unit ? acc : acc / av[i * n + i];
          }
        }
        expect_near_all(x.read(dev()), want, tol(dt), "trsm");
      }
    }
  }
}

TEST_F(LinalgTest, PermuteRowsForwardAndBack) {
  const int64_t n = 5, k = 2;
  DevTensor x(dev(), DType::kF32, {n, k});
  DevTensor piv(dev(), DType::kI32, {3});
  auto xv = x.upload(dev(), random_values(n * k, 3));
  piv.upload(dev(), {3, 5, 3});
  ops::permute_rows(dev(), x.d, piv.d, false);
  Mat want = xv;
  const int p[] = {2, 4, 2};
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < k; ++c) std::swap(want[i * k + c], want[p[i] * k + c]);
  expect_near_all(x.read(dev()), want, 0, "forward");
  ops::permute_rows(dev(), x.d, piv.d, true);
  expect_near_all(x.read(dev()), xv, 0, "back");
}

TEST_F(LinalgTest, CholeskyAndNonPositiveDefiniteInfo) {
  for (DType dt : float_types(dev())) {
    const int64_t n = 33, B = 2;
    Mat spd(B * n * n);
    auto r = random_values(B * n * n, 31);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = i == j ? n : 0;
          for (int64_t t = 0; t < n; ++t) s += r[b * n * n + i * n + t] * r[b * n * n + j * n + t];
          spd[b * n * n + i * n + j] = s;
        }
    spd[n * n + 4 * n + 4] = -1e6;  // second matrix: minor 5 is not positive definite
    DevTensor a(dev(), dt, {B, n, n});
    DevTensor l(dev(), dt, {B, n, n}, {n * n, 1, n});
    DevTensor info(dev(), DType::kI32, {B});
    auto av = a.upload(dev(), spd);
    ops::cholesky(dev(), l.d, info.d, a.d);
    auto got = l.read(dev()), gi = info.read(dev());
    EXPECT_EQ(gi[0], 0);
    EXPECT_EQ(gi[1], 5);
    Mat h(av.begin(), av.begin() + n * n);
    for (int64_t j = 0; j < n; ++j) {
      h[j * n + j] = std::sqrt(h[j * n + j]);
      for (int64_t i = j + 1; i < n; ++i) h[i * n + j] /= h[j * n + j];
      for (int64_t c = j + 1; c < n; ++c)
        for (int64_t i = c; i < n; ++i) h[i * n + c] -= h[i * n + j] * h[c * n + j];
      for (int64_t c = j + 1; c < n; ++c) h[j * n + c] = 0;
    }
    expect_near_all(Mat(got.begin(), got.begin() + n * n), h, tol(dt), "cholesky");
  }
}

TEST_F(LinalgTest, DetAndSlogdetFromLu) {
  for (DType dt : float_types(dev())) {
    const int64_t n = 7, B = 3;
    DevTensor a(dev(), dt, {B, n, n});
    DevTensor lu(dev(), dt, {B, n, n});
    DevTensor piv(dev(), DType::kI32, {B, n});
    DevTensor info(dev(), DType::kI32, {B});
    DevTensor det(dev(), dt, {B}), sign(dev(), dt, {B}), logabs(dev(), dt, {B}, {2}, 2 * B);
    auto v = random_values(B * n * n, 41);
    for (int64_t j = 0; j < n; ++j) v[2 * n * n + j * n + 3] = 0;  // third matrix singular
    auto av = a.upload(dev(), v);
    ops::lu_factor(dev(), lu.d, piv.d, info.d, a.d, true);
    ops::lu_det(dev(), det.d, lu.d, piv.d);
    ops::lu_slogdet(dev(), sign.d, logabs.d, lu.d, piv.d);
    auto gd = det.read(dev()), gs = sign.read(dev()), gl = logabs.read(dev());
    for (int64_t b = 0; b < B; ++b) {
      Mat h(av.begin() + b * n * n, av.begin() + (b + 1) * n * n);
      std::vector<int> hp;
      host_lu(h, n, n, hp);
      double d = 1;
      for (int64_t i = 0; i < n; ++i) d *= (hp[i] != i + 1 ? -1 : 1) * h[i * n + i];
      EXPECT_NEAR(gd[b], d, tol(dt) * (1 + std::fabs(d)));
      EXPECT_EQ(gs[b], d > 0 ? 1 : (d < 0 ? -1 : 0));
      if (d != 0) {
        EXPECT_NEAR(gl[b], std::log(std::fabs(d)), tol(dt) * 10);
      } else {
        EXPECT_TRUE(std::isinf(gl[b]) && gl[b] < 0);
      }
    }
  }
}

TEST_F(LinalgTest, HouseholderQrOrgqrOrmqr) {
  for (DType dt : float_types(dev())) {
    for (auto [m, n] : {std::pair<int64_t, int64_t>{40, 6}, {5, 9}, {3, 3}}) {
      const int64_t k = std::min(m, n);
      DevTensor a(dev(), dt, {m, n}, {1, m});
      DevTensor qr(dev(), dt, {m, n});
      DevTensor tau(dev(), dt, {k});
      auto av = a.upload(dev(), random_values(m * n, 51));
      ops::geqrf(dev(), qr.d, tau.d, a.d);
      Mat h = av;
      std::vector<double> ht;
      host_qr(h, m, n, ht);
      expect_near_all(qr.read(dev()), h, tol(dt), "geqrf");
      expect_near_all(tau.read(dev()), ht, tol(dt), "tau");
      // Q (m x k) times R (k x n) rebuilds A; ormqr's Q^T A gives R.
      DevTensor q(dev(), dt, {m, k}, {1, m});
      ops::householder_product(dev(), q.d, qr.d, tau.d);
      auto qv = q.read(dev());
      Mat rebuilt(m * n, 0);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t t = 0; t <= std::min(j, k - 1); ++t)
            rebuilt[i * n + j] += qv[i * k + t] * h[t * n + j];
      expect_near_all(rebuilt, av, tol(dt) * 10, "Q R");
      DevTensor c(dev(), dt, {m, n});
      ops::apply_householder(dev(), c.d, qr.d, tau.d, a.d, /*transpose=*/true);
      auto cv = c.read(dev());
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = i <= j && i < k ? h[i * n + j] : 0;
          ASSERT_NEAR(cv[i * n + j], want, tol(dt) * 20) << "Q^T A at " << i << "," << j;
        }
    }
  }
}

TEST_F(LinalgTest, JacobiEigenSymmetric) {
  for (DType dt : float_types(dev())) {
    const int64_t n = 19, B = 2;  // odd n: one index sits out each round-robin step
    auto r = random_values(B * n * n, 61);
    DevTensor a(dev(), dt, {B, n, n}, {n * n, 1, n});
    DevTensor w(dev(), dt, {B, n}), v(dev(), dt, {B, n, n});
    DevTensor work(dev(), dt, {B, n, n}), rot(dev(), dt, {B, n + 1});
    auto av = a.upload(dev(), r);  // only the lower triangle is read
    ops::symmetric_eigen(dev(), w.d, &v.d, a.d, work.d, rot.d);
    auto wv = w.read(dev()), vv = v.read(dev());
    for (int64_t b = 0; b < B; ++b) {
      auto sym = [&](int64_t i, int64_t j) {
        return i >= j ? av[b * n * n + i * n + j] : av[b * n * n + j * n + i];
      };
      for (int64_t j = 0; j < n; ++j) {
        if (j > 0) EXPECT_LE(wv[b * n + j - 1], wv[b * n + j]);  // ascending
        // S v_j = w_j v_j
        for (int64_t i = 0; i < n; ++i) {
          double sv = 0;
          for (int64_t t = 0; t < n; ++t) sv += sym(i, t) * vv[b * n * n + t * n + j];
          ASSERT_NEAR(sv, wv[b * n + j] * vv[b * n * n + i * n + j], tol(dt) * 50);
        }
      }
    }
  }
}

TEST_F(LinalgTest, OneSidedJacobiSvdRankDeficientAndTiny) {
  for (DType dt : float_types(dev())) {
    const int64_t m = 12, n = 7;
    // rank 2, scaled to 1e-3: products of tiny column norms must not stop the rotations
    auto x = random_values(m * 2, 71), y = random_values(2 * n, 72);
    std::vector<double> r(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        r[i * n + j] = 1e-3 * (x[i * 2] * y[j] + x[i * 2 + 1] * y[n + j]);
    DevTensor a(dev(), dt, {m, n});
    DevTensor s(dev(), dt, {n}), u(dev(), dt, {m, n}, {1, m}), v(dev(), dt, {n, n});
    DevTensor rot(dev(), dt, {n + 1});
    auto av = a.upload(dev(), r);
    ops::svd_jacobi(dev(), s.d, u.d, &v.d, a.d, rot.d);
    auto sv = s.read(dev()), uv = u.read(dev()), vv = v.read(dev());
    double frob = 0, ssum = 0;
    for (double e : av) frob += e * e;
    for (int64_t j = 0; j < n; ++j) ssum += sv[j] * sv[j];
    EXPECT_NEAR(ssum, frob, frob * tol(dt) * 10);  // rotations keep the Frobenius norm
    for (int64_t j = 1; j < n; ++j) EXPECT_LE(sv[j], sv[j - 1]);
    EXPECT_LT(sv[2], sv[0] * tol(dt) * 10);  // rank 2
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double rebuilt = 0;
        for (int64_t t = 0; t < 2; ++t) rebuilt += uv[i * n + t] * sv[t] * vv[j * n + t];
        ASSERT_NEAR(rebuilt, av[i * n + j], 1e-3 * tol(dt) * 10);
      }
  }
}

TEST_F(LinalgTest, LdlFactorSolvesIndefiniteWithTwoByTwoPivots) {
  for (DType dt : float_types(dev())) {
    const int64_t n = 9, k = 2;
    auto r = random_values(n * n, 81);
    std::vector<double> sym(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) sym[i * n + j] = r[i * n + j] + r[j * n + i];
    sym[0] = 0;  // indefinite with a zero diagonal entry: 2x2 blocks appear
    DevTensor a(dev(), dt, {n, n}), ld(dev(), dt, {n, n}, {1, n});
    DevTensor piv(dev(), DType::kI32, {n}), info(dev(), DType::kI32, {});
    DevTensor b(dev(), dt, {n, k}), x(dev(), dt, {n, k});
    auto av = a.upload(dev(), sym);
    auto bv = b.upload(dev(), random_values(n * k, 82));
    ops::ldl_factor(dev(), ld.d, piv.d, info.d, a.d);
    ops::ldl_solve(dev(), x.d, ld.d, piv.d, b.d);
    auto pv = piv.read(dev()), xv = x.read(dev()), lv = ld.read(dev());
    EXPECT_EQ(info.read(dev())[0], 0);
    int blocks = 0;  // a 2x2 block carries its (negative) interchange on both of its rows
    for (int64_t i = 0; i < n; ++i) {
      if (pv[i] < 0) {
        ASSERT_LT(i + 1, n);
        EXPECT_EQ(pv[i], pv[i + 1]);
        ++blocks;
        ++i;
      }
    }
    EXPECT_GT(blocks, 0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) EXPECT_EQ(lv[i * n + j], 0);  // upper zeroed
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < k; ++c) {
        double ax = 0;
        for (int64_t j = 0; j < n; ++j) ax += av[i * n + j] * xv[j * k + c];
        ASSERT_NEAR(ax, bv[i * k + c], tol(dt) * 100) << i << "," << c;
      }
  }
}

TEST_F(LinalgTest, RejectsBadShapesAndDtypes) {
  DevTensor a(dev(), DType::kF32, {3, 4});
  DevTensor l(dev(), DType::kF32, {3, 4});
  DevTensor info(dev(), DType::kI32, {});
  EXPECT_THROW(ops::cholesky(dev(), l.d, info.d, a.d), InvalidArgument);
  DevTensor h(dev(), DType::kF16, {3, 3});
  DevTensor piv(dev(), DType::kI32, {3});
  EXPECT_THROW(ops::lu_factor(dev(), h.d, piv.d, info.d, h.d, true), InvalidArgument);
}

}  // namespace vkml::testing
