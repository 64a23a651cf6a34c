// Pinned host memory: the caching host allocator and the stream's copies to and from it.
#include <algorithm>
#include <cstring>

#include "test_util.h"
#include "vkml/host_memory.h"

namespace vkml::testing {

using PinnedMemoryTest = DeviceTest;

TEST_F(PinnedMemoryTest, BlocksAreMappedTracedAndCached) {
  dev().synchronize();
  empty_host_cache(dev());
  const HostMemoryStats base = host_memory_stats(dev());
  EXPECT_EQ(allocate_host(dev(), 0), nullptr);
  auto* p = static_cast<uint8_t*>(allocate_host(dev(), 5000));
  ASSERT_NE(p, nullptr);
  std::memset(p, 0x5a, 5000);  // mapped: the host writes it directly
  EXPECT_EQ(pinned_host_device(p), dev().index());
  EXPECT_EQ(pinned_host_device(p + 4999), dev().index());
  EXPECT_NE(pinned_address(dev(), p + 17), 0u);
  EXPECT_EQ(pinned_address(dev(), p + 17), pinned_address(dev(), p) + 17);
  int on_stack = 0;
  EXPECT_EQ(pinned_host_device(&on_stack), -1);
  EXPECT_EQ(pinned_address(dev(), &on_stack), 0u);
  HostMemoryStats mid = host_memory_stats(dev());
  EXPECT_EQ(mid.allocated - base.allocated, 8192u);  // rounded up to a power of two
  EXPECT_EQ(mid.num_allocs - base.num_allocs, 1u);
  // Freed with no copy pending: the next request of its size gets it back.
  free_host(dev(), p);
  EXPECT_EQ(host_memory_stats(dev()).allocated, base.allocated);
  void* q = allocate_host(dev(), 6000);
  EXPECT_EQ(q, p);
  EXPECT_EQ(host_memory_stats(dev()).num_driver_allocs, mid.num_driver_allocs);
  free_host(dev(), q);
  empty_host_cache(dev());
  EXPECT_EQ(host_memory_stats(dev()).reserved, base.reserved);
}

TEST_F(PinnedMemoryTest, CopiesRoundTripWithoutStaging) {
  for (uint64_t n : {4ull, 1000ull, 65537ull, 3ull << 20}) {
    const auto data = random_bytes(n, static_cast<uint32_t>(n));
    auto* in = static_cast<uint8_t*>(allocate_host(dev(), n + 12));
    auto* out = static_cast<uint8_t*>(allocate_host(dev(), n + 12));
    std::memcpy(in + 12, data.data(), n);  // at an offset inside the block
    std::memset(out, 0, n + 12);
    DeviceBuffer buf(dev(), n);
    upload_pinned(dev(), in + 12, buf.address, n);
    download_pinned(dev(), buf.address, out + 4, n);
    dev().synchronize();
    EXPECT_EQ(std::memcmp(out + 4, data.data(), n), 0) << n << " bytes";
    free_host(dev(), in);
    free_host(dev(), out);
  }
}

TEST_F(PinnedMemoryTest, BlockLargerThanTheDeviceAllowsIsRefused) {
  const uint64_t limit = std::max(dev().caps().max_buffer_size, dev().caps().max_allocation_size);
  ASSERT_GT(limit, 0u);
  EXPECT_THROW(allocate_host(dev(), limit + 1), OutOfMemoryError);
}

TEST_F(PinnedMemoryTest, UnpinnedMemoryIsRefused) {
  std::vector<uint8_t> host(64);
  DeviceBuffer buf(dev(), 64);
  EXPECT_THROW(upload_pinned(dev(), host.data(), buf.address, 64), InvalidArgument);
  EXPECT_THROW(download_pinned(dev(), buf.address, host.data(), 64), InvalidArgument);
}

TEST_F(PinnedMemoryTest, FreedBlockIsNotReusedWhileACopyReadsIt) {
  constexpr uint64_t n = 1 << 20;
  const auto data = random_bytes(n, 7);
  auto* p = static_cast<uint8_t*>(allocate_host(dev(), n));
  std::memcpy(p, data.data(), n);
  DeviceBuffer buf(dev(), n);
  upload_pinned(dev(), p, buf.address, n);  // recorded, not yet complete
  free_host(dev(), p);
  auto* q = static_cast<uint8_t*>(allocate_host(dev(), n));
  EXPECT_NE(q, p) << "a block with a pending copy was handed out again";
  std::memset(q, 0xee, n);
  std::vector<uint8_t> back(n);
  dev().stream().download(buf.address, back.data(), n);
  EXPECT_EQ(back, data);
  // Once the copy has completed, the block is reused.
  free_host(dev(), q);
  void* r = allocate_host(dev(), n);
  EXPECT_TRUE(r == p || r == q);
  free_host(dev(), r);
}

TEST_F(PinnedMemoryTest, CopiesReturnBeforeTheyComplete) {
  constexpr uint64_t n = 1 << 20;
  auto* p = static_cast<uint8_t*>(allocate_host(dev(), n));
  std::memset(p, 1, n);
  DeviceBuffer buf(dev(), n);
  dev().synchronize();
  const uint64_t before = dev().stream().completed_value();
  upload_pinned(dev(), p, buf.address, n);
  download_pinned(dev(), buf.address, p, n);
  // Nothing was submitted or waited for: the copies sit in the recorded batch.
  EXPECT_EQ(dev().stream().completed_value(), before);
  EXPECT_GT(dev().stream().pending_value(), before);
  dev().synchronize();
  free_host(dev(), p);
}

}  // namespace vkml::testing
