// multi_margin_loss and multilabel_margin_loss on vkml (forward, backward and their out= forms),
// with PyTorch's shape checks. A class index out of range raises the CPU's error: the kernels
// record it on the device (BadIndexCheck: one host read per call, none with VKML_CHECK_INDICES=0).
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "common/index_util.h"
#include "common/nn_bridge.h"
#include "vkml/loss.h"

namespace torch_vkml::ops_margin_loss {

using OptTensor = std::optional<at::Tensor>;
using nn::to_reduction;
using vkml::ops::Reduction;

struct Frames {
  int64_t frames = 1, classes = 1;
  at::Tensor input;  // [frames, classes] view of self
};

Frames frames_of(const at::Tensor& self) {
  const int64_t nd = self.dim();
  TORCH_CHECK((nd == 2 && self.size(1) != 0) || (nd == 1 && self.size(0) != 0) || nd == 0,
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
              self.sizes());
  Frames f;
  if (nd <= 1) {
    f.classes = nd == 0 ? 1 : self.size(0);
    f.input = self.view({1, f.classes});
  } else {
    f.frames = self.size(0);
    f.classes = self.size(1);
    f.input = self;
  }
  return f;
}

void check_long(const at::Tensor& target) {
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ",
              target.scalar_type());
}

// Raises the CPU's RuntimeError with `message` when the kernel recorded a bad target.
void raise_bad_target(BadIndexCheck& check, const char* message) {
  check.raise_if_bad(BadIndexError::kRuntime, [&](int64_t, uint32_t) { return message; });
}

// ---- multi_margin_loss ----------------------------------------------------------------------

struct MultiMargin {
  Frames f;
  at::Tensor target;  // [frames, 1]
  at::Tensor weight;
  int p = 1;
};

MultiMargin check_multi_margin(const at::Tensor& self, const at::Tensor& target,
                               const at::Scalar& p, const OptTensor& weight_opt) {
  MultiMargin m;
  TORCH_CHECK(p.toLong() == 1 || p.toLong() == 2, "only p == 1 and p == 2 supported");
  m.p = static_cast<int>(p.toLong());
  m.f = frames_of(self);
  TORCH_CHECK(target.dim() <= 1 && target.numel() == m.f.frames,
              "inconsistent target size, expected ", m.f.frames, " but got ", target.sizes());
  m.weight = nn::value_or_undefined(weight_opt);
  if (m.weight.defined()) {
    TORCH_CHECK(m.weight.dim() <= 1 && m.weight.numel() == m.f.classes,
                "inconsistent weight size, expected ", m.f.classes, " but got ",
                m.weight.sizes());
    m.weight = m.weight.view({m.f.classes});
  }
  nn::check_floating(self, "multi_margin_loss_cpu");
  check_long(target);
  nn::check_on_device(self, target, "multi_margin_loss", "target");
  nn::check_on_device(self, m.weight, "multi_margin_loss", "weight");
  m.target = target.dim() == 0 ? target.view({1, 1}) : target.unsqueeze(1);
  return m;
}

vkml::ops::MarginArgs multi_args(const MultiMargin& m, const vkml::TensorDesc& x,
                                 const vkml::TensorDesc& t, const vkml::TensorDesc* w,
                                 double margin, int64_t reduction) {
  return {&x, &t, w, nullptr, false, m.p, margin, to_reduction(reduction)};
}

at::Tensor& multi_margin_out(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                             const at::Scalar& margin, const OptTensor& weight_opt,
                             int64_t reduction, at::Tensor& out) {
  MultiMargin m = check_multi_margin(self, target, p, weight_opt);
  std::vector<int64_t> shape;
  if (reduction == 0 && target.dim() > 0) shape = {m.f.frames};
  if (!out.defined()) out = at::empty(shape, self.options());
  nn::prepare_out(out, shape, self.scalar_type(), self);
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::TensorDesc x = to_desc(m.f.input), t = to_desc(m.target), w;
    if (m.weight.defined()) w = to_desc(m.weight);
    at::Tensor o = reduction == 0 ? out.view({m.f.frames}) : out;
    BadIndexCheck check(self, true);
    auto args = multi_args(m, x, t, m.weight.defined() ? &w : nullptr, margin.toDouble(),
                           reduction);
    args.error_flag = check.address();
    vkml::ops::margin_loss(dev, args, to_desc(o));
    raise_bad_target(check, "target out of range");
  });
  return out;
}

at::Tensor multi_margin(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                        const at::Scalar& margin, const OptTensor& weight, int64_t reduction) {
  at::Tensor out;
  return multi_margin_out(self, target, p, margin, weight, reduction, out);
}

at::Tensor& multi_margin_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                      const at::Tensor& target, const at::Scalar& p,
                                      const at::Scalar& margin, const OptTensor& weight_opt,
                                      int64_t reduction, at::Tensor& grad_input) {
  MultiMargin m = check_multi_margin(self, target, p, weight_opt);
  nn::check_on_device(self, grad_output, "multi_margin_loss_backward", "grad_output");
  const bool per_frame = reduction == 0 && grad_output.dim() > 0;
  TORCH_CHECK(per_frame ? grad_output.numel() == m.f.frames : grad_output.numel() == 1,
              "multi_margin_loss_backward: grad_output of shape ", grad_output.sizes(),
              " does not match the loss");
  if (!grad_input.defined()) grad_input = at::empty(self.sizes(), self.options());
  nn::prepare_out(grad_input, self.sizes(), self.scalar_type(), self);
  if (self.numel() == 0) return grad_input;
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::TensorDesc x = to_desc(m.f.input), t = to_desc(m.target), w;
    if (m.weight.defined()) w = to_desc(m.weight);
    at::Tensor go = per_frame ? grad_output.view({m.f.frames}) : grad_output;
    auto args = multi_args(m, x, t, m.weight.defined() ? &w : nullptr, margin.toDouble(),
                           per_frame ? 0 : reduction);
    BadIndexCheck check(self, true);
    args.error_flag = check.address();
    vkml::ops::margin_loss_backward(dev, args, to_desc(grad_input.view({m.f.frames, m.f.classes})),
                                    to_desc(go));
    raise_bad_target(check, "target out of range");
  });
  return grad_input;
}

at::Tensor multi_margin_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                 const at::Tensor& target, const at::Scalar& p,
                                 const at::Scalar& margin, const OptTensor& weight,
                                 int64_t reduction) {
  at::Tensor gi;
  return multi_margin_backward_out(grad_output, self, target, p, margin, weight, reduction, gi);
}

// ---- multilabel_margin_loss -----------------------------------------------------------------

struct MultiLabel {
  Frames f;
  at::Tensor target;  // [frames, classes]
};

MultiLabel check_multilabel(const at::Tensor& self, const at::Tensor& target) {
  MultiLabel m;
  m.f = frames_of(self);
  if (self.dim() <= 1) {
    TORCH_CHECK(target.dim() <= 1 && target.numel() == m.f.classes, "inconsistent target size: ",
                target.sizes(), " for input of size: ", self.sizes());
    m.target = target.view({1, m.f.classes});
  } else {
    TORCH_CHECK(target.dim() == 2 && target.size(0) == m.f.frames &&
                    target.size(1) == m.f.classes,
                "inconsistent target size: ", target.sizes(), " for input of size: ",
                self.sizes());
    m.target = target;
  }
  nn::check_floating(self, "multilabel_margin_loss_forward_out_frame");
  check_long(target);
  nn::check_on_device(self, target, "multilabel_margin_loss", "target");
  return m;
}

std::tuple<at::Tensor&, at::Tensor&> multilabel_forward_out(const at::Tensor& self,
                                                            const at::Tensor& target,
                                                            int64_t reduction, at::Tensor& out,
                                                            at::Tensor& is_target) {
  MultiLabel m = check_multilabel(self, target);
  std::vector<int64_t> shape;
  if (reduction == 0 && target.dim() > 1) shape = {m.f.frames};
  nn::prepare_out(out, shape, self.scalar_type(), self);
  nn::prepare_out(is_target, target.sizes(), self.scalar_type(), self);
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::TensorDesc x = to_desc(m.f.input), t = to_desc(m.target);
    vkml::TensorDesc it = to_desc(is_target.view({m.f.frames, m.f.classes}));
    at::Tensor o = reduction == 0 ? out.view({m.f.frames}) : out;
    BadIndexCheck check(self, true);
    vkml::ops::MarginArgs args{&x, &t, nullptr, &it, true, 1, 1.0, to_reduction(reduction),
                               check.address()};
    vkml::ops::margin_loss(dev, args, to_desc(o));
    raise_bad_target(check, "argument #2 'target' is out of range");
  });
  return {out, is_target};
}

std::tuple<at::Tensor, at::Tensor> multilabel_forward(const at::Tensor& self,
                                                      const at::Tensor& target,
                                                      int64_t reduction) {
  at::Tensor out = at::empty({0}, self.options()), is_target = at::empty({0}, self.options());
  multilabel_forward_out(self, target, reduction, out, is_target);
  return {out, is_target};
}

at::Tensor& multilabel_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                    const at::Tensor& target, int64_t reduction,
                                    const at::Tensor& is_target, at::Tensor& grad_input) {
  MultiLabel m = check_multilabel(self, target);
  TORCH_CHECK(is_target.sizes() == target.sizes(), "inconsistent is_target size: ",
              is_target.sizes(), " for target of size: ", target.sizes());
  nn::check_on_device(self, grad_output, "multilabel_margin_loss_backward", "grad_output");
  nn::check_on_device(self, is_target, "multilabel_margin_loss_backward", "is_target");
  const bool per_frame = reduction == 0 && grad_output.dim() > 0;
  TORCH_CHECK(per_frame ? grad_output.numel() == m.f.frames : grad_output.numel() == 1,
              "multilabel_margin_loss_backward: grad_output of shape ", grad_output.sizes(),
              " does not match the loss");
  if (!grad_input.defined()) grad_input = at::empty(self.sizes(), self.options());
  nn::prepare_out(grad_input, self.sizes(), self.scalar_type(), self);
  if (self.numel() == 0) return grad_input;
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::TensorDesc x = to_desc(m.f.input), t = to_desc(m.target);
    vkml::TensorDesc it = to_desc(is_target.view({m.f.frames, m.f.classes}));
    at::Tensor go = per_frame ? grad_output.view({m.f.frames}) : grad_output;
    BadIndexCheck check(self, true);
    vkml::ops::MarginArgs args{&x, &t, nullptr, &it, true, 1, 1.0,
                               to_reduction(per_frame ? 0 : reduction), check.address()};
    vkml::ops::margin_loss_backward(dev, args, to_desc(grad_input.view({m.f.frames, m.f.classes})),
                                    to_desc(go));
    raise_bad_target(check, "argument #3 'target' is out of range");
  });
  return grad_input;
}

at::Tensor multilabel_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               const at::Tensor& target, int64_t reduction,
                               const at::Tensor& is_target) {
  at::Tensor gi;
  return multilabel_backward_out(grad_output, self, target, reduction, is_target, gi);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("multi_margin_loss", multi_margin);
  m.impl("multi_margin_loss.out", multi_margin_out);
  m.impl("multi_margin_loss_backward", multi_margin_backward);
  m.impl("multi_margin_loss_backward.grad_input", multi_margin_backward_out);
  m.impl("multilabel_margin_loss_forward", multilabel_forward);
  m.impl("multilabel_margin_loss_forward.output", multilabel_forward_out);
  m.impl("multilabel_margin_loss_backward", multilabel_backward);
  m.impl("multilabel_margin_loss_backward.grad_input", multilabel_backward_out);
}

}  // namespace torch_vkml::ops_margin_loss
