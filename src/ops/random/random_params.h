// Parameters of the random family's shaders, shared by C++ and GLSL.
#ifndef VKML_OPS_RANDOM_PARAMS_H_
#define VKML_OPS_RANDOM_PARAMS_H_

#define VKML_RANDOM_MAX_DIMS 8
#define VKML_RANDOM_UNIFORM 0    // a + (b - a) * U[0, 1)
#define VKML_RANDOM_NORMAL 1     // a + b * N(0, 1)
#define VKML_RANDOM_BERNOULLI 2  // U < a ? 1 : 0
#define VKML_RANDOM_INT_RANGE 3  // base + bits % range (integers in [base, base + range))
#define VKML_RANDOM_EXPONENTIAL 4  // -log(1 - U) / a

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct RandomParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer RandomParams {
#endif
  int64_t numel;
  int64_t sizes[VKML_RANDOM_MAX_DIMS];
  int64_t strides[VKML_RANDOM_MAX_DIMS];
  uint64_t dst;
  uint64_t seed;
  uint64_t offset;  // Philox counter offset reserved for this call
  uint64_t a_bits;  // double a and b, as bits (f64 variants; the others read a_f, b_f)
  uint64_t b_bits;
  uint64_t range;
  int64_t base;
  uint32_t ndim;
  uint32_t kind;
  float a_f;  // a and b rounded to float: variants without fp64 declare no double
  float b_f;
};
#ifdef __cplusplus
static_assert(sizeof(RandomParams) == 8 + 2 * 8 * VKML_RANDOM_MAX_DIMS + 7 * 8 + 8 + 8);
static_assert(offsetof(RandomParams, ndim) == offsetof(RandomParams, base) + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_RANDOM_PARAMS_H_
