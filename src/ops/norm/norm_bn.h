// The batch-norm fast path (norm_bn.cc / norm_bn.comp): dense NCHW or channels_last activations
// in f32/f16/bf16. Each returns false, recording nothing, when the layout or dtypes do not fit;
// the caller then takes the general strided path. Arguments are validated by the caller.
#pragma once
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops::norm_bn {

bool forward(Device& dev, const TensorDesc& out, const TensorDesc* save_mean,
             const TensorDesc* save_invstd, const TensorDesc& input, const TensorDesc* weight,
             const TensorDesc* bias, const TensorDesc* running_mean,
             const TensorDesc* running_var, bool training, double momentum, double eps);

bool backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
              const TensorDesc* grad_bias, const TensorDesc& grad_out, const TensorDesc& input,
              const TensorDesc* weight, const TensorDesc* running_mean,
              const TensorDesc* running_var, const TensorDesc* save_mean,
              const TensorDesc* save_invstd, bool training, double eps);

}  // namespace vkml::ops::norm_bn
