#include "allocator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "vkml/errors.h"
#include "vkml/config.h"

namespace vkml {

uint64_t parse_byte_size(const char* text) {
  if (!text || !*text) return 0;
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (end == text || v <= 0) return 0;
  switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
  }
  return static_cast<uint64_t>(v);
}

static uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

static std::string mib(uint64_t b) {
  std::ostringstream os;
  os.precision(2);
  os << std::fixed << static_cast<double>(b) / (1024.0 * 1024.0) << " MiB";
  return os.str();
}

Allocator::Allocator(VulkanDevice& vk, const DeviceCaps& caps, std::function<void()> sync)
    : vk_(vk), caps_(caps), synchronize_(std::move(sync)) {
  limit_ = static_cast<uint64_t>(config().memory_limit);
  spill_ = config().host_spill && vk_.spill_type >= 0;
}

Allocator::~Allocator() {
  for (auto& [addr, seg] : segments_) {
    for (Block* b = seg->first; b;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
    vk_.destroy_buffer(seg->raw);
    delete seg;
  }
}

void Allocator::split(Block* b, uint64_t size, bool small) {
  uint64_t rest = b->size - size;
  if (rest < (small ? kAlignment : kSmallRequest + 1)) return;  // keep large remainders only
  auto* tail = new Block();
  tail->address = b->address + size;
  tail->size = rest;
  tail->segment = b->segment;
  tail->prev = b;
  tail->next = b->next;
  if (b->next) b->next->prev = tail;
  b->next = tail;
  b->size = size;
  (small ? free_small_ : free_large_).insert(tail);
}

Allocator::Block* Allocator::take_free_block(uint64_t size, bool small) {
  auto& pool = small ? free_small_ : free_large_;
  Block key;
  key.size = size;
  key.address = 0;
  auto it = pool.lower_bound(&key);
  if (it == pool.end()) return nullptr;
  Block* b = *it;
  // Don't carve a small request out of a huge cached block: it would pin the whole segment.
  if (!small && size < kLargeRequest && b->size >= kLargeRequest * 4) return nullptr;
  pool.erase(it);
  split(b, size, small);
  return b;
}

Allocator::Segment* Allocator::new_segment(uint64_t size, bool small, uint64_t requested) {
  if (caps_.max_buffer_size && size > caps_.max_buffer_size) {
    throw_oom(requested, "larger than the device's maximum buffer size (" +
                             mib(caps_.max_buffer_size) + ")");
  }
  auto attempt = [&](int type) -> RawBuffer {
    if (limit_ && stats_.reserved + size > limit_) return {};
    bool map = vk_.type_host_coherent(type);
    auto t0 = std::chrono::steady_clock::now();
    RawBuffer r = vk_.create_buffer(size, type, map);
    stats_.driver_alloc_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  RawBuffer raw = attempt(vk_.device_type);
  if (!raw && !segments_.empty()) {
    // Give cached blocks back to the driver, then try once more.
    release_free_segments();
    raw = attempt(vk_.device_type);
  }
  bool spilled = false;
  if (!raw && spill_) {
    raw = vk_.create_buffer(size, vk_.spill_type, vk_.type_host_coherent(vk_.spill_type));
    spilled = static_cast<bool>(raw);
    if (spilled && !spill_warned_) {
      spill_warned_ = true;
      std::fprintf(stderr, "vkml: device memory is full; placing new tensors in host memory "
                           "(VKML_HOST_SPILL=1). Expect slower kernels.\n");
    }
  }
  if (!raw) throw_oom(requested, "the device has no more memory");
  auto* seg = new Segment();
  seg->raw = raw;
  seg->small = small;
  seg->spilled = spilled;
  auto* b = new Block();
  b->address = raw.address;
  b->size = size;
  b->segment = seg;
  seg->first = b;
  segments_[raw.address] = seg;
  stats_.reserved += size;
  stats_.num_segments++;
  stats_.num_driver_allocs++;
  if (spilled) stats_.host_spilled += size;
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
  return seg;
}

void Allocator::throw_oom(uint64_t requested, const std::string& why) {
  stats_.num_ooms++;
  uint64_t device_total = 0;
  if (vk_.device_type >= 0) {
    device_total = vk_.memory.memoryHeaps[vk_.memory.memoryTypes[vk_.device_type].heapIndex].size;
  }
  uint64_t cap = limit_ ? std::min(limit_, device_total) : device_total;
  uint64_t free_bytes = cap > stats_.reserved ? cap - stats_.reserved : 0;
  std::ostringstream os;
  os << "vkml: out of memory on " << caps_.name << ": tried to allocate " << mib(requested)
     << " (" << why << "). Allocated " << mib(stats_.allocated) << ", reserved "
     << mib(stats_.reserved) << ", free about " << mib(free_bytes);
  if (limit_) os << ", limit " << mib(limit_) << " (VKML_MEMORY_LIMIT)";
  os << ". Try a smaller batch, free tensors and call torch.vkml.empty_cache()";
  if (!spill_ && vk_.spill_type >= 0) os << ", or set VKML_HOST_SPILL=1 to use host memory";
  os << ".";
  throw OutOfMemoryError(os.str(), requested, stats_.allocated, stats_.reserved, free_bytes);
}

uint64_t Allocator::allocate(uint64_t bytes) {
  if (bytes == 0) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t size = round_up(bytes, kAlignment);
  bool small = size <= kSmallRequest;
  Block* b = take_free_block(size, small);
  if (!b) {
    uint64_t seg_size = small ? kSmallSegment
                              : (size < kLargeRequest ? kLargeSegment : round_up(size, kSegmentRound));
    Segment* seg = new_segment(seg_size, small, bytes);
    b = seg->first;
    split(b, size, small);
  }
  b->free = false;
  b->requested = bytes;
  live_[b->address] = b;
  stats_.allocated += b->size;
  stats_.requested += bytes;
  stats_.num_allocs++;
  stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  return b->address;
}

void Allocator::free(uint64_t address) {
  if (address == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(address);
  if (it == live_.end()) {
    std::fprintf(stderr, "vkml: free of unknown address 0x%llx ignored\n",
                 static_cast<unsigned long long>(address));
    return;
  }
  Block* b = it->second;
  live_.erase(it);
  stats_.allocated -= b->size;
  stats_.requested -= b->requested;
  stats_.num_frees++;
  b->free = true;
  bool small = b->segment->small;
  auto& pool = small ? free_small_ : free_large_;
  // Merge with free neighbours in the same segment.
  if (b->prev && b->prev->free) {
    Block* p = b->prev;
    pool.erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    delete b;
    b = p;
  }
  if (b->next && b->next->free) {
    Block* n = b->next;
    pool.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    delete n;
  }
  pool.insert(b);
}

void Allocator::release_free_segments() {
  bool any = false;
  for (auto& [addr, seg] : segments_) {
    if (seg->first->free && !seg->first->next) any = true;
  }
  if (!any) return;
  // Freed blocks may still be read by queued GPU work: finish it before the memory goes away.
  synchronize_();
  for (auto it = segments_.begin(); it != segments_.end();) {
    Segment* seg = it->second;
    Block* b = seg->first;
    if (b->free && !b->next) {
      (seg->small ? free_small_ : free_large_).erase(b);
      stats_.reserved -= seg->raw.size;
      if (seg->spilled) stats_.host_spilled -= seg->raw.size;
      stats_.num_segments--;
      stats_.num_driver_frees++;
      vk_.destroy_buffer(seg->raw);
      delete b;
      delete seg;
      it = segments_.erase(it);
    } else {
      ++it;
    }
  }
}

void Allocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_free_segments();
}

MemoryStats Allocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void Allocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_allocated = stats_.allocated;
  stats_.peak_reserved = stats_.reserved;
}

BufferSlice Allocator::resolve(uint64_t address) const {
  BufferSlice s;
  if (!try_resolve(address, &s)) throw InvalidArgument("vkml: address is not device memory");
  return s;
}

bool Allocator::try_resolve(uint64_t address, BufferSlice* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = segments_.upper_bound(address);
  if (it == segments_.begin()) return false;
  --it;
  const Segment* seg = it->second;
  if (address >= seg->raw.address + seg->raw.size) return false;
  out->buffer = reinterpret_cast<uint64_t>(seg->raw.buffer);
  out->offset = address - seg->raw.address;
  out->segment_address = seg->raw.address;
  out->segment_size = seg->raw.size;
  out->mapped = seg->raw.mapped;
  return true;
}

bool Allocator::owns(uint64_t address) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = segments_.upper_bound(address);
  if (it == segments_.begin()) return false;
  --it;
  return address < it->second->raw.address + it->second->raw.size;
}

}  // namespace vkml
