// The memory of graph captures (vkml/graph.h): blocks kept out of the caching allocator while
// a graph may replay into them. Device::allocate and Device::free route through the pools.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "vkml/graph.h"
#include "vkml/runtime.h"

namespace vkml {

class CapturePool {
 public:
  explicit CapturePool(Device& dev) : dev_(dev) {}
  // Frees its free blocks and the deferred frees through Device::free (no pool claims them
  // any more). Blocks still in use become ordinary allocations.
  ~CapturePool();
  CapturePool(const CapturePool&) = delete;
  CapturePool& operator=(const CapturePool&) = delete;

  // A block of this pool freed earlier that fits (up to twice the size); 0 when none.
  uint64_t reuse(uint64_t bytes);
  // A block the caching allocator gave for this pool.
  void adopt(uint64_t address, uint64_t bytes);
  // Keeps `address` for this pool's later allocations when it is one of its blocks; returns
  // whether it was.
  bool take_back(uint64_t address);
  // A block of the caching allocator freed while capturing: freed when the pool goes.
  void defer_free(uint64_t address);

 private:
  static uint64_t rounded(uint64_t bytes) { return (bytes + 511) & ~uint64_t{511}; }
  Device& dev_;
  std::mutex mu_;
  std::unordered_map<uint64_t, uint64_t> sizes_;  // every block of the pool, by address
  std::multimap<uint64_t, uint64_t> free_;        // size -> address of free blocks
  std::vector<uint64_t> deferred_;
};

}  // namespace vkml
