// Fused optimizer steps (PyTorch's fused=True Adam/AdamW, SGD and Adagrad): one pass over each
// parameter reads and writes the parameter, its gradient and its state once. Steps, learning
// rate tensors, grad scales and found_inf flags stay on the device.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

enum class FusedOptimizer : uint32_t { kAdam = 0, kSgd = 1, kAdagrad = 2 };

struct FusedOptimizerConfig {
  FusedOptimizer kind = FusedOptimizer::kAdam;
  double lr = 1e-3;                                                   // unless lr_tensor is given
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;  // Adam (eps: Adagrad too)
  double momentum = 0.0, dampening = 0.0;                             // SGD
  double lr_decay = 0.0;                                              // Adagrad
  bool adamw = false, amsgrad = false, maximize = false;
  bool nesterov = false, first_step = false;  // SGD: first_step starts buffers at the gradient
  const TensorDesc* lr_tensor = nullptr;      // f32, one element
  const TensorDesc* grad_scale = nullptr;     // f32, one element: grads are divided by it and
                                              // stored back unscaled
  const TensorDesc* found_inf = nullptr;      // f32, one element: nonzero skips the whole step
};

// One parameter and its state. All tensors have the parameter's dtype (f32, f16, bf16, or f64
// where caps allow), sizes and strides, and are dense without overlap (any dim order).
// state: Adam exp_avg, exp_avg_sq (+ max_exp_avg_sq with amsgrad); SGD the momentum buffer, or
// nothing when momentum is 0; Adagrad state_sum. step: f32 step count (Adam, Adagrad).
struct FusedOptimizerParam {
  TensorDesc param, grad;
  std::vector<TensorDesc> state;
  TensorDesc step;
};

// Updates every parameter in place, with the math of PyTorch's fused kernels in the op math
// type (float for f32/f16/bf16, double for f64). Parameters may mix dtypes.
void fused_optimizer_step(Device& dev, const FusedOptimizerConfig& config,
                          std::span<const FusedOptimizerParam> params);

}  // namespace vkml::ops
