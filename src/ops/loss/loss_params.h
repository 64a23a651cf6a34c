// Parameters of the loss family's shaders, shared by C++ and GLSL.
// Pointwise losses run over the elements of a common (broadcast) shape with one stride set per
// tensor slot; nll_loss runs over samples (forward) or grad_input elements (backward). Reduced
// losses sum per workgroup into `partials`, and loss_finish adds those in a fixed order
// (deterministic); a single workgroup writes the result itself.
#ifndef VKML_OPS_LOSS_PARAMS_H_
#define VKML_OPS_LOSS_PARAMS_H_

#define VKML_LOSS_MAX_DIMS 8
#define VKML_LOSS_SLOTS 6

#define LOSS_X 0    // input
#define LOSS_Y 1    // target (class indices for nll)
#define LOSS_W 2    // weight (nll: per class)
#define LOSS_PW 3   // pos_weight (binary_cross_entropy_with_logits)
#define LOSS_OUT 4  // per-element loss (reduction none) or grad_input
#define LOSS_GO 5   // grad_output

#define LOSS_MSE 0u
#define LOSS_SMOOTH_L1 1u
#define LOSS_HUBER 2u
#define LOSS_BCE 3u
#define LOSS_BCE_LOGITS 4u
#define LOSS_NLL 5u

// ATen's reduction values.
#define LOSS_REDUCE_NONE 0u
#define LOSS_REDUCE_MEAN 1u
#define LOSS_REDUCE_SUM 2u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct LossParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer LossParams {
#endif
  int64_t numel;  // elements (pointwise), samples (nll forward), grad_input elements (nll bwd)
  int64_t sizes[VKML_LOSS_MAX_DIMS];
  int64_t strides[VKML_LOSS_SLOTS][VKML_LOSS_MAX_DIMS];
  uint64_t ptr[VKML_LOSS_SLOTS];
  uint64_t partials;      // per-workgroup (loss, weight) sums; 0: write the result directly
  uint64_t result;        // the reduced loss (0-dim)
  uint64_t total_weight;  // nll: summed weight of the counted targets (0-dim)
  uint64_t error_flag;    // nll: IndexErrorRecord for a target out of range; 0: none
  int64_t ignore_index;
  int64_t classes;
  int64_t class_stride;   // nll: input's (grad_input's) stride along the class dim
  int64_t weight_stride;  // nll: stride of the class weights
  int64_t partial_count;  // loss_finish: number of (loss, weight) pairs
  int64_t reduce_count;   // pointwise mean: the number of elements averaged
  uint64_t param_bits;    // smooth_l1 beta / huber delta as double bits (f64 variants)
  float param;            // the same as float
  uint32_t dtype[VKML_LOSS_SLOTS];
  uint32_t result_dtype;
  uint32_t total_weight_dtype;
  uint32_t ndim;
  uint32_t kind;
  uint32_t reduction;
  uint32_t pad;
  uint32_t single_sample;    // nll with 1-D input: total_weight is the target's weight
};
#ifdef __cplusplus
static_assert(sizeof(LossParams) == 8 + 8 * VKML_LOSS_MAX_DIMS +
                                        8 * VKML_LOSS_SLOTS * VKML_LOSS_MAX_DIMS +
                                        8 * VKML_LOSS_SLOTS + 4 * 8 + 7 * 8 + 4 +
                                        4 * VKML_LOSS_SLOTS + 7 * 4);
static_assert(offsetof(LossParams, param) == offsetof(LossParams, reduce_count) + 16);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_LOSS_PARAMS_H_
