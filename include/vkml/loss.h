// Losses, forward and backward: nll_loss (any number of spatial dims, class weights,
// ignore_index) and pointwise losses (mse, smooth_l1, huber, binary_cross_entropy, the forward
// of binary_cross_entropy_with_logits). Floating tensors of any strides and dtypes (f16/bf16
// compute in f32, f64 in double where the device allows); reductions are deterministic.
#pragma once
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// ATen's reduction codes.
enum class Reduction : uint32_t { kNone = 0, kMean = 1, kSum = 2 };

enum class PointwiseLoss : uint32_t {
  kMse = 0,
  kSmoothL1 = 1,
  kHuber = 2,
  kBce = 3,
  kBceWithLogits = 4
};

// input, target (and weight, pos_weight when given) all have the shape of the loss elements
// (broadcast operands carry stride 0). out: that shape for kNone, else a single element.
// param: smooth_l1's beta or huber's delta.
void pointwise_loss(Device& dev, PointwiseLoss kind, const TensorDesc& out, const TensorDesc& input,
                    const TensorDesc& target, const TensorDesc* weight,
                    const TensorDesc* pos_weight, Reduction reduction, double param);

// grad_input of a pointwise loss (not kBceWithLogits); grad_output has the elements' shape for
// kNone, else one element.
void pointwise_loss_backward(Device& dev, PointwiseLoss kind, const TensorDesc& grad_input,
                             const TensorDesc& grad_output, const TensorDesc& input,
                             const TensorDesc& target, const TensorDesc* weight,
                             Reduction reduction, double param);

// nll_loss of input [N, C, d...] (or [C]) with class indices target [N, d...] (or []; int64,
// uint8 or int32) and optional class weights [C]. out: target's shape for kNone, else one
// element; total_weight: the summed weight of the counted targets. A target out of [0, C) that
// is not ignore_index gives NaN; when `error_flag` is the address of kIndexErrorBytes zeroed
// bytes (vkml/index.h), the first such target is recorded there for the caller to raise.
void nll_loss(Device& dev, const TensorDesc& out, const TensorDesc* total_weight,
              const TensorDesc& input, const TensorDesc& target, const TensorDesc* weight,
              Reduction reduction, int64_t ignore_index, uint64_t error_flag = 0);

// A target out of range writes nothing and is recorded in `error_flag` as in nll_loss.
void nll_loss_backward(Device& dev, const TensorDesc& grad_input, const TensorDesc& grad_output,
                       const TensorDesc& target, const TensorDesc* weight, Reduction reduction,
                       int64_t ignore_index, const TensorDesc& total_weight,
                       uint64_t error_flag = 0);

}  // namespace vkml::ops

namespace vkml::ops {

// CTC loss of log_probs [T, N, C] (f32 or f64) against class-index targets (int64, int32 or
// uint8). `lengths` is an int64 device table [3, N]: input lengths, target lengths and each
// item's first target element (an element offset into targets); labels of one item are
// `target_stride` elements apart. Writes nll [N] and log_alpha [N, T, 2 * max_target + 1]
// (-inf outside each item's lengths). A label out of [0, C) within an item's target length gives
// NaN and, when `error_flag` is not 0, is recorded there as in nll_loss.
struct CtcArgs {
  const TensorDesc* log_probs;
  const TensorDesc* targets;
  const TensorDesc* lengths;
  int64_t target_stride;
  int64_t max_target_length;
  int64_t blank;
  uint64_t error_flag = 0;
};
void ctc_loss(Device& dev, const CtcArgs& args, const TensorDesc& nll, const TensorDesc& log_alpha);

// grad [T, N, C] of sum(grad_out * nll) with respect to log_probs, from the forward's nll and
// log_alpha; zero past each input length, and for infinite losses when zero_infinity.
void ctc_loss_backward(Device& dev, const CtcArgs& args, const TensorDesc& grad,
                       const TensorDesc& grad_out, const TensorDesc& nll,
                       const TensorDesc& log_alpha, bool zero_infinity);

}  // namespace vkml::ops

namespace vkml::ops {

// multi_margin_loss / multilabel_margin_loss over input [frames, classes] (callers view a 1-D
// input as one frame). target: multi_margin [frames] class indices; multilabel [frames, classes]
// labels ending at the first negative one. out: [frames] for kNone (any stride), else one element.
// A class out of range (multi_margin: outside [0, C); multilabel: any label outside [-1, C)) gives
// NaN and, when `error_flag` is not 0, is recorded there as in nll_loss.
struct MarginArgs {
  const TensorDesc* input;   // 2-D
  const TensorDesc* target;  // 2-D: [frames, 1] for multi_margin
  const TensorDesc* weight;  // multi_margin, optional 1-D [classes]
  const TensorDesc* is_target;  // multilabel: [frames, classes], written forward, read backward
  bool multilabel;
  int p;          // multi_margin: 1 or 2
  double margin;  // multi_margin
  Reduction reduction;
  uint64_t error_flag = 0;
};
void margin_loss(Device& dev, const MarginArgs& args, const TensorDesc& out);

// grad [frames, classes]; grad_output: [frames] for kNone, else one element.
void margin_loss_backward(Device& dev, const MarginArgs& args, const TensorDesc& grad,
                          const TensorDesc& grad_output);

}  // namespace vkml::ops
