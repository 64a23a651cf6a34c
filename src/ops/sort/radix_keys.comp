#version 460
#extension GL_GOOGLE_include_directive : require
// Radix sort, step 1: (key, position) pairs of every line, keys as wide as the dtype with an
// unsigned order equal to the sort order (descending: complemented). Clears the skip counters.
#include "radix_common.glsl"

layout(local_size_x_id = 0) in;

#include "sort_key.glsl"

void main() {
  SortParams p = pc.p;
  if (gl_GlobalInvocationID.x < 16u) PU32(p.skips + uint64_t(gl_GlobalInvocationID.x) * 4ul).v = 0u;
  const uint64_t mask = RADIX_KEY_BITS == 64 ? kAllOnes : ((1ul << RADIX_KEY_BITS) - 1ul);
  int64_t total = p.rows * p.n;
  for (int64_t t = int64_t(gl_GlobalInvocationID.x); t < total; t += VKML_GRID_STRIDE) {
    int64_t row, pos;
    split_index(t, p.n, p.rows, row, pos);
    int64_t in_off, val_off, idx_off;
    line_offsets(p, row, in_off, val_off, idx_off);
    int64_t at = in_off + pos * p.in_dim_stride;
    uint64_t key = radix_value_key(p.src + uint64_t(at * int64_t(p.elem_bytes)));
    if (p.descending != 0u) key = ~key & mask;
    // Median wants a NaN first (then it is the answer); real keys are never 0 after this.
    if (p.nan_first != 0u && key == mask) key = 0ul;
    store_pair(p.keys, p.order, uint64_t(t), KEY_T(key), uint(pos));
  }
}
