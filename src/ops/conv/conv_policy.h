// Kernel-choice rules of the conv family, keyed by device class (DeviceCaps::device_class): each a
// small function of the device and the convolution. The mechanisms that apply them are in
// conv.cc, conv_igemm.cc and conv_winograd.cc. Thresholds and measurements: docs/design/conv.md
#ifndef VKML_OPS_CONV_CONV_POLICY_H_
#define VKML_OPS_CONV_CONV_POLICY_H_

#include <cstdint>
#include <string_view>

#include "vkml/conv.h"
#include "vkml/device.h"

namespace vkml::ops {

// The three passes of a convolution.
enum class ConvPass : uint8_t { kForward, kData, kWeight };

// "forward", "data" or "weight": the pass's name in VKML_CONV_WINOGRAD's list.
std::string_view conv_pass_name(ConvPass pass);

// Whether a pass takes the implicit GEMM where VKML_CONV is auto; `coopmat`: whether it would
// run on the cooperative-matrix kernel (fp16/bf16 only).
bool conv_implicit_by_default(const DeviceCaps& caps, const ConvDesc& c, ConvPass pass,
                              bool coopmat);

// Whether a pass of a 3x3 stride-1 convolution takes Winograd where VKML_CONV_WINOGRAD is auto.
bool conv_winograd_by_default(const DeviceCaps& caps, const ConvDesc& c, ConvPass pass);

// Workgroups the implicit weight gradient's split-K aims at.
int64_t conv_wgrad_split_target(const DeviceCaps& caps);

}  // namespace vkml::ops

#endif  // VKML_OPS_CONV_CONV_POLICY_H_
