// multi_margin_loss and multilabel_margin_loss, forward and backward (see margin.comp).
#include <bit>
#include <string>

#include "ops/loss/margin_params.h"
#include "ops/nn_util.h"
#include "vkml/errors.h"
#include "vkml/index.h"
#include "vkml/loss.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;

MarginParams build(const Device& dev, const MarginArgs& a, bool& fp64) {
  const TensorDesc& x = *a.input;
  const TensorDesc& t = *a.target;
  if (x.ndim() != 2 || t.ndim() != 2 || t.sizes[0] != x.sizes[0] ||
      (a.multilabel && t.sizes[1] != x.sizes[1])) {
    throw InvalidArgument("vkml: margin loss input " + x.describe() + " and target " +
                          t.describe() + " do not match");
  }
  MarginParams p{};
  p.error_flag = a.error_flag;
  p.x = x.address;
  p.target = t.address;
  p.frames = x.sizes[0];
  p.classes = x.sizes[1];
  p.in_strides[0] = x.strides[0];
  p.in_strides[1] = x.strides[1];
  p.target_strides[0] = t.strides[0];
  p.target_strides[1] = t.strides[1];
  p.kind = a.multilabel ? MARGIN_MULTILABEL : MARGIN_MULTI;
  p.p = static_cast<uint32_t>(a.p);
  p.margin_bits = std::bit_cast<uint64_t>(a.margin);
  p.margin_f = static_cast<float>(a.margin);
  p.reduction = static_cast<uint32_t>(a.reduction);
  p.dtype_in = nn::float_code(x, "margin loss input");
  p.dtype_target = nn::index_code(t, "margin loss target");
  if (!a.multilabel && a.p != 1 && a.p != 2) {
    throw InvalidArgument("vkml: multi_margin_loss supports p == 1 and p == 2 only");
  }
  if (a.weight) {
    if (a.weight->ndim() != 1 || a.weight->sizes[0] != p.classes) {
      throw InvalidArgument("vkml: multi_margin_loss weight must have one element per class");
    }
    p.weight = a.weight->address;
    p.weight_stride = a.weight->strides[0];
    p.dtype_weight = nn::float_code(*a.weight, "margin loss weight");
  }
  if (a.multilabel) {
    if (!a.is_target) throw InvalidArgument("vkml: multilabel_margin_loss needs is_target");
    nn::check_same_sizes(*a.is_target, x, "multilabel_margin_loss is_target");
    p.is_target = a.is_target->address;
    p.is_target_strides[0] = a.is_target->strides[0];
    p.is_target_strides[1] = a.is_target->strides[1];
    p.dtype_is_target = nn::float_code(*a.is_target, "is_target");
  }
  fp64 = nn::needs_fp64(dev, {&x}) || (a.weight && nn::needs_fp64(dev, {a.weight}));
  return p;
}

std::vector<MemRange> operand_ranges(const MarginArgs& a) {
  std::vector<MemRange> r = {nn::range_of(*a.input), nn::range_of(*a.target)};
  if (a.weight) r.push_back(nn::range_of(*a.weight));
  return r;
}

MemRange error_range(const MarginArgs& a) {
  return {a.error_flag, a.error_flag ? kIndexErrorBytes : 0};
}

}  // namespace

void margin_loss(Device& dev, const MarginArgs& args, const TensorDesc& out) {
  bool fp64 = false;
  MarginParams p = build(dev, args, fp64);
  fp64 = fp64 || nn::needs_fp64(dev, {&out});
  const bool none = args.reduction == Reduction::kNone;
  if ((none && (out.ndim() != 1 || out.sizes[0] != p.frames)) || (!none && out.numel() != 1)) {
    throw InvalidArgument("vkml: margin loss output " + out.describe() + " has the wrong shape");
  }
  p.loss = out.address;
  p.out_stride = none ? out.strides[0] : 0;
  p.dtype_out = nn::float_code(out, "margin loss output");
  if (none && p.frames == 0) return;
  std::vector<MemRange> reads = operand_ranges(args);
  std::vector<MemRange> writes = {nn::range_of(out), error_range(args)};
  if (args.multilabel) writes.push_back(nn::range_of(*args.is_target));
  int64_t groups = none ? nn::groups_for(p.frames, kWorkgroup) : 1;
  nn::dispatch_groups(dev, nn::variant(dev, "margin_fwd", fp64, true), kWorkgroup, groups, &p,
                      sizeof(p), reads, writes);
}

void margin_loss_backward(Device& dev, const MarginArgs& args, const TensorDesc& grad,
                          const TensorDesc& grad_output) {
  bool fp64 = false;
  MarginParams p = build(dev, args, fp64);
  fp64 = fp64 || nn::needs_fp64(dev, {&grad, &grad_output});
  nn::check_same_sizes(grad, *args.input, "margin loss backward");
  const bool none = args.reduction == Reduction::kNone;
  if ((none && grad_output.numel() != p.frames) || (!none && grad_output.numel() != 1)) {
    throw InvalidArgument("vkml: margin loss grad_output " + grad_output.describe() +
                          " has the wrong shape");
  }
  p.grad = grad.address;
  p.grad_strides[0] = grad.strides[0];
  p.grad_strides[1] = grad.strides[1];
  p.grad_out = grad_output.address;
  p.grad_out_stride = none && grad_output.ndim() == 1 ? grad_output.strides[0] : 0;
  p.dtype_grad = nn::float_code(grad, "margin loss grad");
  p.dtype_grad_out = nn::float_code(grad_output, "margin loss grad_output");
  if (grad.numel() == 0) return;
  std::vector<MemRange> reads = operand_ranges(args);
  reads.push_back(nn::range_of(grad_output));
  if (args.multilabel) reads.push_back(nn::range_of(*args.is_target));
  MemRange writes[] = {nn::range_of(grad), error_range(args)};
  nn::dispatch_groups(dev, nn::variant(dev, "margin_bwd", fp64, false), kWorkgroup,
                      nn::groups_for(p.frames * p.classes, kWorkgroup), &p, sizeof(p), reads,
                      writes);
}

}  // namespace vkml::ops
