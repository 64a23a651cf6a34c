// The PyTorch allocator for vkml: a DataPtr's data is the buffer device address of the
// allocation, so data_ptr() arithmetic (storage offsets, views) works as on CUDA.
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>

#include "common/bridge.h"
#include "device/allocator.h"

namespace torch_vkml {

namespace device_allocator {

struct AllocationContext {
  uint64_t address;
  c10::DeviceIndex device;
  size_t nbytes;
};

// torch.profiler(profile_memory=True) records allocations and frees with the device's totals.
void report_to_profiler(uint64_t address, int64_t delta, c10::DeviceIndex index) {
  if (!c10::memoryProfilingEnabled()) return;
  vkml::MemoryStats m = core_device(index).memory_stats();
  c10::reportMemoryUsageToProfiler(reinterpret_cast<void*>(address), delta, m.allocated, m.reserved,
                                   c10::Device(kVkml, index));
}

void free_allocation(void* ctx) {
  auto* c = static_cast<AllocationContext*>(ctx);
  try {
    vkml::device(c->device).free(c->address);
    report_to_profiler(c->address, -static_cast<int64_t>(c->nbytes), c->device);
  } catch (...) {
    // Freeing during interpreter shutdown must never throw.
  }
  delete c;
}

using c10::CachingDeviceAllocator::DeviceStats;
using c10::CachingDeviceAllocator::StatType;

void set_stat(c10::CachingDeviceAllocator::StatArray& a, int64_t current, int64_t peak,
              int64_t allocated_total, int64_t freed_total) {
  auto& s = a[static_cast<size_t>(StatType::AGGREGATE)];
  s.current = current;
  s.peak = peak;
  s.allocated = allocated_total;
  s.freed = freed_total;
}

class VkmlAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DeviceIndex index = current_device();
    c10::Device device(kVkml, index);
    if (nbytes == 0) return {nullptr, nullptr, &free_allocation, device};
    vkml::Device& dev = core_device(index);
    uint64_t address = translate_errors([&] { return dev.allocate(nbytes); });
    auto* ctx = new AllocationContext{address, index, nbytes};
    report_to_profiler(address, static_cast<int64_t>(nbytes), index);
    return {reinterpret_cast<void*>(address), ctx, &free_allocation, device};
  }

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    vkml::Device& dev = core_device(current_device());
    translate_errors([&] {
      vkml::ops::copy_bytes(dev, reinterpret_cast<uint64_t>(dest), reinterpret_cast<uint64_t>(src),
                           count);
    });
  }

  bool initialized() override { return device_count() > 0; }

  void emptyCache(c10::MempoolId_t) override {
    for (int i = 0; i < device_count(); ++i) core_device(i).empty_cache();
  }

  // One queue per device: work on every vkml stream is ordered, so nothing to record.
  void recordStream(const c10::DataPtr&, c10::Stream) override {}

  DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    vkml::MemoryStats m = core_device(device).memory_stats();
    DeviceStats s;
    set_stat(s.allocated_bytes, m.allocated, m.peak_allocated, 0, 0);
    set_stat(s.active_bytes, m.allocated, m.peak_allocated, 0, 0);
    set_stat(s.reserved_bytes, m.reserved, m.peak_reserved, 0, 0);
    set_stat(s.requested_bytes, m.requested, m.requested, 0, 0);
    set_stat(s.allocation, m.num_allocs - m.num_frees, m.num_allocs - m.num_frees, m.num_allocs,
             m.num_frees);
    set_stat(s.segment, m.num_segments, m.num_segments, m.num_driver_allocs, m.num_driver_frees);
    s.num_ooms = m.num_ooms;
    s.num_device_alloc = m.num_driver_allocs;
    s.num_device_free = m.num_driver_frees;
    return s;
  }

  void resetAccumulatedStats(c10::DeviceIndex) override {}

  void resetPeakStats(c10::DeviceIndex device) override {
    core_device(device).reset_peak_memory_stats();
  }

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    return core_device(device).mem_get_info();
  }
};

VkmlAllocator g_allocator;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

}  // namespace device_allocator

c10::Allocator* vkml_allocator() { return &device_allocator::g_allocator; }

}  // namespace torch_vkml
