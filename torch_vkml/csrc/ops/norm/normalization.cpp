// Normalizations on vkml: native_layer_norm, _fused_rms_norm, native_group_norm, the batch-norm
// family (native_batch_norm, _native_batch_norm_legit, _batch_norm_with_update) and their
// backward ops. layer_norm, rms_norm, group_norm, batch_norm and instance_norm reach these
// through PyTorch's decompositions. Saved statistics have the CPU's dtypes.
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include <limits>
#include <sstream>
#include <tuple>

#include "common/nn_bridge.h"
#include "vkml/norm.h"

namespace torch_vkml::ops_normalization {

using Tensors3 = std::tuple<at::Tensor, at::Tensor, at::Tensor>;
using OptTensor = std::optional<at::Tensor>;

at::ScalarType acc_type(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}

// The dtype of saved statistics, as the CPU kernels choose it (param_scalar_type): float when
// the first given parameter's dtype differs from the input's (half input, float parameters),
// else the input's dtype. (CUDA keeps float32 statistics for half inputs; the CPU's choice is
// taken so results compare equal.) The kernels accumulate in float32 either way.
at::ScalarType stat_dtype(const at::Tensor& input,
                          std::initializer_list<const at::Tensor*> params) {
  for (const at::Tensor* t : params) {
    if (t->defined()) {
      return t->scalar_type() != input.scalar_type() ? acc_type(input.scalar_type())
                                                     : input.scalar_type();
    }
  }
  return input.scalar_type();
}

const vkml::TensorDesc* opt(const at::Tensor& t, vkml::TensorDesc& storage) {
  if (!t.defined()) return nullptr;
  storage = to_desc(t);
  return &storage;
}

// Shape checks with the messages of _check_layer_norm_inputs.
int64_t check_layer_norm(const at::Tensor& input, at::IntArrayRef normalized_shape,
                         const at::Tensor& weight, const at::Tensor& bias) {
  TORCH_CHECK(!normalized_shape.empty(),
              "Expected normalized_shape to be at least 1-dimensional, "
              "i.e., containing at least one element, but got normalized_shape = ",
              normalized_shape);
  TORCH_CHECK(!weight.defined() || weight.sizes().equals(normalized_shape),
              "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
              weight.sizes(), " and normalized_shape = ", normalized_shape);
  TORCH_CHECK(!bias.defined() || bias.sizes().equals(normalized_shape),
              "Expected bias to be of same shape as normalized_shape, but got bias of shape ",
              bias.sizes(), " and normalized_shape = ", normalized_shape);
  int64_t ndim = input.dim(), nnorm = static_cast<int64_t>(normalized_shape.size());
  if (ndim < nnorm || !input.sizes().slice(ndim - nnorm).equals(normalized_shape)) {
    std::ostringstream ss;
    ss << "Given normalized_shape=" << normalized_shape << ", expected input with shape [*";
    for (int64_t s : normalized_shape) ss << ", " << s;
    ss << "], but got input of size" << input.sizes();
    TORCH_CHECK(false, ss.str());
  }
  for (const at::Tensor* t : {&weight, &bias})
    nn::check_on_device(input, *t, "layer_norm", "weight");
  return ndim - nnorm;
}

// [leading dims..., 1, ..., 1]: the shape of per-row statistics.
std::vector<int64_t> stat_shape(const at::Tensor& input, int64_t axis) {
  std::vector<int64_t> s(input.sizes().begin(), input.sizes().begin() + axis);
  s.resize(input.dim(), 1);
  return s;
}

Tensors3 layer_norm(const at::Tensor& input, c10::SymIntArrayRef normalized_shape_sym,
                    const OptTensor& weight_opt, const OptTensor& bias_opt, double eps) {
  at::IntArrayRef normalized_shape = C10_AS_INTARRAYREF_SLOW(normalized_shape_sym);
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  const at::Tensor& bias = nn::value_or_undefined(bias_opt);
  int64_t axis = check_layer_norm(input, normalized_shape, weight, bias);
  nn::check_floating(input, "LayerNormKernelImpl");
  at::Tensor out = at::empty(input.sizes(), input.options());
  auto stat_opts = input.options().dtype(stat_dtype(input, {&weight, &bias}));
  at::Tensor mean = at::empty(stat_shape(input, axis), stat_opts);
  at::Tensor rstd = at::empty(stat_shape(input, axis), stat_opts);
  if (input.numel() == 0) return {out, mean, rstd};
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc w, b, m = to_desc(mean), r = to_desc(rstd);
    vkml::ops::layer_norm(dev, to_desc(out), &m, &r, to_desc(input), opt(weight, w), opt(bias, b),
                          static_cast<int>(normalized_shape.size()), eps);
  });
  return {out, mean, rstd};
}

// A gradient of a parameter of `shape`: like the parameter when given, else in `dtype`.
at::Tensor param_grad(bool wanted, const at::Tensor& param, at::IntArrayRef shape,
                      const at::Tensor& like, at::ScalarType dtype) {
  if (!wanted) return {};
  if (param.defined()) return at::empty(param.sizes(), param.options());
  return at::empty(shape, like.options().dtype(dtype));
}

Tensors3 layer_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                             c10::SymIntArrayRef normalized_shape_sym, const at::Tensor& mean,
                             const at::Tensor& rstd, const OptTensor& weight_opt,
                             const OptTensor& bias_opt, std::array<bool, 3> mask) {
  at::IntArrayRef normalized_shape = C10_AS_INTARRAYREF_SLOW(normalized_shape_sym);
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  const at::Tensor& bias = nn::value_or_undefined(bias_opt);
  check_layer_norm(input, normalized_shape, weight, bias);
  nn::check_floating(input, "LayerNormBackwardKernelImpl");
  for (const at::Tensor* t : {&grad_out, &mean, &rstd}) {
    nn::check_on_device(input, *t, "native_layer_norm_backward", "tensor");
  }
  at::Tensor dx = mask[0] ? at::empty(input.sizes(), input.options()) : at::Tensor();
  at::Tensor dw = param_grad(mask[1], weight, normalized_shape, input, input.scalar_type());
  at::Tensor db = param_grad(mask[2], bias, normalized_shape, input, input.scalar_type());
  if (!dx.defined() && !dw.defined() && !db.defined()) return {dx, dw, db};
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc gi, gw, gb, w;
    vkml::ops::layer_norm_backward(dev, opt(dx, gi), opt(dw, gw), opt(db, gb), to_desc(grad_out),
                                   to_desc(input), to_desc(mean), to_desc(rstd), opt(weight, w),
                                   static_cast<int>(normalized_shape.size()));
  });
  return {dx, dw, db};
}

std::tuple<at::Tensor, at::Tensor> rms_norm(const at::Tensor& input,
                                            at::IntArrayRef normalized_shape,
                                            const OptTensor& weight_opt,
                                            std::optional<double> eps_opt) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  int64_t axis = check_layer_norm(input, normalized_shape, weight, at::Tensor());
  nn::check_floating(input, "rms_norm");
  at::ScalarType acc = acc_type(input.scalar_type());
  // PyTorch's default eps is the machine epsilon of the computation type.
  double eps = eps_opt.value_or(acc == at::kDouble ? std::numeric_limits<double>::epsilon()
                                                   : std::numeric_limits<float>::epsilon());
  at::Tensor out = at::empty(input.sizes(), input.options());
  at::Tensor rstd = at::empty(stat_shape(input, axis), input.options().dtype(acc));
  if (input.numel() == 0) return {out, rstd};
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc w, r = to_desc(rstd);
    vkml::ops::rms_norm(dev, to_desc(out), &r, to_desc(input), opt(weight, w),
                        static_cast<int>(normalized_shape.size()), eps);
  });
  return {out, rstd};
}

std::tuple<at::Tensor, at::Tensor> rms_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
    const at::Tensor& rstd, const OptTensor& weight_opt, std::array<bool, 2> mask) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  check_layer_norm(input, normalized_shape, weight, at::Tensor());
  nn::check_floating(input, "rms_norm_backward");
  at::Tensor dx = mask[0] ? at::empty(input.sizes(), input.options()) : at::Tensor();
  at::Tensor dw = param_grad(mask[1], weight, normalized_shape, input, input.scalar_type());
  if (!dx.defined() && !dw.defined()) return {dx, dw};
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc gi, gw, w;
    vkml::ops::rms_norm_backward(dev, opt(dx, gi), opt(dw, gw), to_desc(grad_out), to_desc(input),
                                 to_desc(rstd), opt(weight, w),
                                 static_cast<int>(normalized_shape.size()));
  });
  return {dx, dw};
}

void check_group_norm(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                      int64_t N, int64_t C, int64_t HxW, int64_t group) {
  TORCH_CHECK(group > 0 && C % group == 0,
              "Expected number of channels in input to be divisible "
              "by num_groups, but got input of shape ",
              input.sizes(), " and num_groups=", group);
  TORCH_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C),
              "Expected weight to be a vector of size equal to the number of channels in input, "
              "but got weight of shape ",
              weight.sizes(), " and input of shape ", input.sizes());
  TORCH_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == C),
              "Expected bias to be a vector of size equal to the number of channels in input, "
              "but got bias of shape ",
              bias.sizes(), " and input of shape ", input.sizes());
  TORCH_CHECK(
      input.dim() >= 2 && input.size(0) == N && input.size(1) == C && input.numel() == N * C * HxW,
      "vkml: native_group_norm expects input of shape [N=", N, ", C=", C, ", *] with ", HxW,
      " elements per channel, got ", input.sizes());
}

Tensors3 group_norm(const at::Tensor& input, const OptTensor& weight_opt, const OptTensor& bias_opt,
                    c10::SymInt N, c10::SymInt C, c10::SymInt HxW, int64_t group, double eps) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  const at::Tensor& bias = nn::value_or_undefined(bias_opt);
  check_group_norm(input, weight, bias, N.expect_int(), C.expect_int(), HxW.expect_int(), group);
  nn::check_floating(input, "GroupNormKernelImpl");
  at::Tensor out = at::empty_like(input, input.suggest_memory_format());
  auto stat_opts = input.options().dtype(stat_dtype(input, {&weight, &bias}));
  at::Tensor mean = at::empty({N.expect_int(), group}, stat_opts);
  at::Tensor rstd = at::empty({N.expect_int(), group}, stat_opts);
  if (input.numel() == 0) return {out, mean, rstd};
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc w, b, m = to_desc(mean), r = to_desc(rstd);
    vkml::ops::group_norm(dev, to_desc(out), &m, &r, to_desc(input), opt(weight, w), opt(bias, b),
                          group, eps);
  });
  return {out, mean, rstd};
}

Tensors3 group_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                             const at::Tensor& mean, const at::Tensor& rstd,
                             const OptTensor& weight_opt, c10::SymInt N, c10::SymInt C,
                             c10::SymInt HxW, int64_t group, std::array<bool, 3> mask) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  int64_t c = C.expect_int();
  check_group_norm(input, weight, at::Tensor(), N.expect_int(), c, HxW.expect_int(), group);
  nn::check_floating(input, "GroupNormBackwardKernelImpl");
  at::Tensor dx = mask[0] ? at::empty_like(input, input.suggest_memory_format()) : at::Tensor();
  at::Tensor dw = param_grad(mask[1], weight, {c}, input, input.scalar_type());
  at::Tensor db = param_grad(mask[2], weight, {c}, input, input.scalar_type());
  if (!dx.defined() && !dw.defined() && !db.defined()) return {dx, dw, db};
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc gi, gw, gb, w;
    vkml::ops::group_norm_backward(dev, opt(dx, gi), opt(dw, gw), opt(db, gb), to_desc(grad_out),
                                   to_desc(input), to_desc(mean), to_desc(rstd), opt(weight, w),
                                   group);
  });
  return {dx, dw, db};
}

void check_batch_norm(const at::Tensor& input,
                      std::initializer_list<const at::Tensor*> per_channel) {
  nn::check_floating(input, "batch_norm");
  TORCH_CHECK(input.dim() >= 2,
              "Dimension out of range (expected to be in range of [-1, 0], "
              "but got 1)");
  for (const at::Tensor* t : per_channel) {
    if (!t->defined()) continue;
    TORCH_CHECK(t->numel() == input.size(1), "batch_norm: expected a tensor of ", input.size(1),
                " elements (one per channel), but got one of shape ", t->sizes());
    nn::check_on_device(input, *t, "batch_norm", "per-channel tensor");
  }
}

// The forward of every batch-norm entry point, writing into the given tensors.
void batch_norm_into(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                     const at::Tensor& running_mean, const at::Tensor& running_var, bool training,
                     double momentum, double eps, at::Tensor& out, at::Tensor& save_mean,
                     at::Tensor& save_invstd) {
  check_batch_norm(input, {&weight, &bias, &running_mean, &running_var});
  TORCH_CHECK(training || (running_mean.defined() && running_var.defined()),
              "running_mean and running_var must be defined in evaluation mode");
  int64_t channels = input.size(1);
  auto stat_opts =
      input.options().dtype(stat_dtype(input, {&weight, &bias, &running_mean, &running_var}));
  if (!out.defined()) out = at::empty_like(input, input.suggest_memory_format());
  if (!save_mean.defined()) save_mean = at::empty({training ? channels : 0}, stat_opts);
  if (!save_invstd.defined()) save_invstd = at::empty({training ? channels : 0}, stat_opts);
  at::native::resize_output(out, input.sizes());
  if (training) {
    at::native::resize_output(save_mean, {channels});
    at::native::resize_output(save_invstd, {channels});
  }
  if (input.numel() == 0) return;
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc w, b, rm, rv, sm, si;
    vkml::ops::batch_norm(dev, to_desc(out), training ? opt(save_mean, sm) : nullptr,
                          training ? opt(save_invstd, si) : nullptr, to_desc(input), opt(weight, w),
                          opt(bias, b), opt(running_mean, rm), opt(running_var, rv), training,
                          momentum, eps);
  });
}

Tensors3 batch_norm(const at::Tensor& input, const OptTensor& weight, const OptTensor& bias,
                    const OptTensor& running_mean, const OptTensor& running_var, bool training,
                    double momentum, double eps) {
  at::Tensor out, save_mean, save_invstd;
  batch_norm_into(input, nn::value_or_undefined(weight), nn::value_or_undefined(bias),
                  nn::value_or_undefined(running_mean), nn::value_or_undefined(running_var),
                  training, momentum, eps, out, save_mean, save_invstd);
  return {out, save_mean, save_invstd};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> batch_norm_out(
    const at::Tensor& input, const OptTensor& weight, const OptTensor& bias,
    const OptTensor& running_mean, const OptTensor& running_var, bool training, double momentum,
    double eps, at::Tensor& out, at::Tensor& save_mean, at::Tensor& save_invstd) {
  batch_norm_into(input, nn::value_or_undefined(weight), nn::value_or_undefined(bias),
                  nn::value_or_undefined(running_mean), nn::value_or_undefined(running_var),
                  training, momentum, eps, out, save_mean, save_invstd);
  return {out, save_mean, save_invstd};
}

Tensors3 batch_norm_legit(const at::Tensor& input, const OptTensor& weight, const OptTensor& bias,
                          at::Tensor& running_mean, at::Tensor& running_var, bool training,
                          double momentum, double eps) {
  return batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> batch_norm_legit_out(
    const at::Tensor& input, const OptTensor& weight, const OptTensor& bias,
    at::Tensor& running_mean, at::Tensor& running_var, bool training, double momentum, double eps,
    at::Tensor& out, at::Tensor& save_mean, at::Tensor& save_invstd) {
  return batch_norm_out(input, weight, bias, running_mean, running_var, training, momentum, eps,
                        out, save_mean, save_invstd);
}

Tensors3 batch_norm_legit_no_stats(const at::Tensor& input, const OptTensor& weight,
                                   const OptTensor& bias, bool training, double momentum,
                                   double eps) {
  return batch_norm(input, weight, bias, {}, {}, training, momentum, eps);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> batch_norm_legit_no_stats_out(
    const at::Tensor& input, const OptTensor& weight, const OptTensor& bias, bool training,
    double momentum, double eps, at::Tensor& out, at::Tensor& save_mean, at::Tensor& save_invstd) {
  return batch_norm_out(input, weight, bias, {}, {}, training, momentum, eps, out, save_mean,
                        save_invstd);
}

// _batch_norm_with_update: training with running statistics, plus an empty "reserve".
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_with_update(
    const at::Tensor& input, const OptTensor& weight, const OptTensor& bias,
    at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps) {
  auto [out, mean, invstd] =
      batch_norm(input, weight, bias, running_mean, running_var, true, momentum, eps);
  return {out, mean, invstd, at::empty({0}, input.options().dtype(at::kByte))};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> batch_norm_with_update_out(
    const at::Tensor& input, const OptTensor& weight, const OptTensor& bias,
    at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps, at::Tensor& out,
    at::Tensor& save_mean, at::Tensor& save_invstd, at::Tensor& reserve) {
  batch_norm_out(input, weight, bias, running_mean, running_var, true, momentum, eps, out,
                 save_mean, save_invstd);
  at::native::resize_output(reserve, {0});
  return {out, save_mean, save_invstd, reserve};
}

Tensors3 batch_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                             const OptTensor& weight_opt, const OptTensor& running_mean_opt,
                             const OptTensor& running_var_opt, const OptTensor& save_mean_opt,
                             const OptTensor& save_invstd_opt, bool train, double eps,
                             std::array<bool, 3> mask) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  const at::Tensor& running_mean = nn::value_or_undefined(running_mean_opt);
  const at::Tensor& running_var = nn::value_or_undefined(running_var_opt);
  const at::Tensor& save_mean = nn::value_or_undefined(save_mean_opt);
  const at::Tensor& save_invstd = nn::value_or_undefined(save_invstd_opt);
  // Eval-mode forwards return empty save_mean/save_invstd; only training uses them.
  check_batch_norm(input, {&weight, &running_mean, &running_var});
  if (train) check_batch_norm(input, {&save_mean, &save_invstd});
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "batch_norm_backward: grad_out shape ",
              grad_out.sizes(), " does not match input shape ", input.sizes());
  nn::check_on_device(input, grad_out, "batch_norm_backward", "grad_out");
  if (train) {
    TORCH_CHECK(save_mean.defined() && save_invstd.defined(),
                "batch_norm_backward: save_mean and save_invstd are needed in training mode");
  } else {
    TORCH_CHECK(running_mean.defined() && running_var.defined(),
                "batch_norm_backward: running_mean and running_var are needed in eval mode");
  }
  at::ScalarType pdt = acc_type(input.scalar_type());
  at::Tensor dx = mask[0] ? at::empty_like(input, input.suggest_memory_format()) : at::Tensor();
  at::Tensor dw = param_grad(mask[1], weight, {input.size(1)}, input, pdt);
  at::Tensor db = param_grad(mask[2], weight, {input.size(1)}, input, pdt);
  if (!dx.defined() && !dw.defined() && !db.defined()) return {dx, dw, db};
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc gi, gw, gb, w, rm, rv, sm, si;
    vkml::ops::batch_norm_backward(dev, opt(dx, gi), opt(dw, gw), opt(db, gb), to_desc(grad_out),
                                   to_desc(input), opt(weight, w), opt(running_mean, rm),
                                   opt(running_var, rv), train ? opt(save_mean, sm) : nullptr,
                                   train ? opt(save_invstd, si) : nullptr, train, eps);
  });
  return {dx, dw, db};
}

// The backward of _batch_norm_with_update / _batch_norm_no_update.
Tensors3 batch_norm_backward_new(const at::Tensor& grad_out, const at::Tensor& input,
                                 const at::Tensor& weight, const OptTensor& running_mean,
                                 const OptTensor& running_var, const OptTensor& save_mean,
                                 const OptTensor& save_var, bool update, double eps,
                                 std::array<bool, 3> mask, const at::Tensor& reserve) {
  return batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                             save_var, update, eps, mask);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("native_layer_norm", layer_norm);
  m.impl("native_layer_norm_backward", layer_norm_backward);
  m.impl("_fused_rms_norm", rms_norm);
  m.impl("_fused_rms_norm_backward", rms_norm_backward);
  m.impl("native_group_norm", group_norm);
  m.impl("native_group_norm_backward", group_norm_backward);
  m.impl("native_batch_norm", batch_norm);
  m.impl("native_batch_norm.out", batch_norm_out);
  m.impl("_native_batch_norm_legit", batch_norm_legit);
  m.impl("_native_batch_norm_legit.out", batch_norm_legit_out);
  m.impl("_native_batch_norm_legit.no_stats", batch_norm_legit_no_stats);
  m.impl("_native_batch_norm_legit.no_stats_out", batch_norm_legit_no_stats_out);
  m.impl("_batch_norm_with_update", batch_norm_with_update);
  m.impl("_batch_norm_with_update.out", batch_norm_with_update_out);
  m.impl("native_batch_norm_backward", batch_norm_backward);
  m.impl("batch_norm_backward", batch_norm_backward_new);
}

}  // namespace torch_vkml::ops_normalization
