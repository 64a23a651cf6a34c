// Shared by the radix sort shaders: key width, ping-pong buffer choice, digits, a workgroup scan.
#include "sort_common.glsl"

// Pair layout. 64-bit keys: keys[i] and order[i] in two arrays. 32-bit keys travel with their
// position in one 64-bit word of keys (position << 32 | key), so a pair moves in one access.
#ifdef RADIX_KEY64
#define KEY_T uint64_t
KEY_T load_key(uint64_t keys, uint64_t i) { return PU64(keys + i * 8ul).v; }
void store_pair(uint64_t keys, uint64_t order, uint64_t i, KEY_T key, uint pos) {
  PU64(keys + i * 8ul).v = key;
  PU32(order + i * 4ul).v = pos;
}
void move_pair(uint64_t keys, uint64_t order, uint64_t from, uint64_t to_keys, uint64_t to_order,
               uint64_t to) {
  PU64(to_keys + to * 8ul).v = PU64(keys + from * 8ul).v;
  PU32(to_order + to * 4ul).v = PU32(order + from * 4ul).v;
}
#else
#define KEY_T uint
KEY_T load_key(uint64_t keys, uint64_t i) { return uint(PU64(keys + i * 8ul).v); }
void store_pair(uint64_t keys, uint64_t order, uint64_t i, KEY_T key, uint pos) {
  PU64(keys + i * 8ul).v = (uint64_t(pos) << 32) | uint64_t(key);
}
void move_pair(uint64_t keys, uint64_t order, uint64_t from, uint64_t to_keys, uint64_t to_order,
               uint64_t to) {
  PU64(to_keys + to * 8ul).v = PU64(keys + from * 8ul).v;
}
#endif

// Passes whose digit the key ranges show constant on every line skip even their histograms.
bool radix_range_skipped(SortParams p) {
  return PU32(p.skips + uint64_t(8u + p.pass) * 4ul).v == uint(p.rows);
}

// Digits are taken from key - (the line's smallest key): a line of close values (small integers,
// floats of one sign and binade) has constant upper digits, whose passes are skipped.
KEY_T line_min_key(SortParams p, int64_t row) {
  return KEY_T(PU64(p.bounds + uint64_t(row) * 16ul).v);
}

uint radix_digit(KEY_T key, KEY_T lo, uint pass) { return uint((key - lo) >> (8u * pass)) & 0xFFu; }

#ifdef RADIX_WORKGROUP_SCAN
shared uint s_scan[VKML_RADIX_THREADS];

// Exclusive prefix sum of one value per thread (Hillis-Steele: no subgroup size assumed).
// Called in uniform control flow by the whole workgroup.
uint workgroup_exclusive_scan(uint x) {
  uint t = gl_LocalInvocationID.x;
  s_scan[t] = x;
  barrier();
  for (uint off = 1u; off < VKML_RADIX_THREADS; off <<= 1u) {
    uint y = s_scan[t] + (t >= off ? s_scan[t - off] : 0u);
    barrier();
    s_scan[t] = y;
    barrier();
  }
  uint inclusive = s_scan[t];
  barrier();  // s_scan is reused by the next call
  return inclusive - x;
}
#endif
