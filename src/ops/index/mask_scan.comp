#version 460
#extension GL_GOOGLE_include_directive : require
// Stream compaction by mask in three passes (SCAN_PASS): 0 counts set elements per block,
// 1 turns block counts into exclusive offsets (one workgroup), 2 writes every set element at
// its rank. Ranks follow row-major order, so results match the CPU exactly.
// MASK_BITS is the mask's element size; nonzero takes any dtype as the mask.
#include "vkml_common.glsl"
#include "mask_scan_params.h"

layout(local_size_x = VKML_MASK_SCAN_THREADS) in;
layout(push_constant) uniform Push { MaskScanParams p; } pc;

shared int64_t s_val[VKML_MASK_SCAN_THREADS];

bool is_set(int64_t i) {
  int64_t off = 0, rem = i;
  for (int d = int(pc.p.ndim) - 1; d >= 0; --d) {
    off += (rem % pc.p.sizes[d]) * pc.p.mask_strides[d];
    rem /= pc.p.sizes[d];
  }
  uint64_t a = pc.p.mask + uint64_t(off * (MASK_BITS / 8));
  bool fl = pc.p.mask_kind != VKML_MASK_KIND_BITS;
#if MASK_BITS == 8
  return PU8(a).v != uint8_t(0);
#elif MASK_BITS == 16
  uint16_t v = PU16(a).v;
  return (fl ? (v & uint16_t(0x7FFF)) : v) != uint16_t(0);
#elif MASK_BITS == 32
  uint v = PU32(a).v;
  return (fl ? (v & 0x7FFFFFFFu) : v) != 0u;
#else
  uint64_t v = PU64(a).v;
  uint64_t value_bits = pc.p.mask_kind == VKML_MASK_KIND_COMPLEX ? 0x7FFFFFFF7FFFFFFFul
                        : fl                                     ? 0x7FFFFFFFFFFFFFFFul
                                                                 : ~0ul;
  return (v & value_bits) != 0ul;
#endif
}

// Inclusive prefix sum of s_val over the workgroup (Hillis-Steele); all threads must call.
void scan_shared(uint t) {
  for (uint off = 1u; off < uint(VKML_MASK_SCAN_THREADS); off <<= 1u) {
    int64_t add = t >= off ? s_val[t - off] : 0l;
    barrier();
    s_val[t] += add;
    barrier();
  }
}

int64_t offset_of(int64_t i, bool src_side) {
  int64_t off = 0, rem = i;
  if (src_side) {
    for (int d = int(pc.p.src_ndim) - 1; d >= 0; --d) {
      off += (rem % pc.p.src_sizes[d]) * pc.p.src_strides[d];
      rem /= pc.p.src_sizes[d];
    }
  } else {
    for (int d = int(pc.p.ndim) - 1; d >= 0; --d) {
      off += (rem % pc.p.sizes[d]) * pc.p.data_strides[d];
      rem /= pc.p.sizes[d];
    }
  }
  return off;
}

void move(uint64_t dst, uint64_t src, uint bytes) {
  if (bytes == 1u) PU8(dst).v = PU8(src).v;
  else if (bytes == 2u) PU16(dst).v = PU16(src).v;
  else if (bytes == 4u) PU32(dst).v = PU32(src).v;
  else PU64(dst).v = PU64(src).v;
}

void write_one(int64_t i, int64_t rank) {
  uint mode = pc.p.mode;
  uint bytes = pc.p.data_bytes;
  if (mode == VKML_MASK_SCAN_NONZERO) {
    int64_t rem = i;
    uint64_t row = pc.p.dst + uint64_t(rank * pc.p.out_stride0 * 8);
    for (int d = int(pc.p.ndim) - 1; d >= 0; --d) {
      PI64(row + uint64_t(int64_t(d) * pc.p.out_stride1 * 8)).v = rem % pc.p.sizes[d];
      rem /= pc.p.sizes[d];
    }
  } else if (mode == VKML_MASK_SCAN_SELECT) {
    move(pc.p.dst + uint64_t(rank * pc.p.out_stride0 * int64_t(bytes)),
         pc.p.data + uint64_t(offset_of(i, false) * int64_t(bytes)), bytes);
  } else if (rank < pc.p.src_numel) {
    move(pc.p.data + uint64_t(offset_of(i, false) * int64_t(bytes)),
         pc.p.src + uint64_t(offset_of(rank, true) * int64_t(bytes)), bytes);
  }
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const int64_t nblocks = pc.p.nblocks;
#if SCAN_PASS == 1
  if (gl_WorkGroupID.x != 0u) return;
  int64_t per = (nblocks + VKML_MASK_SCAN_THREADS - 1) / VKML_MASK_SCAN_THREADS;
  int64_t begin = min(int64_t(t) * per, nblocks), end = min(begin + per, nblocks);
  int64_t sum = 0;
  for (int64_t b = begin; b < end; ++b) sum += PI64(pc.p.blocks + uint64_t(b) * 8ul).v;
  s_val[t] = sum;
  barrier();
  scan_shared(t);
  int64_t run = s_val[t] - sum;
  for (int64_t b = begin; b < end; ++b) {
    uint64_t a = pc.p.blocks + uint64_t(b) * 8ul;
    int64_t c = PI64(a).v;
    PI64(a).v = run;
    run += c;
  }
  if (t == uint(VKML_MASK_SCAN_THREADS - 1)) {
    PI64(pc.p.blocks + uint64_t(nblocks) * 8ul).v = s_val[t];
  }
#else
  for (int64_t b = int64_t(gl_WorkGroupID.x); b < nblocks; b += int64_t(gl_NumWorkGroups.x)) {
#if SCAN_PASS == 0
    int64_t count = 0;
    for (int r = 0; r < VKML_MASK_SCAN_ROUNDS; ++r) {
      int64_t i = b * VKML_MASK_SCAN_BLOCK + int64_t(r * VKML_MASK_SCAN_THREADS) + int64_t(t);
      if (i < pc.p.numel && is_set(i)) count++;
    }
    s_val[t] = count;
    barrier();
    for (uint half_n = uint(VKML_MASK_SCAN_THREADS) / 2u; half_n > 0u; half_n >>= 1u) {
      if (t < half_n) s_val[t] += s_val[t + half_n];
      barrier();
    }
    if (t == 0u) PI64(pc.p.blocks + uint64_t(b) * 8ul).v = s_val[0];
    barrier();
#else
    int64_t base = PI64(pc.p.blocks + uint64_t(b) * 8ul).v;
    for (int r = 0; r < VKML_MASK_SCAN_ROUNDS; ++r) {
      int64_t i = b * VKML_MASK_SCAN_BLOCK + int64_t(r * VKML_MASK_SCAN_THREADS) + int64_t(t);
      bool set = i < pc.p.numel && is_set(i);
      s_val[t] = set ? 1l : 0l;
      barrier();
      scan_shared(t);
      if (set) write_one(i, base + s_val[t] - 1);
      int64_t round_total = s_val[VKML_MASK_SCAN_THREADS - 1];
      barrier();
      base += round_total;
    }
#endif
  }
#endif
}
