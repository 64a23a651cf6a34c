#version 460
#extension GL_GOOGLE_include_directive : require
// Radix sort, before the passes: every line's smallest key and key range (largest - smallest).
// Stage 0: per tile, into the (not yet used) counts buffer; stage 1: per line, from the tiles'.
// Passes above the range's highest byte are constant on that line; when that holds on every
// line, skips[8 + pass] reaches the line count and the pass does nothing at all.
#include "radix_common.glsl"

layout(local_size_x = VKML_RADIX_THREADS) in;

shared KEY_T s_lo[VKML_RADIX_THREADS];
shared KEY_T s_hi[VKML_RADIX_THREADS];

// Workgroup min / max of the threads' (lo, hi); thread 0 gets the result.
void reduce_bounds(inout KEY_T lo, inout KEY_T hi) {
  uint t = gl_LocalInvocationID.x;
  s_lo[t] = lo;
  s_hi[t] = hi;
  barrier();
  for (uint step = VKML_RADIX_THREADS / 2; step > 0u; step >>= 1u) {
    if (t < step) {
      s_lo[t] = min(s_lo[t], s_lo[t + step]);
      s_hi[t] = max(s_hi[t], s_hi[t + step]);
    }
    barrier();
  }
  lo = s_lo[0];
  hi = s_hi[0];
  barrier();
}

void main() {
  SortParams p = pc.p;
  uint t = gl_LocalInvocationID.x;
  const KEY_T kMax = KEY_T(0xFFFFFFFFFFFFFFFFul);
  int64_t work = p.stage == 0u ? p.rows * p.tiles : p.rows;
  for (int64_t w = int64_t(gl_WorkGroupID.x); w < work; w += int64_t(gl_NumWorkGroups.x)) {
    KEY_T lo = kMax, hi = KEY_T(0);
    if (p.stage == 0u) {
      int64_t row = w / p.tiles, tile = w % p.tiles;
      int64_t begin = row * p.n + tile * int64_t(p.tile_len);
      int64_t end = row * p.n + min(p.n, (tile + 1) * int64_t(p.tile_len));
      for (int64_t i = begin + int64_t(t); i < end; i += VKML_RADIX_THREADS) {
        KEY_T key = load_key(p.keys, uint64_t(i));
        lo = min(lo, key);
        hi = max(hi, key);
      }
      reduce_bounds(lo, hi);
      if (t == 0u) {
        PU64(p.counts + uint64_t(w) * 16ul).v = uint64_t(lo);
        PU64(p.counts + uint64_t(w) * 16ul + 8ul).v = uint64_t(hi);
      }
    } else {
      for (int64_t i = int64_t(t); i < p.tiles; i += VKML_RADIX_THREADS) {
        uint64_t at = p.counts + uint64_t(w * p.tiles + i) * 16ul;
        lo = min(lo, KEY_T(PU64(at).v));
        hi = max(hi, KEY_T(PU64(at + 8ul).v));
      }
      reduce_bounds(lo, hi);
      if (t == 0u) {
        KEY_T range = hi - lo;
        PU64(p.bounds + uint64_t(w) * 16ul).v = uint64_t(lo);
        PU64(p.bounds + uint64_t(w) * 16ul + 8ul).v = uint64_t(range);
        for (uint q = 0u; q < p.passes; ++q) {
          if ((range >> (8u * q)) != KEY_T(0)) continue;
          atomicAdd(PU32(p.skips + uint64_t(8u + q) * 4ul).v, 1u);
        }
      }
    }
  }
}
