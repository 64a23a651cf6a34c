// Shared by the radix sort shaders: key width, ping-pong buffer choice, digits, a workgroup scan.
#include "sort_common.glsl"

#ifdef RADIX_KEY64
#define KEY_T uint64_t
#define PKEY PU64
#else
#define KEY_T uint
#define PKEY PU32
#endif
#define KEY_BYTES uint64_t(RADIX_KEY_BYTES)
#ifdef RADIX_KEY64
#define RADIX_KEY_BYTES 8
#else
#define RADIX_KEY_BYTES 4
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
