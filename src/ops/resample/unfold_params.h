// Parameters of im2col/col2im (unfold.comp), shared by C++ and GLSL. The image is (N, C, H, W),
// the columns (N, C*kh*kw, L) with L = out_h*out_w block positions.
#ifndef VKML_OPS_UNFOLD_PARAMS_H_
#define VKML_OPS_UNFOLD_PARAMS_H_

#ifdef __cplusplus
#include <cstdint>
namespace vkml::ops {
struct UnfoldParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer UnfoldParams {
#endif
  int64_t numel;  // invocations: column elements (im2col) or image elements (col2im)
  int64_t batch;
  int64_t channels;
  int64_t height;
  int64_t width;
  int64_t out_h;  // block positions along H and W
  int64_t out_w;
  int64_t kernel[2];
  int64_t dilation[2];
  int64_t pad[2];
  int64_t stride[2];
  int64_t image_strides[4];   // N, C, H, W
  int64_t column_strides[3];  // N, row (c*kh*kw + ki*kw + kj), L
  uint64_t image;
  uint64_t columns;
  uint32_t image_dtype;
  uint32_t column_dtype;
  uint32_t raw_bytes;  // im2col: copy elements of this size bit for bit (0: float math)
  uint32_t pad_;
};
#ifdef __cplusplus
static_assert(sizeof(UnfoldParams) == 7 * 8 + 8 * 8 + 7 * 8 + 2 * 8 + 4 * 4);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_UNFOLD_PARAMS_H_
