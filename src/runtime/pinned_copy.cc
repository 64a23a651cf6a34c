// Copies between pinned host memory and device memory, recorded on the stream as device copies
// from or into the pinned block's VkBuffer.
#include <string>

#include "host_allocator.h"
#include "vkml/errors.h"
#include "vkml/host_memory.h"

namespace vkml {

namespace {

uint64_t pinned_or_throw(Device& dev, const void* host) {
  const uint64_t address = pinned_address(dev, host);
  if (address == 0) {
    throw InvalidArgument("vkml: host memory is not pinned memory of vkml device " +
                          std::to_string(dev.index()));
  }
  return address;
}

}  // namespace

void upload_pinned(Device& dev, const void* host, uint64_t dst, uint64_t bytes) {
  if (bytes == 0) return;
  dev.stream().copy(pinned_or_throw(dev, host), dst, bytes);
  record_host_use(dev, host);
  host_allocator(dev).count_copy();
}

void download_pinned(Device& dev, uint64_t src, void* host, uint64_t bytes) {
  if (bytes == 0) return;
  // Stream::copy follows a copy into pinned memory with a barrier that makes it visible to the
  // host once the stream's timeline passes it.
  dev.stream().copy(src, pinned_or_throw(dev, host), bytes);
  record_host_use(dev, host);
  host_allocator(dev).count_copy();
}

}  // namespace vkml
