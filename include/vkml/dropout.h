// Dropout, forward and backward, on floating tensors of any strides (f16/bf16 in f32, f64 in
// double where the device allows). The keep decisions are Bernoulli(1 - p) draws of the random
// family's Philox generator at (seed, offset), so a seed reproduces them on every device.
#pragma once
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// out = input * keep / (1 - p) (0 when p == 1), mask = keep (bool). out must not overlap input.
void dropout(Device& dev, const TensorDesc& out, const TensorDesc& mask, const TensorDesc& input,
             double p, uint64_t seed, uint64_t offset);

// grad_input = grad_output * mask * scale.
void dropout_backward(Device& dev, const TensorDesc& grad_input, const TensorDesc& grad_output,
                      const TensorDesc& mask, double scale);

}  // namespace vkml::ops
