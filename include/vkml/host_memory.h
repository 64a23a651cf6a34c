// Pinned host memory: host-visible, coherent memory mapped for its whole life, which copies on a
// device's stream read and write directly (no staging copy, no host wait). A caching allocator
// per device, in the style of PyTorch's CachingHostAllocator: blocks round up to a power of two,
// and a freed block is reused only once the copies recorded on it have completed.
#pragma once
#include <cstdint>

#include "vkml/runtime.h"

namespace vkml {

struct HostMemoryStats {
  uint64_t allocated = 0;  // bytes in live blocks (rounded sizes)
  uint64_t reserved = 0;   // bytes of every block, live or cached
  uint64_t peak_allocated = 0;
  uint64_t num_allocs = 0;  // allocate_host() calls
  uint64_t num_frees = 0;
  uint64_t num_blocks = 0;  // blocks alive, live or cached
  uint64_t num_driver_allocs = 0;
  uint64_t num_driver_frees = 0;
  uint64_t copies_recorded = 0;  // upload_pinned() and download_pinned() calls
};

// Pinned host memory of `dev`, mapped; nullptr for 0 bytes. Throws OutOfMemoryError.
void* allocate_host(Device& dev, uint64_t bytes);
void free_host(Device& dev, void* ptr);

// The index of the device whose pinned memory holds `ptr`; -1 when none does. Creates no device.
int pinned_host_device(const void* ptr);
// The device address of pinned host pointer `ptr`; 0 when it is not pinned memory of `dev`.
uint64_t pinned_address(Device& dev, const void* ptr);
// The pinned block holding `ptr` is not reused before the work recorded so far on `dev`'s
// stream completes (the host allocator's record_event).
void record_host_use(Device& dev, const void* ptr);

// Copies between pinned host memory of `dev` and its device memory, recorded on its stream as a
// device copy from or into the pinned block's buffer: they return at once, and the data is
// there once the stream passes its pending_value() (an event or synchronize()). The block is
// kept from reuse until then. Throws InvalidArgument when `host` is not pinned memory of `dev`.
void upload_pinned(Device& dev, const void* host, uint64_t dst, uint64_t bytes);
void download_pinned(Device& dev, uint64_t src, void* host, uint64_t bytes);

HostMemoryStats host_memory_stats(Device& dev);
void reset_peak_host_memory_stats(Device& dev);
// Waits for the stream, then returns cached blocks to the driver.
void empty_host_cache(Device& dev);

}  // namespace vkml
