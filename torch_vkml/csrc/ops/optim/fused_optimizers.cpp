// fused=True optimizers on vkml: _fused_adam_, _fused_adamw_, _fused_sgd_ and _fused_adagrad_
// (float and tensor learning rates), one core dispatch per dtype and up to 64 parameters. With
// GradScaler they unscale the grads and skip the step on inf/NaN on the device, no host sync.
#include <ATen/ops/empty_like.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <utility>
#include <vector>

#include "common/bridge.h"
#include "vkml/optim.h"

namespace torch_vkml::ops_fused_optimizers {

using vkml::ops::FusedOptimizer;
using vkml::ops::FusedOptimizerConfig;
using vkml::ops::FusedOptimizerParam;

// A learning rate given as a tensor: a CPU tensor is read as a number (no device sync); a vkml
// one is read by the kernel.
struct LearningRate {
  double value = 0.0;
  std::optional<at::Tensor> tensor;
};
LearningRate lr_from(double lr) { return {lr, std::nullopt}; }
LearningRate lr_from(const at::Tensor& lr) {
  if (lr.device().is_cpu()) return {lr.item<double>(), std::nullopt};
  return {0.0, lr};
}

// Every list has one tensor per parameter, on the parameters' device; all but the steps (f32)
// have the parameters' dtype.
void check_list(const char* op, at::TensorList list, const at::Tensor& first, size_t count,
                const char* name, bool same_dtype = true) {
  TORCH_CHECK(list.size() == count, op, ": ", name, " must have ", count, " tensors, got ",
              list.size());
  for (const at::Tensor& t : list) {
    TORCH_CHECK(t.device() == first.device(), op, ": all tensors must be on ", first.device(),
                ", found one on ", t.device());
    TORCH_CHECK(t.scalar_type() == first.scalar_type() || name == std::string("state_steps"), op,
                ": all tensors must have dtype ", first.scalar_type(), ", found ", t.scalar_type());
  }
}

// Checks a one-element float32 vkml tensor on the parameters' device (step, lr, grad_scale, ...).
void check_scalar(const char* op, const at::Tensor& t, const at::Tensor& first, const char* name) {
  TORCH_CHECK(t.device() == first.device(), op, ": ", name, " must be on ", first.device(),
              ", got ", t.device());
  TORCH_CHECK(t.numel() == 1 && t.scalar_type() == at::kFloat, op, ": ", name,
              " must be a one-element float32 tensor");
}

// The kernel walks a parameter, its grad and its state as flat arrays, so they must share one
// dense layout. Those that do not (a .grad assigned with other strides, a sliced parameter) go
// through a device temporary in the parameter's layout (contiguous if the parameter is not dense)
// and are copied back after the step where the kernel writes them.
class SharedLayout {
 public:
  at::Tensor reference(const at::Tensor& param) {
    return param.is_non_overlapping_and_dense()
               ? param
               : at::empty_like(param, at::MemoryFormat::Contiguous);
  }
  at::Tensor stage(const char* op, const at::Tensor& t, const at::Tensor& ref, bool written) {
    TORCH_CHECK(t.sizes() == ref.sizes(), op, ": expected a tensor of size ", ref.sizes(),
                " like its parameter, got ", t.sizes());
    if (t.strides() == ref.strides()) return t;
    at::Tensor tmp = at::empty_like(ref);
    tmp.copy_(t);
    if (written) copy_back_.emplace_back(t, tmp);
    return tmp;
  }
  void finish() {
    for (auto& [original, tmp] : copy_back_) original.copy_(tmp);
  }

 private:
  std::vector<std::pair<at::Tensor, at::Tensor>> copy_back_;
};

void run(const char* op, FusedOptimizerConfig config, const LearningRate& lr, at::TensorList params,
         at::TensorList grads, std::vector<at::TensorList> states, at::TensorList steps,
         const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  const at::Tensor& first = params[0];
  TORCH_CHECK(first.device().type() == kVkml, op, ": parameters must be vkml tensors");
  check_list(op, params, first, params.size(), "params");
  check_list(op, grads, first, params.size(), "grads");
  for (at::TensorList s : states) check_list(op, s, first, params.size(), "state");
  if (config.kind != FusedOptimizer::kSgd) {
    check_list(op, steps, first, params.size(), "state_steps", /*same_dtype=*/false);
    for (const at::Tensor& s : steps) check_scalar(op, s, first, "state_steps");
  }
  config.lr = lr.value;
  vkml::TensorDesc lr_desc, scale_desc, inf_desc;
  if (lr.tensor) {
    check_scalar(op, *lr.tensor, first, "lr");
    lr_desc = to_desc(*lr.tensor);
    config.lr_tensor = &lr_desc;
  }
  if (grad_scale) {
    check_scalar(op, *grad_scale, first, "grad_scale");
    scale_desc = to_desc(*grad_scale);
    config.grad_scale = &scale_desc;
  }
  if (found_inf) {
    check_scalar(op, *found_inf, first, "found_inf");
    inf_desc = to_desc(*found_inf);
    config.found_inf = &inf_desc;
  }
  c10::DeviceGuard guard(first.device());
  SharedLayout layout;
  std::vector<at::Tensor> staged;  // alive until the step is recorded
  std::vector<FusedOptimizerParam> list(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    at::Tensor ref = layout.reference(params[i]);
    staged.push_back(layout.stage(op, params[i], ref, /*written=*/true));
    list[i].param = to_desc(staged.back());
    staged.push_back(layout.stage(op, grads[i], ref, /*written=*/config.grad_scale != nullptr));
    list[i].grad = to_desc(staged.back());
    for (at::TensorList s : states) {
      staged.push_back(layout.stage(op, s[i], ref, /*written=*/true));
      list[i].state.push_back(to_desc(staged.back()));
    }
    if (config.kind != FusedOptimizer::kSgd) list[i].step = to_desc(steps[i]);
  }
  vkml::Device& dev = core_device(first);
  translate_errors([&] { vkml::ops::fused_optimizer_step(dev, config, list); });
  layout.finish();
}

template <bool kAdamW, typename Lr>
void fused_adam(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                at::TensorList state_steps, Lr lr, double beta1, double beta2, double weight_decay,
                double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf) {
  FusedOptimizerConfig c;
  c.kind = FusedOptimizer::kAdam;
  c.adamw = kAdamW;
  c.beta1 = beta1;
  c.beta2 = beta2;
  c.weight_decay = weight_decay;
  c.eps = eps;
  c.amsgrad = amsgrad;
  c.maximize = maximize;
  std::vector<at::TensorList> states{exp_avgs, exp_avg_sqs};
  if (amsgrad) states.push_back(max_exp_avg_sqs);
  run(kAdamW ? "_fused_adamw_" : "_fused_adam_", c, lr_from(lr), params, grads, states, state_steps,
      grad_scale, found_inf);
}

template <typename Lr>
void fused_sgd(at::TensorList params, at::TensorList grads, at::TensorList momentum_buffers,
               double weight_decay, double momentum, Lr lr, double dampening, bool nesterov,
               bool maximize, bool is_first_step, const std::optional<at::Tensor>& grad_scale,
               const std::optional<at::Tensor>& found_inf) {
  FusedOptimizerConfig c;
  c.kind = FusedOptimizer::kSgd;
  c.weight_decay = weight_decay;
  c.momentum = momentum;
  c.dampening = dampening;
  c.nesterov = nesterov;
  c.maximize = maximize;
  c.first_step = is_first_step;
  std::vector<at::TensorList> states;
  if (momentum != 0.0) states.push_back(momentum_buffers);
  run("_fused_sgd_", c, lr_from(lr), params, grads, states, {}, grad_scale, found_inf);
}

template <typename Lr>
void fused_adagrad(at::TensorList params, at::TensorList grads, at::TensorList state_sums,
                   at::TensorList state_steps, Lr lr, double lr_decay, double weight_decay,
                   double eps, bool maximize, const std::optional<at::Tensor>& grad_scale,
                   const std::optional<at::Tensor>& found_inf) {
  FusedOptimizerConfig c;
  c.kind = FusedOptimizer::kAdagrad;
  c.lr_decay = lr_decay;
  c.weight_decay = weight_decay;
  c.eps = eps;
  c.maximize = maximize;
  run("_fused_adagrad_", c, lr_from(lr), params, grads, {state_sums}, state_steps, grad_scale,
      found_inf);
}

// The functional forms (_fused_adam, ...) are composite in PyTorch and route to these.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_adam_", fused_adam<false, double>);
  m.impl("_fused_adam_.tensor_lr", fused_adam<false, const at::Tensor&>);
  m.impl("_fused_adamw_", fused_adam<true, double>);
  m.impl("_fused_adamw_.tensor_lr", fused_adam<true, const at::Tensor&>);
  m.impl("_fused_sgd_", fused_sgd<double>);
  m.impl("_fused_sgd_.tensor_lr", fused_sgd<const at::Tensor&>);
  m.impl("_fused_adagrad_", fused_adagrad<double>);
  m.impl("_fused_adagrad_.tensor_lr", fused_adagrad<const at::Tensor&>);
}

}  // namespace torch_vkml::ops_fused_optimizers
