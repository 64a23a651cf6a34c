// Parameters of the mask scan shaders (mask_scan.comp): count the set elements of a mask per
// block, scan the block counts, then write each set element's output at its rank. nonzero,
// masked_select and masked_scatter are the three ways of writing. Shared by C++ and GLSL.
#ifndef VKML_OPS_MASK_SCAN_PARAMS_H_
#define VKML_OPS_MASK_SCAN_PARAMS_H_

#define VKML_MASK_SCAN_MAX_DIMS 8
#define VKML_MASK_SCAN_THREADS 256
#define VKML_MASK_SCAN_ROUNDS 4
// Elements per block.
#define VKML_MASK_SCAN_BLOCK (VKML_MASK_SCAN_THREADS * VKML_MASK_SCAN_ROUNDS)

#define VKML_MASK_SCAN_NONZERO 0  // out[rank][d] = coordinate d of the element (int64)
#define VKML_MASK_SCAN_SELECT 1   // out[rank] = data[element]
#define VKML_MASK_SCAN_SCATTER 2  // data[element] = src[rank] (src walked in row-major order)

// How a mask element reads as set: any bit (integers, bool), float (-0.0 counts as zero), or
// complex64 (set where either float part is nonzero).
#define VKML_MASK_KIND_BITS 0
#define VKML_MASK_KIND_FLOAT 1
#define VKML_MASK_KIND_COMPLEX 2

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct MaskScanParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer MaskScanParams {
#endif
  int64_t numel;
  int64_t sizes[VKML_MASK_SCAN_MAX_DIMS];
  int64_t mask_strides[VKML_MASK_SCAN_MAX_DIMS];
  int64_t data_strides[VKML_MASK_SCAN_MAX_DIMS];
  int64_t src_sizes[VKML_MASK_SCAN_MAX_DIMS];
  int64_t src_strides[VKML_MASK_SCAN_MAX_DIMS];
  uint64_t mask;
  uint64_t data;
  uint64_t dst;     // nonzero: coordinates; select: values
  uint64_t src;     // scatter: source values
  uint64_t blocks;  // int64 per block: its count, then its exclusive offset; [nblocks] = total
  int64_t nblocks;
  int64_t out_stride0;  // per rank
  int64_t out_stride1;  // nonzero: per coordinate
  int64_t src_numel;    // scatter: ranks at or past this are skipped
  uint32_t ndim;
  uint32_t src_ndim;
  uint32_t mode;
  uint32_t mask_kind;  // VKML_MASK_KIND_*: what counts as zero
  uint32_t data_bytes;
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(offsetof(MaskScanParams, mask) == 8 + 5 * 8 * VKML_MASK_SCAN_MAX_DIMS);
static_assert(sizeof(MaskScanParams) == offsetof(MaskScanParams, ndim) + 6 * 4);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_MASK_SCAN_PARAMS_H_
