// embedding_bag on vkml: _embedding_bag and _embedding_bag_forward_only run one kernel (sum,
// mean, max; offsets, include_last_offset, per_sample_weights, padding_idx); the dense backward
// and the per_sample_weights backward compose vkml ops (index_select, embedding_dense_backward,
// scatter_add), all deterministic. Bad indices raise after one host sync, as other index ops do
// (VKML_CHECK_INDICES=0 skips it).
#include <ATen/TensorUtils.h>
#include <ATen/ops/embedding_dense_backward.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/where.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include "common/index_util.h"
#include "common/nn_bridge.h"
#include "vkml/embedding.h"

namespace torch_vkml::ops_embedding_bag {

using vkml::ops::EmbeddingBagMode;

void check_arguments(const at::Tensor& weight, const at::Tensor& indices,
                     const at::Tensor& offsets, int64_t mode,
                     const std::optional<at::Tensor>& per_sample_weights,
                     bool include_last_offset) {
  auto indices_arg = at::TensorArg(indices, "indices", 1);
  at::checkScalarTypes("embedding_bag", indices_arg, {at::kLong, at::kInt});
  auto offsets_arg = at::TensorArg(offsets, "offsets", 1);
  at::checkScalarTypes("embedding_bag", offsets_arg, {at::kLong, at::kInt});
  at::checkSameType("embedding_bag", indices_arg, offsets_arg);
  auto weight_arg = at::TensorArg(weight, "weight", 1);
  at::checkScalarTypes("embedding_bag", weight_arg,
                       {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble});
  TORCH_CHECK(mode >= 0 && mode <= 2, "embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max)");
  TORCH_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ",
              weight.dim());
  TORCH_CHECK(indices.dim() == 1, "input has to be a 1D Tensor, but got Tensor of dimension ",
              indices.dim());
  TORCH_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ",
              offsets.dim());
  if (include_last_offset) {
    TORCH_CHECK(offsets.size(0) >= 1, "include_last_offset: number of offset should be at least 1");
  }
  if (per_sample_weights.has_value() && per_sample_weights->defined()) {
    TORCH_CHECK(mode == 0, "embedding_bag: per_sample_weights only supported with mode='sum'");
    auto psw_arg = at::TensorArg(*per_sample_weights, "per_sample_weights", 1);
    at::checkSameType("embedding_bag", weight_arg, psw_arg);
    TORCH_CHECK(per_sample_weights->dim() == 1);
    TORCH_CHECK(per_sample_weights->numel() == indices.numel());
  }
  for (const at::Tensor* t : {&indices, &offsets}) nn::check_on_device(weight, *t, "embedding_bag", "indices");
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag(
    const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
    bool scale_grad_by_freq, int64_t mode, bool sparse,
    const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
    int64_t padding_idx) {
  check_arguments(weight, indices, offsets, mode, per_sample_weights, include_last_offset);
  const at::Tensor& psw = nn::value_or_undefined(per_sample_weights);
  nn::check_on_device(weight, psw, "embedding_bag", "per_sample_weights");
  int64_t bags = offsets.size(0) - (include_last_offset ? 1 : 0);
  at::Tensor output = at::empty({bags, weight.size(1)}, weight.options());
  auto long_opts = indices.options().dtype(at::kLong);
  at::Tensor offset2bag = at::empty({indices.numel()}, long_opts);
  at::Tensor bag_size = at::empty({bags}, long_opts);
  bool is_max = mode == static_cast<int64_t>(EmbeddingBagMode::kMax);
  at::Tensor max_indices = at::empty(is_max ? at::IntArrayRef{bags, weight.size(1)}
                                            : at::IntArrayRef{0},
                                     long_opts);
  c10::DeviceGuard guard(weight.device());
  BadIndexCheck check(weight, indices.numel() > 0 && output.numel() > 0);
  nn::run_on(weight, [&](vkml::Device& dev) {
    vkml::TensorDesc mi = to_desc(max_indices), pw = nn::desc_or_empty(psw);
    vkml::ops::embedding_bag(dev, static_cast<EmbeddingBagMode>(mode), to_desc(output),
                             to_desc(offset2bag), to_desc(bag_size), is_max ? &mi : nullptr,
                             to_desc(weight), to_desc(indices), to_desc(offsets),
                             psw.defined() ? &pw : nullptr, padding_idx, check.address());
  });
  check.raise_if_bad(BadIndexError::kRuntime, [](int64_t v, uint32_t) {
    return "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be " +
           std::to_string(v);
  });
  return {output, offset2bag, bag_size, max_indices};
}

at::Tensor dense_backward(const at::Tensor& grad, const at::Tensor& indices,
                          const at::Tensor& offset2bag, const at::Tensor& bag_size,
                          const at::Tensor& maximum_indices, c10::SymInt num_weights_sym,
                          bool scale_grad_by_freq, int64_t mode,
                          const std::optional<at::Tensor>& per_sample_weights,
                          int64_t padding_idx) {
  int64_t num_weights = num_weights_sym.guard_int(__FILE__, __LINE__);
  nn::check_floating(grad, "embedding_bag_backward");
  if (mode == static_cast<int64_t>(EmbeddingBagMode::kMax)) {
    at::Tensor gw = at::zeros({num_weights, grad.size(1)}, grad.options());
    if (grad.numel() == 0) return gw;
    // Empty bags have index -1: they send nothing.
    at::Tensor valid = maximum_indices.ge(0);
    gw.scatter_add_(0, maximum_indices.clamp_min(0), grad.masked_fill(valid.logical_not(), 0));
    return gw;
  }
  // Indices in no bag (offset2bag -1) send nothing.
  at::Tensor in_bag = offset2bag.ge(0).unsqueeze(1);
  at::Tensor bag = offset2bag.to(at::kLong).clamp_min(0);
  at::Tensor per_index = grad.index_select(0, bag).masked_fill(in_bag.logical_not(), 0);
  const at::Tensor& psw = nn::value_or_undefined(per_sample_weights);
  if (psw.defined()) per_index = per_index.mul(psw.unsqueeze(1));
  if (mode == static_cast<int64_t>(EmbeddingBagMode::kMean)) {
    at::Tensor counts = bag_size.index_select(0, bag).clamp_min(1).to(grad.scalar_type());
    per_index = per_index.div(counts.unsqueeze(1));
  }
  return at::embedding_dense_backward(per_index, indices, num_weights, padding_idx,
                                      scale_grad_by_freq);
}

at::Tensor backward(const at::Tensor& grad, const at::Tensor& indices, const at::Tensor& offsets,
                    const at::Tensor& offset2bag, const at::Tensor& bag_size,
                    const at::Tensor& maximum_indices, c10::SymInt num_weights,
                    bool scale_grad_by_freq, int64_t mode, bool sparse,
                    const std::optional<at::Tensor>& per_sample_weights, int64_t padding_idx) {
  TORCH_CHECK_NOT_IMPLEMENTED(!sparse, "vkml: embedding_bag with sparse=True has no vkml kernel");
  return dense_backward(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                        scale_grad_by_freq, mode, per_sample_weights, padding_idx);
}

at::Tensor per_sample_weights_backward(const at::Tensor& grad, const at::Tensor& weight,
                                       const at::Tensor& indices, const at::Tensor& offsets,
                                       const at::Tensor& offset2bag, int64_t mode,
                                       int64_t padding_idx) {
  TORCH_CHECK(mode == static_cast<int64_t>(EmbeddingBagMode::kSum),
              "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  at::Tensor in_bag = offset2bag.ge(0).unsqueeze(1);
  at::Tensor rows = grad.index_select(0, offset2bag.to(at::kLong).clamp_min(0))
                        .masked_fill(in_bag.logical_not(), 0);
  at::Tensor picked = weight.index_select(0, indices);
  at::Tensor result = rows.mul(picked).sum(1);
  if (padding_idx >= 0) result = result.masked_fill(indices.eq(padding_idx), 0);
  return result;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_embedding_bag", embedding_bag);
  m.impl("_embedding_bag_forward_only", embedding_bag);
  m.impl("_embedding_bag_backward", backward);
  m.impl("_embedding_bag_dense_backward", dense_backward);
  m.impl("_embedding_bag_per_sample_weights_backward", per_sample_weights_backward);
}

}  // namespace torch_vkml::ops_embedding_bag
