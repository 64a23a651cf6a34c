// Embedding lookups: embedding_dense_backward (the forward is index_select) and embedding_bag's
// forward (its backward composes index ops). Bad indices are never dereferenced; when
// `error_flag` is not 0 the first one is recorded there as an IndexErrorRecord (vkml/index.h).
#pragma once
#include <cstdint>
#include <optional>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// grad_weight (num_weights, D) = sum of grad rows (grad: indices.sizes + [D]) by index, in
// index order, skipping padding_idx; with counts_scratch (num_weights int64, any content) each
// row is scaled by 1 / (occurrences of its index) as scale_grad_by_freq does.
void embedding_backward(Device& dev, const TensorDesc& grad_weight, const TensorDesc& grad,
                        const TensorDesc& indices, std::optional<int64_t> padding_idx,
                        uint64_t counts_scratch = 0, uint64_t error_flag = 0);

enum class EmbeddingBagMode : uint32_t { kSum = 0, kMean = 1, kMax = 2 };

// embedding_bag forward. weight (num_weights, D) floating; indices and offsets 1-D, both int32
// or both int64; bag b holds indices [offsets[b], offsets[b+1]) (the last bag runs to the end
// when offsets has one entry per bag). Writes output (bags, D), offset2bag (num_indices, int64;
// -1 for indices in no bag), bag_size (bags, int64: non-padding entries) and, for kMax,
// max_indices (bags, D, int64; -1 for empty bags). per_sample_weights (num_indices, weight's
// dtype) scales rows (kSum). Entries equal to padding_idx (when >= 0) are skipped; others
// outside [0, num_weights) are skipped and recorded at error_flag.
void embedding_bag(Device& dev, EmbeddingBagMode mode, const TensorDesc& output,
                   const TensorDesc& offset2bag, const TensorDesc& bag_size,
                   const TensorDesc* max_indices, const TensorDesc& weight,
                   const TensorDesc& indices, const TensorDesc& offsets,
                   const TensorDesc* per_sample_weights, int64_t padding_idx,
                   uint64_t error_flag = 0);

}  // namespace vkml::ops
