// Pooling over the trailing 2 or 3 spatial dims of a tensor (any leading dims, any strides):
// max (with flat input indices), average (count_include_pad, divisor_override) and adaptive
// max/average, forward and backward. Floating dtypes (f16/bf16 compute in f32, f64 in double
// where the device allows). Backward gathers (deterministic, no atomics).
#pragma once
#include <array>
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

enum class PoolKind : uint32_t { kMax = 0, kAvg = 1, kAdaptiveMax = 2, kAdaptiveAvg = 3 };

// Window of a max/average pool per spatial dim (D, H, W); 2-D pools use entries 1 and 2.
// Adaptive pools ignore it.
struct PoolWindow {
  std::array<int64_t, 3> kernel{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0}, dilation{1, 1, 1};
  bool ceil_mode = false;
  bool count_include_pad = true;
  int64_t divisor_override = 0;  // 0: none
};

// PyTorch's pooling_output_shape: the output length along one dim.
int64_t pool_output_size(int64_t input, int64_t kernel, int64_t pad, int64_t stride,
                         int64_t dilation, bool ceil_mode);

// out (and indices, int64, for max pools) have input's leading dims and the pooled spatial
// sizes (adaptive pools: any output sizes).
void pool(Device& dev, PoolKind kind, const TensorDesc& out, const TensorDesc* indices,
          const TensorDesc& input, int spatial_dims, const PoolWindow& window);

// grad_input (input's shape) from grad_output (out's shape) and, for max pools, the indices.
void pool_backward(Device& dev, PoolKind kind, const TensorDesc& grad_input,
                   const TensorDesc& grad_output, const TensorDesc* indices, int spatial_dims,
                   const PoolWindow& window);

}  // namespace vkml::ops
