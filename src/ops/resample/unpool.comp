#version 460
#extension GL_GOOGLE_include_directive : require
// max_unpool in two deterministic passes: UNPOOL_WINNERS, one invocation per input element,
// records with atomicMax the last input position sent to each output (the CPU's sequential
// last-write-wins); the default pass, one per output element, copies its winner (or zero), bit
// for bit in any dtype.
#include "vkml_common.glsl"
#include "unpool_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { UnpoolParams p; } pc;

#include "nn_common.glsl"

// (n, c, d, h, w) of flat element e over (N, C, sizes).
void split(int64_t e, int64_t sizes[3], out int64_t nc, out int64_t x[3]) {
  for (int k = 2; k >= 0; --k) {
    x[k] = e % sizes[k];
    e /= sizes[k];
  }
  nc = e;
}

int64_t offset(int64_t nc, int64_t x[3], int64_t strides[5]) {
  return (nc / pc.p.channels) * strides[0] + (nc % pc.p.channels) * strides[1] +
         x[0] * strides[2] + x[1] * strides[3] + x[2] * strides[4];
}

#ifdef UNPOOL_WINNERS
void main() {
  UnpoolParams p = pc.p;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t nc, x[3];
    int64_t sizes[3] = {p.in_size[0], p.in_size[1], p.in_size[2]};
    split(e, sizes, nc, x);
    int64_t strides[5] = {p.index_strides[0], p.index_strides[1], p.index_strides[2],
                          p.index_strides[3], p.index_strides[4]};
    int64_t target = PI64(p.indices + uint64_t(offset(nc, x, strides)) * 8ul).v;
    if (target < 0 || target >= p.out_plane) {
      if (p.error_flag != 0ul && atomicCompSwap(PU32(p.error_flag).v, 0u, 1u) == 0u) {
        PU32(p.error_flag + 4ul).v = 0u;
        PI64(p.error_flag + 8ul).v = target;
      }
      continue;
    }
    int64_t in_pos = (x[0] * p.in_size[1] + x[1]) * p.in_size[2] + x[2];
    atomicMax(PU32(p.winners + uint64_t(nc * p.out_plane + target) * 4ul).v, uint(in_pos + 1));
  }
}
#else
void main() {
  UnpoolParams p = pc.p;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t nc, o[3];
    int64_t sizes[3] = {p.out_size[0], p.out_size[1], p.out_size[2]};
    split(e, sizes, nc, o);
    int64_t out_strides[5] = {p.out_strides[0], p.out_strides[1], p.out_strides[2],
                              p.out_strides[3], p.out_strides[4]};
    uint64_t dst = uint64_t(offset(nc, o, out_strides)) * uint64_t(p.elem_bytes);
    uint win = PU32(p.winners + uint64_t(e) * 4ul).v;
    uint64_t src = 0ul;
    if (win != 0u) {
      int64_t pos = int64_t(win - 1u), x[3];
      x[2] = pos % p.in_size[2];
      x[1] = (pos / p.in_size[2]) % p.in_size[1];
      x[0] = pos / (p.in_size[2] * p.in_size[1]);
      int64_t self_strides[5] = {p.self_strides[0], p.self_strides[1], p.self_strides[2],
                                 p.self_strides[3], p.self_strides[4]};
      src = uint64_t(offset(nc, x, self_strides)) * uint64_t(p.elem_bytes);
    }
    uint bytes = p.elem_bytes;
    if (bytes == 1u) {
      PU8(p.result + dst).v = win != 0u ? PU8(p.self + src).v : uint8_t(0);
    } else if (bytes == 2u) {
      PU16(p.result + dst).v = win != 0u ? PU16(p.self + src).v : uint16_t(0);
    } else if (bytes == 4u) {
      PU32(p.result + dst).v = win != 0u ? PU32(p.self + src).v : 0u;
    } else {
      PU64(p.result + dst).v = win != 0u ? PU64(p.self + src).v : uint64_t(0);
    }
  }
}
#endif
