// Parameters of the multi-tensor (_foreach_*) shaders, shared by C++ and GLSL: one dispatch
// applies one op to a list of tensor groups described by per-tensor records.
#ifndef VKML_OPS_FOREACH_PARAMS_H_
#define VKML_OPS_FOREACH_PARAMS_H_

// Groups and chunks per dispatch; longer lists take several dispatches. A workgroup takes one
// chunk of VKML_FOREACH_CHUNK elements of one group at a time (as multi_tensor_apply does), so
// a group's addresses and scalar are uniform across it; groups longer than a dispatch's chunks
// are split into pieces.
#define VKML_FOREACH_MAX_TENSORS 128
#define VKML_FOREACH_MAX_CHUNKS 2048
#define VKML_FOREACH_CHUNK 8192
#define VKML_FOREACH_MAX_INPUTS 3

// Ops of foreach.comp (its specialization constant 1). `y` is the second operand: input 1, or
// the scalar when VKML_FOREACH_FLAG_SCALAR_OPERAND is set (the record's scalar, or the device
// scalar tensor).
#define VKML_FOREACH_ADD 0       // x + alpha * y
#define VKML_FOREACH_MUL 1       // x * y
#define VKML_FOREACH_DIV 2       // x / y
#define VKML_FOREACH_MAXIMUM 3   // NaN-propagating max(x, y)
#define VKML_FOREACH_MINIMUM 4   // NaN-propagating min(x, y)
#define VKML_FOREACH_LERP 5      // lerp(x, input 1, scalar)
#define VKML_FOREACH_ADDCMUL 6   // x + scalar * input 1 * input 2
#define VKML_FOREACH_ADDCDIV 7   // x + scalar * input 1 / input 2
#define VKML_FOREACH_SQRT 8      // sqrt(x)
#define VKML_FOREACH_NEG 9       // -x
#define VKML_FOREACH_COPY 10     // x (input 0 of the out's dtype)
#define VKML_FOREACH_FILL 11     // scalar

#define VKML_FOREACH_FLAG_SCALAR_OPERAND 1u

// dtype codes of the device scalar tensor (mul_.Tensor, add_.Tensor)
#define VKML_FOREACH_SCALAR_F32 0u
#define VKML_FOREACH_SCALAR_F16 1u
#define VKML_FOREACH_SCALAR_BF16 2u
#define VKML_FOREACH_SCALAR_F64 3u  // f64 variants only

// Norms of foreach_norm.comp.
#define VKML_FOREACH_NORM_L1 0u
#define VKML_FOREACH_NORM_L2 1u
#define VKML_FOREACH_NORM_INF 2u
// Elements per workgroup chunk of the partial pass (256 threads x 16).
#define VKML_FOREACH_NORM_CHUNK 4096

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
#endif

// One group (or a piece of one): contiguous tensors of one dtype and numel.
struct ForeachTensor {
  uint64_t dst;
  uint64_t src[VKML_FOREACH_MAX_INPUTS];  // self, other / tensor1, tensor2 (0 when unused)
  int64_t numel;
  uint64_t scalar_f64;  // the group's scalar as double bits (f64 variants)
  float scalar;
  uint32_t pad;
};

#ifdef __cplusplus
struct ForeachParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer ForeachParams {
#endif
  uint64_t scalar_tensor;  // device scalar used as y for every group, or 0
  uint32_t count;          // entries in `tensors`
  uint32_t chunks;         // entries in `chunk_group` / `chunk_index`
  uint32_t flags;          // VKML_FOREACH_FLAG_*
  uint32_t scalar_dtype;   // VKML_FOREACH_SCALAR_*
  float alpha;
  uint32_t pad;
  uint64_t alpha_f64;
  ForeachTensor tensors[VKML_FOREACH_MAX_TENSORS];
  // chunk c: group (chunk[c] & 0xFF) from element (chunk[c] >> 8) * VKML_FOREACH_CHUNK on
  uint32_t chunk[VKML_FOREACH_MAX_CHUNKS];
};

// The norm's partial pass: workgroup chunk c of the concatenated chunk list writes one partial
// (sum of |x|^p or max |x|) to partials[c]; the finishing pass reduces each tensor's partials
// in order into its 0-dim output.
struct ForeachNormTensor {
  uint64_t src;
  uint64_t dst;
  int64_t numel;
  int64_t first_chunk;  // index of its first partial
};

#ifdef __cplusplus
struct ForeachNormParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer ForeachNormParams {
#endif
  uint64_t partials;  // float (f64 variants: double) per chunk
  int64_t chunks;     // chunks of all tensors together
  uint32_t count;
  uint32_t norm;      // VKML_FOREACH_NORM_*
  ForeachNormTensor tensors[VKML_FOREACH_MAX_TENSORS];
};

#ifdef __cplusplus
static_assert(sizeof(ForeachTensor) == 8 * 7);
static_assert(offsetof(ForeachParams, alpha) == 24);
static_assert(offsetof(ForeachParams, tensors) == 40);
static_assert(offsetof(ForeachParams, chunk) == 40 + 56 * VKML_FOREACH_MAX_TENSORS);
static_assert(VKML_FOREACH_MAX_TENSORS <= 256);
static_assert(sizeof(ForeachNormTensor) == 32);
static_assert(offsetof(ForeachNormParams, tensors) == 24);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_FOREACH_PARAMS_H_
