// Parameters of the shape family's shaders, shared by C++ and GLSL: coordinate remaps (flip,
// roll), triangles (tril, triu) and ranges (arange, linspace, logspace).
#ifndef VKML_OPS_SHAPE_PARAMS_H_
#define VKML_OPS_SHAPE_PARAMS_H_

#define VKML_SHAPE_MAX_DIMS 8

#define VKML_RANGE_ARANGE 0    // start + step * i
#define VKML_RANGE_LINSPACE 1  // start + step * i below halfway, end - step * (n - 1 - i) above
#define VKML_RANGE_LOGSPACE 2  // base ^ linspace

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct RemapParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer RemapParams {
#endif
  int64_t numel;
  int64_t sizes[VKML_SHAPE_MAX_DIMS];
  int64_t dst_strides[VKML_SHAPE_MAX_DIMS];
  int64_t src_strides[VKML_SHAPE_MAX_DIMS];
  int64_t shift[VKML_SHAPE_MAX_DIMS];  // remap: source coordinate = (c' + shift) mod size, where
                                        // c' = size - 1 - c for flipped dims, else c
  uint64_t dst;
  uint64_t src;
  int64_t diagonal;  // triangle: keep col - row <= diagonal (tril) or >= diagonal (triu)
  uint32_t ndim;
  uint32_t flags;  // remap: bit d = flip dim d; triangle: 1 = upper
};

#ifdef __cplusplus
struct RangeParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer RangeParams {
#endif
  int64_t numel;
  int64_t stride;
  uint64_t dst;
  // start, step, end and logspace's base as double bits (VKML_USE_FP64 variants), and rounded to
  // float for the variants without fp64, which declare no double.
  uint64_t start_bits;
  uint64_t step_bits;
  uint64_t end_bits;
  uint64_t base_bits;
  int64_t start_i;
  int64_t step_i;
  uint32_t mode;
  uint32_t integral;  // arange of an integer dtype: int64 arithmetic
  float start_f32;
  float step_f32;
  float end_f32;
  float base_f32;
};
#ifdef __cplusplus
static_assert(offsetof(RemapParams, dst) == 8 + 4 * 8 * VKML_SHAPE_MAX_DIMS);
static_assert(sizeof(RemapParams) == offsetof(RemapParams, dst) + 3 * 8 + 8);
static_assert(sizeof(RangeParams) == 9 * 8 + 8 + 4 * 4);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_SHAPE_PARAMS_H_
