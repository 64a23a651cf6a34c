// The embedding family: embedding_dense_backward, either by sorting the indices and summing
// runs (embedding_bwd.comp) or through the index family's scatter kernel (index_launch.h),
// which also serves scale_grad_by_freq. embedding_bag is in embedding_bag.cc.
#include "vkml/embedding.h"

#include <algorithm>
#include <string>

#include "ops/embedding/embedding_params.h"
#include "ops/index/index_launch.h"
#include "ops/launch.h"
#include "vkml/errors.h"
#include "vkml/ops.h"
#include "vkml/sort.h"

namespace vkml::ops {

namespace {

// embedding_backward by sorting the indices (stably) and summing each run of equal ones
// (embedding_bwd.comp): every (run, column) pair in parallel. The index kernel's plain scheme
// gives each column one thread that walks all n positions, which is slow for a language model's
// tokens (docs/design/sort.md#embedding-backward). Same sums in the same order. False (nothing
// recorded) where the indices or grad's rows do not flatten to one stride.
bool embedding_backward_sorted(Device& dev, const TensorDesc& grad_weight, const TensorDesc& grad,
                               const TensorDesc& indices, std::optional<int64_t> padding_idx) {
  const int nd = indices.ndim();
  std::vector<int64_t> index_strides = indices.strides;
  std::vector<int64_t> row_strides(grad.strides.begin(), grad.strides.begin() + nd);
  const std::vector<int64_t> flat = coalesce_dims(indices.sizes, {&index_strides, &row_strides});
  if (flat.size() > 1) return false;
  const int64_t n = indices.numel(), columns = grad.sizes.back();
  const TensorDesc line{indices.address, indices.dtype, {n}, {flat.empty() ? 1 : index_strides[0]}};
  const uint64_t key_bytes = static_cast<uint64_t>(n) * dtype_size(indices.dtype);
  const uint64_t keys = dev.allocate(key_bytes);
  const uint64_t positions = dev.allocate(static_cast<uint64_t>(n) * 8);
  const TensorDesc sorted_keys{keys, indices.dtype, {n}, {1}};
  const TensorDesc sorted_positions{positions, DType::kI64, {n}, {1}};
  sort_lines(dev, line, 0, SortSelection{}, &sorted_keys, &sorted_positions);
  EmbeddingBwdParams p{};
  p.keys = keys;
  p.positions = positions;
  p.grad = grad.address;
  p.grad_weight = grad_weight.address;
  p.n = n;
  p.columns = columns;
  p.rows = grad_weight.sizes[0];
  p.padding_idx = padding_idx.value_or(0);
  p.grad_row = flat.empty() ? 0 : row_strides[0];
  p.grad_col = grad.strides.back();
  p.weight_row = grad_weight.strides[0];
  p.weight_col = grad_weight.strides[1];
  p.flags = (indices.dtype == DType::kI32 ? VKML_EMBEDDING_KEYS_I32 : 0u) |
            (padding_idx ? VKML_EMBEDDING_SKIP : 0u);
  const MemRange reads[] = {{keys, key_bytes}, {positions, static_cast<uint64_t>(n) * 8},
                            range_of(grad)};
  const MemRange writes[] = {range_of(grad_weight)};
  const uint32_t spec[] = {kElementwiseWorkgroup};
  const Pipeline& pipe =
      dev.pipeline("embedding_bwd_" + std::string(dtype_name(grad.dtype)), spec);
  const int64_t groups = (n * columns + kElementwiseWorkgroup - 1) / kElementwiseWorkgroup;
  dev.stream().dispatch(pipe, static_cast<uint32_t>(std::min<int64_t>(groups, kMaxGroupsX)), 1, 1,
                        &p, sizeof(p), reads, writes);
  dev.free(keys);  // later reuse waits for these dispatches (hazard tracking)
  dev.free(positions);
  return true;
}

}  // namespace

void embedding_backward(Device& dev, const TensorDesc& grad_weight, const TensorDesc& grad,
                        const TensorDesc& indices, std::optional<int64_t> padding_idx,
                        uint64_t counts_scratch, uint64_t error_flag) {
  check_index_dtype(indices, "embedding_backward");
  if (grad_weight.dtype != grad.dtype) {
    throw InvalidArgument("vkml: embedding_backward: dtypes differ: " + grad_weight.describe() +
                          " vs " + grad.describe());
  }
  if (grad_weight.ndim() != 2 || grad.ndim() != indices.ndim() + 1 ||
      grad.sizes.back() != grad_weight.sizes[1]) {
    throw InvalidArgument("vkml: embedding_backward: grad " + grad.describe() +
                          " does not match indices " + indices.describe() + " and weight " +
                          grad_weight.describe());
  }
  for (int d = 0; d < indices.ndim(); ++d) {
    if (grad.sizes[d] != indices.sizes[d]) {
      throw InvalidArgument("vkml: embedding_backward: grad and indices shapes differ");
    }
  }
  const int64_t num_weights = grad_weight.sizes[0];
  fill(dev, grad_weight, Scalar::from_int(0));
  if (grad.numel() == 0) return;
  if (!counts_scratch && embedding_backward_sorted(dev, grad_weight, grad, indices, padding_idx)) {
    return;
  }
  const int nd = indices.ndim() + 1;
  IndexOperandLayout idx = full_index(indices, num_weights, grad_weight.strides[0]);
  idx.strides.push_back(0);
  IndexLaunch l;
  if (counts_scratch) {
    // counts[k] = occurrences of k, accumulated by the same kernel over int64.
    TensorDesc counts{counts_scratch, DType::kI64, {num_weights}, {1}};
    fill(dev, counts, Scalar::from_int(0));
    IndexLaunch c;
    c.dtype = DType::kI64;
    c.mode = IndexMode::kSum;
    c.sizes = indices.sizes;
    c.serial.assign(c.sizes.size(), true);
    c.data = counts_scratch;
    c.data_strides.assign(c.sizes.size(), 0);
    c.data_range = range_of(counts);
    c.value_bits = 1;
    c.indices.push_back(full_index(indices, num_weights, 1));
    launch_index(dev, c);
    l.counts = counts_scratch;
    l.counts_range = range_of(counts);
  }
  l.dtype = grad.dtype;
  l.mode = IndexMode::kSum;
  l.sizes = grad.sizes;
  l.serial.assign(nd, true);
  l.serial[nd - 1] = false;  // threads own columns; rows (index order) are walked in order
  l.data = grad_weight.address;
  l.data_strides.assign(nd, 0);
  l.data_strides[nd - 1] = grad_weight.strides[1];
  l.data_range = range_of(grad_weight);
  l.values = grad.address;
  l.value_strides = grad.strides;
  l.values_range = range_of(grad);
  l.indices.push_back(idx);
  l.skip_index = padding_idx;
  l.error_flag = error_flag;
  launch_index(dev, l);
}

}  // namespace vkml::ops
