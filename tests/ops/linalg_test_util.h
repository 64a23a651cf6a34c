// Host references shared by the linalg family's real and complex tests: LAPACK's unblocked LU
// (getf2 / zgetf2) on row-major double or std::complex<double> matrices, an elementwise
// closeness check and the tolerances by real type.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <utility>
#include <vector>

#include "vkml/dtype.h"

namespace vkml::testing {

// The magnitude LAPACK's pivot search compares: |x| (idamax), |re| + |im| for complex (izamax).
inline double pivot_size(double x) { return std::fabs(x); }
inline double pivot_size(std::complex<double> z) {
  return std::fabs(z.real()) + std::fabs(z.imag());
}

// getf2 / zgetf2: LU of a row-major m x n matrix in place, 1-based pivots, info.
template <typename T>
int host_lu(std::vector<T>& a, int64_t m, int64_t n, std::vector<int>& piv) {
  int info = 0;
  const int64_t k = std::min(m, n);
  piv.assign(k, 0);
  for (int64_t j = 0; j < k; ++j) {
    int64_t r = j;
    for (int64_t i = j + 1; i < m; ++i)
      if (pivot_size(a[i * n + j]) > pivot_size(a[r * n + j])) r = i;
    piv[j] = static_cast<int>(r + 1);
    if (a[r * n + j] == T(0)) {
      if (!info) info = static_cast<int>(j + 1);
      continue;
    }
    for (int64_t c = 0; c < n; ++c) std::swap(a[j * n + c], a[r * n + c]);
    for (int64_t i = j + 1; i < m; ++i) {
      a[i * n + j] /= a[j * n + j];
      for (int64_t c = j + 1; c < n; ++c) a[i * n + c] -= a[i * n + j] * a[j * n + c];
    }
  }
  return info;
}

// Every |got - want| within tol * (1 + |want|).
template <typename T>
void expect_near_all(const std::vector<T>& got, const std::vector<T>& want, double tol,
                     const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), tol * (1 + std::abs(want[i])))
        << what << " at " << i << ": " << got[i] << " vs " << want[i];
  }
}

// Tolerance of a float32 or float64 (or complex64 / complex128 by their real type) result.
inline double tol(DType real) { return real == DType::kF32 ? 2e-4 : 1e-10; }

}  // namespace vkml::testing
