// Device memory: a caching suballocator over large VkBuffers addressed by buffer device address.
#pragma once
#include <cstdint>

namespace vkml {

struct MemoryStats {
  uint64_t allocated = 0;       // bytes in live allocations (rounded sizes)
  uint64_t reserved = 0;        // bytes held from the driver, cached or in use
  uint64_t peak_allocated = 0;
  uint64_t peak_reserved = 0;
  uint64_t requested = 0;       // bytes asked for by live allocations (unrounded)
  uint64_t num_allocs = 0;      // allocate() calls since start / reset
  uint64_t num_frees = 0;
  uint64_t num_segments = 0;    // driver allocations alive
  uint64_t num_driver_allocs = 0;
  uint64_t num_driver_frees = 0;
  uint64_t driver_alloc_ns = 0;  // time in the driver's allocations (memory, buffer, binding)
  uint64_t num_ooms = 0;
  uint64_t host_spilled = 0;    // bytes of segments placed in host memory after device memory ran out
};

// Where an address lives: its VkBuffer and the offset inside it.
struct BufferSlice {
  uint64_t buffer = 0;  // VkBuffer handle
  uint64_t offset = 0;
  uint64_t segment_address = 0;
  uint64_t segment_size = 0;
  void* mapped = nullptr;  // host pointer to the segment's start when host-visible
};

}  // namespace vkml
