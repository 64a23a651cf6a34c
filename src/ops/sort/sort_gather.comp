#version 460
#extension GL_GOOGLE_include_directive : require
// Writes sorted positions [out_start, out_start + out_count) of every line: the value is copied
// bit for bit from the input at the original position, the index as int64.
#include "sort_common.glsl"

layout(local_size_x_id = 0) in;

void copy_element(uint64_t dst, uint64_t src, uint bytes) {
  if (bytes == 1u) PU8(dst).v = PU8(src).v;
  else if (bytes == 2u) PU16(dst).v = PU16(src).v;
  else if (bytes == 4u) PU32(dst).v = PU32(src).v;
  else PU64(dst).v = PU64(src).v;
}

void main() {
  SortParams p = pc.p;
  int64_t count = p.rows * p.out_count;
  for (int64_t t = int64_t(gl_GlobalInvocationID.x); t < count; t += VKML_GRID_STRIDE) {
    int64_t row = t / p.out_count, q = t % p.out_count;
    int64_t pos = p.out_start + q;
    // Median: a line whose first key is a NaN's (0 under nan_first) answers with that NaN.
    if (p.nan_first != 0u && PU64(p.keys + uint64_t(row * p.padded) * 8ul).v == 0ul) pos = 0;
    uint from_pos = PU32(p.order + uint64_t(row * p.padded + pos) * 4ul).v;
    int64_t in_off, val_off, idx_off;
    line_offsets(p, row, in_off, val_off, idx_off);
    uint64_t eb = uint64_t(p.elem_bytes);
    if (p.vals != 0ul) {
      int64_t from = in_off + int64_t(from_pos) * p.in_dim_stride;
      copy_element(p.vals + uint64_t(val_off + q * p.val_dim_stride) * eb,
                   p.src + uint64_t(from) * eb, p.elem_bytes);
    }
    if (p.idxs != 0ul) {
      PI64(p.idxs + uint64_t(idx_off + q * p.idx_dim_stride) * 8ul).v = int64_t(from_pos);
    }
  }
}
