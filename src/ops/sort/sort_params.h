// Parameters of the sort family's shaders, shared by C++ and GLSL.
// Every line (the elements along the sorted dim) becomes `padded` (key, index) pairs in scratch
// memory: keys are order-preserving uint64 images of the values, so one sort serves every dtype.
#ifndef VKML_OPS_SORT_PARAMS_H_
#define VKML_OPS_SORT_PARAMS_H_

#define VKML_SORT_MAX_DIMS 8
#define VKML_SORT_THREADS 256
#define VKML_SORT_BLOCK 2048  // pairs sorted in shared memory per workgroup (24 KiB)
#define VKML_RADIX_THREADS 256  // one thread per digit value in the radix kernels
#define VKML_RADIX_PER_THREAD 8
#define VKML_RADIX_TILE 2048  // VKML_RADIX_THREADS * VKML_RADIX_PER_THREAD pairs ranked per group
#define VKML_RADIX_SERIAL_TILES 64  // up to this many tiles per line, one thread scans a digit
#define VKML_RADIX_SERIAL_TILE 8192  // pairs per invocation in the CPU devices' variant
// How sort_gather writes values: copied from the input at the original position (bitonic keys),
// or computed back from radix keys of unsigned ints / bool, signed ints, floats.
#define VKML_SORT_VALUES_COPY 0
#define VKML_SORT_VALUES_UNSIGNED 1
#define VKML_SORT_VALUES_SIGNED 2
#define VKML_SORT_VALUES_FLOAT 3

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
  // Radix sort (lines of at least kRadixMinLength): keys/order above are the first of two
  // ping-pong buffers, lines are n (not padded) pairs apart.
  uint64_t keys_alt;   // second key buffer (64-bit words: radix_common.glsl has the layout)
  uint64_t order_alt;  // second position buffer
  uint64_t counts;     // uint32 [rows][256][tiles]: digit counts per tile, then their prefix
  uint64_t totals;     // uint32 [rows][256]: digit counts per line
  uint64_t skips;      // uint32 [16]: lines whose digit was constant (found by the scan), per
                       // pass, then lines whose key range shows it constant (0: bitonic sort)
  uint64_t bounds;     // uint64 [rows][2]: smallest key of each line and the keys' range
  int64_t tiles;       // tiles of tile_len pairs per line
  uint32_t pass;       // digit: bits [8 pass, 8 pass + 8) of the key
  uint32_t passes;     // 8-bit digits in the key: the dtype's width / 8
  uint32_t key_bytes;  // 4 (dtypes up to 32 bits) or 8
  uint32_t tile_len;   // pairs per tile: VKML_RADIX_TILE, or VKML_RADIX_SERIAL_TILE (CPU devices)
  uint32_t stage;       // radix_range: 0 per tile, 1 per line
  uint32_t value_kind;  // VKML_SORT_VALUES_*: how sort_gather gets values
};
#ifdef __cplusplus
static_assert(sizeof(SortParams) == 4 * 8 + 4 * 8 * VKML_SORT_MAX_DIMS + 3 * 8 + 5 * 8 + 2 * 8 +
                                        6 * 4 + 7 * 8 + 6 * 4);
static_assert(offsetof(SortParams, ndim) == offsetof(SortParams, out_count) + 8);
static_assert(offsetof(SortParams, keys_alt) == offsetof(SortParams, ndim) + 6 * 4);
static_assert(offsetof(SortParams, pass) == offsetof(SortParams, keys_alt) + 7 * 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_SORT_PARAMS_H_
