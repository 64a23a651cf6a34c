#version 460
#extension GL_GOOGLE_include_directive : require
// Max, average and adaptive pooling over up to 3 spatial dims with PyTorch's window rules.
// Forward: one invocation per output element (max also writes the flat input index; NaN wins).
// POOL_BACKWARD: one invocation per grad_input element, gathering from the outputs whose window
// holds it (max: whose index is it), so no atomics are needed and results are deterministic.
#include "vkml_common.glsl"
#include "pool_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { PoolParams p; } pc;

#include "nn_common.glsl"

// The *32 variants (every element count and offset below 2^31) walk windows in 32-bit integers:
// 64-bit products are emulated on GPUs, several instructions each, once per element read.
#ifdef POOL_OFFSETS32
#define IDX int
#else
#define IDX int64_t
#endif

// rem % size, leaving rem / size in rem: in 32 bits when every count fits (index32), since
// 64-bit division is emulated on GPUs (tens of instructions).
int64_t take_digit(PoolParams p, inout int64_t rem, int64_t size) {
  if (p.index32 != 0u) {
    const uint r = uint(rem), s = uint(size);
    rem = int64_t(r / s);
    return int64_t(r % s);
  }
  const int64_t digit = rem % size;
  rem /= size;
  return digit;
}

// Offsets of plane `plane` on side a, side b and in the indices.
void plane_offsets(PoolParams p, int64_t plane, out int64_t a, out int64_t b, out int64_t ix) {
  a = 0;
  b = 0;
  ix = 0;
  for (int d = int(p.plane_ndim) - 1; d >= 0; --d) {
    const int64_t i = take_digit(p, plane, p.plane_sizes[d]);
    a += i * p.a_plane_strides[d];
    b += i * p.b_plane_strides[d];
    ix += i * p.i_plane_strides[d];
  }
}

// Element `rem` as (D, H, W) coordinates of `size`; `rem` becomes the plane index.
void split_position(PoolParams p, int64_t size[3], out int64_t at[3], inout int64_t rem) {
  for (int k = 2; k >= 0; --k) at[k] = take_digit(p, rem, size[k]);
}

int64_t adaptive_start(int64_t o, int64_t in_size, int64_t out_size) {
  return (o * in_size) / out_size;
}
int64_t adaptive_end(int64_t o, int64_t in_size, int64_t out_size) {
  return ((o + 1) * in_size + out_size - 1) / out_size;
}

// The window of output position o along dim k: [start, end) visited with `step`; for average
// pools also the size counted with padding.
void window(PoolParams p, int k, int64_t o, out int64_t start, out int64_t end, out int64_t step,
            out int64_t padded) {
  int64_t in_size = p.a_size[k];
  step = 1;
  padded = 0;
  if (p.kind == POOL_ADAPTIVE_MAX || p.kind == POOL_ADAPTIVE_AVG) {
    start = adaptive_start(o, in_size, p.b_size[k]);
    end = adaptive_end(o, in_size, p.b_size[k]);
  } else if (p.kind == POOL_MAX) {
    step = p.dilation[k];
    start = o * p.stride[k] - p.pad[k];
    end = min(start + (p.kernel[k] - 1) * step + 1, in_size);
    while (start < 0) start += step;
  } else {
    start = o * p.stride[k] - p.pad[k];
    end = min(start + p.kernel[k], in_size + p.pad[k]);
    padded = end - start;
    start = max(start, 0l);
    end = min(end, in_size);
  }
}

// Divisor of an average pool's window at output position o (per dim start/end/padded).
int64_t avg_divisor_count(PoolParams p, int64_t count, int64_t padded_count) {
  if (p.divisor_override != 0) return p.divisor_override;
  return p.count_include_pad != 0u || p.kind == POOL_ADAPTIVE_AVG ? padded_count : count;
}
ACC avg_divisor(PoolParams p, int64_t count, int64_t padded_count) {
  return ACC(avg_divisor_count(p, count, padded_count));
}

// Element access of the forward: floats through nn_load/nn_store, or (POOL_INT_*) one integer
// dtype per variant, kept in int64 (max, and the int64 average with C++ division).
#if defined(POOL_INT_I8)
#define VAL int64_t
VAL pool_load(uint64_t a, int64_t i, uint dt) { return int64_t(PI8(a + uint64_t(i)).v); }
void pool_store(uint64_t a, int64_t i, uint dt, VAL v) { PI8(a + uint64_t(i)).v = int8_t(v); }
#elif defined(POOL_INT_U8)
#define VAL int64_t
VAL pool_load(uint64_t a, int64_t i, uint dt) { return int64_t(PU8(a + uint64_t(i)).v); }
void pool_store(uint64_t a, int64_t i, uint dt, VAL v) { PU8(a + uint64_t(i)).v = uint8_t(v); }
#elif defined(POOL_INT_I16)
#define VAL int64_t
VAL pool_load(uint64_t a, int64_t i, uint dt) { return int64_t(PI16(a + uint64_t(i) * 2ul).v); }
void pool_store(uint64_t a, int64_t i, uint dt, VAL v) {
  PI16(a + uint64_t(i) * 2ul).v = int16_t(v);
}
#elif defined(POOL_INT_I32)
#define VAL int64_t
VAL pool_load(uint64_t a, int64_t i, uint dt) { return int64_t(PI32(a + uint64_t(i) * 4ul).v); }
void pool_store(uint64_t a, int64_t i, uint dt, VAL v) { PI32(a + uint64_t(i) * 4ul).v = int(v); }
#elif defined(POOL_INT_I64)
#define VAL int64_t
VAL pool_load(uint64_t a, int64_t i, uint dt) { return PI64(a + uint64_t(i) * 8ul).v; }
void pool_store(uint64_t a, int64_t i, uint dt, VAL v) { PI64(a + uint64_t(i) * 8ul).v = v; }
#else
#define VAL ACC
#define POOL_FLOAT
VAL pool_load(uint64_t a, int64_t i, uint dt) { return nn_load(a, i, dt); }
void pool_store(uint64_t a, int64_t i, uint dt, VAL v) { nn_store(a, i, dt, v); }
#endif

#ifndef POOL_BACKWARD
void main() {
  PoolParams p = pc.p;
  const bool is_max = p.kind == POOL_MAX || p.kind == POOL_ADAPTIVE_MAX;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t o[3], rem = e;
    split_position(p, p.b_size, o, rem);
    int64_t a_off, b_off, i_off;
    plane_offsets(p, rem, a_off, b_off, i_off);
    int64_t s[3], en[3], st[3], padded[3];
    for (int k = 0; k < 3; ++k) window(p, k, o[k], s[k], en[k], st[k], padded[k]);
    for (int k = 0; k < 3; ++k) b_off += o[k] * p.b_strides[k];
    if (is_max) {
#ifdef POOL_FLOAT
      VAL best = -ACC(NN_INF);
#else
      VAL best = int64_t(0x8000000000000000ul);  // lowest: the first maximum wins ties
#endif
      const IDX rows = IDX(p.a_size[1]), cols = IDX(p.a_size[2]);
      const IDX sa[3] = {IDX(p.a_strides[0]), IDX(p.a_strides[1]), IDX(p.a_strides[2])};
      IDX best_index = (IDX(s[0]) * rows + IDX(s[1])) * cols + IDX(s[2]);
      for (IDX d = IDX(s[0]); d < IDX(en[0]); d += IDX(st[0])) {
        for (IDX h = IDX(s[1]); h < IDX(en[1]); h += IDX(st[1])) {
          const IDX row = IDX(a_off) + d * sa[0] + h * sa[1];
          for (IDX w = IDX(s[2]); w < IDX(en[2]); w += IDX(st[2])) {
            VAL v = pool_load(p.a, int64_t(row + w * sa[2]), p.a_dtype);
#ifdef POOL_FLOAT
            if (v > best || isnan(v)) {
#else
            if (v > best) {
#endif
              best = v;
              best_index = (d * rows + h) * cols + w;
            }
          }
        }
      }
      pool_store(p.b, b_off, p.b_dtype, best);
      if (p.indices != 0ul) {
        for (int k = 0; k < 3; ++k) i_off += o[k] * p.i_strides[k];
        PI64(p.indices + uint64_t(i_off) * 8ul).v = int64_t(best_index);
      }
    } else {
      int64_t count = 1, padded_count = 1;
      bool empty = false;
      for (int k = 0; k < 3; ++k) {
        empty = empty || s[k] >= en[k];
        count *= en[k] - s[k];
        padded_count *= p.kind == POOL_ADAPTIVE_AVG ? en[k] - s[k] : padded[k];
      }
      VAL sum = VAL(0);
      const IDX sa[3] = {IDX(p.a_strides[0]), IDX(p.a_strides[1]), IDX(p.a_strides[2])};
      for (IDX d = IDX(s[0]); d < IDX(en[0]); ++d) {
        for (IDX h = IDX(s[1]); h < IDX(en[1]); ++h) {
          const IDX row = IDX(a_off) + d * sa[0] + h * sa[1];
          for (IDX w = IDX(s[2]); w < IDX(en[2]); ++w) {
            sum += pool_load(p.a, int64_t(row + w * sa[2]), p.a_dtype);
          }
        }
      }
      VAL divisor = VAL(avg_divisor_count(p, count, padded_count));
      pool_store(p.b, b_off, p.b_dtype, empty ? VAL(0) : sum / divisor);
    }
  }
}
#else
// Outputs along dim k whose window may hold input position i (a superset; callers check).
void candidates(PoolParams p, int k, int64_t i, out int64_t lo, out int64_t hi) {
  int64_t outs = p.b_size[k];
  if (p.kind == POOL_ADAPTIVE_MAX || p.kind == POOL_ADAPTIVE_AVG) {
    lo = max((i * outs) / p.a_size[k] - 1, 0l);
    hi = min(((i + 1) * outs) / p.a_size[k] + 1, outs - 1);
  } else {
    int64_t span = p.kind == POOL_MAX ? (p.kernel[k] - 1) * p.dilation[k] : p.kernel[k] - 1;
    int64_t first = i + p.pad[k] - span;
    lo = first <= 0 ? 0 : (first + p.stride[k] - 1) / p.stride[k];
    hi = min((i + p.pad[k]) / p.stride[k], outs - 1);
  }
}

void main() {
  PoolParams p = pc.p;
  const bool is_max = p.kind == POOL_MAX || p.kind == POOL_ADAPTIVE_MAX;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t x[3], rem = e;
    split_position(p, p.a_size, x, rem);
    int64_t a_off, b_off, i_off;
    plane_offsets(p, rem, a_off, b_off, i_off);
    int64_t flat_index = (x[0] * p.a_size[1] + x[1]) * p.a_size[2] + x[2];
    int64_t lo[3], hi[3];
    for (int k = 0; k < 3; ++k) candidates(p, k, x[k], lo[k], hi[k]);
    ACC acc = ACC(0);
    const IDX sb[3] = {IDX(p.b_strides[0]), IDX(p.b_strides[1]), IDX(p.b_strides[2])};
    const IDX si[3] = {IDX(p.i_strides[0]), IDX(p.i_strides[1]), IDX(p.i_strides[2])};
    for (IDX od = IDX(lo[0]); od <= IDX(hi[0]); ++od) {
      for (IDX oh = IDX(lo[1]); oh <= IDX(hi[1]); ++oh) {
        for (IDX ow = IDX(lo[2]); ow <= IDX(hi[2]); ++ow) {
          int64_t o[3] = {int64_t(od), int64_t(oh), int64_t(ow)};
          const int64_t g_off = int64_t(IDX(b_off) + od * sb[0] + oh * sb[1] + ow * sb[2]);
          if (is_max) {
            const int64_t ix = int64_t(IDX(i_off) + od * si[0] + oh * si[1] + ow * si[2]);
            if (PI64(p.indices + uint64_t(ix) * 8ul).v == flat_index) {
              acc += nn_load(p.b, g_off, p.b_dtype);
            }
            continue;
          }
          int64_t count = 1, padded_count = 1;
          bool inside = true;
          for (int k = 0; k < 3; ++k) {
            int64_t s, en, st, padded;
            window(p, k, o[k], s, en, st, padded);
            inside = inside && x[k] >= s && x[k] < en;
            count *= en - s;
            padded_count *= p.kind == POOL_ADAPTIVE_AVG ? en - s : padded;
          }
          if (inside) acc += nn_load(p.b, g_off, p.b_dtype) / avg_divisor(p, count, padded_count);
        }
      }
    }
    for (int k = 0; k < 3; ++k) a_off += x[k] * p.a_strides[k];
    nn_store(p.a, a_off, p.a_dtype, acc);
  }
}
#endif
