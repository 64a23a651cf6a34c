// Convolutions: PyTorch routes every PrivateUse1 convolution (conv1d/2d/3d, transposed, grouped,
// depthwise) to convolution_overrideable and its gradient to
// convolution_backward_overrideable. A transposed convolution is handed to the core as the
// data gradient of the regular convolution from its output space to its input space.
#include <ATen/Context.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <tuple>

#include "common/bridge.h"
#include "vkml/conv.h"

namespace torch_vkml::ops_convolution {

using vkml::ops::ConvDesc;

struct Params {
  c10::IntArrayRef stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;
};

int64_t param(c10::IntArrayRef p, int i) { return p.size() == 1 ? p[0] : p[i]; }

// The regular convolution behind a call: for a transposed one, the convolution whose data
// gradient it is (its input space is the transposed output's, and vice versa).
ConvDesc describe(const at::Tensor& input, const at::Tensor& weight, const Params& p) {
  const int spatial = static_cast<int>(weight.dim()) - 2;
  TORCH_CHECK(spatial >= 1, "weight should have at least three dimensions");
  TORCH_CHECK_NOT_IMPLEMENTED(spatial <= 3, "vkml: convolutions of up to 3 spatial dims");
  TORCH_CHECK(input.dim() == weight.dim(), "Expected ", weight.dim(), "-dimensional input for ",
              weight.dim(), "-dimensional weight ", weight.sizes(), ", but got ", input.dim(),
              "-dimensional input of size ", input.sizes(), " instead");
  TORCH_CHECK(p.groups > 0, "non-positive groups is not supported");
  ConvDesc c;
  c.spatial = spatial;
  c.batch = input.size(0);
  c.groups = p.groups;
  c.dtype = to_core_dtype(input.scalar_type());
  for (int i = 0; i < spatial; ++i) {
    c.kernel[i] = weight.size(2 + i);
    c.stride[i] = param(p.stride, i);
    c.padding[i] = param(p.padding, i);
    c.dilation[i] = param(p.dilation, i);
  }
  if (!p.transposed) {
    c.in_channels = input.size(1);
    c.out_channels = weight.size(0);
    TORCH_CHECK(c.in_channels == weight.size(1) * p.groups, "Given groups=", p.groups,
                ", weight of size ", weight.sizes(), ", expected input", input.sizes(), " to have ",
                weight.size(1) * p.groups, " channels, but got ", c.in_channels,
                " channels instead");
    for (int i = 0; i < spatial; ++i) {
      c.in_size[i] = input.size(2 + i);
      c.out_size[i] =
          (c.in_size[i] + 2 * c.padding[i] - c.dilation[i] * (c.kernel[i] - 1) - 1) / c.stride[i] +
          1;
      TORCH_CHECK(c.out_size[i] > 0, "Calculated output size is too small");
    }
  } else {
    c.in_channels = weight.size(1) * p.groups;
    c.out_channels = weight.size(0);
    TORCH_CHECK(input.size(1) == weight.size(0), "Given transposed=1, weight of size ",
                weight.sizes(), ", expected input", input.sizes(), " to have ", weight.size(0),
                " channels, but got ", input.size(1), " channels instead");
    for (int i = 0; i < spatial; ++i) {
      c.out_size[i] = input.size(2 + i);
      c.in_size[i] = (c.out_size[i] - 1) * c.stride[i] - 2 * c.padding[i] +
                     c.dilation[i] * (c.kernel[i] - 1) + param(p.output_padding, i) + 1;
      TORCH_CHECK(c.in_size[i] > 0, "Calculated output size is too small");
    }
  }
  return c;
}

std::vector<int64_t> shape(int64_t n, int64_t ch, const int64_t* spatial, int count) {
  std::vector<int64_t> s = {n, ch};
  for (int i = 0; i < count; ++i) s.push_back(spatial[i]);
  return s;
}

void check_operands(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  TORCH_CHECK(
      input.device() == weight.device() && (!bias.defined() || bias.device() == input.device()),
      "Expected all tensors to be on the same device, but found at least two devices, ",
      input.device(), " and ", weight.device() == input.device() ? bias.device() : weight.device(),
      "!");
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (", input.scalar_type(),
              ") and weight type (", weight.scalar_type(), ") should be the same");
  TORCH_CHECK(!bias.defined() || bias.scalar_type() == input.scalar_type(), "Input type (",
              input.scalar_type(), ") and bias type (", bias.scalar_type(), ") should be the same");
  at::ScalarType t = input.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(
      t == at::kFloat || t == at::kHalf || t == at::kBFloat16 || t == at::kDouble,
      "vkml: convolution supports float32, float16, bfloat16 and float64 tensors, not ", t);
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias_opt, c10::IntArrayRef stride,
                       c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                       c10::IntArrayRef output_padding, int64_t groups) {
  const at::Tensor bias = bias_opt.value_or(at::Tensor());
  check_operands(input, weight, bias);
  const Params p{stride, padding, dilation, output_padding, transposed, groups};
  const ConvDesc c = describe(input, weight, p);
  c10::DeviceGuard guard(input.device());
  vkml::Device& dev = core_device(input);
  const int64_t out_channels = transposed ? c.in_channels : c.out_channels;
  const int64_t* out_size = transposed ? c.in_size : c.out_size;
  if (bias.defined()) {
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == out_channels, "Given weight of size ",
                weight.sizes(), ", expected bias to be 1-dimensional with ", out_channels,
                " elements, but got bias of size ", bias.sizes(), " instead");
  }
  at::Tensor out = at::empty(shape(c.batch, out_channels, out_size, c.spatial), input.options());
  vkml::TensorDesc b = bias.defined() ? to_desc(bias) : vkml::TensorDesc();
  translate_errors([&] {
    if (!transposed) {
      vkml::ops::conv_forward(dev, c, to_desc(input), to_desc(weight),
                              bias.defined() ? &b : nullptr, to_desc(out));
    } else {
      vkml::ops::conv_backward_data(dev, c, to_desc(input), to_desc(weight),
                                    bias.defined() ? &b : nullptr, to_desc(out));
    }
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
    c10::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  check_operands(input, weight, at::Tensor());
  check_operands(grad_output, weight, at::Tensor());
  const Params p{stride, padding, dilation, output_padding, transposed, groups};
  const ConvDesc c = describe(input, weight, p);
  c10::DeviceGuard guard(input.device());
  vkml::Device& dev = core_device(input);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) grad_input = at::empty(input.sizes(), input.options());
  if (output_mask[1]) grad_weight = at::empty(weight.sizes(), weight.options());
  if (output_mask[2]) grad_bias = at::empty({grad_output.size(1)}, grad_output.options());
  const vkml::TensorDesc gy = to_desc(grad_output), x = to_desc(input), w = to_desc(weight);
  translate_errors([&] {
    if (!transposed) {
      if (output_mask[0])
        vkml::ops::conv_backward_data(dev, c, gy, w, nullptr, to_desc(grad_input));
      if (output_mask[1]) vkml::ops::conv_backward_weight(dev, c, x, gy, to_desc(grad_weight));
    } else {
      // Regular-convolution roles: grad_output lives in its input space, input in its output.
      if (output_mask[0]) vkml::ops::conv_forward(dev, c, gy, w, nullptr, to_desc(grad_input));
      if (output_mask[1]) vkml::ops::conv_backward_weight(dev, c, gy, x, to_desc(grad_weight));
    }
    if (output_mask[2]) vkml::ops::conv_backward_bias(dev, gy, to_desc(grad_bias));
  });
  return {grad_input, grad_weight, grad_bias};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
}

}  // namespace torch_vkml::ops_convolution
