// _softmax / _log_softmax and their backward on vkml: functional and out= forms (structured
// ops do not route functional -> out for PrivateUse1). softmax.int, log_softmax.int and
// cross_entropy reach these through PyTorch's own decompositions.
#include <ATen/TensorUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "common/nn_bridge.h"
#include "vkml/softmax.h"

namespace torch_vkml::ops_softmax {

at::ScalarType forward_dtype(const at::Tensor& self, bool half_to_float) {
  // CUDA's rule (the CPU kernel refuses half_to_float altogether).
  TORCH_CHECK(!half_to_float || self.scalar_type() == at::kHalf,
              "conversion is supported for Half type only");
  return half_to_float ? at::kFloat : self.scalar_type();
}

at::Tensor& forward_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out,
                        bool log) {
  nn::check_floating(self, log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl");
  int64_t d = at::maybe_wrap_dim(dim, self.dim());
  nn::prepare_out(out, self.sizes(), forward_dtype(self, half_to_float), self);
  if (self.numel() == 0) return out;
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::softmax(dev, to_desc(out), to_desc(self), static_cast<int>(d), log);
  });
  return out;
}

at::Tensor forward(const at::Tensor& self, int64_t dim, bool half_to_float, bool log) {
  at::Tensor out =
      at::empty(self.sizes(), self.options().dtype(forward_dtype(self, half_to_float)));
  return forward_out(self, dim, half_to_float, out, log);
}

at::ScalarType backward_dtype(const at::Tensor& grad, at::ScalarType input_dtype) {
  // As the structured meta function: float grads of a half input give a half grad_input.
  return grad.scalar_type() == at::kFloat && input_dtype == at::kHalf ? at::kHalf
                                                                      : grad.scalar_type();
}

at::Tensor& backward_out(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                         at::ScalarType input_dtype, at::Tensor& grad_input, bool log) {
  at::TensorArg grad_arg{grad, "grad", 1}, output_arg{output, "output", 2};
  at::checkSameSize(log ? "log_softmax_backward" : "softmax_backward", grad_arg, output_arg);
  int64_t d = at::maybe_wrap_dim(dim, grad.dim());
  nn::check_floating(grad, log ? "log_softmax_backward_lastdim_kernel_impl"
                               : "softmax_backward_lastdim_kernel_impl");
  nn::check_floating(output, log ? "log_softmax_backward_lastdim_kernel_impl"
                                 : "softmax_backward_lastdim_kernel_impl");
  nn::check_on_device(grad, output, "softmax_backward", "output");
  nn::prepare_out(grad_input, grad.sizes(), backward_dtype(grad, input_dtype), grad);
  if (grad.numel() == 0) return grad_input;
  nn::run_on(grad, [&](vkml::Device& dev) {
    vkml::ops::softmax_backward(dev, to_desc(grad_input), to_desc(grad), to_desc(output),
                                static_cast<int>(d), log);
  });
  return grad_input;
}

at::Tensor backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                    at::ScalarType input_dtype, bool log) {
  at::Tensor gi = at::empty(grad.sizes(), grad.options().dtype(backward_dtype(grad, input_dtype)));
  return backward_out(grad, output, dim, input_dtype, gi, log);
}

at::Tensor softmax(const at::Tensor& s, int64_t dim, bool h2f) {
  return forward(s, dim, h2f, false);
}
at::Tensor log_softmax(const at::Tensor& s, int64_t dim, bool h2f) {
  return forward(s, dim, h2f, true);
}
at::Tensor& softmax_out(const at::Tensor& s, int64_t dim, bool h2f, at::Tensor& out) {
  return forward_out(s, dim, h2f, out, false);
}
at::Tensor& log_softmax_out(const at::Tensor& s, int64_t dim, bool h2f, at::Tensor& out) {
  return forward_out(s, dim, h2f, out, true);
}
at::Tensor softmax_bwd(const at::Tensor& g, const at::Tensor& y, int64_t dim, at::ScalarType t) {
  return backward(g, y, dim, t, false);
}
at::Tensor log_softmax_bwd(const at::Tensor& g, const at::Tensor& y, int64_t dim,
                           at::ScalarType t) {
  return backward(g, y, dim, t, true);
}
at::Tensor& softmax_bwd_out(const at::Tensor& g, const at::Tensor& y, int64_t dim, at::ScalarType t,
                            at::Tensor& gi) {
  return backward_out(g, y, dim, t, gi, false);
}
at::Tensor& log_softmax_bwd_out(const at::Tensor& g, const at::Tensor& y, int64_t dim,
                                at::ScalarType t, at::Tensor& gi) {
  return backward_out(g, y, dim, t, gi, true);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_softmax", softmax);
  m.impl("_softmax.out", softmax_out);
  m.impl("_log_softmax", log_softmax);
  m.impl("_log_softmax.out", log_softmax_out);
  m.impl("_softmax_backward_data", softmax_bwd);
  m.impl("_softmax_backward_data.out", softmax_bwd_out);
  m.impl("_log_softmax_backward_data", log_softmax_bwd);
  m.impl("_log_softmax_backward_data.out", log_softmax_bwd_out);
}

}  // namespace torch_vkml::ops_softmax
