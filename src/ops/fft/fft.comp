#version 460
#extension GL_GOOGLE_include_directive : require
// The fft family's kernels (see fft_params.h): one Stockham radix pass of a mixed-radix FFT,
// and the three pointwise steps of Bluestein's chirp-z transform. Twiddles come from tables
// computed in double on the host, so accuracy does not rest on the device's sin and cos.
#include "vkml_common.glsl"
#include "fft_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { FftParams p; } pc;

#ifdef VKML_USE_FP64
#define CT dvec2
#define RT double
#define CSIZE 16
#else
#define CT vec2
#define RT float
#define CSIZE 8
#endif

layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PC { CT v; };

CT ld(uint64_t base, int64_t i) { return PC(base + uint64_t(i) * CSIZE).v; }
void st(uint64_t base, int64_t i, CT x) { PC(base + uint64_t(i) * CSIZE).v = x; }

CT cmul(CT a, CT b) { return CT(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

CT table_at(uint64_t table, int64_t t, uint conj_table) {
  CT w = ld(table, t);
  return conj_table != 0u ? CT(w.x, -w.y) : w;
}

// Multiplies by -i (forward) or +i (inverse).
CT rot90(CT v, bool inv) { return inv ? CT(-v.y, v.x) : CT(v.y, -v.x); }

// In-place 4-point DFT.
void dft4(inout CT a0, inout CT a1, inout CT a2, inout CT a3, bool inv) {
  CT s0 = a0 + a2, d0 = a0 - a2, s1 = a1 + a3, r = rot90(a1 - a3, inv);
  a0 = s0 + s1;
  a1 = d0 + r;
  a2 = s0 - s1;
  a3 = d0 - r;
}

void radix_pass(FftParams p, RT scale, int64_t e) {
  const int R = int(p.radix);
  const int64_t q = p.n / R;
  const int64_t b = e / q, i = e % q, k = i % p.span;
  const int64_t step = p.n / (p.span * R);
  CT u[FFT_MAX_RADIX];
  for (int r = 0; r < R; ++r) {
    CT x = ld(p.src, b * p.src_row + (i + r * q) * p.src_elem);
    u[r] = (r > 0 && k > 0) ? cmul(x, table_at(p.table, r * k * step, p.conj_table)) : x;
  }
  const int64_t j = (i - k) * R + k;
  const uint64_t obase = p.dst + uint64_t(b * p.dst_row) * CSIZE;
  if (R == 2) {
    st(obase, j * p.dst_elem, (u[0] + u[1]) * scale);
    st(obase, (j + p.span) * p.dst_elem, (u[0] - u[1]) * scale);
    return;
  }
  const bool inv = p.conj_table != 0u;
  if (R == 4) {
    dft4(u[0], u[1], u[2], u[3], inv);
    for (int r = 0; r < 4; ++r) st(obase, (j + r * p.span) * p.dst_elem, u[r] * scale);
    return;
  }
  if (R == 8) {
    // Two 4-point DFTs (even and odd inputs) joined by the eighth roots of unity.
    dft4(u[0], u[2], u[4], u[6], inv);
    dft4(u[1], u[3], u[5], u[7], inv);
    const RT h = RT(0.70710678118654752440);
    CT t[4];
    t[0] = u[1];
    t[1] = cmul(u[3], CT(h, inv ? h : -h));
    t[2] = rot90(u[5], inv);
    t[3] = cmul(u[7], CT(-h, inv ? h : -h));
    for (int r = 0; r < 4; ++r) {
      st(obase, (j + r * p.span) * p.dst_elem, (u[2 * r] + t[r]) * scale);
      st(obase, (j + (r + 4) * p.span) * p.dst_elem, (u[2 * r] - t[r]) * scale);
    }
    return;
  }
  for (int r = 0; r < R; ++r) {
    CT acc = u[0];
    for (int s = 1; s < R; ++s) {
      acc += cmul(u[s], table_at(p.table, int64_t((r * s) % R) * q, p.conj_table));
    }
    st(obase, (j + r * p.span) * p.dst_elem, acc * scale);
  }
}

void main() {
  FftParams p = pc.p;
#ifdef VKML_USE_FP64
  const RT scale = p.scale_d;
#else
  const RT scale = p.scale;
#endif
  const int64_t step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y) *
                       int64_t(gl_WorkGroupSize.x);
  const int64_t first =
      (int64_t(gl_WorkGroupID.x) + int64_t(gl_WorkGroupID.y) * int64_t(gl_NumWorkGroups.x)) *
          int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
  for (int64_t e = first; e < p.numel; e += step) {
    if (p.mode == FFT_PASS) {
      radix_pass(p, scale, e);
      continue;
    }
    const int64_t len = p.mode == FFT_CHIRP_IN ? p.m : p.n;
    const int64_t b = e / len, j = e % len;
    CT v = CT(0);
    if (j < p.n) {
      CT x = ld(p.src, b * p.src_row + j * p.src_elem);
      v = p.mode == FFT_MUL ? cmul(x, table_at(p.table, j, p.conj_table))
                            : cmul(x, table_at(p.table2, j, p.conj_table));
    }
    st(p.dst, b * p.dst_row + j * p.dst_elem, v * scale);
  }
}
