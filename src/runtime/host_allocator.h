// Caching allocator of pinned host memory: host-visible, coherent VkBuffers mapped for their
// whole life, so the device's stream copies to and from them without a staging copy.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

#include "vkml/host_memory.h"
#include "vkml/memory.h"
#include "vulkan_device.h"

namespace vkml {

// Blocks are rounded up to a power of two (at least kMinBlock) and each is one VkBuffer with its
// own memory. A freed block is cached by size and handed out again only once the stream has
// completed every copy recorded on it (record_use), as PyTorch's CachingHostAllocator does with
// the events of a freed pinned block.
class HostAllocator {
 public:
  // `completed` returns the stream's completed timeline value; `synchronize` waits for all work.
  // `max_block` is the largest buffer the device allows (0: no limit).
  HostAllocator(VulkanDevice& vk, uint64_t max_block, std::function<uint64_t()> completed,
                std::function<void()> synchronize);
  ~HostAllocator();
  HostAllocator(const HostAllocator&) = delete;
  HostAllocator& operator=(const HostAllocator&) = delete;

  void* allocate(uint64_t bytes);
  void free(void* ptr);
  // The block holding `ptr` is not reused before the stream passes timeline value `value`.
  void record_use(const void* ptr, uint64_t value);
  // The device address of host pointer `ptr`; 0 when it lies in no block of this allocator.
  uint64_t device_address(const void* ptr) const;
  // Resolves a device address inside a block; false when it lies in none.
  bool try_resolve(uint64_t address, BufferSlice* out) const;
  bool contains(const void* ptr) const;
  // Waits for the stream, then returns every cached block to the driver.
  void empty_cache();
  HostMemoryStats stats() const;
  void reset_peak();
  void count_copy();

  static constexpr uint64_t kMinBlock = 4096;

 private:
  struct Block {
    RawBuffer raw;
    uint64_t busy_until = 0;  // timeline value of the last copy recorded on it
    bool live = false;
  };
  Block* block_at(uintptr_t host) const;  // the block whose mapped range holds `host`
  void destroy(Block* b);
  void release_cached(uint64_t completed);

  VulkanDevice& vk_;
  uint64_t max_block_;
  std::function<uint64_t()> completed_;
  std::function<void()> synchronize_;
  mutable std::mutex mu_;
  std::map<uintptr_t, Block*> by_host_;     // by mapped start
  std::map<uint64_t, Block*> by_address_;   // by device address
  std::multimap<uint64_t, Block*> cached_;  // freed blocks by size
  HostMemoryStats stats_;
};

// The host allocator of `dev`, created on first use; it lives as long as the process, like the
// device.
HostAllocator& host_allocator(Device& dev);
// Resolves a device address inside a pinned block of `dev`; false when it lies in none (or `dev`
// has no pinned memory).
bool resolve_pinned(const Device& dev, uint64_t address, BufferSlice* out);

}  // namespace vkml
