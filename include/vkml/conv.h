// Convolutions (1-D, 2-D, 3-D; stride, padding, dilation, groups) and their gradients.
// A transposed convolution is the data gradient of the regular convolution that maps its output
// space back to its input space, with the same weight tensor, so it needs no kernels of its own.
// Work goes through implicit GEMMs, Winograd F(m x m, 3x3), im2col + the GEMM family (chunked
// over the batch to bound the buffer), a direct path for 1x1 kernels, and direct kernels for
// depthwise convolutions; the choice per pass is in src/ops/conv/conv_policy.cc.
#pragma once
#include <cstdint>

#include "vkml/device.h"
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// Geometry of a regular convolution x (N, C_in, *in) -> y (N, C_out, *out) with weight
// (C_out, C_in / groups, *kernel). Spatial arrays hold `spatial` (1-3) entries. `out` is at most
// what the geometry gives; a smaller one computes a prefix of the outputs.
struct ConvDesc {
  int spatial = 2;
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  int64_t in_size[3] = {1, 1, 1}, out_size[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  DType dtype = DType::kF32;
  // Bytes of im2col workspace per chunk of the batch; 0 picks a default (tests force chunking).
  uint64_t workspace_limit = 0;
};

enum class ConvAlgo : uint8_t { kIm2colGemm, kPointwise, kDepthwise };

// Pure: how conv_forward / conv_backward_* will run this geometry.
ConvAlgo choose_conv_algo(const ConvDesc& desc);

// Checks the geometry against the tensors (throws InvalidArgument / NotSupported).
void validate_conv(const ConvDesc& desc, const DeviceCaps& caps);

// y = conv(x, w) (+ bias[c_out]).
void conv_forward(Device& dev, const ConvDesc& desc, const TensorDesc& x, const TensorDesc& w,
                  const TensorDesc* bias, const TensorDesc& y);

// gx = conv^T(gy, w) (+ bias[c_in]): the input gradient, and a transposed convolution's forward.
void conv_backward_data(Device& dev, const ConvDesc& desc, const TensorDesc& gy,
                        const TensorDesc& w, const TensorDesc* bias, const TensorDesc& gx);

// gw = sum over the batch of gy (x) x: the weight gradient.
void conv_backward_weight(Device& dev, const ConvDesc& desc, const TensorDesc& x,
                          const TensorDesc& gy, const TensorDesc& gw);

// gb[c] = sum of gy[:, c, ...] (any number of spatial dims, any strides).
void conv_backward_bias(Device& dev, const TensorDesc& gy, const TensorDesc& gb);

}  // namespace vkml::ops
