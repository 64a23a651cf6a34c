// Dropout family: keep rate, exact scaling, reproducibility by (seed, offset), backward.
#include <cmath>

#include "nn_test_util.h"
#include "vkml/dropout.h"

namespace vkml::testing {

using DropoutTest = DeviceTest;

void check_dropout(Device& dev, DType dt, double p, uint32_t seed) {
  const int64_t rows = 64, cols = 97, n = rows * cols;
  DevTensor x(dev, dt, {rows, cols}, {1, rows}), y(dev, dt, {rows, cols});
  DevTensor mask(dev, DType::kBool, {rows, cols}), y2(dev, dt, {rows, cols});
  DevTensor mask2(dev, DType::kBool, {rows, cols});
  auto xs = x.upload(dev, random_values(n, seed, 0.5, 2.0));  // never zero
  ops::dropout(dev, y.d, mask.d, x.d, p, 1234, 8);
  ops::dropout(dev, y2.d, mask2.d, x.d, p, 1234, 8);
  auto ys = y.read(dev), ms = mask.read(dev);
  EXPECT_EQ(ys, y2.read(dev));
  EXPECT_EQ(ms, mask2.read(dev));
  double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p), kept = 0;
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(ms[i] == 0.0 || ms[i] == 1.0);
    kept += ms[i];
    want[i] = xs[i] * ms[i] * scale;
  }
  expect_close(ys, want, tol_for(dt), 0, "dropout output");
  EXPECT_NEAR(kept / n, 1.0 - p, 0.03);

  DevTensor g(dev, dt, {rows, cols}), gi(dev, dt, {rows, cols});
  auto gs = g.upload(dev, random_values(n, seed + 1));
  ops::dropout_backward(dev, gi.d, g.d, mask.d, scale);
  for (int64_t i = 0; i < n; ++i) want[i] = gs[i] * ms[i] * scale;
  expect_close(gi.read(dev), want, tol_for(dt), 0, "dropout backward");
}

TEST_F(DropoutTest, KeepsOneMinusPAndScales) {
  check_dropout(dev(), DType::kF32, 0.3, 1);
  check_dropout(dev(), DType::kF16, 0.5, 2);
  check_dropout(dev(), DType::kBF16, 0.1, 3);
  check_dropout(dev(), DType::kF32, 0.0, 4);
  check_dropout(dev(), DType::kF32, 1.0, 5);
  if (dev().caps().supports_dtype(DType::kF64)) check_dropout(dev(), DType::kF64, 0.25, 6);
}

TEST_F(DropoutTest, DifferentOffsetsDiffer) {
  DevTensor x(dev(), DType::kF32, {1000}), a(dev(), DType::kF32, {1000}),
      b(dev(), DType::kF32, {1000});
  DevTensor ma(dev(), DType::kBool, {1000}), mb(dev(), DType::kBool, {1000});
  x.upload(dev(), random_values(1000, 7, 1, 2));
  ops::dropout(dev(), a.d, ma.d, x.d, 0.5, 99, 1);
  ops::dropout(dev(), b.d, mb.d, x.d, 0.5, 99, 2);
  EXPECT_NE(ma.read(dev()), mb.read(dev()));
}

TEST_F(DropoutTest, RejectsBadInput) {
  DevTensor x(dev(), DType::kF32, {8}), y(dev(), DType::kF32, {8}), m(dev(), DType::kU8, {8});
  DevTensor mb(dev(), DType::kBool, {8});
  EXPECT_THROW(ops::dropout(dev(), y.d, m.d, x.d, 0.5, 1, 0), InvalidArgument);
  EXPECT_THROW(ops::dropout(dev(), y.d, mb.d, x.d, 1.5, 1, 0), InvalidArgument);
}

}  // namespace vkml::testing
