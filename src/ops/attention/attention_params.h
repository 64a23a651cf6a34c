// Parameters of the attention family's shaders, shared by C++ and GLSL.
// Tensors are 4-D (batch, heads, rows, columns) with element strides; the key/value heads may be
// fewer than the query heads (grouped-query attention: query head h reads key head h / group).
// Forward: q, k, v -> o, lse. Backward: also dout, delta (rowsum(dout * o)) -> g, the gradient
// that the kernel's mode computes (dq, dk or dv).
#ifndef VKML_OPS_ATTENTION_PARAMS_H_
#define VKML_OPS_ATTENTION_PARAMS_H_

// Mask codes beyond the floating dtype codes of nn_common.glsl.
#define VKML_ATTN_MASK_NONE 100u
#define VKML_ATTN_MASK_BOOL 101u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct AttentionParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer AttentionParams {
#endif
  uint64_t q, k, v, o, mask, lse, dout, delta, g;
  int64_t q_strides[4];
  int64_t k_strides[4];
  int64_t v_strides[4];
  int64_t o_strides[4];
  int64_t dout_strides[4];
  int64_t g_strides[4];
  int64_t mask_strides[4];  // zero where the mask broadcasts
  int64_t batch, heads, kv_heads, q_len, kv_len, head_dim, v_head_dim;
  uint64_t seed, offset;  // Philox key and counter word of the dropout draws
  float scale;            // applied to q . k
  float keep_prob;        // 1 - dropout_p; 1 without dropout
  float keep_scale;       // 1 / keep_prob (0 when keep_prob is 0)
  uint32_t dtype;         // q, k, v, o, dout and g share one floating dtype code
  uint32_t mask_dtype;    // a floating code, VKML_ATTN_MASK_BOOL or VKML_ATTN_MASK_NONE
  uint32_t causal;        // 1: key n is visible to query m only when n <= m
  uint32_t dropout;       // 1: apply the dropout draws
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(sizeof(AttentionParams) == 9 * 8 + 7 * 4 * 8 + 7 * 8 + 2 * 8 + 8 * 4);
static_assert(offsetof(AttentionParams, batch) == 9 * 8 + 7 * 4 * 8);
static_assert(offsetof(AttentionParams, scale) == offsetof(AttentionParams, offset) + 8);
}  // namespace vkml::ops
#endif


// The GEMM path's row-wise kernels (attention_rows_fwd / _bwd) over a chunk of fp32 score
// scratch: `rows` rows of kv_len scores, each handled by row_threads threads, row r = (pair, m) with pair = r / q_len enumerating
// (batch b0 + pair / chunk_heads, key head hk0 + pair % chunk_heads); the query head is
// hk * group + group_index. The attention block (scale, mask, dropout, lse, delta) is behind attn.
#ifdef __cplusplus
namespace vkml::ops {
struct AttentionRowsParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer AttentionRowsParams {
#endif
  uint64_t attn;    // AttentionParams of the call
  uint64_t scores;  // fp32 q . k (unscaled)
  uint64_t dprob;   // fp32 dout . v (backward)
  uint64_t prob;    // out: P (forward: normalised; backward: exp(s - lse)), dropout applied
  uint64_t dscore;  // out (backward): P * (dP - delta), unscaled; 0 to skip
  int64_t rows, b0, hk0, chunk_heads, group_index;
  int64_t ld;            // elements between rows of the score buffers (kv_len or more)
  uint32_t out_dtype;    // code of prob and dscore (the data dtype, or f32 in place)
  uint32_t row_threads;  // threads per row: a power of two dividing the workgroup size
};
#ifdef __cplusplus
static_assert(sizeof(AttentionRowsParams) == 5 * 8 + 6 * 8 + 8);
}  // namespace vkml::ops
#endif

// The split-KV decode kernels (attention_decode_split_sg / attention_decode_reduce) for few
// queries and many keys.
// Rows of one (batch, key head) pair are i = g * q_len + m for group index g (query head
// hk * group + g) and query m; `rows` = group * q_len. The keys go in `splits` ranges of
// split_keys; each range writes its rows' running max and sum (part_ml) and unnormalised outputs
// (part_o), fp32 at slot (pair * rows + i) * splits + split, which the reduce pass combines. With
// one split the first pass writes the output and the logsumexp itself.
#ifdef __cplusplus
namespace vkml::ops {
struct AttentionDecodeParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer AttentionDecodeParams {
#endif
  uint64_t attn;     // AttentionParams of the call
  uint64_t part_o;   // fp32 (slot, v_head_dim); 0 with one split
  uint64_t part_ml;  // fp32 (slot, 2): max and sum of exp(logit - max); 0 with one split
  int64_t rows, splits, split_keys;
  // 1 where K (vec_k) or V (vec_v) can be read 4 elements at a time: unit column stride, the
  // other strides and the head dim multiples of 4, the base aligned to 4 elements.
  uint32_t vec_k, vec_v;
};
#ifdef __cplusplus
static_assert(sizeof(AttentionDecodeParams) == 7 * 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_ATTENTION_PARAMS_H_
