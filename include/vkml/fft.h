// Discrete Fourier transforms of complex tensors along their last dimension: Stockham passes
// for lengths whose prime factors are small, Bluestein's chirp-z transform for the rest. Real
// transforms (r2c, c2r) are composed from this in the bridge.
#pragma once
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// out[..., k] = scale * sum_j in[..., j] exp(s 2 pi i j k / n), n = the last dimension, s = -1
// (forward) or +1 (inverse). `in` and `out`: kC64, or kC128 where the device has fp64; the same
// sizes, any strides; they must not overlap.
void fft_c2c(Device& dev, const TensorDesc& out, const TensorDesc& in, bool inverse,
             double scale);

// Whether a length runs as Stockham passes alone (every prime factor at most 13).
bool fft_is_smooth(int64_t n);

}  // namespace vkml::ops
