// Parameters of the resample family's shaders (upsampling and reflection/replication padding),
// shared by C++ and GLSL. Both run over "planes" (the leading dims, e.g. N and C) of up to 3
// spatial dims (D, H, W; missing dims have size 1). Side a is the input (forward) or grad_input
// (backward), side b the output or grad_output. Each spatial dim maps an output position to at
// most 4 weighted input taps; the backward gathers, per input element, over the outputs whose
// taps hold it (deterministic, no atomics).
#ifndef VKML_OPS_RESAMPLE_PARAMS_H_
#define VKML_OPS_RESAMPLE_PARAMS_H_

#define VKML_RESAMPLE_PLANE_DIMS 4

#define RESAMPLE_NEAREST 0u
#define RESAMPLE_NEAREST_EXACT 1u
#define RESAMPLE_LINEAR 2u
#define RESAMPLE_CUBIC 3u
#define RESAMPLE_PAD_REFLECT 4u
#define RESAMPLE_PAD_REPLICATE 5u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct ResampleParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer ResampleParams {
#endif
  int64_t numel;  // invocations: output elements (forward) or input elements (backward)
  int64_t plane_sizes[VKML_RESAMPLE_PLANE_DIMS];
  int64_t a_plane_strides[VKML_RESAMPLE_PLANE_DIMS];
  int64_t b_plane_strides[VKML_RESAMPLE_PLANE_DIMS];
  int64_t a_size[3];  // input spatial sizes (D, H, W)
  int64_t b_size[3];  // output spatial sizes
  int64_t a_strides[3];
  int64_t b_strides[3];
  int64_t pad_before[3];  // padding modes: leading pad per dim (negative crops)
#if defined(__cplusplus) || defined(VKML_USE_FP64)
  double scale_d[3];  // input/output ratio per dim, for the double variant
#else
  uint64_t scale_d[3];  // (bits of) the above; unused in float variants
#endif
  uint64_t a;
  uint64_t b;
  float scale_f[3];  // the ratio rounded to float: what the CPU computes with for f32/f16/bf16
  uint32_t plane_ndim;
  uint32_t mode;
  uint32_t align_corners;
  uint32_t a_dtype;
  uint32_t b_dtype;
  uint32_t raw_bytes;  // forward of one-tap modes: copy elements of this size bit for bit (0: math)
  uint32_t round_weights;  // forward: round linear/cubic weights to the (f16/bf16) data type, as
                          // the CPU's generic kernel keeps them (its bilinear 2-D does not)
};
#ifdef __cplusplus
static_assert(sizeof(ResampleParams) ==
              8 + 3 * 8 * VKML_RESAMPLE_PLANE_DIMS + 6 * 3 * 8 + 2 * 8 + 3 * 4 + 7 * 4);
static_assert(offsetof(ResampleParams, scale_f) == offsetof(ResampleParams, b) + 8);
static_assert(offsetof(ResampleParams, plane_ndim) == offsetof(ResampleParams, scale_f) + 12);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_RESAMPLE_PARAMS_H_
