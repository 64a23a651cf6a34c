// Parameters of the sort family's shaders, shared by C++ and GLSL.
// Every line (the elements along the sorted dim) becomes `padded` (key, index) pairs in scratch
// memory: keys are order-preserving uint64 images of the values, so one sort serves every dtype.
#ifndef VKML_OPS_SORT_PARAMS_H_
#define VKML_OPS_SORT_PARAMS_H_

#define VKML_SORT_MAX_DIMS 8
#define VKML_SORT_THREADS 256
#define VKML_SORT_BLOCK 2048  // pairs sorted in shared memory per workgroup (24 KiB)

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct SortParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer SortParams {
#endif
  int64_t rows;                       // lines to sort
  int64_t n;                          // elements per line
  int64_t padded;                     // n rounded up to a power of two
  int64_t total;                      // rows * padded
  int64_t sizes[VKML_SORT_MAX_DIMS];  // the dims other than the sorted one
  int64_t in_strides[VKML_SORT_MAX_DIMS];
  int64_t val_strides[VKML_SORT_MAX_DIMS];
  int64_t idx_strides[VKML_SORT_MAX_DIMS];
  int64_t in_dim_stride;
  int64_t val_dim_stride;
  int64_t idx_dim_stride;
  uint64_t src;       // input values
  uint64_t vals;      // output values (0: not written)
  uint64_t idxs;      // output int64 indices (0: not written)
  uint64_t keys;      // scratch uint64[total]
  uint64_t order;     // scratch uint32[total]: original positions
  int64_t out_start;  // gather sorted positions [out_start, out_start + out_count)
  int64_t out_count;
  uint32_t ndim;
  uint32_t descending;
  uint32_t elem_bytes;
  uint32_t nan_first;  // median: NaN keys sort first, and a line holding one yields that NaN
  uint32_t k;          // bitonic stage (merge width) and step distance for sort_step
  uint32_t j;
  uint32_t pad0;
  uint32_t pad1;
};
#ifdef __cplusplus
static_assert(sizeof(SortParams) ==
              4 * 8 + 4 * 8 * VKML_SORT_MAX_DIMS + 3 * 8 + 5 * 8 + 2 * 8 + 8 * 4);
static_assert(offsetof(SortParams, ndim) == offsetof(SortParams, out_count) + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_SORT_PARAMS_H_
