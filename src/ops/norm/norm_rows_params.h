// Parameters of the row-norm fast path (norm_rows.comp): layer and RMS norm over the contiguous
// last dims of dense [rows, cols] activations, cols a multiple of 4 and 16-byte aligned rows.
// Shared by C++ and GLSL. The parameter-gradient split keeps per-chunk partials in scratch (fp32):
// chunk k's grad_weight partial at [2k * cols], its grad_bias partial at [(2k + 1) * cols].
#ifndef VKML_OPS_NORM_ROWS_PARAMS_H_
#define VKML_OPS_NORM_ROWS_PARAMS_H_

// Tensor slots.
#define ROWS_X 0
#define ROWS_Y 1   // output (forward) or grad_input (backward)
#define ROWS_DY 2
#define ROWS_W 3
#define ROWS_B 4
#define ROWS_MEAN 5
#define ROWS_RSTD 6
#define ROWS_GW 7
#define ROWS_GB 8
#define ROWS_SLOTS 9

#define ROWS_MODE_RMS 1u  // no mean subtraction
#define ROWS_MAX_VEC 4    // vec4s of a row each invocation keeps in registers

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct NormRowsParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer NormRowsParams {
#endif
  uint64_t ptr[ROWS_SLOTS];  // 0: slot unused
  uint64_t scratch;
  uint32_t dtype[ROWS_SLOTS];
  uint32_t rows;
  uint32_t cols;
  uint32_t rows_per_chunk;  // parameter-gradient split
  uint32_t chunks;
  uint32_t mode;
  float eps;
};
#ifdef __cplusplus
static_assert(sizeof(NormRowsParams) == 8 * ROWS_SLOTS + 8 + 4 * ROWS_SLOTS + 4 * 6 + 4);
static_assert(offsetof(NormRowsParams, rows) == 8 * ROWS_SLOTS + 8 + 4 * ROWS_SLOTS);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_NORM_ROWS_PARAMS_H_
