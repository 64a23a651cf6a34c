// Caching suballocator: few large driver allocations, split into blocks, reused by size.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "vkml/device.h"
#include "vkml/memory.h"
#include "vulkan_device.h"

namespace vkml {

class Allocator {
 public:
  // `synchronize` waits for all GPU work; needed before memory goes back to the driver.
  Allocator(VulkanDevice& vk, const DeviceCaps& caps, std::function<void()> synchronize);
  ~Allocator();

  uint64_t allocate(uint64_t bytes);
  void free(uint64_t address);
  void empty_cache();
  MemoryStats stats() const;
  void reset_peak();
  BufferSlice resolve(uint64_t address) const;
  // Like resolve(); false when address lies in no segment.
  bool try_resolve(uint64_t address, BufferSlice* out) const;
  bool owns(uint64_t address) const;
  uint64_t limit() const { return limit_; }
  // Caps reserved bytes (0 = no cap), like CUDA's per-process memory fraction.
  void set_limit(uint64_t bytes) { limit_ = bytes; }

  static constexpr uint64_t kAlignment = 512;
  static constexpr uint64_t kSmallRequest = 1ull << 20;   // <= 1 MiB: small pool
  static constexpr uint64_t kSmallSegment = 2ull << 20;   // 2 MiB segments
  static constexpr uint64_t kLargeRequest = 10ull << 20;  // < 10 MiB: shared 20 MiB segments
  static constexpr uint64_t kLargeSegment = 20ull << 20;
  static constexpr uint64_t kSegmentRound = 2ull << 20;

 private:
  struct Segment;
  struct Block {
    uint64_t address = 0, size = 0, requested = 0;
    Segment* segment = nullptr;
    Block *prev = nullptr, *next = nullptr;
    bool free = true;
  };
  struct BySize {
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->address < b->address;
    }
  };
  struct Segment {
    RawBuffer raw;
    bool small = false, spilled = false;
    Block* first = nullptr;
  };

  Block* take_free_block(uint64_t size, bool small);
  Segment* new_segment(uint64_t size, bool small, uint64_t requested);
  void release_free_segments();
  void split(Block* b, uint64_t size, bool small);
  [[noreturn]] void throw_oom(uint64_t requested, const std::string& why);

  VulkanDevice& vk_;
  DeviceCaps caps_;
  std::function<void()> synchronize_;
  mutable std::mutex mu_;
  std::set<Block*, BySize> free_small_, free_large_;
  std::unordered_map<uint64_t, Block*> live_;
  std::map<uint64_t, Segment*> segments_;  // by base address
  MemoryStats stats_;
  uint64_t limit_ = 0;  // VKML_MEMORY_LIMIT: cap on reserved bytes (0 = none)
  bool spill_ = false;  // VKML_HOST_SPILL=1: use host memory when device memory is full
  bool spill_warned_ = false;
};

// Parses "512M", "2G", "1048576" into bytes; 0 when empty or invalid.
uint64_t parse_byte_size(const char* text);

}  // namespace vkml
