// CTC loss on vkml: _ctc_loss and _ctc_loss_backward (both length overloads). torch.ctc_loss /
// F.ctc_loss decompose into these plus native elementwise ops and reductions. Lengths are host
// values (as on the CPU and CUDA), checked here and uploaded as one small table per call. Labels
// are checked on the device (BadIndexCheck).
#include <vector>
#include <ATen/TensorUtils.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "common/index_util.h"
#include "common/nn_bridge.h"
#include "vkml/loss.h"

namespace torch_vkml::ops_ctc_loss {

struct CtcLayout {
  at::Tensor lengths;  // int64 [3, N] on the device: input lengths, target lengths, offsets
  int64_t target_stride = 0;
  int64_t max_target_length = 0;
};

// PyTorch's ctc_loss_cpu checks, then the lengths table.
CtcLayout ctc_layout(const at::Tensor& log_probs, const at::Tensor& targets,
                     at::IntArrayRef input_lengths, at::IntArrayRef target_lengths, int64_t blank) {
  at::CheckedFrom c = "ctc_loss_cpu";
  auto log_probs_arg = at::TensorArg(log_probs, "log_probs", 1);
  auto targets_arg = at::TensorArg(targets, "targets", 2);
  TORCH_CHECK(targets.scalar_type() == at::kLong || targets.scalar_type() == at::kInt,
              "ctc_loss: expected targets of dtype Long or Int, got ", targets.scalar_type());
  at::checkDim(c, log_probs_arg, 3);
  at::checkDimRange(c, targets_arg, 1, 3);
  TORCH_CHECK(log_probs.scalar_type() == at::kFloat || log_probs.scalar_type() == at::kDouble,
              "\"ctc_loss_cpu\" not implemented for '", log_probs.scalar_type(), "'");
  nn::check_on_device(log_probs, targets, "ctc_loss", "targets");
  const int64_t batch = log_probs.size(1), labels = log_probs.size(2);
  TORCH_CHECK(blank < labels && blank >= 0, "blank must be in label range");
  TORCH_CHECK(static_cast<int64_t>(input_lengths.size()) == batch,
              "input_lengths must be of size batch_size");
  TORCH_CHECK(static_cast<int64_t>(target_lengths.size()) == batch,
              "target_lengths must be of size batch_size");
  at::Tensor table = at::empty({3, batch}, at::TensorOptions().dtype(at::kLong));
  int64_t* len = table.data_ptr<int64_t>();
  CtcLayout out;
  int64_t pos = 0;
  for (int64_t b = 0; b < batch; ++b) {
    TORCH_CHECK(target_lengths[b] >= 0, "Expected target_lengths to have value at least ", 0,
                ", but got value ", target_lengths[b], " (while checking arguments for ", c, ")");
    len[batch + b] = target_lengths[b];
    if (targets.dim() == 1) {
      len[2 * batch + b] = pos * targets.stride(0);
      pos += target_lengths[b];
    } else {
      len[2 * batch + b] = b * targets.stride(0);
    }
    out.max_target_length = std::max(out.max_target_length, target_lengths[b]);
  }
  if (targets.dim() == 1) {
    out.target_stride = targets.stride(0);
    at::checkSize(c, targets_arg, 0, pos);
  } else {
    out.target_stride = targets.stride(1);
    at::checkSize(c, targets_arg, 0, batch);
    TORCH_CHECK(targets.size(1) >= out.max_target_length, "Expected tensor to have size at least ",
                out.max_target_length, " at dimension 1, but got size ", targets.size(1), " for ",
                targets_arg, " (while checking arguments for ", c, ")");
  }
  for (int64_t b = 0; b < batch; ++b) {
    TORCH_CHECK(input_lengths[b] >= 0, "Expected input_lengths to have value at least ", 0,
                ", but got value ", input_lengths[b], " (while checking arguments for ", c, ")");
    TORCH_CHECK(input_lengths[b] <= log_probs.size(0), "Expected input_lengths to have value ",
                "at most ", log_probs.size(0), ", but got value ", input_lengths[b],
                " (while checking arguments for ", c, ")");
    len[b] = input_lengths[b];
  }
  out.lengths = table.to(log_probs.device());
  return out;
}

vkml::ops::CtcArgs ctc_args(const CtcLayout& l, const vkml::TensorDesc& lp,
                            const vkml::TensorDesc& targets, const vkml::TensorDesc& lengths,
                            int64_t blank, const BadIndexCheck& check) {
  return {&lp, &targets, &lengths, l.target_stride, l.max_target_length, blank, check.address()};
}

// A label out of [0, C) raises IndexError. (The CPU kernel reads past the class dim instead.)
void raise_bad_target(BadIndexCheck& check, int64_t classes) {
  check.raise_if_bad(BadIndexError::kIndex, [&](int64_t v, uint32_t) {
    return "ctc_loss: target " + std::to_string(v) + " is out of bounds for " +
           std::to_string(classes) + " classes";
  });
}

std::tuple<at::Tensor, at::Tensor> ctc_loss(const at::Tensor& log_probs, const at::Tensor& targets,
                                            at::IntArrayRef input_lengths,
                                            at::IntArrayRef target_lengths, int64_t blank,
                                            bool zero_infinity) {
  CtcLayout l = ctc_layout(log_probs, targets, input_lengths, target_lengths, blank);
  at::Tensor log_alpha = at::empty(
      {log_probs.size(1), log_probs.size(0), 2 * l.max_target_length + 1}, log_probs.options());
  at::Tensor nll = at::empty({log_probs.size(1)}, log_probs.options());
  nn::run_on(log_probs, [&](vkml::Device& dev) {
    vkml::TensorDesc lp = to_desc(log_probs), tg = to_desc(targets), len = to_desc(l.lengths);
    BadIndexCheck check(log_probs, l.max_target_length > 0);
    vkml::ops::ctc_loss(dev, ctc_args(l, lp, tg, len, blank, check), to_desc(nll),
                        to_desc(log_alpha));
    raise_bad_target(check, log_probs.size(2));
  });
  return {nll, log_alpha};
}

// The lengths of the Tensor overloads, read on the host as the CPU kernel does (any strides).
std::vector<int64_t> host_lengths(const at::Tensor& t) {
  at::Tensor h = t.to(at::kCPU, at::kLong).reshape({-1});
  auto a = h.accessor<int64_t, 1>();
  std::vector<int64_t> v(static_cast<size_t>(h.size(0)));
  for (int64_t i = 0; i < h.size(0); ++i) v[static_cast<size_t>(i)] = a[i];
  return v;
}

std::tuple<at::Tensor, at::Tensor> ctc_loss_tensor(const at::Tensor& log_probs,
                                                   const at::Tensor& targets,
                                                   const at::Tensor& input_lengths,
                                                   const at::Tensor& target_lengths, int64_t blank,
                                                   bool zero_infinity) {
  std::vector<int64_t> il = host_lengths(input_lengths), tl = host_lengths(target_lengths);
  return ctc_loss(log_probs, targets, {il.data(), il.size()}, {tl.data(), tl.size()}, blank,
                  zero_infinity);
}

at::Tensor ctc_loss_backward(const at::Tensor& grad_out, const at::Tensor& log_probs,
                             const at::Tensor& targets, at::IntArrayRef input_lengths,
                             at::IntArrayRef target_lengths, const at::Tensor& nll,
                             const at::Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  CtcLayout l = ctc_layout(log_probs, targets, input_lengths, target_lengths, blank);
  for (const at::Tensor* t : {&grad_out, &nll, &log_alpha}) {
    nn::check_on_device(log_probs, *t, "ctc_loss_backward", "tensor");
  }
  TORCH_CHECK(log_alpha.dim() == 3 && log_alpha.size(2) >= 2 * l.max_target_length + 1,
              "ctc_loss_backward: log_alpha of shape ", log_alpha.sizes(),
              " does not cover the target lengths");
  l.max_target_length = (log_alpha.size(2) - 1) / 2;
  TORCH_CHECK(grad_out.dim() == 1 && grad_out.size(0) == log_probs.size(1),
              "ctc_loss_backward: expected grad of shape [", log_probs.size(1), "], got ",
              grad_out.sizes());
  at::Tensor grad = at::empty(log_probs.sizes(), log_probs.options());
  nn::run_on(log_probs, [&](vkml::Device& dev) {
    vkml::TensorDesc lp = to_desc(log_probs), tg = to_desc(targets), len = to_desc(l.lengths);
    BadIndexCheck check(log_probs, l.max_target_length > 0);
    vkml::ops::ctc_loss_backward(dev, ctc_args(l, lp, tg, len, blank, check), to_desc(grad),
                                 to_desc(grad_out), to_desc(nll), to_desc(log_alpha),
                                 zero_infinity);
    raise_bad_target(check, log_probs.size(2));
  });
  return grad;
}

at::Tensor ctc_loss_backward_tensor(const at::Tensor& grad_out, const at::Tensor& log_probs,
                                    const at::Tensor& targets, const at::Tensor& input_lengths,
                                    const at::Tensor& target_lengths, const at::Tensor& nll,
                                    const at::Tensor& log_alpha, int64_t blank,
                                    bool zero_infinity) {
  std::vector<int64_t> il = host_lengths(input_lengths), tl = host_lengths(target_lengths);
  return ctc_loss_backward(grad_out, log_probs, targets, {il.data(), il.size()},
                           {tl.data(), tl.size()}, nll, log_alpha, blank, zero_infinity);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_ctc_loss", ctc_loss);
  m.impl("_ctc_loss.Tensor", ctc_loss_tensor);
  m.impl("_ctc_loss_backward", ctc_loss_backward);
  m.impl("_ctc_loss_backward.Tensor", ctc_loss_backward_tensor);
}

}  // namespace torch_vkml::ops_ctc_loss
