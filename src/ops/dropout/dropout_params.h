// Parameters of the dropout family's shader, shared by C++ and GLSL.
// Forward: c holds Bernoulli(1 - p) draws (0/1) on entry; c = a * keep * scale and b = keep.
// Backward: c = a * b * scale (a = grad_output, b = the bool mask).
#ifndef VKML_OPS_DROPOUT_PARAMS_H_
#define VKML_OPS_DROPOUT_PARAMS_H_

#define VKML_DROPOUT_MAX_DIMS 8

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct DropoutParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer DropoutParams {
#endif
  int64_t numel;
  int64_t sizes[VKML_DROPOUT_MAX_DIMS];
  int64_t a_strides[VKML_DROPOUT_MAX_DIMS];
  int64_t b_strides[VKML_DROPOUT_MAX_DIMS];
  int64_t c_strides[VKML_DROPOUT_MAX_DIMS];
  uint64_t a;
  uint64_t b;  // bool mask (one byte per element)
  uint64_t c;
  uint64_t scale_bits;  // double scale, as bits (f64 variant)
  float scale_f;
  uint32_t a_dtype;
  uint32_t c_dtype;
  uint32_t ndim;
};
#ifdef __cplusplus
static_assert(sizeof(DropoutParams) == 8 + 4 * 8 * VKML_DROPOUT_MAX_DIMS + 4 * 8 + 4 * 4);
static_assert(offsetof(DropoutParams, scale_f) == offsetof(DropoutParams, scale_bits) + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_DROPOUT_PARAMS_H_
