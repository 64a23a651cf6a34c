#version 460
#extension GL_GOOGLE_include_directive : require
// Upsampling (nearest, nearest-exact, linear, cubic) and reflection/replication padding over up
// to 3 spatial dims, with PyTorch's CPU index and weight rules. Each dim maps an output position
// to at most 4 (input index, weight) taps; an output is the separable product sum of its taps.
// Forward: one invocation per output element. RESAMPLE_BACKWARD: one invocation per grad_input
// element, gathering over the outputs whose taps hold it (found per dim by binary search on the
// monotone tap bounds, or listed for padding), so no atomics and deterministic sums.
#include "vkml_common.glsl"
#include "resample_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { ResampleParams p; } pc;

#include "nn_common.glsl"

void plane_offsets(ResampleParams p, int64_t plane, out int64_t a, out int64_t b) {
  a = 0;
  b = 0;
  for (int d = int(p.plane_ndim) - 1; d >= 0; --d) {
    int64_t i = plane % p.plane_sizes[d];
    plane /= p.plane_sizes[d];
    a += i * p.a_plane_strides[d];
    b += i * p.b_plane_strides[d];
  }
}

// The ratio the CPU computes linear and cubic indices with (float, or double for f64).
ACC linear_scale(ResampleParams p, int k) {
#ifdef VKML_USE_FP64
  return p.scale_d[k];
#else
  return ACC(p.scale_f[k]);
#endif
}

// A weight rounded to f16/bf16 (code wdt): the CPU keeps interpolation weights in the data type.
ACC round_weight(ACC v, uint wdt) {
  if (wdt == NN_F16) return ACC(round_to_f16(float(v)));
  if (wdt == NN_BF16) return ACC(bf16_to_float(float_to_bf16(float(v))));
  return v;
}

// Taps of output position o along dim k: count, input indices and weights (linear and cubic
// weights rounded to dtype wdt: NN_F32 keeps them).
int taps(ResampleParams p, int k, int64_t o, uint wdt, out int64_t idx[4], out ACC w[4]) {
  int64_t in_size = p.a_size[k], out_size = p.b_size[k];
  w[0] = ACC(1);
  if (p.mode == RESAMPLE_PAD_REFLECT) {
    int64_t j = o - p.pad_before[k];
    if (j < 0) j = -j;
    if (j >= in_size) j = 2 * (in_size - 1) - j;
    idx[0] = j;
    return 1;
  }
  if (p.mode == RESAMPLE_PAD_REPLICATE) {
    idx[0] = clamp(o - p.pad_before[k], 0l, in_size - 1);
    return 1;
  }
  if (p.mode == RESAMPLE_NEAREST) {
    // Nearest keeps two special cases of the CPU (same size, exact doubling).
    if (out_size == in_size) {
      idx[0] = o;
    } else if (out_size == 2 * in_size) {
      idx[0] = o >> 1;
    } else {
      idx[0] = min(int64_t(floor(float(o) * p.scale_f[k])), in_size - 1);
    }
    return 1;
  }
  if (p.mode == RESAMPLE_NEAREST_EXACT) {
    idx[0] = min(int64_t(floor((float(o) + 0.5) * p.scale_f[k])), in_size - 1);
    return 1;
  }
  ACC scale = linear_scale(p, k);
  if (p.mode == RESAMPLE_LINEAR) {
    if (out_size == in_size) {
      idx[0] = o;
      return 1;
    }
    ACC real = p.align_corners != 0u ? scale * ACC(o) : scale * (ACC(o) + ACC(0.5)) - ACC(0.5);
    real = max(real, ACC(0));
    int64_t i0 = min(int64_t(floor(float(real))), in_size - 1);  // floorf, as on the CPU
    ACC l1 = clamp(real - ACC(i0), ACC(0), ACC(1));
    idx[0] = i0;
    idx[1] = i0 + (i0 < in_size - 1 ? 1 : 0);
    w[1] = round_weight(l1, wdt);
    w[0] = round_weight(ACC(1) - w[1], wdt);
    return 2;
  }
  // Cubic convolution (A = -0.75) over 4 taps, indices clamped to the input.
  ACC real = p.align_corners != 0u ? scale * ACC(o) : scale * (ACC(o) + ACC(0.5)) - ACC(0.5);
  int64_t i0 = min(int64_t(floor(float(real))), in_size - 1);
  ACC t = clamp(real - ACC(i0), ACC(0), ACC(1));
  const ACC A = ACC(-0.75);
  ACC x1 = t + ACC(1), x2 = ACC(1) - t, x3 = ACC(2) - t;
  w[0] = ((A * x1 - ACC(5) * A) * x1 + ACC(8) * A) * x1 - ACC(4) * A;
  w[1] = ((A + ACC(2)) * t - (A + ACC(3))) * t * t + ACC(1);
  w[2] = ((A + ACC(2)) * x2 - (A + ACC(3))) * x2 * x2 + ACC(1);
  w[3] = ((A * x3 - ACC(5) * A) * x3 + ACC(8) * A) * x3 - ACC(4) * A;
  for (int j = 0; j < 4; ++j) {
    idx[j] = clamp(i0 - 1 + int64_t(j), 0l, in_size - 1);
    w[j] = round_weight(w[j], wdt);
  }
  return 4;
}

#ifndef RESAMPLE_BACKWARD
// Bit-for-bit element copies for the one-tap modes (any dtype).
void raw_copy(uint64_t a, int64_t ai, uint64_t b, int64_t bi, uint bytes) {
  if (bytes == 1u) {
    PU8(b + uint64_t(bi)).v = PU8(a + uint64_t(ai)).v;
  } else if (bytes == 2u) {
    PU16(b + uint64_t(bi) * 2ul).v = PU16(a + uint64_t(ai) * 2ul).v;
  } else if (bytes == 4u) {
    PU32(b + uint64_t(bi) * 4ul).v = PU32(a + uint64_t(ai) * 4ul).v;
  } else {
    PU64(b + uint64_t(bi) * 8ul).v = PU64(a + uint64_t(ai) * 8ul).v;
  }
}

void main() {
  ResampleParams p = pc.p;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t o[3], rem = e;
    for (int k = 2; k >= 0; --k) {
      o[k] = rem % p.b_size[k];
      rem /= p.b_size[k];
    }
    int64_t a_off, b_off;
    plane_offsets(p, rem, a_off, b_off);
    for (int k = 0; k < 3; ++k) b_off += o[k] * p.b_strides[k];
    int64_t id[4], ih[4], iw[4];
    ACC wd[4], wh[4], ww[4];
    uint wdt = p.round_weights != 0u ? p.a_dtype : NN_F32;
    int nd = taps(p, 0, o[0], wdt, id, wd);
    int nh = taps(p, 1, o[1], wdt, ih, wh);
    int nw = taps(p, 2, o[2], wdt, iw, ww);
    if (p.raw_bytes != 0u) {
      raw_copy(p.a, a_off + id[0] * p.a_strides[0] + ih[0] * p.a_strides[1] +
                        iw[0] * p.a_strides[2], p.b, b_off, p.raw_bytes);
      continue;
    }
    ACC acc = ACC(0);
    for (int d = 0; d < nd; ++d) {
      ACC accd = ACC(0);
      for (int h = 0; h < nh; ++h) {
        ACC acch = ACC(0);
        int64_t row = a_off + id[d] * p.a_strides[0] + ih[h] * p.a_strides[1];
        for (int w = 0; w < nw; ++w) acch += ww[w] * nn_load(p.a, row + iw[w] * p.a_strides[2], p.a_dtype);
        accd += wh[h] * acch;
      }
      acc += wd[d] * accd;
    }
    nn_store(p.b, b_off, p.b_dtype, acc);
  }
}
#else
// Smallest and largest input index output o reads along dim k (both monotone in o for the
// upsampling modes).
void tap_bounds(ResampleParams p, int k, int64_t o, out int64_t lo, out int64_t hi) {
  int64_t idx[4];
  ACC w[4];
  int n = taps(p, k, o, NN_F32, idx, w);
  lo = idx[0];
  hi = idx[n - 1];
}

// Outputs along dim k that may read input i: the range [lo, hi] plus up to two extra positions
// (reflection), -1 when absent. Callers weigh each candidate exactly through taps().
void candidates(ResampleParams p, int k, int64_t i, out int64_t lo, out int64_t hi,
                out int64_t extra0, out int64_t extra1) {
  int64_t in_size = p.a_size[k], outs = p.b_size[k];
  extra0 = -1;
  extra1 = -1;
  if (p.mode == RESAMPLE_PAD_REFLECT || p.mode == RESAMPLE_PAD_REPLICATE) {
    int64_t direct = i + p.pad_before[k];
    lo = direct;
    hi = direct;
    if (p.mode == RESAMPLE_PAD_REFLECT) {
      if (i > 0) extra0 = p.pad_before[k] - i;
      if (i < in_size - 1) extra1 = p.pad_before[k] + 2 * (in_size - 1) - i;
      if (extra0 >= outs) extra0 = -1;
      if (extra1 >= outs) extra1 = -1;
    } else {
      if (i == 0) lo = 0;
      if (i == in_size - 1) hi = outs - 1;
    }
    lo = max(lo, 0l);
    hi = min(hi, outs - 1);
    return;
  }
  // First output whose largest tap reaches i.
  int64_t first = 0, last = outs;
  while (first < last) {
    int64_t mid = (first + last) / 2, tlo, thi;
    tap_bounds(p, k, mid, tlo, thi);
    if (thi < i) first = mid + 1; else last = mid;
  }
  lo = first;
  // One past the last output whose smallest tap is at most i.
  first = lo;
  last = outs;
  while (first < last) {
    int64_t mid = (first + last) / 2, tlo, thi;
    tap_bounds(p, k, mid, tlo, thi);
    if (tlo <= i) first = mid + 1; else last = mid;
  }
  hi = first - 1;
}

// Weight with which output o along dim k reads input i; `hit` is false when it does not (a
// zero weight still counts, so a NaN gradient propagates as in the CPU's scatter).
ACC weight_of(ResampleParams p, int k, int64_t o, int64_t i, out bool hit) {
  int64_t idx[4];
  ACC w[4];
  int n = taps(p, k, o, NN_F32, idx, w);
  ACC s = ACC(0);
  hit = false;
  for (int j = 0; j < n; ++j) {
    if (idx[j] == i) {
      s += w[j];
      hit = true;
    }
  }
  return s;
}

// The c-th candidate of a dim (range first, then the extras); -1 when past the end or absent.
int64_t candidate(int64_t c, int64_t lo, int64_t hi, int64_t e0, int64_t e1) {
  int64_t n = max(hi - lo + 1, 0l);
  if (c < n) return lo + c;
  return c == n ? e0 : e1;
}

void main() {
  ResampleParams p = pc.p;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t x[3], rem = e;
    for (int k = 2; k >= 0; --k) {
      x[k] = rem % p.a_size[k];
      rem /= p.a_size[k];
    }
    int64_t a_off, b_off;
    plane_offsets(p, rem, a_off, b_off);
    int64_t lo[3], hi[3], e0[3], e1[3], count[3];
    for (int k = 0; k < 3; ++k) {
      candidates(p, k, x[k], lo[k], hi[k], e0[k], e1[k]);
      count[k] = max(hi[k] - lo[k] + 1, 0l) + 2;
    }
    ACC acc = ACC(0);
    for (int64_t cd = 0; cd < count[0]; ++cd) {
      int64_t od = candidate(cd, lo[0], hi[0], e0[0], e1[0]);
      if (od < 0) continue;
      bool hit;
      ACC wd = weight_of(p, 0, od, x[0], hit);
      if (!hit) continue;
      ACC accd = ACC(0);
      for (int64_t ch = 0; ch < count[1]; ++ch) {
        int64_t oh = candidate(ch, lo[1], hi[1], e0[1], e1[1]);
        if (oh < 0) continue;
        ACC wh = weight_of(p, 1, oh, x[1], hit);
        if (!hit) continue;
        ACC acch = ACC(0);
        int64_t row = b_off + od * p.b_strides[0] + oh * p.b_strides[1];
        for (int64_t cw = 0; cw < count[2]; ++cw) {
          int64_t ow = candidate(cw, lo[2], hi[2], e0[2], e1[2]);
          if (ow < 0) continue;
          ACC ww = weight_of(p, 2, ow, x[2], hit);
          if (hit) acch += ww * nn_load(p.b, row + ow * p.b_strides[2], p.b_dtype);
        }
        accd += wh * acch;
      }
      acc += wd * accd;
    }
    for (int k = 0; k < 3; ++k) a_off += x[k] * p.a_strides[k];
    nn_store(p.a, a_off, p.a_dtype, acc);
  }
}
#endif
