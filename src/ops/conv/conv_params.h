// Parameters of the conv family's shaders, shared by C++ (host) and GLSL (device).
// Spatial dims are always three (d, h, w); 1-D and 2-D convolutions use leading dims of size 1.
// Every dispatch covers fewer than 2^31 work items (the host splits the batch), so shaders
// index with 32-bit integers and use 64-bit arithmetic only for addresses.
#ifndef VKML_OPS_CONV_PARAMS_H_
#define VKML_OPS_CONV_PARAMS_H_

#define VKML_CONV_HAS_BIAS 1u
// conv_winograd WINO_WEIGHT: transform the input gradient's kernel (w transposed, turned 180 degrees).
#define VKML_CONV_WINO_FLIP 2u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct ConvParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer ConvParams {
#endif
  uint64_t x;     // input-space tensor (N, C_in, D, H, W)
  uint64_t y;     // output-space tensor (N, C_out, D', H', W')
  uint64_t w;     // weight (C_out, C_in / groups, KD, KH, KW)
  uint64_t col;   // im2col matrix [C_in * KD * KH * KW][batch * D' * H' * W'], dense
  uint64_t bias;  // per-channel vector
  int64_t x_strides[5];
  int64_t y_strides[5];
  int64_t w_strides[5];
  int64_t bias_stride;
  int32_t in_size[3];
  int32_t out_size[3];
  int32_t kernel[3];
  int32_t stride[3];
  int32_t pad[3];
  int32_t dilation[3];
  int32_t batch;  // samples in this dispatch
  int32_t in_channels;
  int32_t out_channels;
  int32_t multiplier;  // depthwise: out channels per input channel
  uint32_t work;       // work items in this dispatch
  uint32_t flags;
};
#ifdef __cplusplus
static_assert(offsetof(ConvParams, x_strides) == 40);
static_assert(offsetof(ConvParams, bias_stride) == 160);
static_assert(offsetof(ConvParams, in_size) == 168);
static_assert(sizeof(ConvParams) == 168 + 18 * 4 + 6 * 4);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_CONV_PARAMS_H_
