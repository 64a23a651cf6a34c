// Winograd F(m x m, 3x3) convolution (conv_winograd.comp's transforms around a batch of (m+2)^2
// GEMMs): internal to the conv family.
#ifndef VKML_OPS_CONV_CONV_WINOGRAD_H_
#define VKML_OPS_CONV_CONV_WINOGRAD_H_

#include "vkml/conv.h"

namespace vkml::ops {

// The forward pass (src = x, dst = y, bias added) or the input gradient (data_grad: src = the
// output gradient, dst = the input gradient, the kernel transposed and turned) of a 2-D 3x3
// convolution at stride 1 without dilation or groups. False where it does not apply or
// VKML_CONV_WINOGRAD does not ask for it (0 off; 1 wherever it applies; a comma-separated subset
// of forward, data, weight: those passes; auto: conv_winograd_by_default in conv_policy.cc).
bool winograd_conv(Device& dev, const ConvDesc& c, const TensorDesc& src, const TensorDesc& w,
                   const TensorDesc* bias, const TensorDesc& dst, bool data_grad);

// The weight gradient of the same convolutions (x the input, gy the output gradient), under the
// same setting.
bool winograd_weight_grad(Device& dev, const ConvDesc& c, const TensorDesc& x,
                          const TensorDesc& gy, const TensorDesc& gw);

}  // namespace vkml::ops

#endif  // VKML_OPS_CONV_CONV_WINOGRAD_H_
