#version 460
#extension GL_GOOGLE_include_directive : require
// Writes sorted positions [out_start, out_start + out_count) of every line: the value is copied
// bit for bit from the input at the original position, the index as int64. Reads the bitonic
// sort's pairs, or the radix sort's (then lines are `padded` = n pairs apart).
#include "sort_common.glsl"

layout(local_size_x_id = 0) in;

shared bool s_alt;

void copy_element(uint64_t dst, uint64_t src, uint bytes) {
  if (bytes == 1u) PU8(dst).v = PU8(src).v;
  else if (bytes == 2u) PU16(dst).v = PU16(src).v;
  else if (bytes == 4u) PU32(dst).v = PU32(src).v;
  else PU64(dst).v = PU64(src).v;
}

// Key of pair i: 64-bit keys (bitonic, radix of 64-bit dtypes) or the low half of a radix pair.
uint64_t read_key(SortParams p, uint64_t keys, uint64_t i) {
  uint64_t word = PU64(keys + i * 8ul).v;
  return p.key_bytes == 4u ? (word & 0xFFFFFFFFul) : word;
}

void store_bits(uint64_t dst, uint64_t bits, uint bytes) {
  if (bytes == 1u) PU8(dst).v = uint8_t(bits);
  else if (bytes == 2u) PU16(dst).v = uint16_t(bits);
  else if (bytes == 4u) PU32(dst).v = uint(bits);
  else PU64(dst).v = bits;
}

// The value bits behind a radix key (radix keys are as wide as the dtype and invertible), so
// that values are written without a random read of the input. Returns false for the keys that
// several bit patterns share (+-0, NaNs): those are copied from the input.
bool value_from_key(SortParams p, uint64_t key, out uint64_t bits) {
  uint width = 8u * p.elem_bytes;
  uint64_t mask = width == 64u ? 0xFFFFFFFFFFFFFFFFul : ((1ul << width) - 1ul);
  uint64_t sign = 1ul << (width - 1u);
  if (p.nan_first != 0u && key == 0ul) return false;
  if (p.descending != 0u) key = ~key & mask;
  if (p.value_kind == VKML_SORT_VALUES_UNSIGNED) {
    bits = key;
  } else if (p.value_kind == VKML_SORT_VALUES_SIGNED) {
    bits = key ^ sign;
  } else {
    if (key == mask || key == sign) return false;
    bits = (key & sign) != 0ul ? key ^ sign : ~key & mask;
  }
  return true;
}

void main() {
  SortParams p = pc.p;
  int64_t count = p.rows * p.out_count;
  // A radix sort's result lies in the buffer its last moving pass wrote (one thread finds it).
  if (gl_LocalInvocationID.x == 0u) s_alt = p.skips != 0ul && radix_parity(p, p.passes) != 0u;
  barrier();
  bool alt = s_alt;
  uint64_t keys = alt ? p.keys_alt : p.keys, order = alt ? p.order_alt : p.order;
  for (int64_t t = int64_t(gl_GlobalInvocationID.x); t < count; t += VKML_GRID_STRIDE) {
    int64_t row, q;
    split_index(t, p.out_count, p.rows, row, q);
    int64_t pos = p.out_start + q;
    // Median: a line whose first key is a NaN's (0 under nan_first) answers with that NaN.
    if (p.nan_first != 0u && read_key(p, keys, uint64_t(row * p.padded)) == 0ul) pos = 0;
    uint64_t at = uint64_t(row * p.padded + pos);
    // 32-bit radix keys share a word with their position (radix_common.glsl).
    uint from_pos = p.key_bytes == 4u ? uint(PU64(keys + at * 8ul).v >> 32)
                                      : PU32(order + at * 4ul).v;
    int64_t in_off, val_off, idx_off;
    line_offsets(p, row, in_off, val_off, idx_off);
    uint64_t eb = uint64_t(p.elem_bytes);
    if (p.vals != 0ul) {
      uint64_t dst = p.vals + uint64_t(val_off + q * p.val_dim_stride) * eb;
      uint64_t bits = 0ul;
      bool known = false;
      if (p.value_kind != VKML_SORT_VALUES_COPY) {
        known = value_from_key(p, read_key(p, keys, at), bits);
      }
      if (known) {
        store_bits(dst, bits, p.elem_bytes);
      } else {
        int64_t from = in_off + int64_t(from_pos) * p.in_dim_stride;
        copy_element(dst, p.src + uint64_t(from) * eb, p.elem_bytes);
      }
    }
    if (p.idxs != 0ul) {
      PI64(p.idxs + uint64_t(idx_off + q * p.idx_dim_stride) * 8ul).v = int64_t(from_pos);
    }
  }
}
