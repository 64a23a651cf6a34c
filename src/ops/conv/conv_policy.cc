// The conv family's kernel-choice rules per device class; one reason per branch. Classes without
// a rule of their own take the generic branch.
#include "ops/conv/conv_policy.h"

#include <algorithm>

#include "vkml/config.h"
#include "vkml/gemm.h"

namespace vkml::ops {

namespace {

int64_t volume(const int64_t* sizes, int spatial) {
  int64_t v = 1;
  for (int i = 0; i < spatial; ++i) v *= sizes[i];
  return v;
}

bool is_half(DType t) { return t == DType::kF16 || t == DType::kBF16; }

// Winograd's transforms move more memory per multiply saved as channels shrink.
constexpr int64_t kWinogradMinChannels = 64;
// fp16/bf16 gradients over smaller planes keep the cooperative-matrix implicit kernels.
constexpr int64_t kWinogradHalfMinPlane = 64;

}  // namespace

std::string_view conv_pass_name(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward: return "forward";
    case ConvPass::kData: return "data";
    default: return "weight";
  }
}

// docs/design/conv.md#implicit-gemm
bool conv_implicit_by_default(const DeviceCaps& caps, const ConvDesc& c, ConvPass pass,
                              bool coopmat) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return true;  // no im2col buffer to write and read back through the caches
    default:
      break;
  }
  // fp32: the SIMT implicit kernel beats im2col + GEMM on every layer measured.
  if (!is_half(c.dtype)) return true;
  // Halves without tensor cores: im2col + the GEMM family's kernels.
  if (!coopmat) return false;
  const int64_t taps = volume(c.kernel, c.spatial), cig = c.in_channels / c.groups;
  bool strided = false;
  for (int i = 0; i < c.spatial; ++i) strided |= c.stride[i] != 1;
  switch (pass) {
    case ConvPass::kForward:
      return taps > 1;  // a 1x1 kernel is a plain GEMM over the tensors (or a strided copy)
    case ConvPass::kData:
      // Larger kernels need 8 channels to fill the tiles' rows; 1x1 kernels gain at stride 1.
      return taps > 1 ? cig >= 8 : !strided;
    default:
      // The weight gradient's implicit kernel wins only over short columns (channels x taps).
      return taps > 1 && cig * taps <= (strided ? 511 : 576);
  }
}

// docs/design/conv.md#winograd
bool conv_winograd_by_default(const DeviceCaps& caps, const ConvDesc& c, ConvPass pass) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return false;  // the transforms' memory traffic outweighs the multiplies a CPU saves
    default:
      break;
  }
  if (std::min(c.in_channels, c.out_channels) < kWinogradMinChannels) return false;
  if (c.dtype == DType::kF32) return true;  // fewer multiplies won in every pass from 64 channels
  // fp16/bf16: the cooperative-matrix implicit forward wins where the device has it.
  if (pass == ConvPass::kForward) return !coopmat_shape_ok(caps, c.dtype);
  return c.out_size[0] * c.out_size[1] >= kWinogradHalfMinPlane;
}

// docs/design/conv.md#wgrad-split-k
int64_t conv_wgrad_split_target(const DeviceCaps& caps) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return 8;  // a few cores: slices past that only add a reduction
    default: {
      // Several waves of workgroups, so that a grid just past one wave does not leave the last
      // one nearly empty; VKML_CONV_WGRAD_BLOCKS replaces it (for sweeps).
      const int64_t v = config().conv_wgrad_blocks;
      return v == kConfigAuto ? 1024 : v;
    }
  }
}

}  // namespace vkml::ops
