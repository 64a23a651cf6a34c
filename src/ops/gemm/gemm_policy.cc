// The gemm family's kernel-choice rules per device class; one reason per branch. Classes without
// a rule of their own take the generic branch.
#include "ops/gemm/gemm_policy.h"

#include <algorithm>

#include "vkml/config.h"

namespace vkml::ops {

namespace {

int64_t output_blocks_128(const GemmDesc& d) { return ((d.m + 127) / 128) * ((d.n + 127) / 128); }

// VKML_GEMM_SIMT_SPLITK_BLOCKS, or `fallback` where it is auto.
int64_t simt_split_k_target(int64_t fallback) {
  const int64_t v = config().gemm_simt_splitk_blocks;
  return v == kConfigAuto ? fallback : v;
}

}  // namespace

// docs/design/gemm.md#f32-kernel
F32Kernel gemm_f32_kernel(const DeviceCaps& caps) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      // 16-byte shared reads map onto SIMD lanes; the SIMT tiles assume many hardware threads.
      return F32Kernel::kVec;
    default:
      // Register tiles of 8x8 from 16-byte shared reads, as a CUDA SGEMM: the fastest on GPUs.
      return F32Kernel::kSimt;
  }
}

// docs/design/gemm.md#min-blocks
int64_t gemm_min_blocks(const DeviceCaps& caps) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return 4;  // a few cores: a handful of large blocks keeps them busy
    default:
      return 96;  // many multiprocessors, each wanting several workgroups
  }
}

// docs/design/gemm.md#split-k-target
int64_t gemm_split_k_target(const DeviceCaps& caps, GemmKernel kernel) {
  const bool simt = kernel == GemmKernel::kSimt;
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return 8;  // a few cores: slices past that only add a reduction
    case DeviceClass::kNvidia:
      // The SIMT kernel's weight gradients gain up to several waves of workgroups.
      return simt ? simt_split_k_target(1024) : 256;
    default:
      return simt ? simt_split_k_target(256) : 256;  // about one wave of workgroups
  }
}

// docs/design/gemm.md#split-k-target
int64_t gemm_split_k_min_slice(const DeviceCaps& caps, GemmKernel kernel) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return 512;
    default:
      // The SIMT kernel's least depth is a tuning setting on GPUs (for sweeps).
      return kernel == GemmKernel::kSimt ? config().gemm_simt_splitk_min_slice : 512;
  }
}

// docs/design/gemm.md#f32-split
bool gemm_f32_split_supported(const DeviceCaps& caps) {
  switch (caps.device_class) {
    case DeviceClass::kCpu:
      return false;  // no tensor cores: three products cost three times one
    default:
      return coopmat_shape_ok(caps, DType::kF16);
  }
}

// docs/design/gemm.md#f32-split
bool gemm_f32_split_by_default(const DeviceCaps& caps, const GemmDesc& d) {
  switch (caps.device_class) {
    case DeviceClass::kNvidia: {
      // Outputs that fill the GPU many times over, or few blocks over a long K (weight gradients
      // over many tokens, with split-K inside the split); with fewer blocks the SIMT kernel's own
      // split-K wins.
      const int64_t blocks = output_blocks_128(d);
      const bool long_k_few_blocks = blocks >= 96 && d.k >= 8192;
      return std::min(d.m, d.n) >= 768 && d.k >= 768 &&
             (blocks >= config().gemm_f32_split_min_blocks || long_k_few_blocks);
    }
    default:
      return false;  // unmeasured elsewhere: opt-in through VKML_GEMM_F32_SPLIT=1
  }
}

}  // namespace vkml::ops
