#include "runtime/hazard_tracker.h"
#include "test_util.h"

namespace vkml::testing {

TEST(HazardTracker, BarriersOnlyForRealHazards) {
  HazardTracker h;
  MemRange a{1000, 100}, b{2000, 100}, a_tail{1090, 20}, c{5000, 8};
  EXPECT_FALSE(h.needs_barrier({}, {&a, 1}));
  h.commit({}, {&a, 1});
  EXPECT_FALSE(h.needs_barrier({&b, 1}, {&c, 1}));       // disjoint
  EXPECT_TRUE(h.needs_barrier({&a_tail, 1}, {}));         // read after write
  EXPECT_TRUE(h.needs_barrier({}, {&a_tail, 1}));         // write after write
  h.commit({&b, 1}, {&c, 1});
  EXPECT_TRUE(h.needs_barrier({}, {&b, 1}));              // write after read
  EXPECT_FALSE(h.needs_barrier({&b, 1}, {}));             // read after read
  h.clear();
  EXPECT_FALSE(h.needs_barrier({&a, 1}, {&b, 1}));
  MemRange empty{1000, 0};
  h.commit({}, {&a, 1});
  EXPECT_FALSE(h.needs_barrier({&empty, 1}, {}));
}

using StreamTest = DeviceTest;

// Forces the strided shader path by copying through a non-contiguous (stride 2) view.
static void strided_copy(Device& dev, uint64_t dst, uint64_t src, int64_t n) {
  ops::copy(dev, desc(dst, DType::kI32, {n}, {2}), desc(src, DType::kI32, {n}, {2}));
}

TEST_F(StreamTest, DependentDispatchesStayOrdered) {
  const int64_t n = 1000;
  DeviceBuffer x(dev(), n * 8), y(dev(), n * 8);
  std::vector<int32_t> host(n * 2);
  for (int64_t i = 0; i < n * 2; ++i) host[i] = static_cast<int32_t>(i * 7 + 1);
  dev().stream().upload(host.data(), x.address, n * 8);
  ops::fill(dev(), desc(y.address, DType::kI32, {n * 2}), Scalar::from_int(-1));
  uint64_t barriers = dev().stream().barriers_recorded();
  // x -> y -> x -> y ...: each copy reads what the previous one wrote.
  const int rounds = 150;
  for (int r = 0; r < rounds; ++r) {
    bool forward = r % 2 == 0;
    strided_copy(dev(), forward ? y.address : x.address, forward ? x.address : y.address, n);
  }
  auto out = download<int32_t>(dev(), y.address, n * 2);
  for (int64_t i = 0; i < n * 2; ++i) {
    int32_t expect = i % 2 == 0 ? host[i] : -1;  // odd elements were never copied
    ASSERT_EQ(out[i], expect) << i;
  }
  uint64_t recorded = dev().stream().barriers_recorded() - barriers;
  EXPECT_GE(recorded, static_cast<uint64_t>(rounds));
  EXPECT_LE(recorded, static_cast<uint64_t>(rounds) + 1);
}

TEST_F(StreamTest, IndependentDispatchesShareNoBarriers) {
  const int k = 12;
  std::vector<std::unique_ptr<DeviceBuffer>> src, dst;
  for (int i = 0; i < k; ++i) {
    src.push_back(std::make_unique<DeviceBuffer>(dev(), 4096));
    dst.push_back(std::make_unique<DeviceBuffer>(dev(), 4096));
  }
  dev().synchronize();
  uint64_t before = dev().stream().barriers_recorded();
  for (int i = 0; i < k; ++i) {
    ops::fill(dev(), desc(src[i]->address, DType::kI32, {512}, {2}), Scalar::from_int(i + 5));
  }
  uint64_t after_fills = dev().stream().barriers_recorded();
  for (int i = 0; i < k; ++i) strided_copy(dev(), dst[i]->address, src[i]->address, 512);
  uint64_t after_copies = dev().stream().barriers_recorded();
  // The fills touch disjoint memory; the copies need one barrier after all the fills.
  EXPECT_LE(after_fills - before, 1u);
  EXPECT_EQ(after_copies - after_fills, 1u);
  for (int i = 0; i < k; ++i) {
    auto out = download<int32_t>(dev(), dst[i]->address, 1024);
    for (int j = 0; j < 1024; j += 2) ASSERT_EQ(out[j], i + 5);
  }
}

TEST_F(StreamTest, SubmitsInBatchesWithoutWaiting) {
  DeviceBuffer a(dev(), 8192), b(dev(), 8192);
  ops::fill(dev(), desc(a.address, DType::kI32, {2048}), Scalar::from_int(3));
  dev().synchronize();
  uint64_t submits = dev().stream().submits();
  uint64_t completed = dev().stream().completed_value();
  for (int i = 0; i < 200; ++i) strided_copy(dev(), b.address, a.address, 1024);
  // Recording 200 dispatches submitted full batches on the way, without the host waiting.
  EXPECT_GT(dev().stream().pending_value(), completed + 1);
  uint64_t v = dev().stream().flush();
  dev().stream().wait(v);
  EXPECT_TRUE(dev().stream().query(v));
  EXPECT_GE(dev().stream().submits() - submits, 1u);
  auto out = download<int32_t>(dev(), b.address, 2048);
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[2046], 3);
}

TEST_F(StreamTest, ParameterBlocksSurviveManySubmissions) {
  // Enough strided fills (each with its own parameter block) to cycle through several chunks.
  const int count = 2500;
  DeviceBuffer a(dev(), count * 16);
  uint64_t dispatches = dev().stream().dispatches_recorded();
  for (int i = 0; i < count; ++i) {
    ops::fill(dev(), desc(a.address + i * 16, DType::kI32, {2}, {2}), Scalar::from_int(i));
    ops::fill(dev(), desc(a.address + i * 16 + 4, DType::kI32, {2}, {2}), Scalar::from_int(-i));
  }
  EXPECT_EQ(dev().stream().dispatches_recorded() - dispatches, 2u * count);
  auto out = download<int32_t>(dev(), a.address, count * 4);
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(out[4 * i], i);
    ASSERT_EQ(out[4 * i + 1], -i);
    ASSERT_EQ(out[4 * i + 2], i);
    ASSERT_EQ(out[4 * i + 3], -i);
  }
}

TEST_F(StreamTest, TimestampsMeasureWork) {
  ASSERT_TRUE(dev().caps().timestamps) << "device reports no compute timestamps";
  DeviceBuffer a(dev(), 1 << 20);
  uint32_t t0 = dev().stream().write_timestamp();
  ops::fill(dev(), desc(a.address, DType::kF32, {1 << 17}, {2}), Scalar::from_double(1.5));
  uint32_t t1 = dev().stream().write_timestamp();
  double ns0 = dev().stream().read_timestamp_ns(t0);
  double ns1 = dev().stream().read_timestamp_ns(t1);
  EXPECT_GT(ns1, ns0);
}

TEST_F(StreamTest, CostlyWorkIsSubmittedInPieces) {
  // 40 heavy dispatches are fewer than one 64-command batch, but their estimated cost passes the
  // submit budget every 4 fills: the stream submits 10 pieces on its own, without a host wait.
  Stream& s = dev().stream();
  const uint64_t old_limit = s.submit_cost_limit();
  const bool old_ramp = s.submit_ramp();
  s.set_submit_ramp(false);  // the batches after the synchronisation below would ramp on GPUs
  const int64_t n = 1 << 18;
  DeviceBuffer a(dev(), n * 8);
  ops::fill(dev(), desc(a.address, DType::kI32, {2 * n}), Scalar::from_int(-1));
  dev().synchronize();
  auto record = [&](uint64_t limit) {
    s.set_submit_cost_limit(limit);
    uint64_t by_cost = s.cost_submissions(), completed = s.completed_value();
    for (int i = 0; i < 40; ++i) {
      ops::fill(dev(), desc(a.address, DType::kI32, {n}, {2}), Scalar::from_int(i));  // n threads
    }
    uint64_t pieces = s.cost_submissions() - by_cost;
    EXPECT_LE(s.completed_value(), completed + pieces) << "no host wait while recording";
    return pieces;
  };
  uint64_t pieces = record(4 * n);
  EXPECT_EQ(pieces, 10u);
  auto out = download<int32_t>(dev(), a.address, 2 * n);
  EXPECT_EQ(out[0], 39);
  EXPECT_EQ(out[2 * n - 2], 39);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(record(0), 0u) << "a zero budget turns the cost rule off";
  s.set_submit_cost_limit(old_limit);
  s.set_submit_ramp(old_ramp);
  dev().synchronize();
}

TEST_F(StreamTest, BatchesRampUpAfterAHostWait) {
  // After a synchronisation the GPU idles: batches of 1, 2, 4, ... commands go at once, so it
  // starts on the first while the host records the rest; cheap commands (under 2^20 words
  // filled) wait for their batch. Off, nothing goes before 64 commands.
  Stream& s = dev().stream();
  const bool old_ramp = s.submit_ramp();
  const int64_t n = 1 << 20;  // a fill of n words costs n
  DeviceBuffer a(dev(), n * 4);
  s.set_submit_ramp(true);
  dev().synchronize();
  uint64_t ramped = s.ramp_submissions(), submitted = s.submissions();
  for (int i = 0; i < 7; ++i) {
    ops::fill(dev(), desc(a.address, DType::kI32, {n}), Scalar::from_int(i));
  }
  EXPECT_EQ(s.ramp_submissions() - ramped, 3u) << "batches of 1, 2 and 4 commands";
  EXPECT_EQ(s.submissions() - submitted, 3u);
  dev().synchronize();
  ramped = s.ramp_submissions();
  for (int i = 0; i < 7; ++i) {
    ops::fill(dev(), desc(a.address, DType::kI32, {n / 64}), Scalar::from_int(i));
  }
  EXPECT_EQ(s.ramp_submissions(), ramped) << "7 small fills cost 7/64 of the threshold";
  s.set_submit_ramp(false);
  dev().synchronize();
  const uint64_t before = s.submissions();
  for (int i = 0; i < 4; ++i) {
    ops::fill(dev(), desc(a.address, DType::kI32, {n}), Scalar::from_int(10 + i));
  }
  EXPECT_EQ(s.submissions(), before) << "the ramp off: nothing goes before the batch fills";
  EXPECT_EQ(download<int32_t>(dev(), a.address, n / 64)[n / 64 - 1], 13);
  s.set_submit_ramp(old_ramp);
}

}  // namespace vkml::testing
