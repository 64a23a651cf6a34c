// Tensor-view helpers shared by the conv family's host files (conv.cc, conv_winograd.cc).
#ifndef VKML_OPS_CONV_CONV_UTIL_H_
#define VKML_OPS_CONV_CONV_UTIL_H_

#include <cstdint>

#include "vkml/tensor.h"

namespace vkml::ops {

// The batch entries [n0, n0 + nb) of t.
inline TensorDesc batch_slice(const TensorDesc& t, int64_t n0, int64_t nb) {
  TensorDesc s = t;
  s.sizes[0] = nb;
  s.address += static_cast<uint64_t>(n0 * t.strides[0]) * dtype_size(t.dtype);
  return s;
}

// t's strides as the shaders' five (n, c, d, h, w), leading spatial dims of size 1 stride 0.
inline void set_strides(int64_t out[5], const TensorDesc& t, int spatial) {
  out[0] = t.strides[0];
  out[1] = t.strides[1];
  for (int i = 0; i < 3; ++i) out[2 + i] = 0;
  for (int i = 0; i < spatial; ++i) out[2 + 3 - spatial + i] = t.strides[2 + i];
}

}  // namespace vkml::ops

#endif  // VKML_OPS_CONV_CONV_UTIL_H_
