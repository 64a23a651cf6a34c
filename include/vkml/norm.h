// Normalizations, forward and backward: layer norm, RMS norm, group norm and batch norm (train
// with running-statistics update, and eval). Floating tensors of any strides; each tensor may have
// its own dtype (f32, f16, bf16; f64 where the device computes in double), f16/bf16 compute in f32.
// Optional tensors are passed as null pointers.
#pragma once
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// Normalizes over the last `normalized_ndim` dims of input. mean and rstd (= 1/sqrt(var + eps),
// biased variance) hold one value per leading index: shaped like input with the normalized dims
// of size 1, or any contiguous tensor of that many elements.
void layer_norm(Device& dev, const TensorDesc& out, const TensorDesc* mean, const TensorDesc* rstd,
                const TensorDesc& input, const TensorDesc* weight, const TensorDesc* bias,
                int normalized_ndim, double eps);

void layer_norm_backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
                         const TensorDesc* grad_bias, const TensorDesc& grad_out,
                         const TensorDesc& input, const TensorDesc& mean, const TensorDesc& rstd,
                         const TensorDesc* weight, int normalized_ndim);

// RMS norm: out = input * rstd * weight with rstd = 1/sqrt(mean(input^2) + eps).
void rms_norm(Device& dev, const TensorDesc& out, const TensorDesc* rstd, const TensorDesc& input,
              const TensorDesc* weight, int normalized_ndim, double eps);

void rms_norm_backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
                       const TensorDesc& grad_out, const TensorDesc& input, const TensorDesc& rstd,
                       const TensorDesc* weight, int normalized_ndim);

// Group norm of input [N, C, *] over `groups` groups of channels; mean and rstd are [N, groups];
// weight and bias are per channel.
void group_norm(Device& dev, const TensorDesc& out, const TensorDesc* mean, const TensorDesc* rstd,
                const TensorDesc& input, const TensorDesc* weight, const TensorDesc* bias,
                int64_t groups, double eps);

void group_norm_backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
                         const TensorDesc* grad_bias, const TensorDesc& grad_out,
                         const TensorDesc& input, const TensorDesc& mean, const TensorDesc& rstd,
                         const TensorDesc* weight, int64_t groups);

// Batch norm of input [N, C, *] per channel. Training: batch statistics (saved as save_mean and
// save_invstd when given) and, when given, running_mean/running_var updated in place as PyTorch
// does (momentum, unbiased variance). Eval: the running statistics normalize.
void batch_norm(Device& dev, const TensorDesc& out, const TensorDesc* save_mean,
                const TensorDesc* save_invstd, const TensorDesc& input, const TensorDesc* weight,
                const TensorDesc* bias, const TensorDesc* running_mean,
                const TensorDesc* running_var, bool training, double momentum, double eps);

// Training uses save_mean/save_invstd; eval uses running_mean/running_var and eps.
void batch_norm_backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
                         const TensorDesc* grad_bias, const TensorDesc& grad_out,
                         const TensorDesc& input, const TensorDesc* weight,
                         const TensorDesc* running_mean, const TensorDesc* running_var,
                         const TensorDesc* save_mean, const TensorDesc* save_invstd, bool training,
                         double eps);

}  // namespace vkml::ops
