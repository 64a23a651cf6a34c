// Parameters of the batch-norm fast path (norm_bn.comp), shared by C++ and GLSL.
// The activations (x, y, dy) share one dense layout viewed as [outer, channels, inner]:
// NCHW-contiguous gives outer = N, inner = H*W; channels_last (or a 2-D [N, C]) gives
// outer = N*H*W, inner = 1. Per-channel tensors are 1-D with their own element stride.
// Scratch (fp32): per-(channel, chunk) partial sums at 0 (channels * chunks * 2), then four
// coefficients per channel (a, b, m, k) so that the apply pass computes
//   forward:  y  = a * (x - m) + k
//   backward: dx = a * dy + b * (x - m) + k
#ifndef VKML_OPS_NORM_BN_PARAMS_H_
#define VKML_OPS_NORM_BN_PARAMS_H_

// Per-channel slots.
#define BN_W 0
#define BN_B 1
#define BN_RMEAN 2
#define BN_RVAR 3
#define BN_MEAN 4  // saved mean (training)
#define BN_RSTD 5  // saved 1 / sqrt(var + eps) (training)
#define BN_GW 6
#define BN_GB 7
#define BN_CHANNEL_SLOTS 8

// Mode flags.
#define BN_TRAINING 1u        // statistics from the batch (else from running statistics)
#define BN_UPDATE_RUNNING 2u  // forward training: momentum update of running statistics
#define BN_BACKWARD 4u        // combine/apply compute the backward
#define BN_VEC4 8u            // four consecutive elements per invocation (16-byte aligned)
#define BN_ROWS 16u           // partial: channels innermost, a workgroup per chunk of rows with
                              // an invocation per four channels (C % 4 == 0, C <= 4 * 256)

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct NormBnParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer NormBnParams {
#endif
  uint64_t x;
  uint64_t y;   // output (forward) or grad_input (backward); 0: not written
  uint64_t dy;  // grad_output (backward)
  uint64_t scratch;
  uint64_t ch_ptr[BN_CHANNEL_SLOTS];  // 0: slot unused
  uint32_t ch_stride[BN_CHANNEL_SLOTS];
  uint32_t ch_dtype[BN_CHANNEL_SLOTS];
  uint32_t x_dtype;
  uint32_t y_dtype;
  uint32_t dy_dtype;
  uint32_t outer;
  uint32_t channels;
  uint32_t inner;
  uint32_t chunks;     // partial chunks per channel
  uint32_t chunk_len;  // elements of one channel per chunk (a multiple of 4)
  uint32_t mode;
  float eps;
  float momentum;
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(sizeof(NormBnParams) ==
              8 * 4 + 8 * BN_CHANNEL_SLOTS + 4 * 2 * BN_CHANNEL_SLOTS + 4 * 12);
static_assert(offsetof(NormBnParams, ch_stride) == 32 + 8 * BN_CHANNEL_SLOTS);
static_assert(offsetof(NormBnParams, x_dtype) == 32 + 16 * BN_CHANNEL_SLOTS);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_NORM_BN_PARAMS_H_
