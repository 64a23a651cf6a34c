// Parameters of the fused optimizer shaders (Adam/AdamW, SGD, Adagrad), shared by C++ and GLSL.
#ifndef VKML_OPS_OPTIM_PARAMS_H_
#define VKML_OPS_OPTIM_PARAMS_H_

// Parameters updated by one dispatch; longer lists take several dispatches.
#define VKML_OPTIM_MAX_TENSORS 64
#define VKML_OPTIM_MAX_STATES 3

// Hyperparameter slots (`hyper` / `hyper_f64`); their meaning depends on the optimizer.
// 1 - beta is computed on the host in double: in float it would cancel (1 - 0.999f is off by
// 1.3e-5 relative).
#define VKML_OPTIM_LR 0
#define VKML_OPTIM_BETA1 1  // SGD: momentum
#define VKML_OPTIM_BETA2 2  // Adagrad: lr_decay
#define VKML_OPTIM_WEIGHT_DECAY 3
#define VKML_OPTIM_EPS 4
#define VKML_OPTIM_ONE_MINUS_BETA1 5  // SGD: 1 - dampening
#define VKML_OPTIM_ONE_MINUS_BETA2 6
#define VKML_OPTIM_NUM_HYPER 7

#define VKML_OPTIM_FLAG_ADAMW 1u  // decoupled weight decay
#define VKML_OPTIM_FLAG_AMSGRAD 2u
#define VKML_OPTIM_FLAG_MAXIMIZE 4u
#define VKML_OPTIM_FLAG_NESTEROV 8u
#define VKML_OPTIM_FLAG_FIRST_STEP 16u  // SGD: the momentum buffer starts as the gradient
#define VKML_OPTIM_FLAG_MOMENTUM 32u    // SGD: state[0] is a momentum buffer

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
#endif

// One parameter: all its tensors are dense, of one dtype, with the same sizes and strides, so
// element e of each is at address + e * element size. `start` is the index of its first element
// in the concatenation of the dispatch's parameters (threads find theirs by binary search).
struct OptimTensor {
  uint64_t param;
  uint64_t grad;
  uint64_t state[VKML_OPTIM_MAX_STATES];  // Adam: exp_avg, exp_avg_sq, max_exp_avg_sq
  uint64_t step;                          // f32 step count (Adam, Adagrad)
  int64_t start;
};

#ifdef __cplusplus
struct OptimParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer OptimParams {
#endif
  uint64_t lr_tensor;   // f32 learning rate on the device, or 0 for hyper[VKML_OPTIM_LR]
  uint64_t grad_scale;  // f32: grads are divided by it and stored back, or 0
  uint64_t found_inf;   // f32: nonzero skips the step, or 0
  int64_t total;        // elements of all parameters together
  uint32_t count;       // entries in `tensors`
  uint32_t flags;       // VKML_OPTIM_FLAG_*
  float hyper[VKML_OPTIM_NUM_HYPER];
  // log(beta1), log(beta2), computed in double: the bias corrections 1 - beta^step use them.
  float log_beta1;
  float log_beta2;
  uint32_t pad;
  uint64_t hyper_f64[VKML_OPTIM_NUM_HYPER];  // the same as double bit patterns (fp64 variants)
  OptimTensor tensors[VKML_OPTIM_MAX_TENSORS];
};

#ifdef __cplusplus
static_assert(sizeof(OptimTensor) == 7 * 8);
static_assert(offsetof(OptimParams, hyper) == 40);
static_assert(offsetof(OptimParams, hyper_f64) == 80);
static_assert(offsetof(OptimParams, tensors) == 80 + 8 * VKML_OPTIM_NUM_HYPER);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_OPTIM_PARAMS_H_
