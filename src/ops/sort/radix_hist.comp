#version 460
#extension GL_GOOGLE_include_directive : require
// Radix sort, per pass: the digit histogram of every tile (VKML_RADIX_TILE pairs of one line),
// stored digit-major per line so that one exclusive scan gives every tile's output offsets.
#include "radix_common.glsl"

layout(local_size_x = VKML_RADIX_THREADS) in;

shared uint s_hist[256];

void main() {
  SortParams p = pc.p;
  if (radix_range_skipped(p)) return;
  uint t = gl_LocalInvocationID.x;
  uint64_t keys = radix_parity(p, p.pass) == 0u ? p.keys : p.keys_alt;
  int64_t work = p.rows * p.tiles;
  for (int64_t w = int64_t(gl_WorkGroupID.x); w < work; w += int64_t(gl_NumWorkGroups.x)) {
    int64_t row = w / p.tiles, tile = w % p.tiles;
    int64_t base = row * p.n + tile * VKML_RADIX_TILE;
    uint m = uint(min(int64_t(VKML_RADIX_TILE), p.n - tile * VKML_RADIX_TILE));
    KEY_T lo = line_min_key(p, row);
    s_hist[t] = 0u;
    barrier();
    for (uint i = t; i < m; i += VKML_RADIX_THREADS) {
      KEY_T key = load_key(keys, uint64_t(base + int64_t(i)));
      atomicAdd(s_hist[radix_digit(key, lo, p.pass)], 1u);
    }
    barrier();
    PU32(p.counts + uint64_t((row * 256 + int64_t(t)) * p.tiles + tile) * 4ul).v = s_hist[t];
    barrier();
  }
}
