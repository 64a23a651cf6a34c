#version 460
#extension GL_GOOGLE_include_directive : require
// _foreach_norm over a list of contiguous tensors of dtype DST_*, in two passes with a fixed
// reduction order (deterministic): NORM_PARTIAL gives each chunk of VKML_FOREACH_NORM_CHUNK
// elements to one workgroup, which writes sum(|x|^p) or max |x| as a partial; NORM_FINISH gives
// each tensor to one workgroup, which reduces its partials and writes the norm in dtype DST_*.
#include "vkml_common.glsl"
#include "foreach_params.h"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { ForeachNormParams p; } pc;

#if defined(DST_F64)
#define T double
T load_val(uint64_t a) { return PF64(a).v; }
T load_partial(uint64_t base, int64_t c) { return PF64(base + uint64_t(c) * 8ul).v; }
void store_partial(uint64_t base, int64_t c, T v) { PF64(base + uint64_t(c) * 8ul).v = v; }
#else
#define T float
#if defined(DST_F32)
T load_val(uint64_t a) { return PF32(a).v; }
#elif defined(DST_F16)
T load_val(uint64_t a) { return float(PF16(a).v); }
#elif defined(DST_BF16)
T load_val(uint64_t a) { return bf16_to_float(PU16(a).v); }
#endif
T load_partial(uint64_t base, int64_t c) { return PF32(base + uint64_t(c) * 4ul).v; }
void store_partial(uint64_t base, int64_t c, T v) { PF32(base + uint64_t(c) * 4ul).v = v; }
#endif
#define VAL T
#include "store_cast.glsl"

shared T partial_sums[256];

T combine(uint norm, T a, T b) {
  if (norm != VKML_FOREACH_NORM_INF) return a + b;
  return (isnan(a) || isnan(b)) ? a + b : max(a, b);
}

// Reduces every thread's value in a fixed tree order; the result is in partial_sums[0].
void reduce_workgroup(uint norm, T v) {
  uint tid = gl_LocalInvocationID.x;
  partial_sums[tid] = v;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (tid < s) partial_sums[tid] = combine(norm, partial_sums[tid], partial_sums[tid + s]);
    barrier();
  }
}

uint find_tensor(ForeachNormParams p, int64_t c) {
  uint lo = 0u, hi = p.count - 1u;
  while (lo < hi) {
    uint mid = (lo + hi + 1u) >> 1;
    if (p.tensors[mid].first_chunk <= c) lo = mid; else hi = mid - 1u;
  }
  return lo;
}

void main() {
  ForeachNormParams p = pc.p;
  const uint tid = gl_LocalInvocationID.x, norm = p.norm;
#if defined(NORM_PARTIAL)
  for (int64_t c = int64_t(gl_WorkGroupID.x); c < p.chunks; c += int64_t(gl_NumWorkGroups.x)) {
    uint t = find_tensor(p, c);
    int64_t begin = (c - p.tensors[t].first_chunk) * VKML_FOREACH_NORM_CHUNK;
    int64_t end = min(begin + VKML_FOREACH_NORM_CHUNK, p.tensors[t].numel);
    T acc = T(0);
    for (int64_t i = begin + int64_t(tid); i < end; i += 256) {
      T x = abs(load_val(p.tensors[t].src + uint64_t(i) * uint64_t(DST_SIZE)));
      acc = combine(norm, acc, norm == VKML_FOREACH_NORM_L2 ? x * x : x);
    }
    reduce_workgroup(norm, acc);
    if (tid == 0u) store_partial(p.partials, c, partial_sums[0]);
    barrier();
  }
#else  // NORM_FINISH
  for (uint t = gl_WorkGroupID.x; t < p.count; t += gl_NumWorkGroups.x) {
    int64_t first = p.tensors[t].first_chunk;
    int64_t n = (p.tensors[t].numel + VKML_FOREACH_NORM_CHUNK - 1) / VKML_FOREACH_NORM_CHUNK;
    T acc = T(0);
    for (int64_t c = int64_t(tid); c < n; c += 256) {
      acc = combine(norm, acc, load_partial(p.partials, first + c));
    }
    reduce_workgroup(norm, acc);
    if (tid == 0u) {
      T r = partial_sums[0];
      store_dst(p.tensors[t].dst, norm == VKML_FOREACH_NORM_L2 ? sqrt(r) : r);
    }
    barrier();
  }
#endif
}
