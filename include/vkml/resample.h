// Resampling over the trailing 1 to 3 spatial dims of a tensor (any leading dims, any strides):
// upsampling (nearest, nearest-exact, linear, cubic with PyTorch's index rules), reflection and
// replication padding, and im2col/col2im (unfold/fold), forward and backward. Floating dtypes
// (f16/bf16 compute in f32, f64 in double where the device allows); one-tap forwards (nearest,
// padding) and im2col copy any dtype bit for bit. Backwards gather (deterministic, no atomics).
#pragma once
#include <array>
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

enum class ResampleMode : uint32_t {
  kNearest = 0,
  kNearestExact = 1,
  kLinear = 2,
  kCubic = 3,
  kPadReflect = 4,
  kPadReplicate = 5,
};

// How output positions map to input positions, per spatial dim (D, H, W; a 2-D op uses entries 1
// and 2, a 1-D op entry 2).
struct ResampleSpec {
  ResampleMode mode = ResampleMode::kNearest;
  bool align_corners = false;
  std::array<double, 3> scales{0, 0, 0};       // upsampling: user scale factors; <= 0: none
  std::array<int64_t, 3> pad_before{0, 0, 0};  // padding: leading pad (negative crops)
};

// out has input's leading dims; the spatial sizes are the resampled (or padded) ones.
void resample(Device& dev, const ResampleSpec& spec, const TensorDesc& out,
              const TensorDesc& input, int spatial_dims);

// grad_input (input's shape) from grad_output (out's shape).
void resample_backward(Device& dev, const ResampleSpec& spec, const TensorDesc& grad_input,
                       const TensorDesc& grad_output, int spatial_dims);

// The window of im2col/col2im over (H, W).
struct UnfoldWindow {
  std::array<int64_t, 2> kernel{1, 1}, dilation{1, 1}, pad{0, 0}, stride{1, 1};
};

// PyTorch's im2col: image (N, C, H, W) -> columns (N, C*kh*kw, L), zeros outside the image.
void im2col(Device& dev, const TensorDesc& columns, const TensorDesc& image,
            const UnfoldWindow& w);

// col2im (fold): columns (N, C*kh*kw, L) -> image (N, C, H, W), overlapping blocks summed
// (bool: OR).
void col2im(Device& dev, const TensorDesc& image, const TensorDesc& columns,
            const UnfoldWindow& w);

}  // namespace vkml::ops
