// Parameters of the reduce family's shaders (reductions and scans), shared by C++ and GLSL.
// GLSL reads them through a buffer reference whose address travels in push constants.
#ifndef VKML_OPS_REDUCE_PARAMS_H_
#define VKML_OPS_REDUCE_PARAMS_H_

#define VKML_REDUCE_MAX_DIMS 8
#define VKML_REDUCE_WORKGROUP 256
#define VKML_REDUCE_WORKGROUP_LOG2 8

// Reduction ops (specialization constant 1 of reduce.comp); values match vkml::ops::ReduceOp.
#define VKML_RED_SUM 0
#define VKML_RED_NANSUM 1
#define VKML_RED_PROD 2
#define VKML_RED_MEAN 3
#define VKML_RED_MAX 4
#define VKML_RED_MIN 5
#define VKML_RED_ARGMAX 6  // out0: value (optional), out1: int64 index of the first extreme
#define VKML_RED_ARGMIN 7
#define VKML_RED_ALL 8
#define VKML_RED_ANY 9
#define VKML_RED_VAR 10  // out0: variance, out1: mean (optional)
#define VKML_RED_STD 11
#define VKML_RED_NORM 12  // norm_kind below
#define VKML_RED_LOGSUMEXP 13
#define VKML_RED_COUNT_NONZERO 14
#define VKML_RED_AMINMAX 15  // out0: min, out1: max

#define VKML_NORM_P 0  // (sum |x|^p)^(1/p)
#define VKML_NORM_1 1
#define VKML_NORM_2 2
#define VKML_NORM_INF 3
#define VKML_NORM_NEG_INF 4
#define VKML_NORM_0 5  // number of non-zeros

// Passes: one pass straight to the outputs, or a partial pass writing one accumulator state per
// (output, split) followed by a final pass combining the states.
#define VKML_RED_STAGE_DIRECT 0
#define VKML_RED_STAGE_PARTIAL 1
#define VKML_RED_STAGE_FINAL 2

// Scan ops (specialization constant 1 of cumulative.comp); values match vkml::ops::ScanOp.
#define VKML_SCAN_CUMSUM 0
#define VKML_SCAN_CUMPROD 1
#define VKML_SCAN_CUMMAX 2  // out1: int64 index of the (last) extreme so far
#define VKML_SCAN_CUMMIN 3
#define VKML_SCAN_LOGCUMSUMEXP 4

#define VKML_SCAN_STAGE_LINES 0   // scan whole lines; with splits > 1, blocks add the carry-in
#define VKML_SCAN_STAGE_TOTALS 1  // write each block's total for a later carry-in
#define VKML_SCAN_ITEMS 4         // consecutive elements per thread in a workgroup tile

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct ReduceParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer ReduceParams {
#endif
  uint64_t src;
  uint64_t out0;
  uint64_t out1;
  uint64_t partial;  // accumulator states, [nout][splits]
  int64_t nout;
  int64_t nred;   // reduced extent of this pass (the number of splits in the final pass)
  int64_t chunk;  // reduced elements per split
  int64_t count;  // reduced elements per output in total (mean's divisor)
  int64_t kept_sizes[VKML_REDUCE_MAX_DIMS];
  int64_t src_kept_strides[VKML_REDUCE_MAX_DIMS];
  int64_t out0_kept_strides[VKML_REDUCE_MAX_DIMS];
  int64_t out1_kept_strides[VKML_REDUCE_MAX_DIMS];
  int64_t red_sizes[VKML_REDUCE_MAX_DIMS];
  int64_t src_red_strides[VKML_REDUCE_MAX_DIMS];
  // Norm order and variance correction as double bits (f64 variants) and as floats, so that
  // variants without fp64 never touch a double.
  uint64_t p_bits;
  uint64_t correction_bits;
  float p_f32;
  float correction_f32;
  uint32_t kept_ndim;
  uint32_t red_ndim;
  uint32_t ox_log2;  // outputs per workgroup = 1 << ox_log2; the rest of the threads split r
  uint32_t ox_fast;  // 1: neighbouring threads take neighbouring outputs (column reductions)
  uint32_t stage;
  uint32_t splits;
  uint32_t out_groups;  // ceil(nout / outputs per workgroup)
  uint32_t norm_kind;
};

#ifdef __cplusplus
struct ScanParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer ScanParams {
#endif
  uint64_t src;
  uint64_t out0;
  uint64_t out1;
  uint64_t totals;  // block totals, [lines][splits]
  int64_t nlines;
  int64_t len;    // elements per line
  int64_t block;  // elements per split of a line
  int64_t src_stride;  // along the scanned dim
  int64_t out0_stride;
  int64_t out1_stride;
  int64_t line_sizes[VKML_REDUCE_MAX_DIMS];
  int64_t src_line_strides[VKML_REDUCE_MAX_DIMS];
  int64_t out0_line_strides[VKML_REDUCE_MAX_DIMS];
  int64_t out1_line_strides[VKML_REDUCE_MAX_DIMS];
  uint32_t line_ndim;
  uint32_t per_thread;  // 1: one thread scans a whole line; 0: one workgroup per line block
  uint32_t stage;
  uint32_t splits;
};

#ifdef __cplusplus
static_assert(sizeof(ReduceParams) == 8 * 8 + 6 * 8 * VKML_REDUCE_MAX_DIMS + 2 * 8 + 10 * 4);
static_assert(offsetof(ReduceParams, p_bits) == 8 * 8 + 6 * 8 * VKML_REDUCE_MAX_DIMS);
static_assert(offsetof(ReduceParams, kept_ndim) == offsetof(ReduceParams, p_f32) + 8);
static_assert(sizeof(ScanParams) == 10 * 8 + 4 * 8 * VKML_REDUCE_MAX_DIMS + 4 * 4);
static_assert(offsetof(ScanParams, line_ndim) == 10 * 8 + 4 * 8 * VKML_REDUCE_MAX_DIMS);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_REDUCE_PARAMS_H_
