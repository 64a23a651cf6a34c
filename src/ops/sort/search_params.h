// Parameters of searchsorted/bucketize, shared by C++ and GLSL: one thread per query does a binary
// search in its line of sorted boundaries (optionally read through a `sorter` permutation).
#ifndef VKML_OPS_SEARCH_PARAMS_H_
#define VKML_OPS_SEARCH_PARAMS_H_

#define VKML_SEARCH_MAX_DIMS 8

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct SearchParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer SearchParams {
#endif
  int64_t numel;                        // queries
  int64_t n;                            // boundaries per line
  int64_t sizes[VKML_SEARCH_MAX_DIMS];  // query dims
  int64_t q_strides[VKML_SEARCH_MAX_DIMS];
  int64_t out_strides[VKML_SEARCH_MAX_DIMS];
  int64_t b_strides[VKML_SEARCH_MAX_DIMS];  // boundary line per query (0 for 1-D boundaries)
  int64_t s_strides[VKML_SEARCH_MAX_DIMS];  // sorter line per query
  int64_t b_last_stride;
  int64_t s_last_stride;
  uint64_t queries;
  uint64_t boundaries;
  uint64_t sorter;  // int64 permutation of each boundary line, 0 when absent
  uint64_t result;
  uint32_t ndim;
  uint32_t right;      // upper bound (count of boundaries <= query) instead of lower bound
  uint32_t out_int32;  // int32 output instead of int64
  uint32_t elem_bytes;
};
#ifdef __cplusplus
static_assert(sizeof(SearchParams) == 2 * 8 + 5 * 8 * VKML_SEARCH_MAX_DIMS + 6 * 8 + 4 * 4);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_SEARCH_PARAMS_H_
