#version 460
#extension GL_GOOGLE_include_directive : require
// im2col: one invocation per column element, reading its image pixel (zero outside the image).
// COL2IM: one invocation per image pixel, summing the column entries of every block that covers
// it (a gather: deterministic, no atomics).
#include "vkml_common.glsl"
#include "unfold_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { UnfoldParams p; } pc;

#include "nn_common.glsl"

#ifndef COL2IM
void main() {
  UnfoldParams p = pc.p;
  int64_t blocks = p.out_h * p.out_w, kk = p.kernel[0] * p.kernel[1];
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t l = e % blocks, rest = e / blocks;
    int64_t row = rest % (p.channels * kk), n = rest / (p.channels * kk);
    int64_t c = row / kk, ki = (row % kk) / p.kernel[1], kj = row % p.kernel[1];
    int64_t y = (l / p.out_w) * p.stride[0] - p.pad[0] + ki * p.dilation[0];
    int64_t x = (l % p.out_w) * p.stride[1] - p.pad[1] + kj * p.dilation[1];
    bool inside = y >= 0 && y < p.height && x >= 0 && x < p.width;
    int64_t src = n * p.image_strides[0] + c * p.image_strides[1] + y * p.image_strides[2] +
                  x * p.image_strides[3];
    int64_t dst = n * p.column_strides[0] + row * p.column_strides[1] + l * p.column_strides[2];
    uint bytes = p.raw_bytes;
    if (bytes == 0u) {
      nn_store(p.columns, dst, p.column_dtype, inside ? nn_load(p.image, src, p.image_dtype) : ACC(0));
    } else if (bytes == 1u) {
      PU8(p.columns + uint64_t(dst)).v = inside ? PU8(p.image + uint64_t(src)).v : uint8_t(0);
    } else if (bytes == 2u) {
      PU16(p.columns + uint64_t(dst) * 2ul).v =
          inside ? PU16(p.image + uint64_t(src) * 2ul).v : uint16_t(0);
    } else if (bytes == 4u) {
      PU32(p.columns + uint64_t(dst) * 4ul).v = inside ? PU32(p.image + uint64_t(src) * 4ul).v : 0u;
    } else {
      PU64(p.columns + uint64_t(dst) * 8ul).v =
          inside ? PU64(p.image + uint64_t(src) * 8ul).v : uint64_t(0);
    }
  }
}
#else
void main() {
  UnfoldParams p = pc.p;
  int64_t kk = p.kernel[0] * p.kernel[1];
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t x = e % p.width, rest = e / p.width;
    int64_t y = rest % p.height;
    rest /= p.height;
    int64_t c = rest % p.channels, n = rest / p.channels;
    ACC acc = ACC(0);
    bool any = false;  // bool tensors (raw_bytes 1): overlapping blocks OR together
    for (int64_t ki = 0; ki < p.kernel[0]; ++ki) {
      int64_t ty = y + p.pad[0] - ki * p.dilation[0];
      if (ty < 0 || ty % p.stride[0] != 0 || ty / p.stride[0] >= p.out_h) continue;
      for (int64_t kj = 0; kj < p.kernel[1]; ++kj) {
        int64_t tx = x + p.pad[1] - kj * p.dilation[1];
        if (tx < 0 || tx % p.stride[1] != 0 || tx / p.stride[1] >= p.out_w) continue;
        int64_t l = (ty / p.stride[0]) * p.out_w + tx / p.stride[1];
        int64_t row = c * kk + ki * p.kernel[1] + kj;
        int64_t src = n * p.column_strides[0] + row * p.column_strides[1] + l * p.column_strides[2];
        if (p.raw_bytes != 0u) {
          any = any || PU8(p.columns + uint64_t(src)).v != uint8_t(0);
        } else {
          acc += nn_load(p.columns, src, p.column_dtype);
        }
      }
    }
    int64_t dst = n * p.image_strides[0] + c * p.image_strides[1] + y * p.image_strides[2] +
                  x * p.image_strides[3];
    if (p.raw_bytes != 0u) {
      PU8(p.image + uint64_t(dst)).v = any ? uint8_t(1) : uint8_t(0);
    } else {
      nn_store(p.image, dst, p.image_dtype, acc);
    }
  }
}
#endif
