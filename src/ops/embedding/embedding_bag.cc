// embedding_bag's forward (embedding_bag.comp). Its backward is composed by the bridge from
// index_select, embedding_dense_backward and scatter_add, which are deterministic.
#include <string>

#include "ops/embedding/embedding_bag_params.h"
#include "ops/nn_util.h"
#include "vkml/embedding.h"
#include "vkml/errors.h"
#include "vkml/index.h"
#include "vkml/ops.h"

namespace vkml::ops {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("vkml: embedding_bag: " + what);
}

}  // namespace

void embedding_bag(Device& dev, EmbeddingBagMode mode, const TensorDesc& output,
                   const TensorDesc& offset2bag, const TensorDesc& bag_size,
                   const TensorDesc* max_indices, const TensorDesc& weight,
                   const TensorDesc& indices, const TensorDesc& offsets,
                   const TensorDesc* per_sample_weights, int64_t padding_idx,
                   uint64_t error_flag) {
  require(weight.ndim() == 2 && indices.ndim() == 1 && offsets.ndim() == 1,
          "weight must be 2-D, indices and offsets 1-D");
  require(indices.dtype == offsets.dtype &&
              (indices.dtype == DType::kI64 || indices.dtype == DType::kI32),
          "indices and offsets must both be int32 or both int64");
  require(output.ndim() == 2 && output.sizes[1] == weight.sizes[1], "output must be (bags, D)");
  const int64_t bags = output.sizes[0];
  require(bags <= offsets.sizes[0], "more bags than offsets");
  require(offset2bag.dtype == DType::kI64 && offset2bag.ndim() == 1 &&
              offset2bag.sizes[0] == indices.sizes[0] && offset2bag.strides[0] == 1,
          "offset2bag must be contiguous int64 of indices' size");
  require(bag_size.dtype == DType::kI64 && bag_size.ndim() == 1 && bag_size.sizes[0] == bags &&
              bag_size.strides[0] == 1,
          "bag_size must be contiguous int64 (bags)");
  require((mode == EmbeddingBagMode::kMax) == (max_indices != nullptr),
          "max_indices are written exactly for max mode");
  if (max_indices) {
    require(max_indices->dtype == DType::kI64 && max_indices->sizes == output.sizes,
            "max_indices must be int64 (bags, D)");
  }
  if (per_sample_weights) {
    require(mode == EmbeddingBagMode::kSum, "per_sample_weights need sum mode");
    require(per_sample_weights->ndim() == 1 && per_sample_weights->sizes[0] == indices.sizes[0] &&
                per_sample_weights->dtype == weight.dtype,
            "per_sample_weights must match indices and weight's dtype");
  }
  EmbeddingBagParams p{};
  p.mode = static_cast<uint32_t>(mode);
  p.weight_dtype = nn::float_code(weight, "embedding_bag weight");
  p.output_dtype = nn::float_code(output, "embedding_bag output");
  p.index_dtype = indices.dtype == DType::kI64 ? nn::kI64 : nn::kI32;
  bool fp64 = nn::needs_fp64(dev, {&weight, &output});
  p.bags = bags;
  p.dim = weight.sizes[1];
  p.num_weights = weight.sizes[0];
  p.num_indices = indices.sizes[0];
  p.num_offsets = offsets.sizes[0];
  p.padding_idx = padding_idx;
  for (int k = 0; k < 2; ++k) {
    p.weight_strides[k] = weight.strides[k];
    p.output_strides[k] = output.strides[k];
    p.max_index_strides[k] = max_indices ? max_indices->strides[k] : 0;
  }
  p.index_stride = indices.strides[0];
  p.offset_stride = offsets.strides[0];
  p.psw_stride = per_sample_weights ? per_sample_weights->strides[0] : 0;
  p.weight = weight.address;
  p.indices = indices.address;
  p.offsets = offsets.address;
  p.per_sample_weights = per_sample_weights ? per_sample_weights->address : 0;
  p.result = output.address;
  p.offset2bag = offset2bag.address;
  p.bag_size = bag_size.address;
  p.max_indices = max_indices ? max_indices->address : 0;
  p.error_flag = error_flag;
  // Indices outside every bag (before the first offset, after the last with
  // include_last_offset) get bag -1, so backwards send them nothing.
  if (offset2bag.numel() > 0) fill(dev, offset2bag, Scalar::from_int(-1));
  p.numel = bags * p.dim;
  if (bags > 0 && p.dim == 0) fill(dev, bag_size, Scalar::from_int(0));
  if (p.numel == 0) return;
  constexpr uint32_t kWorkgroup = 256;
  MemRange reads[] = {nn::range_of(weight), nn::range_of(indices), nn::range_of(offsets),
                      per_sample_weights ? nn::range_of(*per_sample_weights) : MemRange{}};
  MemRange writes[] = {nn::range_of(output), nn::range_of(offset2bag), nn::range_of(bag_size),
                       max_indices ? nn::range_of(*max_indices) : MemRange{},
                       {error_flag, error_flag ? kIndexErrorBytes : 0}};
  nn::dispatch_groups(dev, nn::variant(dev, "embedding_bag", fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

}  // namespace vkml::ops
