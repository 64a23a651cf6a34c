// Helpers shared by op families: parameter blocks and one-dimensional launches.
#pragma once
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "ops/copy/copy_params.h"
#include "vkml/runtime.h"

namespace vkml::ops {

constexpr uint32_t kElementwiseWorkgroup = 256;
constexpr uint32_t kMaxGroupsX = 65535;  // shaders loop (grid stride) over the rest

// Fills sizes and two stride sets (dst, src); throws NotSupported above VKML_COPY_MAX_DIMS dims.
void fill_strided_params(StridedParams* p, const std::vector<int64_t>& sizes,
                         const std::vector<int64_t>& dst_strides,
                         const std::vector<int64_t>& src_strides, int64_t numel);

// Bytes of scratch one call may hold at a time: `preferred`, at most an eighth of device-local
// memory (small and integrated GPUs), one allocation, one buffer and one storage-buffer range;
// 64 MiB on CPU devices.
uint64_t scratch_budget(const DeviceCaps& caps, uint64_t preferred);

// Slices that work of `cost` scalar operations (a GEMM's m*n*k) is cut into so that each stays
// within the stream's per-submission time budget (Stream::slice_cost); 1 when it fits, or when
// there is no budget.
int64_t budget_slices(Device& dev, double cost);

// Uploads `params` and dispatches `shader` with one thread per element (grid-stride capped).
template <typename Params>
void launch_elementwise(Device& dev, const std::string& shader, const Params& params,
                        int64_t numel, std::span<const MemRange> reads,
                        std::span<const MemRange> writes) {
  uint32_t spec[] = {kElementwiseWorkgroup};
  const Pipeline& pipe = dev.pipeline(shader, spec);
  uint64_t addr = dev.stream().params(&params, sizeof(Params));
  int64_t groups = (numel + kElementwiseWorkgroup - 1) / kElementwiseWorkgroup;
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, kMaxGroupsX));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), reads, writes);
}

}  // namespace vkml::ops
