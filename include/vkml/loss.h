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
// is not ignore_index gives NaN (a device cannot raise; the CPU raises IndexError).
void nll_loss(Device& dev, const TensorDesc& out, const TensorDesc* total_weight,
              const TensorDesc& input, const TensorDesc& target, const TensorDesc* weight,
              Reduction reduction, int64_t ignore_index);

void nll_loss_backward(Device& dev, const TensorDesc& grad_input, const TensorDesc& grad_output,
                       const TensorDesc& target, const TensorDesc* weight, Reduction reduction,
                       int64_t ignore_index, const TensorDesc& total_weight);

}  // namespace vkml::ops
