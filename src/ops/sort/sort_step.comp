#version 460
#extension GL_GOOGLE_include_directive : require
// One global-memory bitonic step (stage k, distance j >= block) for lines longer than a block.
#include "sort_common.glsl"

layout(local_size_x_id = 0) in;

void main() {
  SortParams p = pc.p;
  uint64_t padded = uint64_t(p.padded);
  for (int64_t t = int64_t(gl_GlobalInvocationID.x); t < p.total; t += VKML_GRID_STRIDE) {
    uint64_t i = uint64_t(t), partner = i ^ uint64_t(p.j);
    if (partner <= i) continue;
    bool ascending = (i & (padded - 1ul) & uint64_t(p.k)) == 0ul;
    uint64_t ka = PU64(p.keys + i * 8ul).v, kb = PU64(p.keys + partner * 8ul).v;
    uint ia = PU32(p.order + i * 4ul).v, ib = PU32(p.order + partner * 4ul).v;
    if (pair_greater(ka, ia, kb, ib) == ascending) {
      PU64(p.keys + i * 8ul).v = kb;
      PU64(p.keys + partner * 8ul).v = ka;
      PU32(p.order + i * 4ul).v = ib;
      PU32(p.order + partner * 4ul).v = ia;
    }
  }
}
