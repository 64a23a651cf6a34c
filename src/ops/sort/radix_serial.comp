#version 460
#extension GL_GOOGLE_include_directive : require
// Radix sort for CPU devices (lavapipe): one invocation per tile of p.tile_len pairs, counting
// serially, which a CPU runs fast (no barriers, no shared-memory traffic). STAGE_HIST writes the
// tile's digit counts, STAGE_SCATTER moves its pairs in order to their slots: the line's start
// of the digit + earlier tiles' pairs of that digit + this tile's earlier pairs of that digit.
#include "radix_common.glsl"

// Histograms run a tile per lane; a scatter's writes go to 256 places per tile, so several tiles
// at once would thrash the CPU's caches: one tile per workgroup.
#ifdef STAGE_HIST
layout(local_size_x = 8) in;
#else
layout(local_size_x = 1) in;
#endif

void main() {
  SortParams p = pc.p;
#ifdef STAGE_SCATTER
  if (radix_skipped(p, p.pass)) return;  // every line has one digit value here: nothing moves
#else
  if (radix_range_skipped(p)) return;
#endif
  bool from_alt = radix_parity(p, p.pass) != 0u;
  uint64_t src_keys = from_alt ? p.keys_alt : p.keys;
  uint64_t src_order = from_alt ? p.order_alt : p.order;
  uint64_t dst_keys = from_alt ? p.keys : p.keys_alt;
  uint64_t dst_order = from_alt ? p.order : p.order_alt;
  uint slot[256];
  int64_t work = p.rows * p.tiles;
  for (int64_t w = int64_t(gl_GlobalInvocationID.x); w < work;
       w += int64_t(gl_NumWorkGroups.x) * int64_t(gl_WorkGroupSize.x)) {
    int64_t row = w / p.tiles, tile = w % p.tiles;
    int64_t line = row * p.n, begin = tile * int64_t(p.tile_len);
    int64_t end = min(p.n, begin + int64_t(p.tile_len));
    uint64_t counts = p.counts + uint64_t(row * 256 * p.tiles + tile) * 4ul;
    uint64_t tile_stride = uint64_t(p.tiles) * 4ul;
    KEY_T lo = line_min_key(p, row);
#ifdef STAGE_HIST
    for (uint d = 0u; d < 256u; ++d) slot[d] = 0u;
    for (int64_t i = line + begin; i < line + end; ++i) {
      ++slot[radix_digit(load_key(src_keys, uint64_t(i)), lo, p.pass)];
    }
    for (uint d = 0u; d < 256u; ++d) PU32(counts + uint64_t(d) * tile_stride).v = slot[d];
#else
    uint run = 0u;
    for (uint d = 0u; d < 256u; ++d) {
      slot[d] = run + PU32(counts + uint64_t(d) * tile_stride).v;
      run += PU32(p.totals + uint64_t(row * 256 + int64_t(d)) * 4ul).v;
    }
    for (int64_t i = line + begin; i < line + end; ++i) {
#ifdef RADIX_KEY64
      KEY_T key = PU64(src_keys + uint64_t(i) * 8ul).v;
      uint d = radix_digit(key, lo, p.pass);
      uint64_t to = uint64_t(line + int64_t(slot[d]++));
      PU64(dst_keys + to * 8ul).v = key;
      PU32(dst_order + to * 4ul).v = PU32(src_order + uint64_t(i) * 4ul).v;
#else
      uint64_t pair = PU64(src_keys + uint64_t(i) * 8ul).v;  // one read and one write per pair
      uint d = radix_digit(uint(pair), lo, p.pass);
      PU64(dst_keys + uint64_t(line + int64_t(slot[d]++)) * 8ul).v = pair;
#endif
    }
#endif
  }
}
