#version 460
#extension GL_GOOGLE_include_directive : require
// searchsorted/bucketize: each thread finds its query's insertion point by binary search, with
// values compared through the sort keys (the CPU sort's order).
#include "vkml_common.glsl"
#include "search_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { SearchParams p; } pc;

#include "sort_key.glsl"

void main() {
  SearchParams p = pc.p;
  uint64_t eb = uint64_t(p.elem_bytes);
  for (int64_t t = int64_t(gl_GlobalInvocationID.x); t < p.numel; t += VKML_GRID_STRIDE) {
    int64_t q_off = 0, o_off = 0, b_off = 0, s_off = 0, rem = t;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      int64_t c = rem % p.sizes[d];
      rem /= p.sizes[d];
      q_off += c * p.q_strides[d];
      o_off += c * p.out_strides[d];
      b_off += c * p.b_strides[d];
      s_off += c * p.s_strides[d];
    }
    uint64_t q = value_key(p.queries + uint64_t(q_off) * eb);
    int64_t lo = 0, hi = p.n;
    while (lo < hi) {
      int64_t mid = (lo + hi) >> 1;
      int64_t pos = mid;
      if (p.sorter != 0ul) {
        pos = PI64(p.sorter + uint64_t(s_off + mid * p.s_last_stride) * 8ul).v;
      }
      uint64_t b = value_key(p.boundaries + uint64_t(b_off + pos * p.b_last_stride) * eb);
      bool go_right = p.right != 0u ? b <= q : b < q;
      if (go_right) lo = mid + 1;
      else hi = mid;
    }
    if (p.out_int32 != 0u) PI32(p.result + uint64_t(o_off) * 4ul).v = int(lo);
    else PI64(p.result + uint64_t(o_off) * 8ul).v = lo;
  }
}
