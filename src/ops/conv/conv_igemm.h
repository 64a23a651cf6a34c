// The implicit-GEMM convolution passes (conv_igemm_<dtype>, conv_igemm_wgrad_<dtype>): internal
// to the conv family.
#ifndef VKML_OPS_CONV_CONV_IGEMM_H_
#define VKML_OPS_CONV_CONV_IGEMM_H_

#include "ops/conv/conv_policy.h"
#include "vkml/conv.h"
#include "vkml/gemm.h"

namespace vkml::ops {

// A device allocation freed when the scope ends (work recorded before stays ordered).
struct Scratch {
  Device& dev;
  uint64_t address = 0;
  Scratch(Device& d, uint64_t bytes) : dev(d), address(bytes ? d.allocate(bytes) : 0) {}
  ~Scratch() {
    if (address) dev.free(address);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// One pass: dst[n, g*m + row, pos] = sum over (c, tap) of a[g][row][c*KV + tap] *
// src[n, g*src_group_channels + c, pos*mul + tap*kmul + add] (zero outside src) + bias.
struct IgemmPass {
  const TensorDesc* src = nullptr;
  const TensorDesc* dst = nullptr;
  const TensorDesc* bias = nullptr;
  MatrixView a;  // [m][src_group_channels * KV] per group (batch_stride[0])
  int64_t m = 0, src_group_channels = 0;
  const int64_t* src_size = nullptr;  // c.spatial sizes of src
  const int64_t* pos_size = nullptr;  // c.spatial sizes of dst
  int64_t mul[3] = {1, 1, 1}, kmul[3] = {1, 1, 1}, add[3] = {0, 0, 0};
};

// Whether a pass takes the implicit GEMM where it applies: VKML_CONV=implicit|im2col, or where it
// is auto, conv_implicit_by_default (conv_policy.cc).
bool conv_implicit_requested(Device& dev, const ConvDesc& c, ConvPass pass);

// Whether the pass fits the kernel (f32/f16/bf16, built, 32-bit offsets within a sample).
bool igemm_fits(Device& dev, const ConvDesc& c, const IgemmPass& pass);

// Records the pass (one dispatch).
void igemm_run(Device& dev, const ConvDesc& c, const IgemmPass& pass);

// The weight gradient gw[g*m + row][c][tap] = sum over (n, pos) of dst[n, g*m + row, pos] *
// src[n, g*src_group_channels + c, pos*mul + tap*kmul + add]: the pass's src is the input, its
// dst the output gradient (read, not written; `a` and `bias` unused).
bool igemm_wgrad_fits(Device& dev, const ConvDesc& c, const IgemmPass& pass);

// Records it into gw, whose dims 1.. merge into the one stride gw_k (split-K: a second dispatch).
void igemm_wgrad_run(Device& dev, const ConvDesc& c, const IgemmPass& pass, const TensorDesc& gw,
                     int64_t gw_k);

}  // namespace vkml::ops

#endif  // VKML_OPS_CONV_CONV_IGEMM_H_
