// Shape family: cat, flip, roll, tril/triu and ranges against CPU references.
#include <cmath>

#include "test_util.h"
#include "vkml/shape.h"

namespace vkml::testing {

namespace {

template <typename T>
void put(Device& dev, const DeviceBuffer& b, const std::vector<T>& v) {
  dev.stream().upload(v.data(), b.address, v.size() * sizeof(T));
}

}  // namespace

using ShapeTest = DeviceTest;

TEST_F(ShapeTest, CatConvertsDtypesIntoStridedOut) {
  DeviceBuffer a(dev(), 6 * 4), b(dev(), 3 * 8), out(dev(), 3 * 4 * 8);
  put<float>(dev(), a, {1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f});  // 3x2
  put<int64_t>(dev(), b, {7, 8, 9});                          // 3x1
  dev().stream().fill(out.address, 3 * 4 * 8, 0);
  // out is a 3x3 view (row stride 4) of a 3x4 double buffer.
  ops::cat(dev(), desc(out.address, DType::kF64, {3, 3}, {4, 1}),
           {desc(a.address, DType::kF32, {3, 2}), desc(b.address, DType::kI64, {3, 1})}, 1);
  auto got = download<double>(dev(), out.address, 12);
  EXPECT_EQ(got, (std::vector<double>{1.5, 2.5, 7, 0, 3.5, 4.5, 8, 0, 5.5, 6.5, 9, 0}));
}

TEST_F(ShapeTest, FlipAndRollOfTransposedInput) {
  const int r = 3, c = 5;
  DeviceBuffer in(dev(), r * c * 2), out(dev(), r * c * 2);
  std::vector<int16_t> v(r * c);
  for (int i = 0; i < r * c; ++i) v[i] = static_cast<int16_t>(i * 7 - 20);
  put(dev(), in, v);
  TensorDesc t = desc(in.address, DType::kI16, {c, r}, {1, c});  // transpose: t[i][j] = v[j*c+i]
  TensorDesc o = desc(out.address, DType::kI16, {c, r});
  ops::flip(dev(), o, t, {0, 1});
  auto f = download<int16_t>(dev(), out.address, r * c);
  for (int i = 0; i < c; ++i) {
    for (int j = 0; j < r; ++j) EXPECT_EQ(f[i * r + j], v[(r - 1 - j) * c + (c - 1 - i)]);
  }
  ops::roll(dev(), o, t, {2, -4}, {0, 1});
  auto g = download<int16_t>(dev(), out.address, r * c);
  for (int i = 0; i < c; ++i) {
    for (int j = 0; j < r; ++j) {
      int si = ((i - 2) % c + c) % c, sj = ((j + 4) % r + r) % r;
      EXPECT_EQ(g[i * r + j], v[sj * c + si]);
    }
  }
}

TEST_F(ShapeTest, TrilTriuBatchedAndInPlace) {
  const int b = 2, n = 3, m = 4;
  DeviceBuffer in(dev(), b * n * m * 8), out(dev(), b * n * m * 8);
  std::vector<int64_t> v(b * n * m);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i) + 1;
  put(dev(), in, v);
  TensorDesc t = desc(in.address, DType::kI64, {b, n, m});
  ops::triangle(dev(), desc(out.address, DType::kI64, {b, n, m}), t, 1, false);
  auto lo = download<int64_t>(dev(), out.address, v.size());
  ops::triangle(dev(), t, t, -1, true);
  auto up = download<int64_t>(dev(), in.address, v.size());
  for (int k = 0; k < b; ++k) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < m; ++j) {
        size_t e = (k * n + i) * m + j;
        EXPECT_EQ(lo[e], j - i <= 1 ? v[e] : 0);
        EXPECT_EQ(up[e], j - i >= -1 ? v[e] : 0);
      }
    }
  }
}

TEST_F(ShapeTest, RangesMatchCpuArithmetic) {
  DeviceBuffer buf(dev(), 64 * 8);
  ops::arange(dev(), desc(buf.address, DType::kI32, {10}, {2}), Scalar::from_int(-3),
              Scalar::from_int(4));
  auto a = download<int32_t>(dev(), buf.address, 20);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a[2 * i], -3 + 4 * i);
  ops::arange(dev(), desc(buf.address, DType::kF32, {13}), Scalar::from_double(0.5),
              Scalar::from_double(0.1));
  auto f = download<float>(dev(), buf.address, 13);
  for (int i = 0; i < 13; ++i) EXPECT_EQ(f[i], static_cast<float>(0.5 + 0.1 * i)) << i;
  ops::linspace(dev(), desc(buf.address, DType::kF64, {7}), Scalar::from_double(-1),
                Scalar::from_double(2));
  auto d = download<double>(dev(), buf.address, 7);
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(d[i], -1 + 0.5 * i, 1e-15);
  EXPECT_EQ(d[6], 2.0);
  ops::linspace(dev(), desc(buf.address, DType::kI64, {4}), Scalar::from_int(0),
                Scalar::from_int(10));
  EXPECT_EQ(download<int64_t>(dev(), buf.address, 4), (std::vector<int64_t>{0, 3, 6, 10}));
  ops::logspace(dev(), desc(buf.address, DType::kF32, {3}), Scalar::from_int(0),
                Scalar::from_int(2), 10.0);
  auto l = download<float>(dev(), buf.address, 3);
  EXPECT_NEAR(l[0], 1.0f, 1e-6);
  EXPECT_NEAR(l[1], 10.0f, 1e-5);
  EXPECT_NEAR(l[2], 100.0f, 1e-4);
}

}  // namespace vkml::testing
