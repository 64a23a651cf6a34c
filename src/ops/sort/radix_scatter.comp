#version 460
#extension GL_GOOGLE_include_directive : require
// Radix sort, per pass: moves every tile's pairs to their place in the other buffer. The tile's
// (digit, position) pairs are ranked stably in shared memory by two 4-bit counting passes (each
// thread counts its own VKML_RADIX_PER_THREAD consecutive pairs, then a digit-major scan), so a
// pair lands at: its line's start of the digit + earlier tiles' pairs of that digit + its rank
// among this tile's pairs of that digit. Stable, so the passes from the lowest digit up sort.
#define RADIX_WORKGROUP_SCAN
#include "radix_common.glsl"

layout(local_size_x = VKML_RADIX_THREADS) in;

#define E VKML_RADIX_PER_THREAD
shared uint s_pack[VKML_RADIX_TILE];        // digit << 16 | position in the tile
shared uint s_count[16 * VKML_RADIX_THREADS];  // nibble-major counters, one column per thread
shared uint s_start[256];                   // first sorted slot of each digit in the tile
shared uint s_offset[256];                  // the digit's first output slot of this tile

// Stable reorder of s_pack by the nibble at bit 16 + shift.
void rank_nibble(uint shift) {
  uint t = gl_LocalInvocationID.x;
  uint v[E], before[E];
  for (uint d = 0u; d < 16u; ++d) s_count[d * VKML_RADIX_THREADS + t] = 0u;
  for (uint e = 0u; e < E; ++e) {
    v[e] = s_pack[t * E + e];
    uint slot = ((v[e] >> (16u + shift)) & 15u) * VKML_RADIX_THREADS + t;
    before[e] = s_count[slot];
    s_count[slot] = before[e] + 1u;
  }
  barrier();
  // Exclusive scan of the counters in (nibble, thread) order: 16 consecutive ones per thread.
  uint sum = 0u;
  for (uint q = 0u; q < 16u; ++q) sum += s_count[t * 16u + q];
  uint run = workgroup_exclusive_scan(sum);
  for (uint q = 0u; q < 16u; ++q) {
    uint c = s_count[t * 16u + q];
    s_count[t * 16u + q] = run;
    run += c;
  }
  barrier();
  for (uint e = 0u; e < E; ++e) {
    uint slot = ((v[e] >> (16u + shift)) & 15u) * VKML_RADIX_THREADS + t;
    s_pack[s_count[slot] + before[e]] = v[e];
  }
  barrier();
}

void main() {
  SortParams p = pc.p;
  if (radix_skipped(p, p.pass)) return;  // every line has one digit value here: nothing moves
  uint t = gl_LocalInvocationID.x;
  bool from_alt = radix_parity(p, p.pass) != 0u;
  uint64_t src_keys = from_alt ? p.keys_alt : p.keys, dst_keys = from_alt ? p.keys : p.keys_alt;
  uint64_t src_order = from_alt ? p.order_alt : p.order;
  uint64_t dst_order = from_alt ? p.order : p.order_alt;
  int64_t work = p.rows * p.tiles;
  for (int64_t w = int64_t(gl_WorkGroupID.x); w < work; w += int64_t(gl_NumWorkGroups.x)) {
    int64_t row = w / p.tiles, tile = w % p.tiles;
    int64_t line = row * p.n, base = line + tile * VKML_RADIX_TILE;
    uint m = uint(min(int64_t(VKML_RADIX_TILE), p.n - tile * VKML_RADIX_TILE));
    KEY_T lo = line_min_key(p, row);
    // Thread t owns digit t: the line's pairs of smaller digits come first.
    int64_t pair = row * 256 + int64_t(t);
    uint digit_start = workgroup_exclusive_scan(PU32(p.totals + uint64_t(pair) * 4ul).v);
    s_offset[t] = digit_start + PU32(p.counts + uint64_t(pair * p.tiles + tile) * 4ul).v;
    // Slots past the tile's end take digit 255 and stay behind every real pair of digit 255.
    for (uint i = t; i < VKML_RADIX_TILE; i += VKML_RADIX_THREADS) {
      uint digit = 255u;
      if (i < m) {
        digit = radix_digit(load_key(src_keys, uint64_t(base + int64_t(i))), lo, p.pass);
      }
      s_pack[i] = (digit << 16) | i;
    }
    barrier();
    rank_nibble(0u);
    rank_nibble(4u);
    for (uint i = t; i < VKML_RADIX_TILE; i += VKML_RADIX_THREADS) {
      uint digit = s_pack[i] >> 16;
      if (i == 0u || (s_pack[i - 1u] >> 16) != digit) s_start[digit] = i;
    }
    barrier();
    for (uint i = t; i < m; i += VKML_RADIX_THREADS) {
      uint packed = s_pack[i], digit = packed >> 16;
      uint64_t from = uint64_t(base + int64_t(packed & 0xFFFFu));
      uint64_t to = uint64_t(line + int64_t(s_offset[digit] + (i - s_start[digit])));
      move_pair(src_keys, src_order, from, dst_keys, dst_order, to);
    }
    barrier();  // shared memory is refilled by the next tile
  }
}
