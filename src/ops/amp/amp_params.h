// Parameters of the amp family's shaders (GradScaler's kernels), shared by C++ and GLSL.
#ifndef VKML_OPS_AMP_PARAMS_H_
#define VKML_OPS_AMP_PARAMS_H_

#define VKML_AMP_MAX_DIMS 8
// Tensors unscaled by one dispatch; longer lists take several dispatches.
#define VKML_AMP_MAX_TENSORS 48

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
#endif

// One tensor of the list, dims coalesced. `start` is the index of its first element in the
// concatenation of all tensors of the dispatch, so a thread finds its tensor by binary search.
struct AmpTensor {
  uint64_t address;
  int64_t start;
  int64_t sizes[VKML_AMP_MAX_DIMS];
  int64_t strides[VKML_AMP_MAX_DIMS];
  uint32_t ndim;
  uint32_t pad;
};

#ifdef __cplusplus
struct AmpUnscaleParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer AmpUnscaleParams {
#endif
  uint64_t found_inf;  // float32: set to 1 where any element is inf or NaN
  uint64_t inv_scale;  // float32: every element is multiplied by it (skipped when it is 1)
  int64_t total;       // elements of all tensors together
  uint32_t count;      // tensors in `tensors`
  uint32_t pad;
  AmpTensor tensors[VKML_AMP_MAX_TENSORS];
};

#ifdef __cplusplus
struct AmpUpdateScaleParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer AmpUpdateScaleParams {
#endif
  uint64_t scale;           // float32, updated in place
  uint64_t growth_tracker;  // int32, updated in place
  uint64_t found_inf;       // float32
  // The factors as doubles (bit patterns: only the fp64 variant may declare doubles) and floats.
  uint64_t growth_factor_f64;
  uint64_t backoff_factor_f64;
  float growth_factor;
  float backoff_factor;
  int64_t growth_interval;
};

#ifdef __cplusplus
static_assert(sizeof(AmpTensor) == 8 + 8 + 2 * 8 * VKML_AMP_MAX_DIMS + 8);
static_assert(offsetof(AmpUnscaleParams, tensors) == 32);
static_assert(sizeof(AmpUnscaleParams) == 32 + VKML_AMP_MAX_TENSORS * sizeof(AmpTensor));
static_assert(sizeof(AmpUpdateScaleParams) == 7 * 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_AMP_PARAMS_H_
