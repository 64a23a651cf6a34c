// Parameters of the softmax family's shaders, shared by C++ and GLSL.
// A softmax runs along one dimension ("the row") of every index of the other dimensions.
// Forward: a = input, c = output. Backward: a = grad_output, b = output, c = grad_input.
#ifndef VKML_OPS_SOFTMAX_PARAMS_H_
#define VKML_OPS_SOFTMAX_PARAMS_H_

#define VKML_SOFTMAX_MAX_DIMS 8

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct SoftmaxParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer SoftmaxParams {
#endif
  int64_t rows;      // product of the other dimensions
  int64_t dim_size;  // elements per row
  int64_t sizes[VKML_SOFTMAX_MAX_DIMS];  // the other dimensions, coalesced
  int64_t a_strides[VKML_SOFTMAX_MAX_DIMS];
  int64_t b_strides[VKML_SOFTMAX_MAX_DIMS];
  int64_t c_strides[VKML_SOFTMAX_MAX_DIMS];
  int64_t a_dim_stride;
  int64_t b_dim_stride;
  int64_t c_dim_stride;
  uint64_t a;
  uint64_t b;
  uint64_t c;
  uint32_t ndim;
  uint32_t a_dtype;
  uint32_t b_dtype;
  uint32_t c_dtype;
  uint32_t log_softmax;  // 1: log_softmax (and its backward)
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(sizeof(SoftmaxParams) == 16 + 4 * 8 * VKML_SOFTMAX_MAX_DIMS + 6 * 8 + 6 * 4);
static_assert(offsetof(SoftmaxParams, a) == 16 + 4 * 8 * VKML_SOFTMAX_MAX_DIMS + 3 * 8);
static_assert(offsetof(SoftmaxParams, ndim) == offsetof(SoftmaxParams, c) + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_SOFTMAX_PARAMS_H_
