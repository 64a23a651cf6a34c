// Softmax and log_softmax along one dimension, forward and backward. Tensors are floating
// (f32, f16, bf16; f64 where the device computes in double), of any strides, and may differ in
// dtype (e.g. f16 input, f32 output); f16/bf16 compute in f32.
#pragma once
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// out = softmax(in) (or log_softmax) along `dim`, numerically stable (subtracts the row max).
void softmax(Device& dev, const TensorDesc& out, const TensorDesc& in, int dim, bool log);

// grad_input from grad_output and the forward's output along `dim`:
// softmax: y * (dy - sum(dy * y)); log_softmax: dy - exp(y) * sum(dy).
void softmax_backward(Device& dev, const TensorDesc& grad_input, const TensorDesc& grad_output,
                      const TensorDesc& output, int dim, bool log);

}  // namespace vkml::ops
