#version 460
#extension GL_GOOGLE_include_directive : require
// Inclusive scans (cumsum, cumprod, cummax/cummin with indices, logcumsumexp) along one dim.
// Short or many lines: one thread scans a line. Otherwise a workgroup walks its line (or a block
// of it) in tiles of WG * ITEMS elements: each thread scans ITEMS consecutive elements, a
// shared-memory scan joins the threads, and a carry joins the tiles. Long lines are cut into
// blocks: stage TOTALS writes each block's total, stage LINES starts each block from the totals
// of the blocks before it.
#include "vkml_common.glsl"
#include "reduce_params.h"

#if defined(ACC_F64)
#define V double
#define V_DOUBLE
#elif defined(ACC_I64)
#define V int64_t
#define V_INT
#else
#define V float
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint IN_DT = 0;
layout(constant_id = 3) const uint CMP_DT = 0;
layout(constant_id = 4) const uint OUT0_DT = 0;
layout(constant_id = 5) const uint OUT1_DT = 0;
layout(constant_id = 6) const bool IDX64 = false;

layout(push_constant) uniform Push { ScanParams p; } pc;

#include "reduce_io.glsl"
#include "reduce_math.glsl"

struct State {
  V a;
  int64_t n;  // cummax/cummin: index of the running extreme; -1: nothing seen yet
};
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PState { State s; };
#define STATE_BYTES 16ul  // scalar layout: a at 0, n aligned to 8

const bool kExtreme = OP == VKML_SCAN_CUMMAX || OP == VKML_SCAN_CUMMIN;

State identity() {
  State s;
  s.a = V(0);
  s.n = -1;
  if (OP == VKML_SCAN_CUMPROD) s.a = V(1);
#ifndef V_INT
  if (OP == VKML_SCAN_LOGCUMSUMEXP) s.a = -v_pos_inf();
#endif
  return s;
}

#ifndef V_INT
// PyTorch's _log_add_exp_helper: NaN propagates, equal infinities return x.
V log_add_exp(V x, V y) {
  if (is_nan(x) || is_nan(y)) return is_nan(x) ? x : y;
  V lo = min(x, y), hi = max(x, y);
  if (lo != hi || !isinf(lo)) return v_log1p(v_exp(lo - hi)) + hi;
  return x;
}
#endif

// e covers earlier elements than l. Ties in cummax/cummin go to the later index, and the last
// NaN wins, as in PyTorch's CPU kernel.
State combine(State e, State l) {
  if (OP == VKML_SCAN_CUMSUM) {
    e.a += l.a;
  } else if (OP == VKML_SCAN_CUMPROD) {
    e.a *= l.a;
  } else if (kExtreme) {
    if (l.n >= 0) {
      bool take = e.n < 0 || is_nan(l.a) ||
                  (!is_nan(e.a) && (OP == VKML_SCAN_CUMMAX ? l.a >= e.a : l.a <= e.a));
      if (take) e = l;
    }
  } else {
#ifndef V_INT
    e.a = log_add_exp(e.a, l.a);
#endif
  }
  return e;
}

// Parameters used per element, copied once per thread: the stores below could alias the
// parameter block as far as the compiler knows, which would force a reload after each one.
uint64_t g_src, g_out0, g_out1;
int64_t g_src_stride, g_out0_stride, g_out1_stride, g_len;

State element(int64_t src_base, int64_t i) {
  State s;
  s.a = load_as(IN_DT, g_src, src_base + i * g_src_stride);
  if (CMP_DT != IN_DT) s.a = round_through(CMP_DT, s.a);
  s.n = i;
  return s;
}

void write(int64_t base0, int64_t base1, int64_t i, State s) {
  store_as(OUT0_DT, g_out0, base0 + i * g_out0_stride, s.a);
  if (kExtreme) PI64(elem_addr(g_out1, base1 + i * g_out1_stride, 8)).v = s.n;
}

void line_offsets(int64_t line, out int64_t s_off, out int64_t off0, out int64_t off1) {
  s_off = 0;
  off0 = 0;
  off1 = 0;
  for (int d = int(pc.p.line_ndim) - 1; d >= 0; --d) {
    int64_t size = pc.p.line_sizes[d];
    int64_t c;
    if (IDX64) {
      c = line % size;
      line /= size;
    } else {
      c = int64_t(uint(line) % uint(size));
      line = int64_t(uint(line) / uint(size));
    }
    s_off += c * pc.p.src_line_strides[d];
    off0 += c * pc.p.out0_line_strides[d];
    off1 += c * pc.p.out1_line_strides[d];
  }
}

shared V sh_a[VKML_REDUCE_WORKGROUP];
shared int64_t sh_n[VKML_REDUCE_WORKGROUP];

void share(uint slot, State s) {
  sh_a[slot] = s.a;
  sh_n[slot] = s.n;
}

State shared_state(uint slot) {
  State s;
  s.a = sh_a[slot];
  s.n = sh_n[slot];
  return s;
}

void scan_lines_per_thread() {
  int64_t stride = int64_t(gl_NumWorkGroups.x) * int64_t(gl_WorkGroupSize.x);
  for (int64_t line = int64_t(gl_GlobalInvocationID.x); line < pc.p.nlines; line += stride) {
    int64_t s_off, off0, off1;
    line_offsets(line, s_off, off0, off1);
    State s = identity();
    for (int64_t i = 0; i < g_len; ++i) {
      s = combine(s, element(s_off, i));
      write(off0, off1, i, s);
    }
  }
}

void scan_blocks() {
  const uint wg = gl_WorkGroupSize.x;
  uint t = gl_LocalInvocationID.x;
  bool totals_only = pc.p.stage == VKML_SCAN_STAGE_TOTALS;
  int64_t split = int64_t(gl_WorkGroupID.y);
  int64_t begin = split * pc.p.block;
  int64_t end = min(g_len, begin + pc.p.block);
  for (int64_t line = int64_t(gl_WorkGroupID.x); line < pc.p.nlines;
       line += int64_t(gl_NumWorkGroups.x)) {
    int64_t s_off, off0, off1;
    line_offsets(line, s_off, off0, off1);
    State carry = identity();
    if (!totals_only && split > 0) {
      // Carry-in: the totals of the earlier blocks of this line, in order.
      uint64_t totals = pc.p.totals + uint64_t(line) * uint64_t(pc.p.splits) * STATE_BYTES;
      for (int64_t b = 0; b < split; ++b) {
        carry = combine(carry, PState(totals + uint64_t(b) * STATE_BYTES).s);
      }
    }
    for (int64_t tile = begin; tile < end; tile += int64_t(wg) * VKML_SCAN_ITEMS) {
      int64_t first = tile + int64_t(t) * VKML_SCAN_ITEMS;
      State items[VKML_SCAN_ITEMS];
      State run = identity();
      for (int j = 0; j < VKML_SCAN_ITEMS; ++j) {
        if (first + j < end) run = combine(run, element(s_off, first + j));
        items[j] = run;
      }
      // Inclusive scan of the thread totals (Hillis-Steele).
      share(t, run);
      barrier();
      for (uint step = 1u; step < wg; step <<= 1) {
        State before;
        if (t >= step) before = shared_state(t - step);
        barrier();
        if (t >= step) {
          run = combine(before, run);
          share(t, run);
        }
        barrier();
      }
      State prefix = combine(carry, t > 0u ? shared_state(t - 1u) : identity());
      carry = combine(carry, shared_state(wg - 1u));
      barrier();
      if (!totals_only) {
        for (int j = 0; j < VKML_SCAN_ITEMS; ++j) {
          if (first + j < end) write(off0, off1, first + j, combine(prefix, items[j]));
        }
      }
    }
    if (totals_only && t == 0u) {
      uint64_t slot = uint64_t(line) * uint64_t(pc.p.splits) + uint64_t(split);
      PState(pc.p.totals + slot * STATE_BYTES).s = carry;
    }
  }
}

void main() {
  g_src = pc.p.src;
  g_out0 = pc.p.out0;
  g_out1 = pc.p.out1;
  g_src_stride = pc.p.src_stride;
  g_out0_stride = pc.p.out0_stride;
  g_out1_stride = pc.p.out1_stride;
  g_len = pc.p.len;
  if (pc.p.per_thread != 0u) {
    scan_lines_per_thread();
  } else {
    scan_blocks();
  }
}
