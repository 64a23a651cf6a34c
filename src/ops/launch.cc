#include "ops/launch.h"

#include <cmath>
#include <cstdlib>

#include "vkml/errors.h"

namespace vkml::ops {

void fill_strided_params(StridedParams* p, const std::vector<int64_t>& sizes,
                         const std::vector<int64_t>& dst_strides,
                         const std::vector<int64_t>& src_strides, int64_t numel) {
  if (sizes.size() > VKML_COPY_MAX_DIMS) {
    throw NotSupported("vkml: tensors with more than " + std::to_string(VKML_COPY_MAX_DIMS) +
                       " non-mergeable dimensions are not supported");
  }
  p->numel = numel;
  p->ndim = static_cast<uint32_t>(sizes.size());
  constexpr int64_t kIntMax = 0x7FFFFFFF;
  int64_t dst_span = 0, src_span = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    p->sizes[d] = sizes[d];
    p->dst_strides[d] = dst_strides[d];
    p->src_strides[d] = src_strides[d];
    dst_span += (sizes[d] - 1) * std::abs(dst_strides[d]);
    src_span += (sizes[d] - 1) * std::abs(src_strides[d]);
  }
  p->index32 = numel <= kIntMax && dst_span <= kIntMax && src_span <= kIntMax ? 1u : 0u;
}

uint64_t scratch_budget(const DeviceCaps& caps, uint64_t preferred) {
  uint64_t budget = preferred;
  for (const MemoryHeap& h : caps.heaps) {
    if (h.device_local && h.size) budget = std::min(budget, h.size / 8);
  }
  for (uint64_t cap :
       {caps.max_allocation_size, caps.max_buffer_size, caps.max_storage_buffer_range}) {
    if (cap) budget = std::min(budget, cap);
  }
  if (caps.kind == DeviceKind::kCpu) budget = std::min<uint64_t>(budget, 64ull << 20);
  return budget;
}

int64_t budget_slices(Device& dev, double cost) {
  const uint64_t limit = dev.stream().slice_cost();
  if (limit == 0 || cost <= static_cast<double>(limit)) return 1;
  return static_cast<int64_t>(std::ceil(cost / static_cast<double>(limit)));
}

}  // namespace vkml::ops
