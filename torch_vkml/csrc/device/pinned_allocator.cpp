// Pinned host memory for vkml: tensor.pin_memory(), torch.empty(..., pin_memory=True) and the
// DataLoader's pin_memory=True allocate here, as PrivateUse1's pinned allocator (hooks.cpp) and
// host allocator (at::getHostAllocator). Blocks come from the device's caching host allocator
// (vkml::allocate_host): host-visible memory that non_blocking copies read and write
// directly, on the current device at the time of the allocation.
#include <ATen/Context.h>
// The header sizes its blocks with std::hardware_destructive_interference_size, whose value GCC
// warns may differ between compilers; the ABI is torch's own build, not ours.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winterference-size"
#endif
#include <ATen/core/CachingHostAllocator.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <cstring>

#include "common/bridge.h"
#include "vkml/host_memory.h"
#include "device/pinned_allocator.h"

namespace torch_vkml {

namespace device_pinned_allocator {

struct PinnedBlock {
  void* ptr;
  c10::DeviceIndex device;
};

void free_pinned(void* ctx) {
  auto* b = static_cast<PinnedBlock*>(ctx);
  try {
    vkml::free_host(vkml::device(b->device), b->ptr);
  } catch (...) {
    // Freeing during interpreter shutdown must never throw.
  }
  delete b;
}

void set_stat(c10::CachingAllocator::Stat& s, uint64_t current, uint64_t peak) {
  s.current = static_cast<int64_t>(current);
  s.peak = static_cast<int64_t>(peak);
}

class VkmlHostAllocator final : public at::HostAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    // is_pinned() answers only once the accelerator is initialised (at::Context::isPinnedPtr),
    // and torch.empty(pin_memory=True) reaches this allocator without initialising it.
    at::globalContext().lazyInitDevice(kVkml);
    const c10::Device cpu(c10::kCPU);
    if (nbytes == 0) return {nullptr, nullptr, &free_pinned, cpu};
    const c10::DeviceIndex index = current_device();
    void* p = translate_errors([&] { return vkml::allocate_host(core_device(index), nbytes); });
    return {p, new PinnedBlock{p, index}, &free_pinned, cpu};
  }

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }

  // Every stream of a device is its one queue: the block waits for all work recorded so far.
  bool record_event(void* ptr, void* ctx, c10::Stream) override {
    auto* b = static_cast<PinnedBlock*>(ctx);
    if (b == nullptr) return false;
    translate_errors([&] { vkml::record_host_use(core_device(b->device), ptr); });
    return true;
  }

  void empty_cache() override {
    for (int i = 0; i < device_count(); ++i) vkml::empty_host_cache(core_device(i));
  }

  at::HostStats get_stats() override {
    vkml::HostMemoryStats sum;
    for (int i = 0; i < device_count(); ++i) {
      vkml::HostMemoryStats m = vkml::host_memory_stats(core_device(i));
      sum.allocated += m.allocated;
      sum.reserved += m.reserved;
      sum.peak_allocated += m.peak_allocated;
      sum.num_allocs += m.num_allocs;
      sum.num_frees += m.num_frees;
      sum.num_blocks += m.num_blocks;
      sum.num_driver_allocs += m.num_driver_allocs;
      sum.num_driver_frees += m.num_driver_frees;
    }
    at::HostStats s;
    set_stat(s.active_requests, sum.num_allocs - sum.num_frees, sum.num_allocs - sum.num_frees);
    set_stat(s.active_bytes, sum.allocated, sum.peak_allocated);
    set_stat(s.allocations, sum.num_blocks, sum.num_blocks);
    set_stat(s.allocated_bytes, sum.reserved, sum.reserved);
    s.num_host_alloc = static_cast<int64_t>(sum.num_driver_allocs);
    s.num_host_free = static_cast<int64_t>(sum.num_driver_frees);
    return s;
  }

  void reset_accumulated_stats() override {}

  void reset_peak_stats() override {
    for (int i = 0; i < device_count(); ++i) vkml::reset_peak_host_memory_stats(core_device(i));
  }
};

VkmlHostAllocator g_host_allocator;
REGISTER_HOST_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_host_allocator)

}  // namespace device_pinned_allocator

c10::Allocator* pinned_allocator() { return &device_pinned_allocator::g_host_allocator; }

bool is_pinned_on(const void* ptr, c10::DeviceIndex device) {
  return vkml::pinned_host_device(ptr) == device;
}

}  // namespace torch_vkml
