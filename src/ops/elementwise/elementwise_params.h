// Parameters of the elementwise shaders, shared by C++ (host) and GLSL (device).
// GLSL reads them through a buffer reference whose address travels in push constants.
#ifndef VKML_OPS_ELEMENTWISE_PARAMS_H_
#define VKML_OPS_ELEMENTWISE_PARAMS_H_

#define VKML_EW_MAX_DIMS 8

// Bits of specialization constant 2 (the mode); constant 1 is the op's id in the table.
#define VKML_EW_FLAT 1u      // every operand is 1-D after coalescing: offset = i * stride[0]
#define VKML_EW_SCALAR_A 2u  // operand a is `scalar`, not memory
#define VKML_EW_SCALAR_B 4u  // operand b is `scalar`, not memory
#define VKML_EW_INDEX32 8u   // numel < 2^31: index decomposition in 32-bit integers
#define VKML_EW_HAS_C 16u    // binary kind: a third tensor operand c (addcmul, lerp, ...)
// Every tensor operand (and out) dense, contiguous and 16-byte aligned: 16-byte vector accesses,
// the elements after the last whole vector through the FLAT path.
#define VKML_EW_VEC 32u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct ElementwiseParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer ElementwiseParams {
#endif
  int64_t numel;
  int64_t sizes[VKML_EW_MAX_DIMS];
  int64_t dst_strides[VKML_EW_MAX_DIMS];
  int64_t a_strides[VKML_EW_MAX_DIMS];
  int64_t b_strides[VKML_EW_MAX_DIMS];
  int64_t c_strides[VKML_EW_MAX_DIMS];
  uint64_t dst;
  uint64_t a;
  uint64_t b;
  uint64_t c;
  uint64_t scalar;  // the scalar operand's bits: f32 for f32/f16/bf16, f64, or int64
  uint64_t alpha;   // add/sub's multiplier (threshold_backward's threshold), same encoding
  uint64_t beta;    // second and third op parameters (elu's scale and input scale, ...)
  uint64_t gamma;
  uint32_t ndim;
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(sizeof(ElementwiseParams) == 8 + 5 * 8 * VKML_EW_MAX_DIMS + 8 * 8 + 8);
static_assert(offsetof(ElementwiseParams, dst) == 8 + 5 * 8 * VKML_EW_MAX_DIMS);
static_assert(offsetof(ElementwiseParams, alpha) == offsetof(ElementwiseParams, dst) + 40);
static_assert(offsetof(ElementwiseParams, ndim) == offsetof(ElementwiseParams, alpha) + 24);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_ELEMENTWISE_PARAMS_H_
