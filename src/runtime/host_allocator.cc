#include "host_allocator.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "vkml/errors.h"
#include "vkml/runtime.h"

namespace vkml {

namespace {

// Each device's host allocator. Devices are never destroyed (tensors freed during interpreter
// shutdown still return memory), and neither are these.
struct Registry {
  std::mutex mu;
  std::vector<std::pair<const Device*, HostAllocator*>> allocators;
};
Registry& registry() {
  static auto& r = *new Registry();
  return r;
}

HostAllocator* find(const Device& dev) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [d, a] : r.allocators) {
    if (d == &dev) return a;
  }
  return nullptr;
}

uint64_t block_size(uint64_t bytes) {
  uint64_t size = HostAllocator::kMinBlock;
  while (size < bytes) size <<= 1;
  return size;
}

}  // namespace

HostAllocator& host_allocator(Device& dev) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [d, a] : r.allocators) {
    if (d == &dev) return *a;
  }
  Device* device = &dev;
  const DeviceCaps& caps = dev.caps();
  uint64_t max_block = caps.max_buffer_size;
  if (caps.max_allocation_size && (!max_block || caps.max_allocation_size < max_block)) {
    max_block = caps.max_allocation_size;
  }
  auto* a = new HostAllocator(
      dev.vk(), max_block, [device] { return device->stream().completed_value(); },
      [device] { device->synchronize(); });
  r.allocators.emplace_back(&dev, a);
  return *a;
}

bool resolve_pinned(const Device& dev, uint64_t address, BufferSlice* out) {
  HostAllocator* a = find(dev);
  return a != nullptr && a->try_resolve(address, out);
}

int pinned_host_device(const void* ptr) {
  if (ptr == nullptr) return -1;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [d, a] : r.allocators) {
    if (a->contains(ptr)) return d->index();
  }
  return -1;
}

HostAllocator::HostAllocator(VulkanDevice& vk, uint64_t max_block,
                             std::function<uint64_t()> completed,
                             std::function<void()> synchronize)
    : vk_(vk), max_block_(max_block), completed_(std::move(completed)),
      synchronize_(std::move(synchronize)) {}

HostAllocator::~HostAllocator() {
  for (auto& [host, b] : by_host_) {
    vk_.destroy_buffer(b->raw);
    delete b;
  }
}

void* HostAllocator::allocate(uint64_t bytes) {
  if (bytes == 0) return nullptr;
  const uint64_t size = block_size(bytes);
  if (max_block_ && size > max_block_) {
    throw OutOfMemoryError("vkml: cannot pin " + std::to_string(bytes) + " bytes: a pinned block "
                               "of " + std::to_string(size) + " bytes is larger than the "
                               "device's largest buffer (" + std::to_string(max_block_) + " bytes)",
                           bytes, 0, 0, 0);
  }
  const uint64_t completed = completed_();  // outside mu_: the stream takes its own lock
  std::lock_guard<std::mutex> lock(mu_);
  Block* b = nullptr;
  for (auto [it, end] = cached_.equal_range(size); it != end; ++it) {
    if (it->second->busy_until <= completed) {
      b = it->second;
      cached_.erase(it);
      break;
    }
  }
  if (!b) {
    RawBuffer raw = vk_.create_buffer(size, vk_.staging_type, true);
    if (!raw && !cached_.empty()) {
      release_cached(completed);  // cached blocks of other sizes go back to the driver first
      raw = vk_.create_buffer(size, vk_.staging_type, true);
    }
    if (!raw) {
      throw OutOfMemoryError("vkml: out of pinned host memory: tried to allocate " +
                                 std::to_string(bytes) + " bytes (pinned " +
                                 std::to_string(stats_.reserved) + " bytes)",
                             bytes, stats_.allocated, stats_.reserved, 0);
    }
    b = new Block();
    b->raw = raw;
    by_host_[reinterpret_cast<uintptr_t>(raw.mapped)] = b;
    by_address_[raw.address] = b;
    stats_.reserved += size;
    stats_.num_blocks++;
    stats_.num_driver_allocs++;
  }
  b->live = true;
  stats_.allocated += size;
  stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  stats_.num_allocs++;
  return b->raw.mapped;
}

void HostAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_host_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == by_host_.end() || !it->second->live) {
    std::fprintf(stderr, "vkml: free of unknown pinned host pointer %p ignored\n", ptr);
    return;
  }
  Block* b = it->second;
  b->live = false;
  stats_.allocated -= b->raw.size;
  stats_.num_frees++;
  cached_.emplace(b->raw.size, b);
}

HostAllocator::Block* HostAllocator::block_at(uintptr_t host) const {
  auto it = by_host_.upper_bound(host);
  if (it == by_host_.begin()) return nullptr;
  --it;
  return host < it->first + it->second->raw.size ? it->second : nullptr;
}

void HostAllocator::record_use(const void* ptr, uint64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Block* b = block_at(reinterpret_cast<uintptr_t>(ptr))) {
    b->busy_until = std::max(b->busy_until, value);
  }
}

uint64_t HostAllocator::device_address(const void* ptr) const {
  const auto host = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mu_);
  const Block* b = block_at(host);
  return b ? b->raw.address + (host - reinterpret_cast<uintptr_t>(b->raw.mapped)) : 0;
}

bool HostAllocator::contains(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  return block_at(reinterpret_cast<uintptr_t>(ptr)) != nullptr;
}

bool HostAllocator::try_resolve(uint64_t address, BufferSlice* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_address_.upper_bound(address);
  if (it == by_address_.begin()) return false;
  --it;
  const RawBuffer& raw = it->second->raw;
  if (address >= raw.address + raw.size) return false;
  out->buffer = reinterpret_cast<uint64_t>(raw.buffer);
  out->offset = address - raw.address;
  out->segment_address = raw.address;
  out->segment_size = raw.size;
  out->mapped = raw.mapped;
  return true;
}

void HostAllocator::destroy(Block* b) {
  by_host_.erase(reinterpret_cast<uintptr_t>(b->raw.mapped));
  by_address_.erase(b->raw.address);
  stats_.reserved -= b->raw.size;
  stats_.num_blocks--;
  stats_.num_driver_frees++;
  vk_.destroy_buffer(b->raw);
  delete b;
}

void HostAllocator::release_cached(uint64_t completed) {
  for (auto it = cached_.begin(); it != cached_.end();) {
    if (it->second->busy_until <= completed) {
      destroy(it->second);
      it = cached_.erase(it);
    } else {
      ++it;
    }
  }
}

void HostAllocator::empty_cache() {
  synchronize_();
  const uint64_t completed = completed_();
  std::lock_guard<std::mutex> lock(mu_);
  release_cached(completed);
}

HostMemoryStats HostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void HostAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_allocated = stats_.allocated;
}

void HostAllocator::count_copy() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.copies_recorded++;
}

void* allocate_host(Device& dev, uint64_t bytes) {
  dev.vk().check_alive();
  return host_allocator(dev).allocate(bytes);
}
void free_host(Device& dev, void* ptr) { host_allocator(dev).free(ptr); }
uint64_t pinned_address(Device& dev, const void* ptr) {
  HostAllocator* a = find(dev);
  return a ? a->device_address(ptr) : 0;
}
void record_host_use(Device& dev, const void* ptr) {
  // The value is read after the copy was recorded: it covers the copy's submission even when
  // another thread submits in between.
  host_allocator(dev).record_use(ptr, dev.stream().pending_value());
}
HostMemoryStats host_memory_stats(Device& dev) { return host_allocator(dev).stats(); }
void reset_peak_host_memory_stats(Device& dev) { host_allocator(dev).reset_peak(); }
void empty_host_cache(Device& dev) { host_allocator(dev).empty_cache(); }

}  // namespace vkml
