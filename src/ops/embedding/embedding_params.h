// Push constants of embedding_bwd.comp (embedding_dense_backward from sorted indices), shared by
// C++ and GLSL. Element strides; addresses are buffer device addresses.
#ifndef VKML_OPS_EMBEDDING_PARAMS_H_
#define VKML_OPS_EMBEDDING_PARAMS_H_

#define VKML_EMBEDDING_KEYS_I32 1u  // the sorted indices are int32 (else int64)
#define VKML_EMBEDDING_SKIP 2u      // rows of padding_idx get no gradient

#ifdef __cplusplus
#include <cstdint>
namespace vkml::ops {
struct EmbeddingBwdParams {
#else
struct EmbeddingBwdParams {
#endif
  uint64_t keys;         // the n indices, sorted (stable)
  uint64_t positions;    // int64: each sorted index's position among the n
  uint64_t grad;         // n rows of `columns`
  uint64_t grad_weight;  // `rows` rows of `columns`, zeroed beforehand
  int64_t n;
  int64_t columns;
  int64_t rows;
  int64_t padding_idx;
  int64_t grad_row, grad_col;
  int64_t weight_row, weight_col;
  uint32_t flags;
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(sizeof(EmbeddingBwdParams) == 104);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_EMBEDDING_PARAMS_H_
