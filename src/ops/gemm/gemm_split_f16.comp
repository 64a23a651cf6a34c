#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// fp32 GEMM on fp16 tensor cores (gemm_f32_split.cc), first pass: each line of an fp32 matrix (a
// row of A or a column of B) is scaled by a power of two that brings its largest finite magnitude
// just under 2^15, then split into hi = fp16(x) and lo = fp16((x - hi) * 2^11). hi + lo * 2^-11
// keeps 22 significant bits and the residual's own rounding is below 2^-24 |x|, so the three
// products hi*hi + (hi*lo + lo*hi) * 2^-11 carry fp32's precision. Each line gets hi, then the
// correction product's copy of hi (hi2), then lo. A non-finite element keeps hi = x for the main
// product, and hi2 = lo = 0, so it propagates as in fp32 (not inf * 0 = NaN in the correction).
// The line's exponent is written for the final scaling.
// A workgroup takes OUTER lines and walks each with 256 / OUTER threads: OUTER = 1 where the line
// is contiguous, 32 where neighbouring lines are (a row-major B), so loads stay coalesced.
#include "vkml_common.glsl"

layout(local_size_x_id = 0) in;  // 256 (the reduction below assumes it)
layout(constant_id = 1) const uint OUTER = 1;
const uint INNER = 256 / OUTER;

layout(push_constant) uniform Push {
  uint64_t src;        // fp32 elements
  uint64_t dst;        // fp16: line o at dst + o * ld; hi, hi2 and lo at + *_off + i
  uint64_t exponents;  // int32 per line: the applied scale's exponent
  int64_t lines, line_len;  // number of lines and elements per line
  int64_t line_stride, elem_stride;  // in elements of src
  int64_t ld, hi_off, hi2_off, lo_off;  // in elements of dst
} pc;

shared float partial[256];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint lane_o = tid % OUTER, lane_i = tid / OUTER;
  for (int64_t base = int64_t(gl_WorkGroupID.x) * OUTER; base < pc.lines;
       base += int64_t(gl_NumWorkGroups.x) * OUTER) {
    const int64_t o = base + lane_o;
    const bool live = o < pc.lines;
    const uint64_t line = pc.src + uint64_t(o * pc.line_stride * 4);
    float amax = 0.0;
    if (live) {
      for (int64_t i = lane_i; i < pc.line_len; i += INNER) {
        const float x = abs(PF32(line + uint64_t(i * pc.elem_stride * 4)).v);
        if (!isinf(x) && !isnan(x)) amax = max(amax, x);
      }
    }
    partial[tid] = amax;
    barrier();
    [[unroll]] for (uint s = 128; s >= OUTER; s >>= 1) {
      if (tid < s) partial[tid] = max(partial[tid], partial[tid + s]);
      barrier();
    }
    amax = partial[lane_o];
    barrier();  // the next lines reuse `partial`
    int e = 0;
    if (amax > 0.0) {
      int ex;
      frexp(amax, ex);  // amax < 2^ex
      e = 15 - ex;
    }
    if (!live) continue;
    if (lane_i == 0) PI32(pc.exponents + uint64_t(o * 4)).v = e;
    const uint64_t dst_line = pc.dst + uint64_t(o * pc.ld * 2);
    for (int64_t i = lane_i; i < pc.line_len; i += INNER) {
      const float x = PF32(line + uint64_t(i * pc.elem_stride * 4)).v;
      float16_t hi, hi2, lo;
      if (isinf(x) || isnan(x)) {
        hi = float16_t(x);
        hi2 = lo = float16_t(0.0);
      } else {
        const float xs = scale_by_pow2(x, e);
        const float hi_f = round_to_f16(xs);  // not float(float16_t(xs)): drivers fold that
        hi = float16_t(hi_f);
        lo = float16_t((xs - hi_f) * 2048.0);
        hi2 = hi;
      }
      PF16(dst_line + uint64_t((pc.hi_off + i) * 2)).v = hi;
      PF16(dst_line + uint64_t((pc.hi2_off + i) * 2)).v = hi2;
      PF16(dst_line + uint64_t((pc.lo_off + i) * 2)).v = lo;
    }
  }
}
