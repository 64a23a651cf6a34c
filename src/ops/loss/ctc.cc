// CTC loss forward and backward (see ctc.comp): one workgroup per batch item.
#include <string>

#include "ops/loss/ctc_params.h"
#include "ops/nn_util.h"
#include "vkml/errors.h"
#include "vkml/index.h"
#include "vkml/loss.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;

void check_dims(const TensorDesc& t, int ndim, const char* what) {
  if (t.ndim() != ndim) {
    throw InvalidArgument(std::string("vkml: ctc_loss ") + what + " must have " +
                          std::to_string(ndim) + " dims, got " + t.describe());
  }
}

CtcParams base_params(const Device& dev, const CtcArgs& a, const TensorDesc& nll,
                      const TensorDesc& log_alpha, bool& fp64) {
  const TensorDesc& lp = *a.log_probs;
  check_dims(lp, 3, "log_probs");
  check_dims(log_alpha, 3, "log_alpha");
  check_dims(nll, 1, "neg_log_likelihood");
  if (lp.dtype != DType::kF32 && lp.dtype != DType::kF64) {
    throw InvalidArgument("vkml: ctc_loss computes in float32 or float64, got " + lp.describe());
  }
  for (const TensorDesc* t : {&nll, &log_alpha}) {
    if (t->dtype != lp.dtype) {
      throw InvalidArgument("vkml: ctc_loss outputs must have log_probs' dtype, got " +
                            t->describe());
    }
  }
  const int64_t T = lp.sizes[0], N = lp.sizes[1];
  const int64_t states = 2 * a.max_target_length + 1;
  if (log_alpha.sizes != std::vector<int64_t>{N, T, states} || nll.sizes[0] != N) {
    throw InvalidArgument("vkml: ctc_loss log_alpha " + log_alpha.describe() + " or nll " +
                          nll.describe() + " does not match log_probs " + lp.describe());
  }
  if (N > 0 && (a.lengths->dtype != DType::kI64 || a.lengths->numel() != 3 * N ||
                !a.lengths->is_contiguous())) {
    throw InvalidArgument("vkml: ctc_loss lengths must be a contiguous int64 [3, N] table");
  }
  if (a.blank < 0 || a.blank >= lp.sizes[2]) {
    throw InvalidArgument("vkml: ctc_loss blank must be in label range");
  }
  fp64 = nn::needs_fp64(dev, {&lp});
  // On NVIDIA GPUs the float64 kernel's nll reads back as stale memory while log_alpha is right
  // (cause unknown): float64 CTC runs only on CPU devices, where tests/torch/ops/loss/test_ctc.py verifies
  // it, and GPUs refuse it instead of answering wrongly.
  if (fp64 && dev.caps().kind != DeviceKind::kCpu) {
    throw NotSupported("vkml: float64 ctc_loss is disabled on GPUs (its results are wrong on "
                       "NVIDIA's driver); use float32 log_probs");
  }
  CtcParams p{};
  p.log_probs = lp.address;
  p.targets = a.targets->address;
  p.lengths = a.lengths->address;
  p.log_alpha = log_alpha.address;
  p.nll = nll.address;
  for (int d = 0; d < 3; ++d) {
    p.lp_strides[d] = lp.strides[d];
    p.alpha_strides[d] = log_alpha.strides[d];
  }
  p.target_stride = a.target_stride;
  p.nll_stride = nll.strides[0];
  p.max_time = T;
  p.batch = N;
  p.classes = lp.sizes[2];
  p.max_states = states;
  p.blank = a.blank;
  p.lp_dtype = nn::float_code(lp, "ctc_loss log_probs");
  p.target_dtype = nn::index_code(*a.targets, "ctc_loss targets");
  p.error_flag = a.error_flag;
  return p;
}

}  // namespace

void ctc_loss(Device& dev, const CtcArgs& args, const TensorDesc& nll,
              const TensorDesc& log_alpha) {
  bool fp64 = false;
  CtcParams p = base_params(dev, args, nll, log_alpha, fp64);
  if (p.batch == 0) return;
  MemRange reads[] = {nn::range_of(*args.log_probs), nn::range_of(*args.targets),
                      nn::range_of(*args.lengths)};
  MemRange writes[] = {nn::range_of(nll), nn::range_of(log_alpha),
                       {args.error_flag, args.error_flag ? kIndexErrorBytes : 0}};
  nn::dispatch_groups(dev, nn::variant(dev, "ctc_fwd", fp64, false), kWorkgroup, p.batch, &p,
                      sizeof(p), reads, writes);
}

void ctc_loss_backward(Device& dev, const CtcArgs& args, const TensorDesc& grad,
                       const TensorDesc& grad_out, const TensorDesc& nll,
                       const TensorDesc& log_alpha, bool zero_infinity) {
  bool fp64 = false;
  CtcParams p = base_params(dev, args, nll, log_alpha, fp64);
  check_dims(grad, 3, "grad");
  check_dims(grad_out, 1, "grad_out");
  nn::check_same_sizes(grad, *args.log_probs, "ctc_loss_backward");
  if (grad.dtype != args.log_probs->dtype || grad_out.dtype != args.log_probs->dtype ||
      grad_out.sizes[0] != p.batch) {
    throw InvalidArgument("vkml: ctc_loss_backward grad " + grad.describe() + " or grad_out " +
                          grad_out.describe() + " does not match log_probs");
  }
  if (p.batch == 0 || grad.numel() == 0) return;
  p.grad_out = grad_out.address;
  p.grad_out_stride = grad_out.strides[0];
  p.grad = grad.address;
  for (int d = 0; d < 3; ++d) p.grad_strides[d] = grad.strides[d];
  p.zero_infinity = zero_infinity ? 1u : 0u;
  const uint64_t acc = fp64 ? 8 : 4;
  const uint64_t beta_bytes = static_cast<uint64_t>(p.batch * p.max_time * p.max_states) * acc;
  const uint64_t link_bytes = static_cast<uint64_t>(p.batch * (p.max_states + p.classes)) * 4;
  nn::Scratch beta(dev, beta_bytes), links(dev, link_bytes);
  p.beta = beta.address();
  p.links = links.address();
  MemRange scratch[] = {{beta.address(), beta_bytes}, {links.address(), link_bytes},
                        {args.error_flag, args.error_flag ? kIndexErrorBytes : 0}};
  MemRange inputs[] = {nn::range_of(*args.log_probs), nn::range_of(*args.targets),
                       nn::range_of(*args.lengths)};
  nn::dispatch_groups(dev, nn::variant(dev, "ctc_beta", fp64, false), kWorkgroup, p.batch, &p,
                      sizeof(p), inputs, scratch);
  MemRange reads[] = {nn::range_of(*args.log_probs), nn::range_of(*args.lengths),
                      nn::range_of(grad_out), nn::range_of(nll), nn::range_of(log_alpha),
                      scratch[0], scratch[1]};
  MemRange writes[] = {nn::range_of(grad)};
  nn::dispatch_groups(dev, nn::variant(dev, "ctc_grad", fp64, false), kWorkgroup,
                      nn::groups_for(grad.numel(), kWorkgroup), &p, sizeof(p), reads, writes);
}

}  // namespace vkml::ops
