#version 460
#extension GL_GOOGLE_include_directive : require
// Builds the (key, position) pairs of every line: keys are uint64 images of the SRC_* values whose
// unsigned order is the value order (NaN largest, -0 == +0); padding pairs sort last.
#include "sort_common.glsl"

layout(local_size_x_id = 0) in;

#include "sort_key.glsl"

void main() {
  SortParams p = pc.p;
  for (int64_t t = int64_t(gl_GlobalInvocationID.x); t < p.total; t += VKML_GRID_STRIDE) {
    int64_t row, pos;
    split_index(t, p.padded, p.rows, row, pos);
    uint64_t key = kAllOnes;
    uint order = 0xFFFFFFFFu;
    if (pos < p.n) {
      int64_t in_off, val_off, idx_off;
      line_offsets(p, row, in_off, val_off, idx_off);
      int64_t at = in_off + pos * p.in_dim_stride;
      key = value_key(p.src + uint64_t(at * int64_t(p.elem_bytes)));
      if (p.descending != 0u) key = ~key;
      // Median wants a NaN first (then it is the answer); real keys are never 0 after this.
      if (p.nan_first != 0u) key = key == kAllOnes ? 0ul : key;
      order = uint(pos);
    }
    PU64(p.keys + uint64_t(t) * 8ul).v = key;
    PU32(p.order + uint64_t(t) * 4ul).v = order;
  }
}
