// Parameters of distance.comp (cdist / pdist forward and backward), shared by C++ and GLSL.
// cdist: x1 [B..., P, M], x2 [B..., R, M] with broadcast batch dims (stride 0), out [B..., P, R].
// pdist: x [N, M] as both x1 and x2, out the N (N - 1) / 2 distances of pairs i < j, row-major.
// One invocation per output element; backward invocations own one element of grad_x1 and sum
// over the other operand's rows.
#ifndef VKML_OPS_DISTANCE_PARAMS_H_
#define VKML_OPS_DISTANCE_PARAMS_H_

#define VKML_DIST_MAX_BATCH 6

// Modes.
#define DIST_CDIST_FWD 0u
#define DIST_CDIST_BWD 1u
#define DIST_PDIST_FWD 2u
#define DIST_PDIST_BWD 3u

// The norm order p, by the formula it needs.
#define DIST_P0 0u     // count of differing coordinates
#define DIST_P1 1u     // sum |d|
#define DIST_P2 2u     // sqrt(sum d^2)
#define DIST_PINF 3u   // max |d|
#define DIST_PLT2 4u   // other 0 < p < 2
#define DIST_PGT2 5u   // p > 2

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct DistParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer DistParams {
#endif
  uint64_t x1;
  uint64_t x2;
  uint64_t dst;   // forward: distances; backward: grad_x1
  uint64_t grad;  // backward: gradient of the distances
  uint64_t dist;  // backward: the forward's distances
  int64_t batch_sizes[VKML_DIST_MAX_BATCH];
  // Strides over (batch..., row, column) of x1, x2 and the backward's grad_x1; over
  // (batch..., i, j) of the distances, their gradient (pdist: element stride in [0]).
  int64_t x1_strides[VKML_DIST_MAX_BATCH + 2];
  int64_t x2_strides[VKML_DIST_MAX_BATCH + 2];
  int64_t out_strides[VKML_DIST_MAX_BATCH + 2];
  int64_t grad_strides[VKML_DIST_MAX_BATCH + 2];
  int64_t dist_strides[VKML_DIST_MAX_BATCH + 2];
  int64_t rows1;  // P (pdist: N)
  int64_t rows2;  // R (pdist: N)
  int64_t cols;   // M
  int64_t numel;  // invocations' elements
  uint64_t p_bits;  // p as double bits (f64 variant)
  float p_f;
  uint32_t batch_ndim;
  uint32_t dtype[5];  // x1, x2, out, grad, dist
  uint32_t mode;
  uint32_t p_kind;
  uint32_t pad;
};
#ifdef __cplusplus
static_assert(sizeof(DistParams) == 5 * 8 + 8 * VKML_DIST_MAX_BATCH +
                                        5 * 8 * (VKML_DIST_MAX_BATCH + 2) + 4 * 8 + 8 + 4 + 4 +
                                        5 * 4 + 3 * 4);
static_assert(offsetof(DistParams, p_f) == offsetof(DistParams, p_bits) + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_DISTANCE_PARAMS_H_
