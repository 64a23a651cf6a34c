// Random family: determinism by (seed, offset), ranges, and moments of the distributions.
#include <cmath>

#include "test_util.h"
#include "vkml/random.h"

namespace vkml::testing {

using RandomTest = DeviceTest;

TEST_F(RandomTest, SameSeedAndOffsetSameNumbers) {
  const int64_t n = 4099;
  DeviceBuffer a(dev(), n * 4), b(dev(), n * 4), c(dev(), n * 4);
  ops::RandomRequest req{ops::RandomKind::kNormal, 42, 8, 0.0, 1.0};
  ops::random(dev(), desc(a.address, DType::kF32, {n}), req);
  ops::random(dev(), desc(b.address, DType::kF32, {n}), req);
  req.offset = 12;
  ops::random(dev(), desc(c.address, DType::kF32, {n}), req);
  auto va = download<float>(dev(), a.address, n), vb = download<float>(dev(), b.address, n);
  auto vc = download<float>(dev(), c.address, n);
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
  double mean = 0, sq = 0;
  for (float v : va) {
    ASSERT_TRUE(std::isfinite(v));
    mean += v;
    sq += double(v) * v;
  }
  mean /= n;
  EXPECT_NEAR(mean, 0.0, 0.08);
  EXPECT_NEAR(std::sqrt(sq / n - mean * mean), 1.0, 0.08);
}

TEST_F(RandomTest, IntegerRangeIsRespected) {
  const int64_t n = 10000;
  DeviceBuffer a(dev(), n * 8);
  ops::RandomRequest req;
  req.kind = ops::RandomKind::kIntRange;
  req.seed = 1;
  req.base = -3;
  req.range = 6;
  ops::random(dev(), desc(a.address, DType::kI64, {n}), req);
  auto v = download<int64_t>(dev(), a.address, n);
  int counts[6] = {};
  for (int64_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 3);
    counts[x + 3]++;
  }
  for (int c : counts) EXPECT_NEAR(c, n / 6.0, n * 0.03);
}

TEST_F(RandomTest, FloatDrawNeedsFloatTensor) {
  DeviceBuffer a(dev(), 64);
  EXPECT_THROW(ops::random(dev(), desc(a.address, DType::kI32, {16}), {}), InvalidArgument);
}

}  // namespace vkml::testing
