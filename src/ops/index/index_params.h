// Parameters of the index family's gather/scatter shader, shared by C++ and GLSL.
// One iteration space (up to VKML_INDEX_MAX_DIMS dims) is walked; each index operand k
// contributes idx_k(i) * index_stride[k] to the data offset. The last ndim - nparallel dims are
// walked serially by one thread, in order, so every update of one destination happens in the
// same thread in index order: accumulation is race-free and deterministic without atomics.
#ifndef VKML_OPS_INDEX_PARAMS_H_
#define VKML_OPS_INDEX_PARAMS_H_

#define VKML_INDEX_MAX_DIMS 8
#define VKML_INDEX_MAX_INDICES 8

// Modes: what happens at data[at(i)] for element i of the iteration space.
#define VKML_INDEX_GATHER 0  // values[i] = data[at(i)]
#define VKML_INDEX_ASSIGN 1  // data[at(i)] = values[i]
#define VKML_INDEX_SUM 2     // data[at(i)] += alpha * values[i]
#define VKML_INDEX_PROD 3    // data[at(i)] *= values[i]
#define VKML_INDEX_MAX 4     // data[at(i)] = max(data[at(i)], values[i]), NaN propagates
#define VKML_INDEX_MIN 5
#define VKML_INDEX_DIV 6  // data[at(i)] /= values[i] where values[i] != 0 (floor for integers)

// Flags.
#define VKML_INDEX_ALLOW_NEGATIVE 1u  // indices in [-size, 0) wrap around (NumPy style)
#define VKML_INDEX_VALUE_SCALAR 2u    // values are the bit pattern value_bits, not a tensor
#define VKML_INDEX_SKIP 4u            // updates whose index 0 equals skip_index are skipped
#define VKML_INDEX_SCALE_BY_COUNT 8u  // alpha = 1 / counts[index 0] (embedding scale_grad_by_freq)
// Owner-computes: each thread owns one destination (owner o of `owners`, o's digits over the
// index limits are the index values it takes) and walks every serial position, folding in
// the matching ones in order. K times the work of the plain scheme for K times the threads;
// chosen when the plain scheme would leave a GPU nearly idle. Results are identical.
#define VKML_INDEX_OWNER 16u
// Sums multiply values by alpha. Real variants always do (alpha defaults to 1, exact); the
// complex variant only with this flag, since (1, 0) * v turns an infinite part into NaN, as
// PyTorch's index_add does and its other sums do not.
#define VKML_INDEX_SCALE_BY_ALPHA 32u

// Layout of the error record at error_flag (16 bytes, zeroed by the caller): the first bad
// index claims it (u32 claimed = 1), then stores which index operand (u32) and its value (i64).
#define VKML_INDEX_ERROR_BYTES 16

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct IndexParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer IndexParams {
#endif
  int64_t sizes[VKML_INDEX_MAX_DIMS];
  int64_t data_strides[VKML_INDEX_MAX_DIMS];
  int64_t value_strides[VKML_INDEX_MAX_DIMS];
  int64_t index_strides[VKML_INDEX_MAX_INDICES * VKML_INDEX_MAX_DIMS];  // [k][d]
  uint64_t index_addr[VKML_INDEX_MAX_INDICES];
  int64_t index_limit[VKML_INDEX_MAX_INDICES];   // size of the dim index k selects along
  int64_t index_stride[VKML_INDEX_MAX_INDICES];  // data stride of that dim (elements)
  // flat_ndim > 0: index operand 0 is a flat (row-major) position in a tensor of these sizes
  // and strides (take, put_): its value is split into coordinates, not scaled by a stride.
  int64_t flat_sizes[VKML_INDEX_MAX_DIMS];
  int64_t flat_strides[VKML_INDEX_MAX_DIMS];
  uint64_t data;
  uint64_t values;
  uint64_t value_bits;
  uint64_t error_flag;  // 0: bad indices are skipped silently (still never dereferenced)
  uint64_t counts;      // i64 per index value, for VKML_INDEX_SCALE_BY_COUNT
  // double alpha, as bits (f64 variant; other float variants read alpha_f); the c64 variant:
  // two floats, (real, imaginary), the real part in the low word.
  uint64_t alpha_bits;
  int64_t alpha_i;
  int64_t numel_parallel;
  int64_t numel_serial;
  int64_t owners;  // VKML_INDEX_OWNER: product of the index limits, else 1
  int64_t skip_index;
  uint32_t ndim;
  uint32_t nparallel;
  uint32_t nindex;
  uint32_t mode;
  uint32_t index_i32_mask;  // bit k set: index operand k holds int32, else int64
  uint32_t flags;
  uint32_t flat_ndim;
  float alpha_f;  // alpha rounded to float: variants without fp64 declare no double
};
#ifdef __cplusplus
static_assert(offsetof(IndexParams, index_addr) ==
              8 * (3 * VKML_INDEX_MAX_DIMS + VKML_INDEX_MAX_INDICES * VKML_INDEX_MAX_DIMS));
static_assert(offsetof(IndexParams, data) == offsetof(IndexParams, index_addr) +
                                                 3 * 8 * VKML_INDEX_MAX_INDICES +
                                                 2 * 8 * VKML_INDEX_MAX_DIMS);
static_assert(offsetof(IndexParams, ndim) == offsetof(IndexParams, skip_index) + 8);
static_assert(sizeof(IndexParams) == offsetof(IndexParams, ndim) + 8 * 4);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_INDEX_PARAMS_H_
