// The row-norm fast path (norm_rows.cc / norm_rows.comp): layer and RMS norm over the last dims of
// contiguous f32/f16/bf16 activations whose rows are a multiple of 4 elements (at most 4096) and
// 16-byte aligned. Each returns false, recording nothing, when that does not hold; the caller
// then takes the general strided path. Arguments are validated by the caller.
#pragma once
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops::norm_rows {

bool forward(Device& dev, const TensorDesc& out, const TensorDesc* mean, const TensorDesc* rstd,
             const TensorDesc& input, const TensorDesc* weight, const TensorDesc* bias,
             int normalized_ndim, double eps, bool rms);

bool backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
              const TensorDesc* grad_bias, const TensorDesc& grad_out, const TensorDesc& input,
              const TensorDesc* mean, const TensorDesc& rstd, const TensorDesc* weight,
              int normalized_ndim, bool rms);

}  // namespace vkml::ops::norm_rows
