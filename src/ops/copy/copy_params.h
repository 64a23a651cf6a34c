// Parameters of the copy family's shaders, shared by C++ (host) and GLSL (device).
// GLSL reads them through a buffer reference whose address travels in push constants.
#ifndef VKML_OPS_COPY_PARAMS_H_
#define VKML_OPS_COPY_PARAMS_H_

#define VKML_COPY_MAX_DIMS 8

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct StridedParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer StridedParams {
#endif
  int64_t numel;
  int64_t sizes[VKML_COPY_MAX_DIMS];
  int64_t dst_strides[VKML_COPY_MAX_DIMS];
  int64_t src_strides[VKML_COPY_MAX_DIMS];
  uint64_t dst;
  uint64_t src;
  uint64_t value;  // fill: the element's bit pattern
  uint32_t ndim;
  uint32_t index32;  // 1: element count and every offset fit in int (32-bit index arithmetic)
};

// copy_transpose.comp's push constants: dst[b][r + c * dst_col] = src[b][r * src_row + c].
struct TransposeParams {
  uint64_t dst;
  uint64_t src;
  int64_t batch;
  int64_t rows;
  int64_t cols;
  int64_t src_batch;
  int64_t src_row;
  int64_t dst_batch;
  int64_t dst_col;
};

#ifdef __cplusplus
static_assert(sizeof(TransposeParams) == 72);
static_assert(sizeof(StridedParams) == 8 + 3 * 8 * VKML_COPY_MAX_DIMS + 3 * 8 + 8);
static_assert(offsetof(StridedParams, dst) == 8 + 3 * 8 * VKML_COPY_MAX_DIMS);
static_assert(offsetof(StridedParams, ndim) == offsetof(StridedParams, value) + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_COPY_PARAMS_H_
