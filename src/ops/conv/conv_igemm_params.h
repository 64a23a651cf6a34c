// Parameters of the implicit-GEMM convolution (gemm_simt.comp built with CONV_IMPLICIT), shared
// by C++ and GLSL. Per group g, C[m][j] = sum_k A[m][k] * B[k][j] with
//   j = (n, position) over the destination's samples and spatial positions (N = batch * P),
//   k = (c, tap) over the source's channels of the group and the kernel taps (K = channels * KV),
//   B[k][j] = src[n, g * src_group_channels + c, coordinate], where each spatial coordinate is
//            position * mul + tap * kmul + add, and zero outside the source;
//   dst[n, g * M + m, position] = C[m][j] (+ bias[g * M + m]).
// The forward pass gathers the input (mul = stride, kmul = dilation, add = -padding); the input
// gradient of a stride-1 convolution gathers the output gradient (1, -dilation, +padding).
#ifndef VKML_OPS_CONV_IGEMM_PARAMS_H_
#define VKML_OPS_CONV_IGEMM_PARAMS_H_

#ifdef __cplusplus
#include "ops/gemm/gemm_params.h"
#else
#include "gemm_params.h"
#endif

#ifdef __cplusplus
namespace vkml::ops {
struct ConvGemmParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer ConvGemmParams {
#endif
  GemmOperand a;  // [M][K] per group, batch0 = the group's offset
  uint64_t src;
  uint64_t dst;
  uint64_t bias;
  int64_t m;
  int64_t n;
  int64_t k;
  int64_t src_n;  // sample strides in elements
  int64_t dst_n;
  int64_t bias_stride;
  int64_t dst_c;  // channel stride of the destination
  int32_t src_c;  // channel stride of the source (offsets within a sample fit in 31 bits)
  int32_t src_sp[3];
  int32_t dst_sp[3];
  int32_t src_size[3];  // spatial size of the source (d, h, w; unused leading dims are 1)
  int32_t pos_size[3];  // spatial size of the destination: positions j walks
  int32_t kernel[3];
  int32_t mul[3];
  int32_t kmul[3];
  int32_t add[3];
  int32_t groups;
  int32_t src_group_channels;
  uint32_t flags;  // VKML_CONV_HAS_BIAS
};
#ifdef __cplusplus
static_assert(offsetof(ConvGemmParams, src) == 40);
static_assert(offsetof(ConvGemmParams, src_c) == 120);
static_assert(offsetof(ConvGemmParams, groups) == 220);
static_assert(sizeof(ConvGemmParams) == 232);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_CONV_IGEMM_PARAMS_H_
