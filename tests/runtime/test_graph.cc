// Graph capture and replay (vkml/graph.h): replays compute from the inputs' current values,
// submit once whatever the number of commands, keep their memory, and refuse host work while
// capturing.
#include "vkml/elementwise.h"
#include "vkml/gemm.h"
#include "vkml/graph.h"
#include "test_util.h"

namespace vkml::testing {

using GraphTest = DeviceTest;

namespace {

std::vector<float> iota_values(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 97) - 3.0f;
  return v;
}

// y = ((x * 2 + 1) * 2 + 1) ... `steps` times, through temporaries allocated (and freed) in the
// capture; returns the expected result on the host.
float chain(float x, int steps) {
  for (int s = 0; s < steps; ++s) x = x * 2.0f + 1.0f;
  return x;
}

void record_chain(Device& dev, uint64_t x, uint64_t y, int64_t n, int steps) {
  uint64_t cur = x;
  for (int s = 0; s < steps; ++s) {
    uint64_t tmp = dev.allocate(n * 4);
    ops::binary_scalar(dev, ops::BinaryOp::kMul, desc(tmp, DType::kF32, {n}), desc(cur, DType::kF32, {n}),
                       Scalar::from_double(2.0));
    const uint64_t out = s + 1 == steps ? y : tmp;
    ops::binary_scalar(dev, ops::BinaryOp::kAdd, desc(out, DType::kF32, {n}), desc(tmp, DType::kF32, {n}),
                       Scalar::from_double(1.0));
    if (cur != x) dev.free(cur);
    cur = out;
    if (out != tmp) dev.free(tmp);
  }
}

}  // namespace

TEST_F(GraphTest, ReplayReadsTheInputsCurrentValues) {
  const int64_t n = 3001;
  const int steps = 3;
  DeviceBuffer x(dev(), n * 4), y(dev(), n * 4);
  auto first = iota_values(n, 0.5f);
  dev().stream().upload(first.data(), x.address, n * 4);
  begin_capture(dev());
  record_chain(dev(), x.address, y.address, n, steps);
  auto graph = end_capture(dev());
  EXPECT_EQ(graph->commands(), static_cast<uint64_t>(2 * steps));
  for (float scale : {0.5f, -1.25f, 3.0f}) {
    auto in = iota_values(n, scale);
    dev().stream().upload(in.data(), x.address, n * 4);  // the static input changes in place
    graph->replay();
    auto out = download<float>(dev(), y.address, n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], chain(in[i], steps)) << i;
  }
}

TEST_F(GraphTest, OneSubmissionPerReplayWhateverItsLength) {
  const int64_t n = 256;
  DeviceBuffer x(dev(), n * 4), y(dev(), n * 4);
  ops::fill(dev(), desc(x.address, DType::kF32, {n}), Scalar::from_double(1.0));
  for (int steps : {1, 40}) {
    begin_capture(dev());
    record_chain(dev(), x.address, y.address, n, steps);
    auto graph = end_capture(dev());
    // An input copy recorded before the replay goes in the same submission.
    ops::fill(dev(), desc(x.address, DType::kF32, {n}), Scalar::from_double(0.0));
    const uint64_t before = dev().stream().submissions();
    graph->replay();
    EXPECT_EQ(dev().stream().submissions() - before, 1u) << steps << " steps";
    auto out = download<float>(dev(), y.address, n);
    ASSERT_EQ(out[0], chain(0.0f, steps));
  }
}

TEST_F(GraphTest, HostWorkInCaptureRaisesAndTheCaptureEnds) {
  DeviceBuffer x(dev(), 1024);
  std::vector<uint8_t> host(1024);
  begin_capture(dev());
  EXPECT_TRUE(capturing(dev()));
  EXPECT_THROW(dev().stream().download(x.address, host.data(), 1024), CaptureError);
  EXPECT_THROW(dev().stream().upload(host.data(), x.address, 1024), CaptureError);
  EXPECT_THROW(dev().synchronize(), CaptureError);
  EXPECT_THROW(dev().stream().flush(), CaptureError);
  EXPECT_THROW(begin_capture(dev()), CaptureError);
  auto graph = end_capture(dev());
  EXPECT_FALSE(capturing(dev()));
  EXPECT_THROW(end_capture(dev()), CaptureError);
  dev().synchronize();  // the stream works again
}

TEST_F(GraphTest, BudgetSlicesInCaptureRaise) {
  // A GEMM larger than the submit budget runs in slices, each submitted on its own: that cannot
  // be one replayed submission.
  SubmitBudgetScope budget(dev().stream(), 1e-9);
  const int64_t m = 16, n = 16, k = 16;
  DeviceBuffer a(dev(), m * k * 4), b(dev(), k * n * 4), c(dev(), m * n * 4);
  ops::GemmDesc g;
  g.m = m, g.n = n, g.k = k;
  g.a = {a.address, k, 1};
  g.b = {b.address, n, 1};
  g.c = {c.address, n, 1};
  begin_capture(dev());
  EXPECT_THROW(ops::gemm(dev(), g), CaptureError);
  end_capture(dev());
}

TEST_F(GraphTest, ReplayInCaptureRaises) {
  begin_capture(dev());
  auto first = end_capture(dev());
  begin_capture(dev());
  EXPECT_THROW(first->replay(), CaptureError);
  end_capture(dev());
}

TEST_F(GraphTest, PoolKeepsCapturedMemoryUntilTheGraphGoes) {
  const uint64_t bytes = 64 << 10;
  const uint64_t before = dev().memory_stats().allocated;
  begin_capture(dev());
  const uint64_t inner = dev().allocate(bytes);
  ops::fill(dev(), desc(inner, DType::kF32, {int64_t(bytes / 4)}), Scalar::from_double(2.0));
  dev().free(inner);  // back to the graph's pool, not to the caching allocator
  const uint64_t again = dev().allocate(bytes);  // the pool reuses its own block in the capture
  EXPECT_EQ(again, inner);
  dev().free(again);
  auto graph = end_capture(dev());
  graph->replay();
  EXPECT_EQ(dev().memory_stats().allocated, before + bytes);
  const uint64_t outside = dev().allocate(bytes);
  EXPECT_NE(outside, inner);  // a replay still writes `inner`
  dev().free(outside);
  graph.reset();
  EXPECT_EQ(dev().memory_stats().allocated, before);
}

TEST_F(GraphTest, FreesOfOlderMemoryWaitForThePool) {
  const uint64_t bytes = 8 << 10;
  const uint64_t before = dev().memory_stats().allocated;
  const uint64_t older = dev().allocate(bytes);
  auto pool = create_capture_pool(dev());
  begin_capture(dev(), pool);
  ops::fill(dev(), desc(older, DType::kF32, {int64_t(bytes / 4)}), Scalar::from_double(1.0));
  dev().free(older);  // the graph writes it: it stays allocated while the pool lives
  auto graph = end_capture(dev());
  graph->replay();
  EXPECT_EQ(dev().memory_stats().allocated, before + bytes);
  graph.reset();
  EXPECT_EQ(dev().memory_stats().allocated, before + bytes);  // the handle keeps the pool
  pool.reset();
  EXPECT_EQ(dev().memory_stats().allocated, before);
}

}  // namespace vkml::testing
