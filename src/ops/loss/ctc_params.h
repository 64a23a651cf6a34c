// Parameters of ctc.comp (CTC loss forward and backward), shared by C++ and GLSL.
// One workgroup per batch item runs the alpha (forward) or beta (backward) recursion over time in
// log space; the S = 2 * target_length + 1 extended-label positions of a step are spread over the
// workgroup's invocations. The gradient then runs one invocation per element, walking the states
// of its class through per-item label links. Per-item lengths come from a small int64 table.
#ifndef VKML_OPS_LOSS_CTC_PARAMS_H_
#define VKML_OPS_LOSS_CTC_PARAMS_H_

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct CtcParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer CtcParams {
#endif
  uint64_t log_probs;  // [T, N, C]
  uint64_t targets;    // class indices; item b's j-th label at lengths[2N + b] + j * target_stride
  uint64_t lengths;    // int64 [3, N]: input lengths, target lengths, target offsets (elements)
  uint64_t log_alpha;  // [N, T, S_max], written by the forward, read by the backward
  uint64_t nll;        // [N] negative log likelihood
  uint64_t grad_out;   // backward: [N] gradient of each item's loss
  uint64_t grad;       // backward: [T, N, C] gradient of log_probs
  uint64_t beta;       // backward scratch: [N, T, S_max] accumulator-typed log beta
  uint64_t links;      // backward scratch, int32: [N, S_max] next state with the same label (-1
                       // none), then [N, C] first state of each class (-1 none)
  uint64_t error_flag; // IndexErrorRecord for a label out of [0, C); 0: none
  int64_t lp_strides[3];    // log_probs strides over (t, n, c)
  int64_t alpha_strides[3]; // log_alpha strides over (n, t, s)
  int64_t grad_strides[3];  // grad strides over (t, n, c)
  int64_t target_stride;
  int64_t nll_stride;
  int64_t grad_out_stride;
  int64_t max_time;     // T
  int64_t batch;        // N
  int64_t classes;      // C
  int64_t max_states;   // S_max = 2 * max target length + 1
  int64_t blank;
  uint32_t lp_dtype;      // nn dtype code of log_probs (and of log_alpha, nll, grad)
  uint32_t target_dtype;  // nn index code
  uint32_t zero_infinity;
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(sizeof(CtcParams) == 10 * 8 + 9 * 8 + 8 * 8 + 4 * 4);
static_assert(offsetof(CtcParams, lp_dtype) == 10 * 8 + 9 * 8 + 8 * 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_LOSS_CTC_PARAMS_H_
