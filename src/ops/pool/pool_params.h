// Parameters of the pool family's shaders, shared by C++ and GLSL.
// Pools run over "planes" (the leading dims, e.g. N and C) of up to 3 spatial dims; 2-D pools
// are 3-D ones with a depth of 1. Side a is the input (forward) or grad_input (backward), side b
// the output or grad_output; indices are flat positions within a plane of the input.
#ifndef VKML_OPS_POOL_PARAMS_H_
#define VKML_OPS_POOL_PARAMS_H_

#define VKML_POOL_PLANE_DIMS 4

#define POOL_MAX 0u
#define POOL_AVG 1u
#define POOL_ADAPTIVE_MAX 2u
#define POOL_ADAPTIVE_AVG 3u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct PoolParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer PoolParams {
#endif
  int64_t numel;  // invocations: output elements (forward) or input elements (backward)
  int64_t plane_sizes[VKML_POOL_PLANE_DIMS];
  int64_t a_plane_strides[VKML_POOL_PLANE_DIMS];
  int64_t b_plane_strides[VKML_POOL_PLANE_DIMS];
  int64_t i_plane_strides[VKML_POOL_PLANE_DIMS];
  int64_t a_size[3];  // input spatial sizes (D, H, W)
  int64_t b_size[3];  // output spatial sizes
  int64_t a_strides[3];
  int64_t b_strides[3];
  int64_t i_strides[3];
  int64_t kernel[3];
  int64_t stride[3];
  int64_t pad[3];
  int64_t dilation[3];
  int64_t divisor_override;  // 0: none
  uint64_t a;
  uint64_t b;
  uint64_t indices;  // int64; 0 when absent
  uint32_t plane_ndim;
  uint32_t a_dtype;
  uint32_t b_dtype;
  uint32_t kind;
  uint32_t count_include_pad;
  uint32_t index32;  // 1: every element count fits 31 bits, so positions decompose in 32 bits
};
#ifdef __cplusplus
static_assert(sizeof(PoolParams) == 8 + 4 * 8 * VKML_POOL_PLANE_DIMS + 9 * 3 * 8 + 8 + 3 * 8 +
                                        6 * 4);
static_assert(offsetof(PoolParams, plane_ndim) == offsetof(PoolParams, indices) + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_POOL_PARAMS_H_
