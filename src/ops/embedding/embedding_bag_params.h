// Parameters of embedding_bag's forward (embedding_bag.comp), shared by C++ and GLSL.
// weight (num_weights, D); indices and offsets 1-D int32/int64; output (bags, D).
#ifndef VKML_OPS_EMBEDDING_BAG_PARAMS_H_
#define VKML_OPS_EMBEDDING_BAG_PARAMS_H_

#define EMBEDDING_BAG_SUM 0u
#define EMBEDDING_BAG_MEAN 1u
#define EMBEDDING_BAG_MAX 2u

#ifdef __cplusplus
#include <cstdint>
namespace vkml::ops {
struct EmbeddingBagParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer EmbeddingBagParams {
#endif
  int64_t numel;  // invocations: bags * D
  int64_t bags;
  int64_t dim;  // D
  int64_t num_weights;
  int64_t num_indices;
  int64_t num_offsets;
  int64_t padding_idx;  // < 0: none
  int64_t weight_strides[2];
  int64_t output_strides[2];
  int64_t max_index_strides[2];
  int64_t index_stride;
  int64_t offset_stride;
  int64_t psw_stride;
  uint64_t weight;
  uint64_t indices;
  uint64_t offsets;
  uint64_t per_sample_weights;  // 0: none
  uint64_t result;
  uint64_t offset2bag;   // int64 (num_indices), written by the d == 0 invocations
  uint64_t bag_size;     // int64 (bags)
  uint64_t max_indices;  // int64 (bags, D); 0 unless mode is max
  uint64_t error_flag;   // IndexErrorRecord for an index outside [0, num_weights); 0: none
  uint32_t mode;
  uint32_t weight_dtype;
  uint32_t output_dtype;
  uint32_t index_dtype;  // nn_load_index codes: int64 or int32
};
#ifdef __cplusplus
static_assert(sizeof(EmbeddingBagParams) == 7 * 8 + 6 * 8 + 3 * 8 + 9 * 8 + 4 * 4);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_EMBEDDING_BAG_PARAMS_H_
