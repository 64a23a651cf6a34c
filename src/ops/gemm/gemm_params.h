// Parameters of the gemm family's shaders, shared by C++ (host) and GLSL (device).
// The block lives in per-submission memory; its address travels in push constants.
#ifndef VKML_OPS_GEMM_PARAMS_H_
#define VKML_OPS_GEMM_PARAMS_H_

#define VKML_GEMM_HAS_CIN 1u   // flags: add beta * C_in
#define VKML_GEMM_HAS_BIAS 2u  // flags: add bias

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
#endif

// Element (b0, b1, r, c) is at address + size * (b0*batch0 + b1*batch1 + r*row + c*col).
struct GemmOperand {
  uint64_t address;
  int64_t row;
  int64_t col;
  int64_t batch0;
  int64_t batch1;
};

#ifdef __cplusplus
struct GemmParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer GemmParams {
#endif
  GemmOperand a;
  GemmOperand b;
  GemmOperand c;
  GemmOperand c_in;
  GemmOperand bias;
  int64_t m;
  int64_t n;
  int64_t k;
  int64_t batch0;  // outer batch size
  int64_t batch1;  // inner batch size
#if defined(__cplusplus) || defined(VKML_USE_FP64)
  double alpha_f64;
  double beta_f64;
#else
  uint64_t alpha_f64_bits;  // f64 shaders only; others must not need the Float64 capability
  uint64_t beta_f64_bits;
#endif
  float alpha;
  float beta;
  uint32_t flags;
  uint32_t splits;   // split-K: slices of K; > 1 writes raw partial sums to `partial`
  uint64_t partial;  // [splits][batch0 * batch1][m][n] accumulators (ACC type), dense
  int64_t k_chunk;   // K per slice (a multiple of every kernel's K tile)
};

#ifdef __cplusplus
static_assert(sizeof(GemmOperand) == 40);
static_assert(offsetof(GemmParams, m) == 200);
static_assert(offsetof(GemmParams, alpha_f64) == 240);
static_assert(offsetof(GemmParams, alpha) == 256);
static_assert(offsetof(GemmParams, partial) == 272);
static_assert(sizeof(GemmParams) == 288);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_GEMM_PARAMS_H_
