// Losses on vkml: nll_loss / nll_loss2d (cross_entropy decomposes into log_softmax + these),
// mse_loss, smooth_l1_loss, huber_loss, binary_cross_entropy with their backward ops, and the
// forward of binary_cross_entropy_with_logits (its backward is composite in PyTorch).
// Functional, out= and backward grad_input= forms are registered separately.
#include <ATen/ExpandUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include <limits>

#include "common/index_util.h"
#include "common/nn_bridge.h"
#include "vkml/loss.h"

namespace torch_vkml::ops_nll_pointwise_loss {

using OptTensor = std::optional<at::Tensor>;
using vkml::ops::PointwiseLoss;
using nn::to_reduction;
using vkml::ops::Reduction;

const vkml::TensorDesc* opt(const at::Tensor& t, vkml::TensorDesc& storage) {
  if (!t.defined()) return nullptr;
  storage = to_desc(t);
  return &storage;
}

// ---- nll_loss -------------------------------------------------------------------------------

// A target out of [0, C) that is not ignore_index raises the CPU's IndexError; the kernels record
// it on the device (BadIndexCheck: one host read per call, none with VKML_CHECK_INDICES=0).
void raise_bad_target(BadIndexCheck& check) {
  check.raise_if_bad(BadIndexError::kIndex, [](int64_t v, uint32_t) {
    return "Target " + std::to_string(v) + " is out of bounds.";
  });
}

void check_nll_target(const at::Tensor& target) {
  TORCH_CHECK(target.scalar_type() == at::kLong || target.scalar_type() == at::kByte,
              "expected target dtype to be Long or Byte, but got ", target.scalar_type());
}

void check_nll_weight(const at::Tensor& weight, int64_t classes) {
  TORCH_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == classes),
              "weight tensor should be defined either for all ", classes,
              " classes or no classes but got weight tensor of shape: ", weight.sizes());
}

// The checks of nll_loss_forward's meta function; returns the output shape.
std::vector<int64_t> check_nll_1d2d(const at::Tensor& self, const at::Tensor& target,
                                    const at::Tensor& weight, int64_t reduction) {
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  bool no_batch_dim = self.dim() == 1 && target.dim() == 0;
  TORCH_CHECK(no_batch_dim || self.size(0) == target.size(0),
              "size mismatch (got input: ", self.sizes(), ", target: ", target.sizes(), ")");
  check_nll_weight(weight, self.size(-1));
  check_nll_target(target);
  if (reduction == 0 && self.dim() == 2) return {self.size(0)};
  return {};
}

std::vector<int64_t> check_nll_2d(const at::Tensor& self, const at::Tensor& target,
                                  const at::Tensor& weight, int64_t reduction) {
  TORCH_CHECK(target.dim() == 3,
              "only batches of spatial targets supported (3D tensors) but got "
              "targets of dimension: ",
              target.dim());
  TORCH_CHECK(self.dim() == 4,
              "only batches of spatial inputs supported (4D tensors), but got "
              "input of dimension: ",
              self.dim());
  TORCH_CHECK(!weight.defined() || weight.numel() == self.size(1),
              "weight tensor should be defined either for all or no classes");
  TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) &&
                  self.size(3) == target.size(2),
              "size mismatch (got input: ", self.sizes(), " , target: ", target.sizes());
  check_nll_target(target);
  if (reduction == 0) return {self.size(0), self.size(2), self.size(3)};
  return {};
}

void nll_forward_into(const at::Tensor& self, const at::Tensor& target, const at::Tensor& weight,
                      int64_t reduction, int64_t ignore_index, at::Tensor& output,
                      at::Tensor& total_weight, const std::vector<int64_t>& out_shape) {
  nn::check_floating(self, "nll_loss");
  nn::check_on_device(self, target, "nll_loss", "target");
  nn::check_on_device(self, weight, "nll_loss", "weight");
  nn::prepare_out(output, out_shape, self.scalar_type(), self);
  nn::prepare_out(total_weight, {}, self.scalar_type(), self);
  nn::run_on(self, [&](vkml::Device& dev) {
    if (target.numel() == 0) {  // nothing to read: no samples
      vkml::ops::fill(dev, to_desc(total_weight), vkml::Scalar::from_double(0.0));
      if (reduction != 0) {
        double empty = reduction == 1 ? std::numeric_limits<double>::quiet_NaN() : 0.0;
        vkml::ops::fill(dev, to_desc(output), vkml::Scalar::from_double(empty));
      }
      return;
    }
    BadIndexCheck check(self, true);
    vkml::TensorDesc w, tw = to_desc(total_weight);
    vkml::ops::nll_loss(dev, to_desc(output), &tw, to_desc(self), to_desc(target), opt(weight, w),
                        to_reduction(reduction), ignore_index, check.address());
    raise_bad_target(check);
  });
}

std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self,
                                                    const at::Tensor& target,
                                                    const OptTensor& weight_opt, int64_t reduction,
                                                    int64_t ignore_index) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  auto shape = check_nll_1d2d(self, target, weight, reduction);
  at::Tensor out = at::empty(shape, self.options()), tw = at::empty({}, self.options());
  nll_forward_into(self, target, weight, reduction, ignore_index, out, tw, shape);
  return {out, tw};
}

std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_out(const at::Tensor& self,
                                                          const at::Tensor& target,
                                                          const OptTensor& weight_opt,
                                                          int64_t reduction, int64_t ignore_index,
                                                          at::Tensor& out, at::Tensor& tw) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  auto shape = check_nll_1d2d(self, target, weight, reduction);
  nll_forward_into(self, target, weight, reduction, ignore_index, out, tw, shape);
  return {out, tw};
}

std::tuple<at::Tensor, at::Tensor> nll_loss2d_forward(const at::Tensor& self,
                                                      const at::Tensor& target,
                                                      const OptTensor& weight_opt,
                                                      int64_t reduction, int64_t ignore_index) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  auto shape = check_nll_2d(self, target, weight, reduction);
  at::Tensor out = at::empty(shape, self.options()), tw = at::empty({}, self.options());
  nll_forward_into(self, target, weight, reduction, ignore_index, out, tw, shape);
  return {out, tw};
}

std::tuple<at::Tensor&, at::Tensor&> nll_loss2d_forward_out(const at::Tensor& self,
                                                            const at::Tensor& target,
                                                            const OptTensor& weight_opt,
                                                            int64_t reduction, int64_t ignore_index,
                                                            at::Tensor& out, at::Tensor& tw) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  auto shape = check_nll_2d(self, target, weight, reduction);
  nll_forward_into(self, target, weight, reduction, ignore_index, out, tw, shape);
  return {out, tw};
}

at::Tensor& nll_backward_into(const at::Tensor& grad_output, const at::Tensor& self,
                              const at::Tensor& target, const at::Tensor& weight, int64_t reduction,
                              int64_t ignore_index, const at::Tensor& total_weight,
                              at::Tensor& grad_input) {
  TORCH_CHECK(total_weight.numel() == 1,
              "expected total_weight to be a single element tensor, "
              "got: ",
              total_weight.sizes(), " (", total_weight.numel(), " elements)");
  nn::check_floating(self, "nll_loss_backward");
  for (const at::Tensor* t : {&grad_output, &target, &weight, &total_weight}) {
    nn::check_on_device(self, *t, "nll_loss_backward", "tensor");
  }
  if (reduction == 0) {
    TORCH_CHECK(grad_output.sizes() == target.sizes(), "nll_loss_backward: grad_output of shape ",
                grad_output.sizes(), " does not match target ", target.sizes());
  } else {
    TORCH_CHECK(grad_output.numel() == 1,
                "nll_loss_backward: expected a single-element "
                "grad_output, got ",
                grad_output.sizes());
  }
  nn::prepare_out(grad_input, self.sizes(), self.scalar_type(), self);
  if (self.numel() == 0) return grad_input;
  nn::run_on(self, [&](vkml::Device& dev) {
    BadIndexCheck check(self, target.numel() > 0);
    vkml::TensorDesc w;
    vkml::ops::nll_loss_backward(dev, to_desc(grad_input), to_desc(grad_output), to_desc(target),
                                 opt(weight, w), to_reduction(reduction), ignore_index,
                                 to_desc(total_weight), check.address());
    raise_bad_target(check);
  });
  return grad_input;
}

at::Tensor& nll_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                  const at::Tensor& target, const OptTensor& weight_opt,
                                  int64_t reduction, int64_t ignore_index,
                                  const at::Tensor& total_weight, at::Tensor& grad_input) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  check_nll_1d2d(self, target, weight, reduction);
  return nll_backward_into(grad_output, self, target, weight, reduction, ignore_index, total_weight,
                           grad_input);
}

at::Tensor nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, const OptTensor& weight_opt,
                             int64_t reduction, int64_t ignore_index,
                             const at::Tensor& total_weight) {
  at::Tensor gi = at::empty(self.sizes(), self.options());
  return nll_loss_backward_out(grad_output, self, target, weight_opt, reduction, ignore_index,
                               total_weight, gi);
}

at::Tensor& nll_loss2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                    const at::Tensor& target, const OptTensor& weight_opt,
                                    int64_t reduction, int64_t ignore_index,
                                    const at::Tensor& total_weight, at::Tensor& grad_input) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  check_nll_2d(self, target, weight, reduction);
  return nll_backward_into(grad_output, self, target, weight, reduction, ignore_index, total_weight,
                           grad_input);
}

at::Tensor nll_loss2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               const at::Tensor& target, const OptTensor& weight_opt,
                               int64_t reduction, int64_t ignore_index,
                               const at::Tensor& total_weight) {
  at::Tensor gi = at::empty(self.sizes(), self.options());
  return nll_loss2d_backward_out(grad_output, self, target, weight_opt, reduction, ignore_index,
                                 total_weight, gi);
}

// ---- pointwise losses -----------------------------------------------------------------------

// A float operand of dtype `dtype` (integer targets are converted on the device).
at::Tensor as_float(const at::Tensor& t, at::ScalarType dtype) {
  return t.is_floating_point() ? t : t.to(dtype);
}

// The forward of a pointwise loss into `out` (allocated when undefined). `shape` is the
// elements' shape: operands broadcast to it.
at::Tensor& pointwise_into(PointwiseLoss kind, const char* name, const at::Tensor& self,
                           const at::Tensor& target, const at::Tensor& weight,
                           const at::Tensor& pos_weight, int64_t reduction, double param,
                           at::IntArrayRef shape, at::ScalarType dtype, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(dtype), "\"", name, "\" not implemented for '",
                              c10::toString(dtype), "'");
  for (const at::Tensor* t : {&target, &weight, &pos_weight}) {
    nn::check_on_device(self, *t, name, "operand");
  }
  Reduction r = to_reduction(reduction);
  std::vector<int64_t> out_shape;
  if (r == Reduction::kNone) out_shape.assign(shape.begin(), shape.end());
  if (!out.defined()) out = at::empty(out_shape, self.options().dtype(dtype));
  nn::prepare_out(out, out_shape, dtype, self);
  at::Tensor x = as_float(self, dtype).expand(shape), y = as_float(target, dtype).expand(shape);
  at::Tensor w = weight.defined() ? weight.expand(shape) : at::Tensor();
  at::Tensor pw = pos_weight.defined() ? pos_weight.expand(shape) : at::Tensor();
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::TensorDesc wd, pwd;
    vkml::ops::pointwise_loss(dev, kind, to_desc(out), to_desc(x), to_desc(y), opt(w, wd),
                              opt(pw, pwd), r, param);
  });
  return out;
}

// Like TensorIterator: operands broadcast together, the result type promotes.
at::Tensor& binary_loss(PointwiseLoss kind, const char* name, const at::Tensor& self,
                        const at::Tensor& target, int64_t reduction, double param,
                        at::Tensor& out) {
  auto shape = at::infer_size(self.sizes(), target.sizes());
  return pointwise_into(kind, name, self, target, {}, {}, reduction, param, shape,
                        at::result_type(self, target), out);
}

// grad_input of a pointwise loss: input's shape and dtype; target (and grad_output for kNone)
// broadcast to it.
at::Tensor& pointwise_backward_into(PointwiseLoss kind, const char* name,
                                    const at::Tensor& grad_output, const at::Tensor& self,
                                    const at::Tensor& target, const at::Tensor& weight,
                                    int64_t reduction, double param, at::Tensor& grad_input) {
  nn::check_floating(self, name);
  for (const at::Tensor* t : {&grad_output, &target, &weight}) {
    nn::check_on_device(self, *t, name, "operand");
  }
  Reduction r = to_reduction(reduction);
  if (!grad_input.defined()) grad_input = at::empty(self.sizes(), self.options());
  nn::prepare_out(grad_input, self.sizes(), self.scalar_type(), self);
  at::Tensor y = as_float(target, self.scalar_type()).expand(self.sizes());
  at::Tensor go = r == Reduction::kNone ? grad_output.expand(self.sizes()) : grad_output;
  TORCH_CHECK(r == Reduction::kNone || grad_output.numel() == 1, name,
              ": expected a single-element grad_output for a reduced loss, got ",
              grad_output.sizes());
  at::Tensor w = weight.defined() ? weight.expand(self.sizes()) : at::Tensor();
  if (self.numel() == 0) return grad_input;
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::TensorDesc wd;
    vkml::ops::pointwise_loss_backward(dev, kind, to_desc(grad_input), to_desc(go), to_desc(self),
                                       to_desc(y), opt(w, wd), r, param);
  });
  return grad_input;
}

at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  at::Tensor out;
  return binary_loss(PointwiseLoss::kMse, "mse_cpu", self, target, reduction, 0.0, out);
}
at::Tensor& mse_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                         at::Tensor& out) {
  return binary_loss(PointwiseLoss::kMse, "mse_cpu", self, target, reduction, 0.0, out);
}
at::Tensor& mse_loss_backward_out(const at::Tensor& go, const at::Tensor& self,
                                  const at::Tensor& target, int64_t reduction, at::Tensor& gi) {
  return pointwise_backward_into(PointwiseLoss::kMse, "mse_backward_cpu_out", go, self, target, {},
                                 reduction, 0.0, gi);
}
at::Tensor mse_loss_backward(const at::Tensor& go, const at::Tensor& self, const at::Tensor& target,
                             int64_t reduction) {
  at::Tensor gi;
  return mse_loss_backward_out(go, self, target, reduction, gi);
}

void check_beta(double beta) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
}
at::Tensor smooth_l1_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                          double beta) {
  check_beta(beta);
  at::Tensor out;
  return binary_loss(PointwiseLoss::kSmoothL1, "smooth_l1_cpu", self, target, reduction, beta, out);
}
at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                               double beta, at::Tensor& out) {
  check_beta(beta);
  return binary_loss(PointwiseLoss::kSmoothL1, "smooth_l1_cpu", self, target, reduction, beta, out);
}
at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& go, const at::Tensor& self,
                                        const at::Tensor& target, int64_t reduction, double beta,
                                        at::Tensor& gi) {
  check_beta(beta);
  return pointwise_backward_into(PointwiseLoss::kSmoothL1, "smooth_l1_backward_cpu_out", go, self,
                                 target, {}, reduction, beta, gi);
}
at::Tensor smooth_l1_loss_backward(const at::Tensor& go, const at::Tensor& self,
                                   const at::Tensor& target, int64_t reduction, double beta) {
  at::Tensor gi;
  return smooth_l1_loss_backward_out(go, self, target, reduction, beta, gi);
}

void check_delta(double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
}
at::Tensor& huber_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                           double delta, at::Tensor& out) {
  check_delta(delta);
  return binary_loss(PointwiseLoss::kHuber, "huber_cpu", self, target, reduction, delta, out);
}
at::Tensor huber_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                      double delta) {
  at::Tensor out;
  return huber_loss_out(self, target, reduction, delta, out);
}
at::Tensor& huber_loss_backward_out(const at::Tensor& go, const at::Tensor& self,
                                    const at::Tensor& target, int64_t reduction, double delta,
                                    at::Tensor& gi) {
  check_delta(delta);
  return pointwise_backward_into(PointwiseLoss::kHuber, "huber_backward_cpu_out", go, self, target,
                                 {}, reduction, delta, gi);
}
at::Tensor huber_loss_backward(const at::Tensor& go, const at::Tensor& self,
                               const at::Tensor& target, int64_t reduction, double delta) {
  at::Tensor gi;
  return huber_loss_backward_out(go, self, target, reduction, delta, gi);
}

// binary_cross_entropy's result has input's shape: target and weight broadcast to it.
void check_broadcasts_to(const at::Tensor& t, const at::Tensor& self) {
  if (!t.defined()) return;
  auto shape = at::infer_size(self.sizes(), t.sizes());
  TORCH_CHECK(at::IntArrayRef(shape) == self.sizes(), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", at::IntArrayRef(shape));
}

at::Tensor& bce_out(const at::Tensor& self, const at::Tensor& target, const OptTensor& weight_opt,
                    int64_t reduction, at::Tensor& out) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  check_broadcasts_to(target, self);
  check_broadcasts_to(weight, self);
  return pointwise_into(PointwiseLoss::kBce, "binary_cross_entropy", self, target, weight, {},
                        reduction, 0.0, self.sizes(), self.scalar_type(), out);
}
at::Tensor bce(const at::Tensor& self, const at::Tensor& target, const OptTensor& weight,
               int64_t reduction) {
  at::Tensor out;
  return bce_out(self, target, weight, reduction, out);
}
at::Tensor& bce_backward_out(const at::Tensor& go, const at::Tensor& self, const at::Tensor& target,
                             const OptTensor& weight_opt, int64_t reduction, at::Tensor& gi) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  check_broadcasts_to(target, self);
  check_broadcasts_to(weight, self);
  return pointwise_backward_into(PointwiseLoss::kBce, "binary_cross_entropy_backward", go, self,
                                 target, weight, reduction, 0.0, gi);
}
at::Tensor bce_backward(const at::Tensor& go, const at::Tensor& self, const at::Tensor& target,
                        const OptTensor& weight, int64_t reduction) {
  at::Tensor gi;
  return bce_backward_out(go, self, target, weight, reduction, gi);
}

at::Tensor bce_with_logits(const at::Tensor& self, const at::Tensor& target,
                           const OptTensor& weight_opt, const OptTensor& pos_weight_opt,
                           int64_t reduction) {
  const at::Tensor& weight = nn::value_or_undefined(weight_opt);
  const at::Tensor& pos_weight = nn::value_or_undefined(pos_weight_opt);
  std::vector<int64_t> shape = at::infer_size(self.sizes(), target.sizes());
  if (weight.defined()) shape = at::infer_size(shape, weight.sizes());
  if (pos_weight.defined()) shape = at::infer_size(shape, pos_weight.sizes());
  at::Tensor out;
  return pointwise_into(PointwiseLoss::kBceWithLogits, "binary_cross_entropy_with_logits", self,
                        target, weight, pos_weight, reduction, 0.0, shape,
                        at::result_type(self, target), out);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nll_loss_forward", nll_loss_forward);
  m.impl("nll_loss_forward.output", nll_loss_forward_out);
  m.impl("nll_loss_backward", nll_loss_backward);
  m.impl("nll_loss_backward.grad_input", nll_loss_backward_out);
  m.impl("nll_loss2d_forward", nll_loss2d_forward);
  m.impl("nll_loss2d_forward.output", nll_loss2d_forward_out);
  m.impl("nll_loss2d_backward", nll_loss2d_backward);
  m.impl("nll_loss2d_backward.grad_input", nll_loss2d_backward_out);
  m.impl("mse_loss", mse_loss);
  m.impl("mse_loss.out", mse_loss_out);
  m.impl("mse_loss_backward", mse_loss_backward);
  m.impl("mse_loss_backward.grad_input", mse_loss_backward_out);
  m.impl("smooth_l1_loss", smooth_l1_loss);
  m.impl("smooth_l1_loss.out", smooth_l1_loss_out);
  m.impl("smooth_l1_loss_backward", smooth_l1_loss_backward);
  m.impl("smooth_l1_loss_backward.grad_input", smooth_l1_loss_backward_out);
  m.impl("huber_loss", huber_loss);
  m.impl("huber_loss.out", huber_loss_out);
  m.impl("huber_loss_backward", huber_loss_backward);
  m.impl("huber_loss_backward.out", huber_loss_backward_out);
  m.impl("binary_cross_entropy", bce);
  m.impl("binary_cross_entropy.out", bce_out);
  m.impl("binary_cross_entropy_backward", bce_backward);
  m.impl("binary_cross_entropy_backward.grad_input", bce_backward_out);
  m.impl("binary_cross_entropy_with_logits", bce_with_logits);
}

}  // namespace torch_vkml::ops_nll_pointwise_loss
