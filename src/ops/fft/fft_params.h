// Parameters of fft.comp, shared by C++ and GLSL. Every tensor is a batch of rows of complex
// values (interleaved real, imaginary pairs); strides count complex elements.
//   FFT_PASS:      one Stockham radix-R pass over rows of n: invocation (b, i), i < n / R, reads
//                  src[i + r n / R] (r < R), twiddles them by table[r k n / (L R)] (k = i mod L,
//                  L = span), takes their R-point DFT and writes dst[(i - k) R + k + r L].
//   FFT_CHIRP_IN:  Bluestein's first step: dst[b, j] = src[b, j] * table2[j] for j < n, zero for
//                  n <= j < m.
//   FFT_MUL:       dst[b, j] = src[b, j] * table[j] (the chirp's spectrum), j < n.
//   FFT_CHIRP_OUT: Bluestein's last step: dst[b, k] = src[b, k] * table2[k], k < n.
// `conj_table` conjugates every table value read (inverse transforms); `scale` multiplies every
// value written.
#ifndef VKML_OPS_FFT_PARAMS_H_
#define VKML_OPS_FFT_PARAMS_H_

#define FFT_PASS 0u
#define FFT_CHIRP_IN 1u
#define FFT_MUL 2u
#define FFT_CHIRP_OUT 3u

#define FFT_MAX_RADIX 16

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vkml::ops {
struct FftParams {
#else
layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer FftParams {
#endif
  uint64_t src;
  uint64_t dst;
  uint64_t table;   // twiddles exp(-2 pi i t / n), t < n (pass); the chirp's spectrum (mul)
  uint64_t table2;  // the chirp exp(-pi i j^2 / n) (chirp_in, chirp_out)
  int64_t batch;
  int64_t n;
  int64_t m;
  int64_t src_row;
  int64_t src_elem;
  int64_t dst_row;
  int64_t dst_elem;
  int64_t span;   // L: the product of the radices of the passes before this one
  int64_t numel;  // invocations
#if defined(__cplusplus) || defined(VKML_USE_FP64)
  double scale_d;  // read by the complex128 variant
#else
  uint64_t scale_d_bits;  // the same 8 bytes: a double here would make fp32 variants need Float64
#endif
  float scale;
  uint32_t radix;
  uint32_t mode;
  uint32_t conj_table;
};
#ifdef __cplusplus
static_assert(sizeof(FftParams) == 4 * 8 + 9 * 8 + 8 + 4 * 4);
static_assert(offsetof(FftParams, scale) == offsetof(FftParams, scale_d) + 8);
}  // namespace vkml::ops
#endif

#endif  // VKML_OPS_FFT_PARAMS_H_
