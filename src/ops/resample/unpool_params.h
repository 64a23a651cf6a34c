// Parameters of max_unpool (unpool.comp), shared by C++ and GLSL. Tensors are (N, C, spatial...)
// with up to 3 spatial dims (missing ones have size 1); positions are flat within a plane.
#ifndef VKML_OPS_UNPOOL_PARAMS_H_
#define VKML_OPS_UNPOOL_PARAMS_H_

#ifdef __cplusplus
#include <cstdint>
namespace vkml::ops {
struct UnpoolParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer UnpoolParams {
#endif
  int64_t numel;  // invocations: input elements (winners) or output elements (write)
  int64_t channels;
  int64_t in_size[3];
  int64_t out_plane;  // output elements per (n, c) plane
  int64_t out_size[3];
  int64_t self_strides[5];  // N, C, D, H, W
  int64_t index_strides[5];
  int64_t out_strides[5];
  uint64_t self;
  uint64_t indices;  // int64
  uint64_t result;
  uint64_t winners;     // uint32 per output element: 1 + the last input position sent there
  uint64_t error_flag;  // IndexErrorRecord for an index outside the plane; 0: none
  uint32_t elem_bytes;
  uint32_t pad_;
};
#ifdef __cplusplus
static_assert(sizeof(UnpoolParams) == 3 * 8 + 3 * 8 + 3 * 8 + 15 * 8 + 5 * 8 + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_UNPOOL_PARAMS_H_
