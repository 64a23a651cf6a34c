// Parameters of margin.comp (multi_margin_loss and multilabel_margin_loss, forward and backward),
// shared by C++ and GLSL. Inputs are [frames, classes] (a 1-D input is one frame); every tensor
// carries its own strides. Reduced forwards run in one workgroup and add frames in a fixed order.
#ifndef VKML_OPS_LOSS_MARGIN_PARAMS_H_
#define VKML_OPS_LOSS_MARGIN_PARAMS_H_

#define MARGIN_MULTI 0u       // multi_margin_loss: one target class per frame, p = 1 or 2
#define MARGIN_MULTILABEL 1u  // multilabel_margin_loss: target classes listed until the first -1

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct MarginParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer MarginParams {
#endif
  uint64_t x;
  uint64_t target;
  uint64_t weight;     // multi_margin: optional per-class weights
  uint64_t loss;       // forward: per-frame losses (reduction none) or the reduced loss
  uint64_t grad_out;   // backward
  uint64_t grad;       // backward: grad_input, the input's shape
  uint64_t is_target;  // multilabel: [frames, classes] 0/1, written by the forward
  uint64_t error_flag; // IndexErrorRecord for a class out of range; 0: none
  int64_t frames;
  int64_t classes;
  int64_t in_strides[2];         // (frame, class)
  int64_t target_strides[2];     // (frame, label)
  int64_t is_target_strides[2];  // (frame, class)
  int64_t grad_strides[2];       // (frame, class)
  int64_t weight_stride;
  int64_t out_stride;            // per frame, reduction none
  int64_t grad_out_stride;       // per frame; 0 for a single grad_output element
  uint64_t margin_bits;          // margin as double bits (f64 variants)
  float margin_f;
  uint32_t kind;
  uint32_t p;  // multi_margin's norm: 1 or 2
  uint32_t reduction;
  uint32_t dtype_in, dtype_target, dtype_weight, dtype_out, dtype_grad_out, dtype_grad;
  uint32_t dtype_is_target;
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(sizeof(MarginParams) == 8 * 8 + 2 * 8 + 4 * 2 * 8 + 3 * 8 + 8 + 4 + 3 * 4 + 8 * 4);
static_assert(offsetof(MarginParams, margin_f) == offsetof(MarginParams, margin_bits) + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_LOSS_MARGIN_PARAMS_H_
