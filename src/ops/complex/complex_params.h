// Parameters of complex_math.comp, shared by C++ and GLSL: out = op(a) or op(a, b) elementwise
// over complex tensors (interleaved real, imaginary pairs) of one shape, broadcast operands as
// stride 0. Sizes and strides count complex elements, dimensions coalesced on the host.
#ifndef VKML_OPS_COMPLEX_PARAMS_H_
#define VKML_OPS_COMPLEX_PARAMS_H_

#define CM_MAX_DIMS 8

// Unary ops (a only).
#define CM_EXP 0u
#define CM_EXP2 1u
#define CM_EXPM1 2u
#define CM_LOG 3u
#define CM_LOG2 4u
#define CM_LOG10 5u
#define CM_LOG1P 6u
#define CM_SQRT 7u
#define CM_RSQRT 8u
#define CM_RECIPROCAL 9u
#define CM_SIGMOID 10u
#define CM_SIN 11u
#define CM_COS 12u
#define CM_TAN 13u
#define CM_SINH 14u
#define CM_COSH 15u
#define CM_TANH 16u
#define CM_ASIN 17u
#define CM_ACOS 18u
#define CM_ATAN 19u
#define CM_ASINH 20u
#define CM_ACOSH 21u
#define CM_ATANH 22u
// Binary ops (a, b).
#define CM_POW 23u
#define CM_NUM_OPS 24u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct ComplexMathParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer ComplexMathParams {
#endif
  uint64_t a;
  uint64_t b;
  uint64_t dst;
  int64_t sizes[CM_MAX_DIMS];
  int64_t a_strides[CM_MAX_DIMS];
  int64_t b_strides[CM_MAX_DIMS];
  int64_t dst_strides[CM_MAX_DIMS];
  int64_t numel;
  uint32_t ndim;
  uint32_t op;
};
#ifdef __cplusplus
static_assert(sizeof(ComplexMathParams) == 3 * 8 + 4 * 8 * CM_MAX_DIMS + 8 + 2 * 4);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_COMPLEX_PARAMS_H_
