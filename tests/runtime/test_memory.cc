#include <algorithm>
#include <set>

#include "test_util.h"

namespace vkml::testing {

using MemoryTest = DeviceTest;

TEST_F(MemoryTest, AllocationsAreAlignedDisjointAndReused) {
  dev().synchronize();
  dev().empty_cache();
  MemoryStats base = dev().memory_stats();
  std::vector<std::pair<uint64_t, uint64_t>> live;
  for (uint64_t n : {1ull, 100ull, 513ull, 4096ull, 1000000ull, 3ull << 20, 12ull << 20}) {
    uint64_t a = dev().allocate(n);
    ASSERT_NE(a, 0u);
    EXPECT_EQ(a % 256, 0u);
    EXPECT_TRUE(dev().owns(a));
    EXPECT_TRUE(dev().owns(a + n - 1));
    live.emplace_back(a, n);
  }
  std::sort(live.begin(), live.end());
  for (size_t i = 1; i < live.size(); ++i) {
    EXPECT_LE(live[i - 1].first + live[i - 1].second, live[i].first) << "overlapping blocks";
  }
  MemoryStats mid = dev().memory_stats();
  EXPECT_GT(mid.allocated, base.allocated);
  EXPECT_GE(mid.reserved, mid.allocated);
  EXPECT_EQ(mid.num_allocs - base.num_allocs, live.size());
  // A freed block of the same size is handed out again without a new driver allocation.
  uint64_t a = live[2].first, n = live[2].second;
  dev().free(a);
  uint64_t driver_allocs = dev().memory_stats().num_driver_allocs;
  uint64_t b = dev().allocate(n);
  EXPECT_EQ(a, b);
  EXPECT_EQ(dev().memory_stats().num_driver_allocs, driver_allocs);
  for (auto& [addr, size] : live) dev().free(addr);
  MemoryStats after = dev().memory_stats();
  EXPECT_EQ(after.allocated, base.allocated);
  EXPECT_GE(after.peak_allocated, mid.allocated);
  dev().empty_cache();
  EXPECT_EQ(dev().memory_stats().reserved, base.reserved);
  EXPECT_EQ(dev().allocate(0), 0u);
}

TEST_F(MemoryTest, ResetPeakFollowsCurrentUsage) {
  uint64_t a = dev().allocate(5 << 20);
  dev().free(a);
  dev().reset_peak_memory_stats();
  MemoryStats s = dev().memory_stats();
  EXPECT_EQ(s.peak_allocated, s.allocated);
}

TEST_F(MemoryTest, OutOfMemoryIsTypedAndRecoverable) {
  // Larger than any buffer the device can create.
  uint64_t huge = std::max<uint64_t>(dev().caps().max_buffer_size, 1ull << 40) * 2;
  try {
    dev().allocate(huge);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(e.requested, huge);
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos);
  }
  // A limit on reserved memory behaves like a full device, and the cache is freed first.
  dev().empty_cache();
  uint64_t reserved = dev().memory_stats().reserved;
  dev().set_memory_limit(reserved + (24ull << 20));
  uint64_t ok = dev().allocate(16ull << 20);
  try {
    dev().allocate(16ull << 20);
    FAIL() << "expected OutOfMemoryError under the limit";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(e.requested, 16ull << 20);
    EXPECT_GE(e.allocated, 16ull << 20);
    EXPECT_NE(std::string(e.what()).find("empty_cache"), std::string::npos) << e.what();
  }
  dev().free(ok);
  uint64_t again = dev().allocate(16ull << 20);  // reuses the freed block under the limit
  EXPECT_NE(again, 0u);
  dev().free(again);
  dev().set_memory_limit(0);
  uint64_t after = dev().allocate(40ull << 20);
  EXPECT_NE(after, 0u);
  dev().free(after);
  EXPECT_GE(dev().memory_stats().num_ooms, 2u);
}

TEST_F(MemoryTest, RoundTripsOddSizesAndOffsets) {
  uint32_t seed = 1;
  for (uint64_t n : {1ull, 3ull, 17ull, 1000ull, 65537ull, (3ull << 20) + 5}) {
    for (uint64_t off : {0ull, 1ull, 7ull}) {
      DeviceBuffer a(dev(), n + off), b(dev(), n + 13);
      auto host = random_bytes(n, seed++);
      dev().stream().upload(host.data(), a.address + off, n);
      dev().stream().copy(a.address + off, b.address + 13 - (off % 5), n);
      auto back = download<uint8_t>(dev(), b.address + 13 - (off % 5), n);
      ASSERT_EQ(back, host) << "n=" << n << " off=" << off;
      auto direct = download<uint8_t>(dev(), a.address + off, n);
      ASSERT_EQ(direct, host);
    }
  }
}

TEST_F(MemoryTest, LargeTransfersCrossStagingChunks) {
  uint64_t n = (70ull << 20) + 12;  // more than two 32 MiB staging chunks
  DeviceBuffer a(dev(), n);
  auto host = random_bytes(n, 42);
  dev().stream().upload(host.data(), a.address, n);
  auto back = download<uint8_t>(dev(), a.address, n);
  EXPECT_TRUE(back == host);
}

TEST_F(MemoryTest, FillWritesPattern) {
  DeviceBuffer a(dev(), 4096);
  auto host = random_bytes(4096, 3);
  dev().stream().upload(host.data(), a.address, 4096);
  dev().stream().fill(a.address + 64, 1024, 0xA5A5A5A5u);
  auto back = download<uint8_t>(dev(), a.address, 4096);
  for (size_t i = 0; i < 4096; ++i) {
    uint8_t expect = (i >= 64 && i < 64 + 1024) ? 0xA5 : host[i];
    ASSERT_EQ(back[i], expect) << i;
  }
}

}  // namespace vkml::testing

namespace vkml::testing {

// Uploads beyond the staging cap reuse staging buffers: recorded copies must be submitted first.
TEST_F(MemoryTest, UploadsBeyondStagingCapKeepTheirData) {
  const uint64_t n = 100ull << 20;
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  std::vector<std::vector<uint8_t>> hosts;
  for (uint32_t i = 0; i < 3; ++i) {
    bufs.push_back(std::make_unique<DeviceBuffer>(dev(), n));
    hosts.push_back(random_bytes(n, 100 + i));
    dev().stream().upload(hosts.back().data(), bufs.back()->address, n);
  }
  for (size_t i = 0; i < bufs.size(); ++i) {
    EXPECT_TRUE(download<uint8_t>(dev(), bufs[i]->address, n) == hosts[i]) << i;
  }
}

}  // namespace vkml::testing
