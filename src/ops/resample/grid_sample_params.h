// Parameters of grid_sampler_{2,3}d (grid_sample.comp), shared by C++ and GLSL. Spatial dims are
// (D, H, W); 2-D samplers have D = 1 and grids with 2 coordinates (x, y).
#ifndef VKML_OPS_GRID_SAMPLE_PARAMS_H_
#define VKML_OPS_GRID_SAMPLE_PARAMS_H_

#define GRID_BILINEAR 0u
#define GRID_NEAREST 1u
#define GRID_BICUBIC 2u
#define GRID_PAD_ZEROS 0u
#define GRID_PAD_BORDER 1u
#define GRID_PAD_REFLECTION 2u

#ifdef __cplusplus
#include <cstdint>
namespace vkml::ops {
struct GridSampleParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer GridSampleParams {
#endif
  int64_t numel;  // invocations: output elements (forward) or grid points / inputs (backward)
  int64_t batch;
  int64_t channels;
  int64_t in_size[3];   // D, H, W
  int64_t out_size[3];  // grid's spatial sizes
  int64_t input_strides[5];  // N, C, D, H, W
  int64_t grid_strides[5];   // N, D, H, W, coordinate
  int64_t out_strides[5];    // output / grad_output: N, C, D, H, W
  int64_t gi_strides[5];     // grad_input (gather path), N, C, D, H, W
  int64_t gg_strides[5];     // grad_grid: N, D, H, W, coordinate
  uint64_t source;  // input
  uint64_t grid;
  uint64_t result;      // forward: output; backward: grad_output
  uint64_t grad_input;  // backward: grad_input (gather path) or float scratch (atomic path)
  uint64_t grad_grid;   // backward: 0 when not wanted
  uint32_t dims;        // 2 or 3
  uint32_t interpolation;
  uint32_t padding;
  uint32_t align_corners;
  uint32_t input_dtype;
  uint32_t grid_dtype;
  uint32_t out_dtype;
  uint32_t gi_dtype;
};
#ifdef __cplusplus
static_assert(sizeof(GridSampleParams) == 3 * 8 + 6 * 8 + 25 * 8 + 5 * 8 + 8 * 4);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_GRID_SAMPLE_PARAMS_H_
