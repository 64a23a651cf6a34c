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
// The line's exponent is written for the final scaling. Each part is padded with zeros from
// line_len to padded_len (a multiple of 8), so the GEMMs read aligned rows of whole 16-byte units.
// MODE 0: a workgroup takes OUTER lines and walks each with 256 / OUTER threads (OUTER = 1 where
// the line is contiguous, 32 where neighbouring lines are, as in a row-major B): its largest
// magnitude, then the split. Few lines (a narrow B) would leave most of the GPU idle, so there
// MODE 1 reduces chunks of CHUNK elements of 32 lines per workgroup into amax_bits (atomicMax on
// the bits of non-negative floats, which order as the floats do) and MODE 2 splits blocks of 32
// lines on their own workgroups. Where neighbouring lines are neighbours in memory (OUTER = 32,
// MODE 2) blocks of 32 lines x 64 elements pass through shared memory, read along the lines'
// neighbours and written along each line, so that both sides coalesce.
#include "vkml_common.glsl"

layout(local_size_x_id = 0) in;  // 256 (the reductions below assume it)
layout(constant_id = 1) const uint OUTER = 1;
layout(constant_id = 2) const uint MODE = 0;
const uint INNER = 256 / OUTER;
const int64_t CHUNK = 256;  // MODE 1: elements of a line per workgroup

layout(push_constant) uniform Push {
  uint64_t src;        // fp32 elements
  uint64_t dst;        // fp16: line o at dst + o * ld; hi, hi2 and lo at + *_off + i
  uint64_t exponents;  // int32 per line: the applied scale's exponent
  uint64_t amax_bits;  // MODE 1 and 2: uint per line, zeroed before MODE 1
  int64_t lines, line_len;  // number of lines and elements per line
  int64_t line_stride, elem_stride;  // in elements of src
  int64_t ld, hi_off, hi2_off, lo_off;  // in elements of dst
  int64_t padded_len;  // elements written per part: line_len, then zeros
} pc;

shared float partial[256];
const uint BLOCK_I = 64;                 // elements per line in a transposed block (OUTER = 32)
shared float block[32][BLOCK_I + 1];     // +1: the write phase's column reads miss bank conflicts
shared int block_exp[32];

float load_x(int64_t o, int64_t i) {
  return PF32(pc.src + uint64_t((o * pc.line_stride + i * pc.elem_stride) * 4)).v;
}

bool finite(float x) { return !isinf(x) && !isnan(x); }

// The exponent that brings amax just under 2^15 (0 for a line without finite non-zeros).
int scale_exponent(float amax) {
  if (!(amax > 0.0)) return 0;
  int ex;
  frexp(amax, ex);  // amax < 2^ex
  return 15 - ex;
}

// The fp16 bits of x, which is an fp16 value, infinite or NaN: the halves are stored as bits, so
// that the kernel needs no fp16 arithmetic (no Float16 capability).
uint16_t f16_bits(float x) { return uint16_t(packHalf2x16(vec2(x, 0.0)) & 0xFFFFu); }

void split_store(int64_t o, int64_t i, float x, int e) {
  uint16_t hi, hi2, lo;
  if (!finite(x)) {
    hi = f16_bits(x);
    hi2 = lo = uint16_t(0);
  } else {
    const float xs = scale_by_pow2(x, e);
    const float hi_f = round_to_f16(xs);  // not float(float16_t(xs)): drivers fold that
    hi = hi2 = f16_bits(hi_f);
    lo = f16_bits(round_to_f16((xs - hi_f) * 2048.0));
  }
  const uint64_t line = pc.dst + uint64_t(o * pc.ld * 2);
  PU16(line + uint64_t((pc.hi_off + i) * 2)).v = hi;
  PU16(line + uint64_t((pc.hi2_off + i) * 2)).v = hi2;
  PU16(line + uint64_t((pc.lo_off + i) * 2)).v = lo;
}

// The largest finite magnitude over each thread's elements [begin, end) of line o, reduced over
// the workgroup's INNER threads of that line; every thread gets its line's result.
float line_amax(bool live, int64_t o, int64_t begin, int64_t end, uint tid, uint lane_o,
                uint lane_i) {
  float amax = 0.0;
  if (live) {
    for (int64_t i = begin + lane_i; i < end; i += INNER) {
      const float x = abs(load_x(o, i));
      if (finite(x)) amax = max(amax, x);
    }
  }
  partial[tid] = amax;
  barrier();
  [[unroll]] for (uint s = 128; s >= OUTER; s >>= 1) {
    if (tid < s) partial[tid] = max(partial[tid], partial[tid + s]);
    barrier();
  }
  amax = partial[lane_o];
  barrier();  // `partial` is reused by the caller's next round
  return amax;
}

// Splits elements [i0, i0 + 64) of lines [o0, o0 + 32) (adjacent in memory), whose exponents are
// in block_exp: read with neighbouring threads on neighbouring lines, written along each line.
void split_block(int64_t o0, int64_t i0, uint tid) {
  [[unroll]] for (uint r = 0; r < 32 * BLOCK_I / 256; ++r) {
    const uint e = tid + 256 * r, lo = e % 32, ii = e / 32;
    if (o0 + lo < pc.lines && i0 + ii < pc.padded_len) {
      block[lo][ii] = i0 + ii < pc.line_len ? load_x(o0 + lo, i0 + ii) : 0.0;
    }
  }
  barrier();
  [[unroll]] for (uint r = 0; r < 32 * BLOCK_I / 256; ++r) {
    const uint e = tid + 256 * r, lo = e / BLOCK_I, ii = e % BLOCK_I;
    if (o0 + lo < pc.lines && i0 + ii < pc.padded_len) {
      split_store(o0 + lo, i0 + ii, block[lo][ii], block_exp[lo]);
    }
  }
  barrier();  // `block` is refilled next
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint lane_o = tid % OUTER, lane_i = tid / OUTER;
  if (MODE == 2) {  // OUTER = 32: a 32-line x 64-element block per workgroup and round
    const int64_t line_blocks = (pc.lines + 31) / 32;
    const int64_t elem_blocks = (pc.padded_len + BLOCK_I - 1) / BLOCK_I;
    for (int64_t blk = int64_t(gl_WorkGroupID.x); blk < line_blocks * elem_blocks;
         blk += int64_t(gl_NumWorkGroups.x)) {
      const int64_t o0 = (blk % line_blocks) * 32, i0 = (blk / line_blocks) * BLOCK_I;
      if (tid < 32 && o0 + tid < pc.lines) {
        const uint amax_bits = PU32(pc.amax_bits + uint64_t((o0 + tid) * 4)).v;
        const int e = scale_exponent(uintBitsToFloat(amax_bits));
        block_exp[tid] = e;
        if (i0 == 0) PI32(pc.exponents + uint64_t((o0 + tid) * 4)).v = e;
      }
      barrier();
      split_block(o0, i0, tid);
    }
    return;
  }
  if (MODE == 1) {
    const int64_t o = int64_t(gl_WorkGroupID.x) * OUTER + lane_o;
    const int64_t begin = int64_t(gl_WorkGroupID.y) * CHUNK;
    const bool live = o < pc.lines;
    const float amax =
        line_amax(live, o, begin, min(begin + CHUNK, pc.line_len), tid, lane_o, lane_i);
    if (live && lane_i == 0 && amax > 0.0) {
      atomicMax(PU32(pc.amax_bits + uint64_t(o * 4)).v, floatBitsToUint(amax));
    }
    return;
  }
  for (int64_t base = int64_t(gl_WorkGroupID.x) * OUTER; base < pc.lines;
       base += int64_t(gl_NumWorkGroups.x) * OUTER) {
    const int64_t o = base + lane_o;
    const bool live = o < pc.lines;
    const int e = scale_exponent(line_amax(live, o, 0, pc.line_len, tid, lane_o, lane_i));
    if (OUTER == 32) {
      if (lane_i == 0) {
        block_exp[lane_o] = e;
        if (live) PI32(pc.exponents + uint64_t(o * 4)).v = e;
      }
      barrier();
      for (int64_t i0 = 0; i0 < pc.padded_len; i0 += BLOCK_I) split_block(base, i0, tid);
      continue;
    }
    if (!live) continue;
    if (lane_i == 0) PI32(pc.exponents + uint64_t(o * 4)).v = e;
    for (int64_t i = lane_i; i < pc.padded_len; i += INNER) {
      split_store(o, i, i < pc.line_len ? load_x(o, i) : 0.0, e);
    }
  }
}
