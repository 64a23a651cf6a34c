// Elementwise aten ops on vkml whose rows take parameters: the activations hardshrink,
// softshrink, hardtanh, threshold, leaky_relu, elu, softplus and log_sigmoid with their backward
// kernels, plus logit (and its backward), nan_to_num and round(decimals).
#include <ATen/Dispatch.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "ops/elementwise/elementwise_bridge.h"

namespace torch_vkml::ops_parametric_activations {

using ew::Params;
using ew::Promote;
using vkml::ops::BinaryOp;
using vkml::ops::UnaryOp;

// A parameter converted to the tensor's dtype, for kernels that take it as scalar_t on the CPU
// (hardshrink's lambda, threshold, hardtanh's bounds): f16/bf16 round, integers convert with
// the CPU's overflow check (Scalar::to raises as it does there).
at::Scalar in_dtype(const at::Scalar& s, at::ScalarType t) {
  return AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, t, "vkml_param", [&] {
    return at::Scalar(s.to<scalar_t>());
  });
}

// Functional, in-place and out= forms of a parametrised unary row.
at::Tensor run_unary(UnaryOp op, Promote p, const at::Tensor& x, const Params& params) {
  return ew::unary(op, p, x, {}, false, params);
}
at::Tensor& run_unary_(UnaryOp op, Promote p, at::Tensor& x, const Params& params) {
  ew::unary(op, p, x, x, true, params);
  return x;
}
at::Tensor& run_unary_out(UnaryOp op, Promote p, const at::Tensor& x, const Params& params,
                          at::Tensor& out) {
  ew::unary(op, p, x, out, false, params);
  return out;
}

Params logit_params(std::optional<double> eps) { return {eps.has_value() ? *eps : -1.0}; }
at::Tensor logit(const at::Tensor& x, std::optional<double> eps) {
  return run_unary(UnaryOp::kLogit, Promote::kIntToFloat, x, logit_params(eps));
}
at::Tensor& logit_(at::Tensor& x, std::optional<double> eps) {
  return run_unary_(UnaryOp::kLogit, Promote::kIntToFloat, x, logit_params(eps));
}
at::Tensor& logit_out(const at::Tensor& x, std::optional<double> eps, at::Tensor& out) {
  return run_unary_out(UnaryOp::kLogit, Promote::kIntToFloat, x, logit_params(eps), out);
}
at::Tensor& logit_backward_out(const at::Tensor& grad, const at::Tensor& x,
                               std::optional<double> eps, at::Tensor& out) {
  ew::binary_params(BinaryOp::kLogitBackward, Promote::kFloating, grad, x, logit_params(eps), out);
  return out;
}
at::Tensor logit_backward(const at::Tensor& grad, const at::Tensor& x, std::optional<double> eps) {
  return ew::binary_params(BinaryOp::kLogitBackward, Promote::kFloating, grad, x,
                           logit_params(eps), {});
}

// Defaults as the CPU: NaN to 0, infinities to the dtype's largest finite values.
Params nan_to_num_params(const at::Tensor& x, std::optional<double> nan,
                         std::optional<double> posinf, std::optional<double> neginf) {
  double hi = std::numeric_limits<double>::max();
  switch (x.scalar_type()) {
    case at::kFloat: hi = std::numeric_limits<float>::max(); break;
    case at::kHalf: hi = static_cast<float>(std::numeric_limits<c10::Half>::max()); break;
    case at::kBFloat16: hi = static_cast<float>(std::numeric_limits<c10::BFloat16>::max()); break;
    default: break;
  }
  return {nan.value_or(0.0), posinf.value_or(hi), neginf.value_or(-hi)};
}
at::Tensor nan_to_num(const at::Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                      std::optional<double> neginf) {
  TORCH_CHECK(!x.is_complex(), "vkml: nan_to_num on complex tensors is not supported");
  return run_unary(UnaryOp::kNanToNum, Promote::kSame, x,
                   nan_to_num_params(x, nan, posinf, neginf));
}
at::Tensor& nan_to_num_(at::Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                        std::optional<double> neginf) {
  return run_unary_(UnaryOp::kNanToNum, Promote::kSame, x,
                    nan_to_num_params(x, nan, posinf, neginf));
}
at::Tensor& nan_to_num_out(const at::Tensor& x, std::optional<double> nan,
                           std::optional<double> posinf, std::optional<double> neginf,
                           at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == x.scalar_type(), "nan_to_num: dtype of out: ",
              out.scalar_type(), " should be same as input: ", x.scalar_type());
  return run_unary_out(UnaryOp::kNanToNum, Promote::kSame, x,
                       nan_to_num_params(x, nan, posinf, neginf), out);
}

// The CPU's formula: 10^|decimals| as a double cast to the compute type, multiply or divide,
// round half to even, undo.
Params round_params(int64_t decimals) {
  const double ten_pow = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  return {ten_pow, decimals < 0 ? 1.0 : 0.0};
}
at::Tensor round_decimals(const at::Tensor& x, int64_t decimals) {
  return run_unary(UnaryOp::kRoundDecimals, Promote::kFloating, x, round_params(decimals));
}
at::Tensor& round_decimals_(at::Tensor& x, int64_t decimals) {
  return run_unary_(UnaryOp::kRoundDecimals, Promote::kFloating, x, round_params(decimals));
}
at::Tensor& round_decimals_out(const at::Tensor& x, int64_t decimals, at::Tensor& out) {
  return run_unary_out(UnaryOp::kRoundDecimals, Promote::kFloating, x, round_params(decimals),
                       out);
}

// ---- shrink, hardtanh, threshold, leaky_relu --------------------------------------------------

template <UnaryOp kOp>
at::Tensor shrink(const at::Tensor& x, const at::Scalar& lambd) {
  if (kOp == UnaryOp::kSoftshrink) {
    TORCH_CHECK(lambd.toDouble() >= 0, "lambda must be greater or equal to 0, but found to be ",
                lambd.toDouble(), ".");
  }
  return run_unary(kOp, Promote::kFloating, x, {in_dtype(lambd, x.scalar_type())});
}
template <UnaryOp kOp>
at::Tensor& shrink_out(const at::Tensor& x, const at::Scalar& lambd, at::Tensor& out) {
  if (kOp == UnaryOp::kSoftshrink) {
    TORCH_CHECK(lambd.toDouble() >= 0, "lambda must be greater or equal to 0, but found to be ",
                lambd.toDouble(), ".");
  }
  return run_unary_out(kOp, Promote::kFloating, x, {in_dtype(lambd, x.scalar_type())}, out);
}
at::Tensor shrink_backward(const at::Tensor& grad, const at::Tensor& x, const at::Scalar& lambd) {
  return ew::binary_params(BinaryOp::kShrinkBackward, Promote::kFloating, grad, x,
                           {in_dtype(lambd, x.scalar_type())}, {});
}
at::Tensor& shrink_backward_out(const at::Tensor& grad, const at::Tensor& x,
                                const at::Scalar& lambd, at::Tensor& out) {
  ew::binary_params(BinaryOp::kShrinkBackward, Promote::kFloating, grad, x,
                    {in_dtype(lambd, x.scalar_type())}, out);
  return out;
}

void check_not_bool(const at::Tensor& x, const char* name) {
  TORCH_CHECK_NOT_IMPLEMENTED(x.scalar_type() != at::kBool, "\"", name,
                              "\" not implemented for 'Bool'");
}
Params hardtanh_params(const at::Tensor& x, const at::Scalar& lo, const at::Scalar& hi) {
  TORCH_CHECK(x.scalar_type() != at::kBool, "Bool inputs not supported for hardtanh");
  // The CPU truncates integer bounds (uint8 with a bound of -0.5 is fine, -1 is refused).
  TORCH_CHECK(x.scalar_type() != at::kByte || (lo.toLong() >= 0 && hi.toLong() >= 0),
              "cannot do hardtanh on an unsigned type with negative limits");
  if (at::isIntegralType(x.scalar_type(), /*includeBool=*/false)) {
    return {lo.toLong(), hi.toLong()};
  }
  return {in_dtype(lo, x.scalar_type()), in_dtype(hi, x.scalar_type())};
}
at::Tensor hardtanh(const at::Tensor& x, const at::Scalar& lo, const at::Scalar& hi) {
  return run_unary(UnaryOp::kHardtanh, Promote::kSame, x, hardtanh_params(x, lo, hi));
}
at::Tensor& hardtanh_(at::Tensor& x, const at::Scalar& lo, const at::Scalar& hi) {
  return run_unary_(UnaryOp::kHardtanh, Promote::kSame, x, hardtanh_params(x, lo, hi));
}
at::Tensor& hardtanh_out(const at::Tensor& x, const at::Scalar& lo, const at::Scalar& hi,
                         at::Tensor& out) {
  return run_unary_out(UnaryOp::kHardtanh, Promote::kSame, x, hardtanh_params(x, lo, hi), out);
}
at::Tensor& hardtanh_backward_out(const at::Tensor& grad, const at::Tensor& x,
                                  const at::Scalar& lo, const at::Scalar& hi, at::Tensor& out) {
  ew::binary_params(BinaryOp::kHardtanhBackward, Promote::kFloating, grad, x,
                    hardtanh_params(x, lo, hi), out);
  return out;
}
at::Tensor hardtanh_backward(const at::Tensor& grad, const at::Tensor& x, const at::Scalar& lo,
                             const at::Scalar& hi) {
  return ew::binary_params(BinaryOp::kHardtanhBackward, Promote::kFloating, grad, x,
                           hardtanh_params(x, lo, hi), {});
}

Params threshold_params(const at::Tensor& x, const at::Scalar& th, const at::Scalar& value) {
  return {in_dtype(th, x.scalar_type()), in_dtype(value, x.scalar_type())};
}
at::Tensor threshold(const at::Tensor& x, const at::Scalar& th, const at::Scalar& value) {
  check_not_bool(x, "threshold");
  return run_unary(UnaryOp::kThreshold, Promote::kSame, x, threshold_params(x, th, value));
}
at::Tensor& threshold_(at::Tensor& x, const at::Scalar& th, const at::Scalar& value) {
  check_not_bool(x, "threshold");
  return run_unary_(UnaryOp::kThreshold, Promote::kSame, x, threshold_params(x, th, value));
}
at::Tensor& threshold_out(const at::Tensor& x, const at::Scalar& th, const at::Scalar& value,
                          at::Tensor& out) {
  check_not_bool(x, "threshold");
  return run_unary_out(UnaryOp::kThreshold, Promote::kSame, x, threshold_params(x, th, value), out);
}

at::Tensor leaky_relu(const at::Tensor& x, const at::Scalar& slope) {
  return run_unary(UnaryOp::kLeakyRelu, Promote::kFloating, x, {slope});
}
at::Tensor& leaky_relu_(at::Tensor& x, const at::Scalar& slope) {
  return run_unary_(UnaryOp::kLeakyRelu, Promote::kFloating, x, {slope});
}
at::Tensor& leaky_relu_out(const at::Tensor& x, const at::Scalar& slope, at::Tensor& out) {
  return run_unary_out(UnaryOp::kLeakyRelu, Promote::kFloating, x, {slope}, out);
}
at::Tensor& leaky_relu_backward_out(const at::Tensor& grad, const at::Tensor& x,
                                    const at::Scalar& slope, bool self_is_result,
                                    at::Tensor& out) {
  TORCH_CHECK(!self_is_result || slope.toDouble() >= 0.0,
              "In-place leakyReLu backward calculation is triggered with a negative slope which "
              "is not supported. This is caused by calling in-place forward function with a "
              "negative slope, please call out-of-place version instead. File an issue at "
              "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
              "backward calculation with negative slope");
  at::Tensor r =
      ew::binary_params(BinaryOp::kLeakyReluBackward, Promote::kFloating, grad, x, {slope}, out);
  if (!out.defined()) out = r;  // the functional form passes an undefined out
  return out;
}
at::Tensor leaky_relu_backward(const at::Tensor& grad, const at::Tensor& x,
                               const at::Scalar& slope, bool self_is_result) {
  at::Tensor out;
  return leaky_relu_backward_out(grad, x, slope, self_is_result, out);
}

// ---- elu, softplus, log_sigmoid ---------------------------------------------------------------

at::Tensor elu(const at::Tensor& x, const at::Scalar& alpha, const at::Scalar& scale,
               const at::Scalar& input_scale) {
  return run_unary(UnaryOp::kElu, Promote::kFloating, x, {alpha, scale, input_scale});
}
at::Tensor& elu_(at::Tensor& x, const at::Scalar& alpha, const at::Scalar& scale,
                 const at::Scalar& input_scale) {
  return run_unary_(UnaryOp::kElu, Promote::kFloating, x, {alpha, scale, input_scale});
}
at::Tensor& elu_out(const at::Tensor& x, const at::Scalar& alpha, const at::Scalar& scale,
                    const at::Scalar& input_scale, at::Tensor& out) {
  return run_unary_out(UnaryOp::kElu, Promote::kFloating, x, {alpha, scale, input_scale}, out);
}
at::Tensor& elu_backward_out(const at::Tensor& grad, const at::Scalar& alpha,
                             const at::Scalar& scale, const at::Scalar& input_scale,
                             bool is_result, const at::Tensor& self_or_result, at::Tensor& out) {
  TORCH_CHECK(!is_result || alpha.toDouble() >= 0.0,
              "In-place elu backward calculation is triggered with a negative slope which is not "
              "supported. This is caused by calling in-place forward function with a negative "
              "slope, please call out-of-place version instead.");
  at::Tensor r =
      ew::binary_params(is_result ? BinaryOp::kEluBackwardResult : BinaryOp::kEluBackward,
                        Promote::kFloating, grad, self_or_result, {alpha, scale, input_scale}, out);
  if (!out.defined()) out = r;  // the functional form passes an undefined out
  return out;
}
at::Tensor elu_backward(const at::Tensor& grad, const at::Scalar& alpha, const at::Scalar& scale,
                        const at::Scalar& input_scale, bool is_result,
                        const at::Tensor& self_or_result) {
  at::Tensor out;
  return elu_backward_out(grad, alpha, scale, input_scale, is_result, self_or_result, out);
}

at::Tensor softplus(const at::Tensor& x, const at::Scalar& beta, const at::Scalar& threshold) {
  return run_unary(UnaryOp::kSoftplus, Promote::kFloating, x, {beta, threshold});
}
at::Tensor& softplus_out(const at::Tensor& x, const at::Scalar& beta, const at::Scalar& threshold,
                         at::Tensor& out) {
  return run_unary_out(UnaryOp::kSoftplus, Promote::kFloating, x, {beta, threshold}, out);
}
at::Tensor& softplus_backward_out(const at::Tensor& grad, const at::Tensor& x,
                                  const at::Scalar& beta, const at::Scalar& threshold,
                                  at::Tensor& out) {
  at::Tensor r = ew::binary_params(BinaryOp::kSoftplusBackward, Promote::kFloating, grad, x,
                                   {beta, threshold}, out);
  if (!out.defined()) out = r;  // the functional form passes an undefined out
  return out;
}
at::Tensor softplus_backward(const at::Tensor& grad, const at::Tensor& x, const at::Scalar& beta,
                             const at::Scalar& threshold) {
  at::Tensor out;
  return softplus_backward_out(grad, x, beta, threshold, out);
}

// The buffer is CPU-specific scratch; vkml's backward recomputes from the input, as CUDA's does.
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out(const at::Tensor& x, at::Tensor& out,
                                                             at::Tensor& buffer) {
  ew::unary(UnaryOp::kLogSigmoid, Promote::kFloating, x, out);
  at::native::resize_output(buffer, {0});
  return {out, buffer};
}
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& x) {
  at::Tensor out = ew::unary(UnaryOp::kLogSigmoid, Promote::kFloating, x, {});
  return {out, at::empty({0}, x.options())};
}
at::Tensor& log_sigmoid_backward_out(const at::Tensor& grad, const at::Tensor& x,
                                     const at::Tensor&, at::Tensor& out) {
  ew::binary(BinaryOp::kLogSigmoidBackward, Promote::kFloating, grad, x, 1, out);
  return out;
}
at::Tensor log_sigmoid_backward(const at::Tensor& grad, const at::Tensor& x, const at::Tensor&) {
  return ew::binary(BinaryOp::kLogSigmoidBackward, Promote::kFloating, grad, x, 1, {});
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("logit", logit);
  m.impl("logit_", logit_);
  m.impl("logit.out", logit_out);
  m.impl("logit_backward", logit_backward);
  m.impl("logit_backward.grad_input", logit_backward_out);
  m.impl("nan_to_num", nan_to_num);
  m.impl("nan_to_num_", nan_to_num_);
  m.impl("nan_to_num.out", nan_to_num_out);
  m.impl("round.decimals", round_decimals);
  m.impl("round_.decimals", round_decimals_);
  m.impl("round.decimals_out", round_decimals_out);
  m.impl("hardshrink", shrink<UnaryOp::kHardshrink>);
  m.impl("hardshrink.out", shrink_out<UnaryOp::kHardshrink>);
  m.impl("hardshrink_backward", shrink_backward);
  m.impl("hardshrink_backward.grad_input", shrink_backward_out);
  m.impl("softshrink", shrink<UnaryOp::kSoftshrink>);
  m.impl("softshrink.out", shrink_out<UnaryOp::kSoftshrink>);
  m.impl("softshrink_backward", shrink_backward);
  m.impl("softshrink_backward.grad_input", shrink_backward_out);
  m.impl("hardtanh", hardtanh);
  m.impl("hardtanh_", hardtanh_);
  m.impl("hardtanh.out", hardtanh_out);
  m.impl("hardtanh_backward", hardtanh_backward);
  m.impl("hardtanh_backward.grad_input", hardtanh_backward_out);
  m.impl("threshold", threshold);
  m.impl("threshold_", threshold_);
  m.impl("threshold.out", threshold_out);
  m.impl("leaky_relu", leaky_relu);
  m.impl("leaky_relu_", leaky_relu_);
  m.impl("leaky_relu.out", leaky_relu_out);
  m.impl("leaky_relu_backward", leaky_relu_backward);
  m.impl("leaky_relu_backward.grad_input", leaky_relu_backward_out);
  m.impl("elu", elu);
  m.impl("elu_", elu_);
  m.impl("elu.out", elu_out);
  m.impl("elu_backward", elu_backward);
  m.impl("elu_backward.grad_input", elu_backward_out);
  m.impl("softplus", softplus);
  m.impl("softplus.out", softplus_out);
  m.impl("softplus_backward", softplus_backward);
  m.impl("softplus_backward.grad_input", softplus_backward_out);
  m.impl("log_sigmoid_forward", log_sigmoid_forward);
  m.impl("log_sigmoid_forward.output", log_sigmoid_forward_out);
  m.impl("log_sigmoid_backward", log_sigmoid_backward);
  m.impl("log_sigmoid_backward.grad_input", log_sigmoid_backward_out);
}

}  // namespace torch_vkml::ops_parametric_activations
