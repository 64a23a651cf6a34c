// The loss family: pointwise losses and nll_loss, forward (per element or reduced) and backward.
#include "vkml/loss.h"

#include <algorithm>
#include <bit>
#include <string>

#include "ops/loss/loss_params.h"
#include "ops/nn_util.h"
#include "vkml/errors.h"
#include "vkml/index.h"
#include "vkml/ops.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;
// Reduced losses use at most this many workgroups, whose sums loss_finish adds.
constexpr int64_t kMaxPartials = 256;

struct Slots {
  std::array<const TensorDesc*, VKML_LOSS_SLOTS> tensor{};
  std::array<std::vector<int64_t>, VKML_LOSS_SLOTS> strides;  // over the common sizes
  void set(int s, const TensorDesc* t, std::vector<int64_t> st) {
    if (!t) return;
    tensor[s] = t;
    strides[s] = std::move(st);
  }
};

// Fills sizes and strides (coalesced over all used slots), pointers and dtype codes.
void fill_layout(LossParams& p, std::vector<int64_t> sizes, Slots& slots, bool coalesce,
                 const char* op) {
  std::vector<std::vector<int64_t>*> used;
  for (int s = 0; s < VKML_LOSS_SLOTS; ++s) {
    if (slots.tensor[s]) used.push_back(&slots.strides[s]);
  }
  p.numel = 1;
  for (int64_t v : sizes) p.numel *= v;
  if (coalesce) sizes = coalesce_dims(sizes, used);
  if (sizes.size() > VKML_LOSS_MAX_DIMS) {
    throw NotSupported(std::string("vkml: ") + op + " over too many non-mergeable dimensions");
  }
  p.ndim = static_cast<uint32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.sizes[d] = sizes[d];
    for (int s = 0; s < VKML_LOSS_SLOTS; ++s) {
      if (slots.tensor[s]) p.strides[s][d] = slots.strides[s][d];
    }
  }
  for (int s = 0; s < VKML_LOSS_SLOTS; ++s) {
    if (!slots.tensor[s]) continue;
    p.ptr[s] = slots.tensor[s]->address;
    // Targets are floats for pointwise losses and class indices for nll: callers set them.
    if (s != LOSS_Y) p.dtype[s] = nn::float_code(*slots.tensor[s], op);
  }
}

bool slots_need_fp64(const Device& dev, const Slots& slots, const TensorDesc* extra) {
  bool fp64 = extra && nn::needs_fp64(dev, {extra});
  for (const TensorDesc* t : slots.tensor) {
    if (t && dtype_is_float(t->dtype)) fp64 = nn::needs_fp64(dev, {t}) || fp64;
  }
  return fp64;
}

void check_scalar(const TensorDesc& t, const char* what) {
  if (t.numel() != 1) {
    throw InvalidArgument(std::string("vkml: ") + what + " must have one element, got " +
                          t.describe());
  }
}

// Records a forward: per element (kNone), else partial sums plus loss_finish when needed.
void run_forward(Device& dev, const std::string& kernel, LossParams& p, const Slots& slots,
                 bool fp64, const TensorDesc* result, const TensorDesc* total_weight) {
  std::vector<MemRange> reads, writes;
  for (int s = 0; s < VKML_LOSS_SLOTS; ++s) {
    if (slots.tensor[s]) (s == LOSS_OUT ? writes : reads).push_back(nn::range_of(*slots.tensor[s]));
  }
  if (result) writes.push_back(nn::range_of(*result));
  if (total_weight) writes.push_back(nn::range_of(*total_weight));
  if (p.error_flag) writes.push_back({p.error_flag, kIndexErrorBytes});
  bool none = p.reduction == LOSS_REDUCE_NONE;
  if (none) {
    if (p.numel == 0) return;
    nn::dispatch_groups(dev, nn::variant(dev, kernel, fp64, true), kWorkgroup,
                        nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
    return;
  }
  int64_t groups = std::min(nn::groups_for(p.numel, kWorkgroup), kMaxPartials);
  if (groups == 1) {
    nn::dispatch_groups(dev, nn::variant(dev, kernel, fp64, true), kWorkgroup, 1, &p, sizeof(p),
                        reads, writes);
    return;
  }
  uint64_t acc_bytes = fp64 ? 8 : 4;
  nn::Scratch partials(dev, static_cast<uint64_t>(groups) * 2 * acc_bytes);
  p.partials = partials.address();
  MemRange part = {partials.address(), static_cast<uint64_t>(groups) * 2 * acc_bytes};
  std::vector<MemRange> stage1_writes = {part};
  if (p.error_flag) stage1_writes.push_back({p.error_flag, kIndexErrorBytes});
  nn::dispatch_groups(dev, nn::variant(dev, kernel, fp64, true), kWorkgroup, groups, &p, sizeof(p),
                      reads, stage1_writes);
  p.partial_count = groups;
  MemRange finish_reads[] = {part};
  nn::dispatch_groups(dev, nn::variant(dev, "loss_finish", fp64, true), kWorkgroup, 1, &p,
                      sizeof(p), finish_reads, writes);
}

}  // namespace

void pointwise_loss(Device& dev, PointwiseLoss kind, const TensorDesc& out, const TensorDesc& input,
                    const TensorDesc& target, const TensorDesc* weight,
                    const TensorDesc* pos_weight, Reduction reduction, double param) {
  const char* op = "pointwise loss";
  nn::check_same_sizes(input, target, op);
  if (weight) nn::check_same_sizes(input, *weight, op);
  if (pos_weight) nn::check_same_sizes(input, *pos_weight, op);
  if (pos_weight && kind != PointwiseLoss::kBceWithLogits) {
    throw InvalidArgument("vkml: pos_weight belongs to binary_cross_entropy_with_logits");
  }
  LossParams p{};
  p.kind = static_cast<uint32_t>(kind);
  p.reduction = static_cast<uint32_t>(reduction);
  p.param = static_cast<float>(param);
  p.param_bits = std::bit_cast<uint64_t>(param);
  Slots slots;
  slots.set(LOSS_X, &input, input.strides);
  slots.set(LOSS_Y, &target, target.strides);
  slots.set(LOSS_W, weight, weight ? weight->strides : std::vector<int64_t>{});
  slots.set(LOSS_PW, pos_weight, pos_weight ? pos_weight->strides : std::vector<int64_t>{});
  if (reduction == Reduction::kNone) {
    nn::check_same_sizes(input, out, op);
    slots.set(LOSS_OUT, &out, out.strides);
  } else {
    check_scalar(out, "reduced loss output");
    p.result = out.address;
    p.result_dtype = nn::float_code(out, op);
  }
  fill_layout(p, input.sizes, slots, true, op);
  p.dtype[LOSS_Y] = nn::float_code(target, op);
  p.reduce_count = p.numel;
  bool fp64 = slots_need_fp64(dev, slots, &out);
  run_forward(dev, "loss_pointwise_fwd", p, slots, fp64,
              reduction == Reduction::kNone ? nullptr : &out, nullptr);
}

void pointwise_loss_backward(Device& dev, PointwiseLoss kind, const TensorDesc& grad_input,
                             const TensorDesc& grad_output, const TensorDesc& input,
                             const TensorDesc& target, const TensorDesc* weight,
                             Reduction reduction, double param) {
  const char* op = "pointwise loss backward";
  if (kind == PointwiseLoss::kBceWithLogits) {
    throw NotSupported("vkml: binary_cross_entropy_with_logits backward is composite in PyTorch");
  }
  nn::check_same_sizes(input, target, op);
  nn::check_same_sizes(input, grad_input, op);
  if (weight) nn::check_same_sizes(input, *weight, op);
  LossParams p{};
  p.kind = static_cast<uint32_t>(kind);
  p.reduction = static_cast<uint32_t>(reduction);
  p.param = static_cast<float>(param);
  p.param_bits = std::bit_cast<uint64_t>(param);
  Slots slots;
  slots.set(LOSS_X, &input, input.strides);
  slots.set(LOSS_Y, &target, target.strides);
  slots.set(LOSS_W, weight, weight ? weight->strides : std::vector<int64_t>{});
  slots.set(LOSS_OUT, &grad_input, grad_input.strides);
  if (reduction == Reduction::kNone) {
    nn::check_same_sizes(input, grad_output, op);
    slots.set(LOSS_GO, &grad_output, grad_output.strides);
  } else {
    check_scalar(grad_output, "grad_output of a reduced loss");
    slots.set(LOSS_GO, &grad_output, std::vector<int64_t>(input.ndim(), 0));
  }
  fill_layout(p, input.sizes, slots, true, op);
  p.dtype[LOSS_Y] = nn::float_code(target, op);
  p.reduce_count = p.numel;
  bool fp64 = slots_need_fp64(dev, slots, nullptr);
  if (p.numel == 0) return;
  MemRange reads[] = {nn::range_of(input), nn::range_of(target), nn::range_of(grad_output),
                      weight ? nn::range_of(*weight) : MemRange{}};
  MemRange writes[] = {nn::range_of(grad_input)};
  nn::dispatch_groups(dev, nn::variant(dev, "loss_pointwise_bwd", fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

namespace {

// Checks nll_loss shapes; returns the class dim of input (-1 for a 1-D input).
int nll_class_dim(const TensorDesc& input, const TensorDesc& target, const TensorDesc* weight) {
  if (input.ndim() < 1 || input.ndim() > VKML_LOSS_MAX_DIMS) {
    throw InvalidArgument("vkml: nll_loss input must have 1 to 8 dims, got " + input.describe());
  }
  int class_dim = input.ndim() == 1 ? 0 : 1;
  std::vector<int64_t> sample_sizes;
  for (int d = 0; d < input.ndim(); ++d) {
    if (d != class_dim) sample_sizes.push_back(input.sizes[d]);
  }
  if (target.sizes != sample_sizes) {
    throw InvalidArgument("vkml: nll_loss target " + target.describe() +
                          " does not match the samples of input " + input.describe());
  }
  if (weight && (weight->ndim() != 1 || weight->sizes[0] != input.sizes[class_dim])) {
    throw InvalidArgument("vkml: nll_loss weight must have one element per class, got " +
                          weight->describe());
  }
  return class_dim;
}

}  // namespace

void nll_loss(Device& dev, const TensorDesc& out, const TensorDesc* total_weight,
              const TensorDesc& input, const TensorDesc& target, const TensorDesc* weight,
              Reduction reduction, int64_t ignore_index, uint64_t error_flag) {
  int class_dim = nll_class_dim(input, target, weight);
  LossParams p{};
  p.kind = LOSS_NLL;
  p.reduction = static_cast<uint32_t>(reduction);
  p.ignore_index = ignore_index;
  p.classes = input.sizes[class_dim];
  p.class_stride = input.strides[class_dim];
  p.weight_stride = weight ? weight->strides[0] : 0;
  p.single_sample = input.ndim() == 1 ? 1 : 0;
  Slots slots;
  slots.set(LOSS_X, &input, nn::strides_without(input, class_dim));
  slots.set(LOSS_Y, &target, target.strides);
  if (reduction == Reduction::kNone) {
    nn::check_same_sizes(target, out, "nll_loss");
    slots.set(LOSS_OUT, &out, out.strides);
  } else {
    check_scalar(out, "nll_loss output");
    p.result = out.address;
    p.result_dtype = nn::float_code(out, "nll_loss");
  }
  if (total_weight) {
    check_scalar(*total_weight, "total_weight");
    p.total_weight = total_weight->address;
    p.total_weight_dtype = nn::float_code(*total_weight, "total_weight");
  }
  fill_layout(p, target.sizes, slots, true, "nll_loss");
  p.dtype[LOSS_Y] = nn::index_code(target, "nll_loss target");
  if (weight) {  // indexed by class, not by sample: outside the slot layout
    p.ptr[LOSS_W] = weight->address;
    p.dtype[LOSS_W] = nn::float_code(*weight, "nll_loss weight");
  }
  bool fp64 = slots_need_fp64(dev, slots, weight) || out.dtype == DType::kF64;
  Slots with_weight = slots;
  if (weight) with_weight.tensor[LOSS_W] = weight;
  p.error_flag = error_flag;
  run_forward(dev, "nll_fwd", p, with_weight, fp64, reduction == Reduction::kNone ? nullptr : &out,
              total_weight);
}

void nll_loss_backward(Device& dev, const TensorDesc& grad_input, const TensorDesc& grad_output,
                       const TensorDesc& target, const TensorDesc* weight, Reduction reduction,
                       int64_t ignore_index, const TensorDesc& total_weight,
                       uint64_t error_flag) {
  int class_dim = nll_class_dim(grad_input, target, weight);
  LossParams p{};
  p.kind = LOSS_NLL;
  p.reduction = static_cast<uint32_t>(reduction);
  p.ignore_index = ignore_index;
  p.classes = grad_input.sizes[class_dim];
  p.class_stride = grad_input.strides[class_dim];
  p.weight_stride = weight ? weight->strides[0] : 0;
  Slots slots;
  slots.set(LOSS_OUT, &grad_input, nn::strides_without(grad_input, class_dim));
  slots.set(LOSS_Y, &target, target.strides);
  if (reduction == Reduction::kNone) {
    nn::check_same_sizes(target, grad_output, "nll_loss_backward");
    slots.set(LOSS_GO, &grad_output, grad_output.strides);
  } else {
    check_scalar(grad_output, "nll_loss grad_output");
    slots.set(LOSS_GO, &grad_output, std::vector<int64_t>(target.ndim(), 0));
  }
  check_scalar(total_weight, "total_weight");
  p.total_weight = total_weight.address;
  p.total_weight_dtype = nn::float_code(total_weight, "total_weight");
  fill_layout(p, target.sizes, slots, true, "nll_loss_backward");
  p.dtype[LOSS_Y] = nn::index_code(target, "nll_loss target");
  if (weight) {
    p.ptr[LOSS_W] = weight->address;
    p.dtype[LOSS_W] = nn::float_code(*weight, "nll_loss weight");
  }
  bool fp64 = slots_need_fp64(dev, slots, weight) || total_weight.dtype == DType::kF64;
  // Zeros everywhere (a buffer fill where grad_input is dense), then one write per sample at its
  // target class. An element-wise pass over a language model's logits, each element dividing its
  // index into coordinates, is far slower (docs/design/elementwise.md#nll-backward).
  fill(dev, grad_input, Scalar::from_double(0.0));
  if (p.numel == 0 || grad_input.numel() == 0) return;
  MemRange reads[] = {nn::range_of(target), nn::range_of(grad_output),
                      weight ? nn::range_of(*weight) : MemRange{}, nn::range_of(total_weight)};
  MemRange writes[] = {nn::range_of(grad_input), {error_flag, error_flag ? kIndexErrorBytes : 0}};
  p.error_flag = error_flag;
  nn::dispatch_groups(dev, nn::variant(dev, "nll_bwd", fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

}  // namespace vkml::ops
