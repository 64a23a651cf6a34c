// Parameters of the norm family's shaders, shared by C++ and GLSL.
// Every norm runs over a view of its input whose dimensions are split into "row" dimensions
// (one workgroup per row index) and "column" dimensions (reduced inside the workgroup). Each
// tensor sits in a slot with its own strides over both lists (0 where it does not vary), so
// layer, group, batch and RMS norm share the same kernels:
//   layer norm: rows = leading dims, columns = normalized dims;
//   group norm: the input viewed as [N, G, C/G, spatial], rows = (N, G);
//   batch norm: rows = channels, columns = (N, spatial).
// Few long rows (batch norm) take the split path instead (norm_split.comp): partial statistics
// per chunk of a row, a per-row combine, then an elementwise pass over every element.
#ifndef VKML_OPS_NORM_PARAMS_H_
#define VKML_OPS_NORM_PARAMS_H_

#define VKML_NORM_MAX_DIMS 8
#define VKML_NORM_SLOTS 11

// Slots.
#define NORM_X 0      // input
#define NORM_Y 1      // output (forward) or grad_input (backward)
#define NORM_DY 2     // grad_output
#define NORM_W 3      // weight (gamma)
#define NORM_B 4      // bias (beta)
#define NORM_MEAN 5   // per-row mean (saved by the forward)
#define NORM_RSTD 6   // per-row 1 / sqrt(var + eps)
#define NORM_RMEAN 7  // batch norm running mean
#define NORM_RVAR 8   // batch norm running variance
#define NORM_GW 9     // grad_weight
#define NORM_GB 10    // grad_bias

// Mode flags.
#define NORM_RMS 1u            // no mean subtraction (RMS norm)
#define NORM_FIXED_STATS 2u    // statistics come from RMEAN/RVAR (batch norm eval)
#define NORM_UPDATE_RUNNING 4u // forward: update RMEAN/RVAR with momentum (unbiased variance)
#define NORM_ROW_PARAM_GRADS 8u  // backward: weight/bias grads are per row (batch norm)

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct NormParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer NormParams {
#endif
  int64_t rows;
  int64_t cols;
  int64_t row_sizes[VKML_NORM_MAX_DIMS];
  int64_t col_sizes[VKML_NORM_MAX_DIMS];
  int64_t row_strides[VKML_NORM_SLOTS][VKML_NORM_MAX_DIMS];
  int64_t col_strides[VKML_NORM_SLOTS][VKML_NORM_MAX_DIMS];
  uint64_t ptr[VKML_NORM_SLOTS];  // 0: slot unused
  uint64_t scratch;  // split path: per-chunk partials, then per-row results (ACC elements)
  int64_t splits;    // split path: chunks per row
  uint64_t eps_bits;              // double eps, as bits (float variants read eps_f)
  uint64_t momentum_bits;
  float eps_f;
  float momentum_f;
  uint32_t dtype[VKML_NORM_SLOTS];
  uint32_t row_ndim;
  uint32_t col_ndim;
  uint32_t mode;
};
#ifdef __cplusplus
static_assert(sizeof(NormParams) ==
              16 + 2 * 8 * VKML_NORM_MAX_DIMS + 2 * 8 * VKML_NORM_SLOTS * VKML_NORM_MAX_DIMS +
                  8 * VKML_NORM_SLOTS + 16 + 16 + 8 + 4 * VKML_NORM_SLOTS + 12);
static_assert(offsetof(NormParams, eps_f) == offsetof(NormParams, momentum_bits) + 8);
static_assert(offsetof(NormParams, row_ndim) ==
              offsetof(NormParams, dtype) + 4 * VKML_NORM_SLOTS);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_NORM_PARAMS_H_
