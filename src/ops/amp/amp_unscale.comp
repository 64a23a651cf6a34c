#version 460
#extension GL_GOOGLE_include_directive : require
// GradScaler's unscale: for every element of a list of strided tensors of dtype DST_*,
// x = x * inv_scale, and found_inf = 1 when x (before scaling) is inf or NaN. Threads that find
// one all store the same 1.0, so the race on found_inf is benign (CUDA's kernel does the same).
#include "vkml_common.glsl"
#include "amp_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { AmpUnscaleParams p; } pc;

#if defined(DST_F64)
#define VAL double
double load_val(uint64_t a) { return PF64(a).v; }
#elif defined(DST_F32)
#define VAL float
float load_val(uint64_t a) { return PF32(a).v; }
#elif defined(DST_F16)
#define VAL float
float load_val(uint64_t a) { return float(PF16(a).v); }
#elif defined(DST_BF16)
#define VAL float
float load_val(uint64_t a) { return bf16_to_float(PU16(a).v); }
#endif
#include "store_cast.glsl"

// The last tensor whose first element is at or before global element i.
uint find_tensor(AmpUnscaleParams p, int64_t i) {
  uint lo = 0u, hi = p.count - 1u;
  while (lo < hi) {
    uint mid = (lo + hi + 1u) >> 1;
    if (p.tensors[mid].start <= i) lo = mid; else hi = mid - 1u;
  }
  return lo;
}

void main() {
  AmpUnscaleParams p = pc.p;
  float inv_scale = PF32(p.inv_scale).v;
  bool any_bad = false;
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.total; i += VKML_GRID_STRIDE) {
    uint t = find_tensor(p, i);
    int64_t rem = i - p.tensors[t].start, off = 0;
    for (int d = int(p.tensors[t].ndim) - 1; d >= 0; --d) {
      int64_t size = p.tensors[t].sizes[d];
      off += (rem % size) * p.tensors[t].strides[d];
      rem /= size;
    }
    uint64_t a = p.tensors[t].address + uint64_t(off * DST_SIZE);
    VAL v = load_val(a);
    if (isnan(v) || isinf(v)) any_bad = true;
    if (inv_scale != 1.0) store_dst(a, v * VAL(inv_scale));
  }
  if (any_bad) PF32(p.found_inf).v = 1.0;
}
