// Several host threads record work on one device (and on two devices' streams) at once:
// uploads, fills, strided copies, elementwise ops and downloads, with allocations, frees and
// cache flushes in between; every result is checked. `make tsan` runs this under ThreadSanitizer.
#include <atomic>
#include <string>
#include <thread>

#include "test_util.h"
#include "vkml/elementwise.h"

namespace vkml::testing {

namespace {

// One worker's loop: each round builds c = 2 * a[::2] + b on the device from host data and compares.
// Returns an empty string on success, else what went wrong.
std::string stress_rounds(Device& dev, uint32_t seed, int rounds) {
  std::mt19937 rng(seed);
  for (int r = 0; r < rounds; ++r) {
    // Odd, varying sizes so blocks of different size classes are split, merged and reused.
    const int64_t n = 1 + static_cast<int64_t>(rng() % 3000);
    std::vector<int32_t> a(2 * n), b(n);
    for (auto& v : a) v = static_cast<int32_t>(rng() % 2001) - 1000;
    for (auto& v : b) v = static_cast<int32_t>(rng() % 2001) - 1000;
    DeviceBuffer da(dev, a.size() * 4), db(dev, b.size() * 4), dc(dev, n * 4), dt(dev, n * 4);
    dev.stream().upload(a.data(), da.address, a.size() * 4);
    dev.stream().upload(b.data(), db.address, b.size() * 4);
    ops::fill(dev, desc(dc.address, DType::kI32, {n}), Scalar::from_int(-7));  // overwritten below
    // t = a[::2] (strided copy shader), c = t + b, then c = c + t (reads and writes c).
    ops::copy(dev, desc(dt.address, DType::kI32, {n}), desc(da.address, DType::kI32, {n}, {2}));
    ops::binary(dev, ops::BinaryOp::kAdd, desc(dc.address, DType::kI32, {n}),
                desc(dt.address, DType::kI32, {n}), desc(db.address, DType::kI32, {n}),
                Scalar::from_int(1));
    ops::binary(dev, ops::BinaryOp::kAdd, desc(dc.address, DType::kI32, {n}),
                desc(dc.address, DType::kI32, {n}), desc(dt.address, DType::kI32, {n}),
                Scalar::from_int(1));
    if (r % 3 == 0) {
      // Read back only some rounds: the others free buffers while their work is still queued.
      auto c = download<int32_t>(dev, dc.address, n);
      for (int64_t i = 0; i < n; ++i) {
        int32_t want = 2 * a[2 * i] + b[i];
        if (c[i] != want) {
          return "seed " + std::to_string(seed) + " round " + std::to_string(r) + " element " +
                 std::to_string(i) + ": " + std::to_string(c[i]) + " != " + std::to_string(want);
        }
      }
    }
    if (r % 7 == 3) dev.empty_cache();
    if (r % 5 == 1) (void)dev.memory_stats();
  }
  return "";
}

void run_workers(const std::vector<Device*>& devices, int threads, int rounds) {
  std::vector<std::string> errors(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        errors[t] = stress_rounds(*devices[t % devices.size()], 1000 + t, rounds);
      } catch (const std::exception& e) {
        errors[t] = std::string("thread ") + std::to_string(t) + " threw: " + e.what();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

}  // namespace

using ThreadsTest = DeviceTest;

TEST_F(ThreadsTest, ConcurrentRecordingOnOneStream) {
  uint64_t dispatches = dev().stream().dispatches_recorded();
  auto before = dev().memory_stats();
  run_workers({&dev()}, 6, 40);
  // 6 threads x 40 rounds x 2 adds at least (fills and one-element copies may be transfer commands).
  EXPECT_GE(dev().stream().dispatches_recorded() - dispatches, 6u * 40u * 2u);
  dev().synchronize();
  EXPECT_EQ(dev().memory_stats().allocated, before.allocated) << "every buffer was freed";
}

TEST_F(ThreadsTest, StatisticsReadWhileOtherThreadsRecord) {
  std::atomic<bool> done{false};
  uint64_t last = 0;
  bool monotonic = true;
  std::thread reader([&] {
    while (!done.load()) {
      uint64_t d = dev().stream().dispatches_recorded();
      (void)dev().stream().barriers_recorded();
      (void)dev().stream().submits();
      if (d < last) monotonic = false;
      last = d;
      (void)dev().stream().completed_value();
    }
  });
  run_workers({&dev()}, 3, 15);
  done = true;
  reader.join();
  EXPECT_TRUE(monotonic);
}

// A parameter block taken by one thread survives while other threads fill parameter chunks,
// submit and wait, until its dispatch is recorded (chunks are recycled only after that).
TEST_F(ThreadsTest, ParameterBlockOutlivesOtherThreadsSubmissions) {
  const int32_t magic[4] = {0x1234567, -89, 0x7eadbeef, 42};
  Stream& s = dev().stream();
  uint64_t block = s.params(magic, sizeof(magic));
  std::string churn_error;
  std::thread churn([&] {
    try {
      DeviceBuffer x(dev(), 64);
      // Each strided fill takes a parameter block: enough to fill several 256 KiB chunks.
      for (int i = 0; i < 6000; ++i) {
        ops::fill(dev(), desc(x.address, DType::kI32, {4}, {2}), Scalar::from_int(i));
        if (i % 500 == 0) dev().synchronize();
      }
      dev().synchronize();
    } catch (const std::exception& e) {
      churn_error = e.what();
    }
  });
  churn.join();
  ASSERT_EQ(churn_error, "");
  // The dispatch that reads the block: a strided copy of it (as int32 data) into a buffer.
  DeviceBuffer out(dev(), 32);
  ops::copy(dev(), desc(out.address, DType::kI32, {4}, {2}), desc(block, DType::kI32, {4}));
  auto got = download<int32_t>(dev(), out.address, 8);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[2 * i], magic[i]) << i;
}

// Two logical devices on one GPU (VKML_DEVICE_ORDER=0,0, as the runtime_two_devices ctest entry and
// `make tsan` run it): two streams and two allocators used from threads at once.
TEST_F(ThreadsTest, ConcurrentRecordingOnTwoStreams) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices (run with VKML_DEVICE_ORDER=0,0)";
  Device& second = device(1);
  uint64_t m1 = validation_message_count();
  run_workers({&dev(), &second}, 6, 30);
  second.synchronize();
  EXPECT_EQ(validation_message_count(), m1);
}

}  // namespace vkml::testing
