#version 460
#extension GL_GOOGLE_include_directive : require
// Bitonic sort of VKML_SORT_BLOCK pairs per workgroup in shared memory. Mode k == 0: every stage
// up to min(padded, block) (lines shorter than a block are sorted whole, several per block).
// Mode k > 0: the steps j < block of merge stage k, after sort_step did the wider ones.
#include "sort_common.glsl"

layout(local_size_x = VKML_SORT_THREADS) in;

shared uint64_t s_key[VKML_SORT_BLOCK];
shared uint s_ord[VKML_SORT_BLOCK];

void compare_swap(uint64_t base, uint64_t padded, uint k, uint j) {
  for (uint i = gl_LocalInvocationID.x; i < VKML_SORT_BLOCK; i += VKML_SORT_THREADS) {
    uint partner = i ^ j;
    if (partner <= i) continue;
    // Direction from the position inside the line: the last stage of a line is ascending.
    bool ascending = ((base + uint64_t(i)) & (padded - 1ul) & uint64_t(k)) == 0ul;
    bool greater = pair_greater(s_key[i], s_ord[i], s_key[partner], s_ord[partner]);
    if (greater == ascending) {
      uint64_t tk = s_key[i];
      s_key[i] = s_key[partner];
      s_key[partner] = tk;
      uint to = s_ord[i];
      s_ord[i] = s_ord[partner];
      s_ord[partner] = to;
    }
  }
  barrier();
}

void main() {
  SortParams p = pc.p;
  int64_t blocks = (p.total + VKML_SORT_BLOCK - 1) / VKML_SORT_BLOCK;
  uint64_t padded = uint64_t(p.padded);
  for (int64_t b = int64_t(gl_WorkGroupID.x); b < blocks; b += int64_t(gl_NumWorkGroups.x)) {
    uint64_t base = uint64_t(b) * VKML_SORT_BLOCK;
    for (uint i = gl_LocalInvocationID.x; i < VKML_SORT_BLOCK; i += VKML_SORT_THREADS) {
      bool live = base + i < uint64_t(p.total);
      s_key[i] = live ? PU64(p.keys + (base + i) * 8ul).v : 0xFFFFFFFFFFFFFFFFul;
      s_ord[i] = live ? PU32(p.order + (base + i) * 4ul).v : 0xFFFFFFFFu;
    }
    barrier();
    if (p.k == 0u) {
      uint kmax = uint(min(padded, uint64_t(VKML_SORT_BLOCK)));
      for (uint k = 2u; k <= kmax; k <<= 1u) {
        for (uint j = k >> 1u; j > 0u; j >>= 1u) compare_swap(base, padded, k, j);
      }
    } else {
      for (uint j = VKML_SORT_BLOCK / 2; j > 0u; j >>= 1u) compare_swap(base, padded, p.k, j);
    }
    for (uint i = gl_LocalInvocationID.x; i < VKML_SORT_BLOCK; i += VKML_SORT_THREADS) {
      if (base + i < uint64_t(p.total)) {
        PU64(p.keys + (base + i) * 8ul).v = s_key[i];
        PU32(p.order + (base + i) * 4ul).v = s_ord[i];
      }
    }
    barrier();
  }
}
