// Distance family: cdist (batched, broadcast batch dim, strided) and pdist, forward and backward
// for p in {0, 1, 2, inf, 0.5, 1.5, 3}, against a double-precision CPU reference.
#include <cmath>

#include "nn_test_util.h"
#include "vkml/distance.h"
#include "vkml/errors.h"

namespace vkml::testing {

namespace {

double dist_ref(const double* a, const double* b, int64_t m, double p) {
  double acc = 0;
  for (int64_t k = 0; k < m; ++k) {
    double d = std::fabs(a[k] - b[k]);
    if (p == 0) {
      acc += d != 0;
    } else if (std::isinf(p)) {
      acc = std::max(acc, d);
    } else {
      acc += std::pow(d, p);
    }
  }
  return (p == 0 || std::isinf(p)) ? acc : std::pow(acc, 1 / p);
}

double grad_ref(double d, double dist, double p) {
  double s = (d > 0) - (d < 0);
  if (p == 0) return 0;
  if (p == 1) return s;
  if (dist == 0) return 0;
  if (p == 2) return d / dist;
  if (std::isinf(p)) return std::fabs(d) == dist ? s : 0;
  if (p < 1 && d == 0) return 0;
  return s * std::pow(std::fabs(d), p - 1) / std::pow(dist, p - 1);
}

const double kPs[] = {0.0, 1.0, 2.0, INFINITY, 0.5, 1.5, 3.0};

}  // namespace

using DistanceTest = DeviceTest;

TEST_F(DistanceTest, CdistBatchedBroadcastStrided) {
  const int64_t B = 2, P = 5, R = 3, M = 4;
  for (DType dt : {DType::kF32, DType::kF64}) {
    if (dt == DType::kF64 && !dev().caps().supports_dtype(DType::kF64)) continue;
    // x1 [B, P, M] with the batch broadcast from one copy (stride 0); x2 [B, R, M] transposed rows
    DevTensor x1(dev(), dt, {B, P, M}, {0, M, 1}, P * M);
    DevTensor x2(dev(), dt, {B, R, M}, {R * M, 1, R});
    std::vector<double> one = random_values(P * M, 3), both = one;
    both.insert(both.end(), one.begin(), one.end());  // the broadcast batch repeats its values
    auto a = x1.upload(dev(), both);
    auto b = x2.upload(dev(), random_values(B * R * M, 4));
    for (double p : kPs) {
      DevTensor out(dev(), dt, {B, P, R});
      ops::cdist(dev(), out.d, x1.d, x2.d, p);
      std::vector<double> want(B * P * R);
      for (int64_t bi = 0; bi < B; ++bi)
        for (int64_t i = 0; i < P; ++i)
          for (int64_t j = 0; j < R; ++j)
            want[(bi * P + i) * R + j] =
                dist_ref(&a[(bi * P + i) * M], &b[(bi * R + j) * M], M, p);
      auto dist = out.read(dev());
      double tol = dt == DType::kF32 ? 2e-5 : 1e-10;
      expect_close(dist, want, tol, tol, "cdist");
      DevTensor g(dev(), dt, {B, P, R}), gx(dev(), dt, {B, P, M});
      auto gs = g.upload(dev(), random_values(B * P * R, 5));
      ops::cdist_backward(dev(), gx.d, g.d, x1.d, x2.d, p, out.d);
      std::vector<double> gw(B * P * M, 0.0);
      for (int64_t bi = 0; bi < B; ++bi)
        for (int64_t i = 0; i < P; ++i)
          for (int64_t k = 0; k < M; ++k)
            for (int64_t j = 0; j < R; ++j) {
              // rounded as the device rounds it: p = inf compares |d| with the distance
              double d = round_to(dt, a[(bi * P + i) * M + k] - b[(bi * R + j) * M + k]);
              int64_t o = (bi * P + i) * R + j;
              gw[(bi * P + i) * M + k] += grad_ref(d, dist[o], p) * gs[o];
            }
      expect_close(gx.read(dev()), gw, tol * 10, tol * 10, "cdist backward");
    }
  }
}

TEST_F(DistanceTest, PdistForwardBackward) {
  const int64_t N = 40, M = 3;  // 780 pairs: several workgroups
  DevTensor x(dev(), DType::kF32, {N, M});
  auto v = x.upload(dev(), random_values(N * M, 7));
  const int64_t pairs = N * (N - 1) / 2;
  for (double p : kPs) {
    DevTensor out(dev(), DType::kF32, {pairs});
    ops::pdist(dev(), out.d, x.d, p);
    std::vector<double> want;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = i + 1; j < N; ++j) want.push_back(dist_ref(&v[i * M], &v[j * M], M, p));
    auto dist = out.read(dev());
    expect_close(dist, want, 2e-5, 2e-5, "pdist");
    DevTensor g(dev(), DType::kF32, {pairs}), gx(dev(), DType::kF32, {N, M});
    auto gs = g.upload(dev(), random_values(pairs, 8));
    ops::pdist_backward(dev(), gx.d, g.d, x.d, p, out.d);
    std::vector<double> gw(N * M, 0.0);
    int64_t e = 0;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = i + 1; j < N; ++j, ++e)
        for (int64_t k = 0; k < M; ++k) {
          double d = round_to(DType::kF32, v[i * M + k] - v[j * M + k]);
          gw[i * M + k] += grad_ref(d, dist[e], p) * gs[e];
          gw[j * M + k] += grad_ref(-d, dist[e], p) * gs[e];
        }
    expect_close(gx.read(dev()), gw, 2e-4, 2e-4, "pdist backward");
  }
}

TEST_F(DistanceTest, RejectsBadInput) {
  DevTensor x(dev(), DType::kF32, {4, 3}), y(dev(), DType::kF32, {4, 2});
  DevTensor out(dev(), DType::kF32, {4, 4}), pd(dev(), DType::kF32, {5});
  EXPECT_THROW(ops::cdist(dev(), out.d, x.d, y.d, 2.0), InvalidArgument);
  EXPECT_THROW(ops::cdist(dev(), out.d, x.d, x.d, -1.0), InvalidArgument);
  EXPECT_THROW(ops::pdist(dev(), pd.d, x.d, 2.0), InvalidArgument);
}

}  // namespace vkml::testing
