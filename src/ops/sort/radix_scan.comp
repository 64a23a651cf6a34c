#version 460
#extension GL_GOOGLE_include_directive : require
// Radix sort, per pass: exclusive prefix sums of every (line, digit)'s tile counts in place, and
// the line's digit totals. A digit holding the whole line marks the pass as constant there.
// Few tiles: one thread per (line, digit); many: one workgroup per (line, digit).
#define RADIX_WORKGROUP_SCAN
#include "radix_common.glsl"

layout(local_size_x = VKML_RADIX_THREADS) in;

void finish(SortParams p, int64_t pair, uint total) {
  PU32(p.totals + uint64_t(pair) * 4ul).v = total;
  if (int64_t(total) == p.n) atomicAdd(PU32(p.skips + uint64_t(p.pass) * 4ul).v, 1u);
}

void main() {
  SortParams p = pc.p;
  if (radix_range_skipped(p)) return;
  uint t = gl_LocalInvocationID.x;
  int64_t pairs = p.rows * 256;
  if (p.tiles <= VKML_RADIX_SERIAL_TILES) {
    for (int64_t pair = int64_t(gl_GlobalInvocationID.x); pair < pairs;
         pair += int64_t(gl_NumWorkGroups.x) * VKML_RADIX_THREADS) {
      uint64_t at = p.counts + uint64_t(pair * p.tiles) * 4ul;
      uint run = 0u;
      for (int64_t i = 0; i < p.tiles; ++i) {
        uint c = PU32(at + uint64_t(i) * 4ul).v;
        PU32(at + uint64_t(i) * 4ul).v = run;
        run += c;
      }
      finish(p, pair, run);
    }
    return;
  }
  int64_t chunk = (p.tiles + VKML_RADIX_THREADS - 1) / VKML_RADIX_THREADS;
  for (int64_t pair = int64_t(gl_WorkGroupID.x); pair < pairs;
       pair += int64_t(gl_NumWorkGroups.x)) {
    uint64_t at = p.counts + uint64_t(pair * p.tiles) * 4ul;
    int64_t begin = min(p.tiles, int64_t(t) * chunk), end = min(p.tiles, begin + chunk);
    uint sum = 0u;
    for (int64_t i = begin; i < end; ++i) sum += PU32(at + uint64_t(i) * 4ul).v;
    uint run = workgroup_exclusive_scan(sum);
    for (int64_t i = begin; i < end; ++i) {
      uint c = PU32(at + uint64_t(i) * 4ul).v;
      PU32(at + uint64_t(i) * 4ul).v = run;
      run += c;
    }
    if (t == VKML_RADIX_THREADS - 1) finish(p, pair, run);
  }
}
