// Parameters of the where/masked_fill shader (select.comp), shared by C++ and GLSL.
// out = cond ? a : b elementwise over strided, broadcast (stride 0) operands; an operand whose
// address is 0 is the scalar bit pattern next to it.
#ifndef VKML_OPS_SELECT_PARAMS_H_
#define VKML_OPS_SELECT_PARAMS_H_

#define VKML_SELECT_MAX_DIMS 8

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct SelectParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer SelectParams {
#endif
  int64_t numel;
  int64_t sizes[VKML_SELECT_MAX_DIMS];
  int64_t out_strides[VKML_SELECT_MAX_DIMS];
  int64_t cond_strides[VKML_SELECT_MAX_DIMS];
  int64_t a_strides[VKML_SELECT_MAX_DIMS];
  int64_t b_strides[VKML_SELECT_MAX_DIMS];
  uint64_t dst;
  uint64_t cond;  // bool / uint8 elements
  uint64_t a;
  uint64_t b;
  uint64_t cond_bits;
  uint64_t a_bits;
  uint64_t b_bits;
  uint32_t ndim;
  uint32_t keep_unselected;  // 1: b is out itself; unselected elements are not rewritten
};
#ifdef __cplusplus
static_assert(offsetof(SelectParams, dst) == 8 + 5 * 8 * VKML_SELECT_MAX_DIMS);
static_assert(sizeof(SelectParams) == offsetof(SelectParams, dst) + 7 * 8 + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_SELECT_PARAMS_H_
