#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Strided reduction over a set of dims. Each output is reduced by a group of RY threads of one
// workgroup (RY = 1: one thread per output), which meet in a shared-memory tree; long reductions
// are split over several workgroups (stage PARTIAL) whose accumulator states a FINAL pass combines.
// Variants: the accumulator type (ACC_F32 / ACC_F64 / ACC_I64); op and dtypes are specialization
// constants.
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
layout(constant_id = 2) const uint IN_DT = 0;   // dtype of src
layout(constant_id = 3) const uint CMP_DT = 0;  // dtype src is cast to before accumulating
layout(constant_id = 4) const uint OUT0_DT = 0;
layout(constant_id = 5) const uint OUT1_DT = 0;
layout(constant_id = 6) const bool IDX64 = false;  // some extent does not fit in 31 bits
// VEC mode (f32/f16/bf16 src, one reduced dim of stride 1, rows 16-byte aligned, chunks a multiple
// of VEC_W): elements per 16-byte load; 0 for the plain strided loop.
layout(constant_id = 7) const uint VEC_W = 0u;
// Column layout (f32/f16/bf16/f64/i16/i32/i64 src, innermost kept dim of stride 1): adjacent
// outputs per thread, read with one 16-byte load per row where aligned; 0: one output per thread.
layout(constant_id = 8) const uint COL_W = 0u;

layout(push_constant) uniform Push { ReduceParams p; } pc;

#include "reduce_io.glsl"
#include "reduce_math.glsl"

// a, b: values (sum, extreme, mean, max of log-sum-exp); n: count or index (-1: no element yet).
struct State {
  V a;
  V b;
  int64_t n;
};
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PState { State s; };
#define STATE_BYTES (2 * 8 + 8)
#ifndef V_DOUBLE
#ifndef V_INT
#undef STATE_BYTES
#define STATE_BYTES (2 * 4 + 8)
#endif
#endif

const bool kArg = OP == VKML_RED_ARGMAX || OP == VKML_RED_ARGMIN;
// Norm order, copied from the parameters once per thread (read per element).
uint g_norm_kind;
V g_p, g_correction;
const bool kWelford = OP == VKML_RED_VAR || OP == VKML_RED_STD;

State init_state() {
  State s;
  s.a = V(0);
  s.b = V(0);
  s.n = 0;
  if (OP == VKML_RED_PROD || OP == VKML_RED_ALL) s.a = V(1);
  if (kArg) s.n = -1;
#ifndef V_INT
  if (OP == VKML_RED_LOGSUMEXP) s.a = -v_pos_inf();
#endif
  return s;
}

// True when x beats y for max (want_max) or min; NaN beats everything.
bool beats(V x, V y, bool want_max) {
  if (is_nan(x)) return !is_nan(y);
  return want_max ? x > y : x < y;
}

// max/min/aminmax: like beats, and a zero of the wanted sign beats the other zero (IEEE 754-2019
// maximum/minimum), so the result does not depend on the reduction order. Arg ops keep first-wins ties.
bool beats_value(V x, V y, bool want_max) {
#ifndef V_INT
  if (x == y && x == V(0)) {
#ifdef V_DOUBLE
    bool x_neg = (unpackDouble2x32(x).y >> 31) != 0u, y_neg = (unpackDouble2x32(y).y >> 31) != 0u;
#else
    bool x_neg = (floatBitsToUint(x) >> 31) != 0u, y_neg = (floatBitsToUint(y) >> 31) != 0u;
#endif
    return want_max ? (!x_neg && y_neg) : (x_neg && !y_neg);
  }
#endif
  return beats(x, y, want_max);
}

#if !defined(V_DOUBLE) && !defined(V_INT)
// The rounding error of p = x * y (Dekker): x * y - p exactly, for finite factors whose partial
// products neither overflow nor underflow. The halves are cut by masking the low 12 mantissa
// bits, so each partial product of 12-bit halves is exact in float whatever the compiler fuses.
float product_error(float x, float y, float p) {
  precise float xh = uintBitsToFloat(floatBitsToUint(x) & 0xFFFFF000u);
  precise float yh = uintBitsToFloat(floatBitsToUint(y) & 0xFFFFF000u);
  precise float xl = x - xh, yl = y - yh;
  precise float e = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl;
  return e;
}

// s * t for prod in float: a float product's rounding errors compound (2^24 factors near 1 drift
// by percent), so the state keeps a float-float value a + b (|b| at most half an ulp of a) where
// the device has no fp64 to accumulate in. Zeros, infinities and NaN stay plain floats.
State prod_float_float(State s, State t) {
  precise float p = s.a * t.a;
  if (p == 0.0 || isinf(p) || isnan(p)) {
    s.a = p;
    s.b = 0.0;
    return s;
  }
  precise float lo = product_error(s.a, t.a, p) + (s.a * t.b + s.b * t.a);
  precise float hi = p + lo;
  if (isinf(hi) || isnan(hi)) {
    s.a = p;
    s.b = 0.0;
    return s;
  }
  s.a = hi;
  s.b = lo - (hi - p);
  return s;
}
#endif

// Combines two states; for index ops, t may also be a single element (t.n = its index).
State combine(State s, State t) {
  if (OP == VKML_RED_SUM || OP == VKML_RED_NANSUM || OP == VKML_RED_MEAN) {
    s.a += t.a;
  } else if (OP == VKML_RED_PROD) {
#if !defined(V_DOUBLE) && !defined(V_INT)
    s = prod_float_float(s, t);
#else
    s.a *= t.a;
#endif
  } else if (OP == VKML_RED_ALL) {
    s.a = (s.a != V(0) && t.a != V(0)) ? V(1) : V(0);
  } else if (OP == VKML_RED_ANY) {
    s.a = (s.a != V(0) || t.a != V(0)) ? V(1) : V(0);
  } else if (OP == VKML_RED_COUNT_NONZERO) {
    s.n += t.n;
  } else if (OP == VKML_RED_MAX || OP == VKML_RED_MIN) {
    if (t.n != 0 && (s.n == 0 || beats_value(t.a, s.a, OP == VKML_RED_MAX))) s.a = t.a;
    s.n |= t.n;
  } else if (OP == VKML_RED_AMINMAX) {
    if (t.n != 0) {
      if (s.n == 0 || beats_value(t.a, s.a, false)) s.a = t.a;
      if (s.n == 0 || beats_value(t.b, s.b, true)) s.b = t.b;
      s.n = 1;
    }
  } else if (kArg) {
    // The first occurrence wins ties, and the first NaN wins over everything.
    bool want_max = OP == VKML_RED_ARGMAX;
    if (t.n >= 0) {
      bool take = s.n < 0 || beats(t.a, s.a, want_max) ||
                  (!beats(s.a, t.a, want_max) && t.n < s.n);
      if (take) s = t;
    }
  } else if (kWelford) {
#ifndef V_INT
    if (t.n > 0) {
      if (s.n == 0) {
        s = t;
      } else {
        int64_t n = s.n + t.n;
        V delta = t.a - s.a;
        V tn = V(t.n), sn = V(s.n), total = V(n);
        s.a += delta * (tn / total);
        s.b += t.b + delta * delta * (sn * tn / total);
        s.n = n;
      }
    }
#endif
  } else if (OP == VKML_RED_NORM) {
    uint kind = g_norm_kind;
    if (kind == VKML_NORM_INF || kind == VKML_NORM_NEG_INF) {
      if (t.n != 0 && (s.n == 0 || beats(t.a, s.a, kind == VKML_NORM_INF))) s.a = t.a;
      s.n |= t.n;
    } else {
      s.a += t.a;
    }
  } else if (OP == VKML_RED_LOGSUMEXP) {
#ifndef V_INT
    // (a, b) = (running max m, sum of exp(x - m)); NaN sticks in a.
    if (is_nan(s.a) || is_nan(t.a)) {
      s.a = is_nan(s.a) ? s.a : t.a;
    } else if (t.a > s.a) {
      s.b = (isinf(s.a) ? V(0) : s.b * v_exp(s.a - t.a)) + t.b;
      s.a = t.a;
    } else if (!isinf(t.a)) {
      s.b += t.b * v_exp(t.a - s.a);
    } else if (t.a == s.a && t.a > V(0)) {
      s.b += t.b;  // both +inf: the result is +inf anyway
    }
#endif
  }
  return s;
}

// The state of one element x at reduced index r.
State element_state(V x, int64_t r) {
  State t;
  t.a = x;
  t.b = V(0);
  t.n = 1;
  if (OP == VKML_RED_NANSUM && is_nan(x)) t.a = V(0);
  if (OP == VKML_RED_ALL || OP == VKML_RED_ANY) t.a = nonzero(x) ? V(1) : V(0);
  if (OP == VKML_RED_COUNT_NONZERO) t.n = nonzero(x) ? 1 : 0;
  if (OP == VKML_RED_AMINMAX) t.b = x;
  if (kArg) t.n = r;
  if (kWelford) t.b = V(0);
  if (OP == VKML_RED_LOGSUMEXP) {
    t.b = V(1);
#ifndef V_INT
    if (isinf(x) && x < V(0)) t.b = V(0);  // exp(-inf) adds nothing
#endif
  }
  if (OP == VKML_RED_NORM) {
    uint kind = g_norm_kind;
    V ax = abs(x);
    if (kind == VKML_NORM_1 || kind == VKML_NORM_INF || kind == VKML_NORM_NEG_INF) t.a = ax;
    if (kind == VKML_NORM_2) t.a = ax * ax;
    if (kind == VKML_NORM_0) t.a = nonzero(x) ? V(1) : V(0);
#ifndef V_INT
    if (kind == VKML_NORM_P) t.a = v_pow(ax, g_p);
#endif
  }
  return t;
}

void write_outputs(State s, int64_t off0, int64_t off1) {
  V out0 = s.a, out1 = s.b;
  if (OP == VKML_RED_COUNT_NONZERO) out0 = V(s.n);
#ifndef V_INT
  if (OP == VKML_RED_MEAN) out0 = pc.p.count == 0 ? v_nan() : s.a / V(pc.p.count);
  if (kWelford) {
    V dof = max(V(0), V(s.n) - g_correction);
    V var = dof > V(0) ? s.b / dof : (s.b == V(0) || is_nan(s.b) ? v_nan() : v_pos_inf());
    if (s.n == 0) var = v_nan();
    // An inf element makes the variance undefined (inf - inf), as on the CPU; the running mean
    // is then inf or NaN, while the combined sum of squares may be a plain inf.
    if (is_nan(s.a) || isinf(s.a)) var = v_nan();
    out0 = OP == VKML_RED_STD ? v_sqrt(var) : var;
    out1 = s.n == 0 ? v_nan() : s.a;
  }
  if (OP == VKML_RED_NORM) {
    uint kind = g_norm_kind;
    if (kind == VKML_NORM_2) out0 = v_sqrt(s.a);
    if (kind == VKML_NORM_P) out0 = v_pow(s.a, V(1) / g_p);
  }
  if (OP == VKML_RED_LOGSUMEXP) {
    if (!is_nan(s.a) && !isinf(s.a)) out0 = s.a + v_log(s.b);
  }
#endif
  if (pc.p.out0 != 0ul) store_as(OUT0_DT, pc.p.out0, off0, out0);
  if (pc.p.out1 != 0ul) {
    if (kArg) {
      PI64(elem_addr(pc.p.out1, off1, 8)).v = s.n;
    } else {
      store_as(OUT1_DT, pc.p.out1, off1, out1);
    }
  }
}

shared V sh_a[VKML_REDUCE_WORKGROUP];
shared V sh_b[VKML_REDUCE_WORKGROUP];
shared int64_t sh_n[VKML_REDUCE_WORKGROUP];

void share(uint slot, State s) {
  sh_a[slot] = s.a;
  sh_b[slot] = s.b;
  sh_n[slot] = s.n;
}

State shared_state(uint slot) {
  State s;
  s.a = sh_a[slot];
  s.b = sh_b[slot];
  s.n = sh_n[slot];
  return s;
}

// Offset (in elements) of reduced index r from the output's base in src, for two or more
// reduced dims (one dim is a multiply, done inline by the caller).
int64_t reduced_offset(int64_t r) {
  uint nd = pc.p.red_ndim;
  int64_t off = 0;
  if (IDX64) {
    for (int d = int(nd) - 1; d >= 0; --d) {
      int64_t size = pc.p.red_sizes[d];
      off += (r % size) * pc.p.src_red_strides[d];
      r /= size;
    }
  } else {
    uint rem = uint(r);
    for (int d = int(nd) - 1; d >= 0; --d) {
      uint size = uint(pc.p.red_sizes[d]);
      off += int64_t(rem % size) * pc.p.src_red_strides[d];
      rem /= size;
    }
  }
  return off;
}

// Offsets of output o in src, out0 and out1.
void kept_offsets(int64_t o, out int64_t src_off, out int64_t off0, out int64_t off1) {
  src_off = 0;
  off0 = 0;
  off1 = 0;
  for (int d = int(pc.p.kept_ndim) - 1; d >= 0; --d) {
    int64_t size = pc.p.kept_sizes[d];
    int64_t c;
    if (IDX64) {
      c = o % size;
      o /= size;
    } else {
      c = int64_t(uint(o) % uint(size));
      o = int64_t(uint(o) / uint(size));
    }
    src_off += c * pc.p.src_kept_strides[d];
    off0 += c * pc.p.out0_kept_strides[d];
    off1 += c * pc.p.out1_kept_strides[d];
  }
}

#ifdef REDUCE_COLUMNS
// Column layout, direct or partial pass: thread (ox, ry) takes block ox of its workgroup's blocks
// of COL_W adjacent outputs along the innermost kept dim, and rows ry, ry + ry_count, ... of its
// split, four rows per round with every load issued before any combine; the block's rows then
// meet in the shared-memory tree one output at a time.
// The COL_W states are named (s0..s7) and every use is guarded by a comparison of constants:
// an array indexed in loops bounded by the COL_W specialization constant may stay in local memory,
// many times slower than registers (docs/design/gemm.md#named-accumulators). Built as its own
// variants (reduce_col<W>_*): the unrolled code would slow every other pipeline's compilation.
// REDUCE_COLUMNS is the variant's COL_W (2, 4 or 8): only that many states exist in its code.
#if REDUCE_COLUMNS == 2
#define COL_EACH(F) F(0) F(1)
#elif REDUCE_COLUMNS == 4
#define COL_EACH(F) F(0) F(1) F(2) F(3)
#else
#define COL_EACH(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7)
#endif
void reduce_columns(uint t, uint ox, uint ry, uint ry_count, uint ox_log2, int64_t split,
                    int64_t r_begin, int64_t r_end) {
  const uint es = dtype_bytes(IN_DT);
  const uint kd = pc.p.kept_ndim - 1u;
  const int64_t extent = pc.p.kept_sizes[kd];
  const int64_t per_line = (extent + int64_t(COL_W) - 1) / int64_t(COL_W);
  const int64_t nblocks = pc.p.nout / extent * per_line;
  const int64_t out0_step = pc.p.out0_kept_strides[kd], out1_step = pc.p.out1_kept_strides[kd];
  const uint64_t src = pc.p.src;
  const bool one_dim = pc.p.red_ndim <= 1u;
  const int64_t stride = pc.p.red_ndim == 1u ? pc.p.src_red_strides[0] : 0;
  const int64_t ry_step = int64_t(ry_count);
  for (uint og = gl_WorkGroupID.x; og < pc.p.out_groups; og += gl_NumWorkGroups.x) {
    int64_t b = (int64_t(og) << ox_log2) + int64_t(ox);
    bool valid = b < nblocks;
    #define COL_DECLARE(K) State s##K = init_state();
    COL_EACH(COL_DECLARE)
    int64_t o = 0, src_off = 0, off0 = 0, off1 = 0;
    uint cols = 0u;
    if (valid) {
      int64_t line = b / per_line;
      int64_t c0 = (b - line * per_line) * int64_t(COL_W);
      o = line * extent + c0;
      cols = uint(min(int64_t(COL_W), extent - c0));
      kept_offsets(o, src_off, off0, off1);
      // One reduced dim: the row address advances by a fixed step (no per-load multiply).
      const uint64_t u_step = uint64_t(ry_step * stride) * uint64_t(es);
      uint64_t row_addr = src + uint64_t(src_off + (r_begin + int64_t(ry)) * stride) * uint64_t(es);
      for (int64_t r = r_begin + int64_t(ry); r < r_end;
           r += 4 * ry_step, row_addr += 4ul * u_step) {
        V x0[8], x1[8], x2[8], x3[8];  // rows r + u * ry_step, u = 0..3
        #define COL_LOAD(U)                                                                   \
          {                                                                                   \
            const int64_t ru = r + int64_t(U) * ry_step;                                      \
            if (ru < r_end) {                                                                 \
              const uint64_t addr =                                                           \
                  one_dim ? row_addr + uint64_t(U) * u_step                                   \
                          : src + uint64_t(src_off + reduced_offset(ru)) * uint64_t(es);      \
              if (cols == COL_W && (addr & 15ul) == 0ul) {                                    \
                load_cols(IN_DT, addr, x##U);                                                 \
              } else { /* a partial block at the end of a line, or a row not 16-byte aligned */ \
                [[unroll]] for (uint k = 0u; k < 8u; ++k) {                                   \
                  x##U[k] = k < cols ? load_as(IN_DT, addr, int64_t(k)) : V(0);               \
                }                                                                             \
              }                                                                               \
            }                                                                                 \
          }
        COL_LOAD(0) COL_LOAD(1) COL_LOAD(2) COL_LOAD(3)
        #define COL_COMBINE_ONE(K)                                                            \
          if (COL_W > uint(K)) {                                                              \
            V xk = CMP_DT != IN_DT ? round_through(CMP_DT, xs[K]) : xs[K];                    \
            s##K = combine(s##K, element_state(xk, ru));                                      \
          }
        #define COL_COMBINE(U)                                                                \
          {                                                                                   \
            const int64_t ru = r + int64_t(U) * ry_step;                                      \
            if (ru < r_end) {                                                                 \
              V xs[8] = x##U;                                                                 \
              COL_EACH(COL_COMBINE_ONE)                                                       \
            }                                                                                 \
          }
        COL_COMBINE(0) COL_COMBINE(1) COL_COMBINE(2) COL_COMBINE(3)
      }
    }
    #define COL_TREE(K)                                                                       \
      if (COL_W > uint(K) && ry_count > 1u) {                                                 \
        const uint partner_step = 1u << ox_log2;                                              \
        share(t, s##K);                                                                       \
        barrier();                                                                            \
        for (uint step = ry_count >> 1; step > 0u; step >>= 1) {                              \
          if (ry < step) {                                                                    \
            s##K = combine(s##K, shared_state(t + step * partner_step));                      \
            share(t, s##K);                                                                   \
          }                                                                                   \
          barrier();                                                                          \
        }                                                                                     \
      }
    COL_EACH(COL_TREE)
    #define COL_WRITE(K)                                                                      \
      if (COL_W > uint(K) && ry == 0u && valid && uint(K) < cols) {                           \
        if (pc.p.stage == VKML_RED_STAGE_PARTIAL) {                                           \
          uint64_t slot = uint64_t(o + int64_t(K)) * uint64_t(pc.p.splits) + uint64_t(split); \
          PState(pc.p.partial + slot * uint64_t(STATE_BYTES)).s = s##K;                       \
        } else {                                                                              \
          write_outputs(s##K, off0 + int64_t(K) * out0_step, off1 + int64_t(K) * out1_step);  \
        }                                                                                     \
      }
    COL_EACH(COL_WRITE)
  }
}

#endif  // REDUCE_COLUMNS

void main() {
  g_norm_kind = pc.p.norm_kind;
#ifdef V_DOUBLE
  g_p = packDouble2x32(uvec2(uint(pc.p.p_bits), uint(pc.p.p_bits >> 32)));
  g_correction = packDouble2x32(uvec2(uint(pc.p.correction_bits), uint(pc.p.correction_bits >> 32)));
#else
  g_p = V(pc.p.p_f32);
  g_correction = V(pc.p.correction_f32);
#endif
  const uint wg = gl_WorkGroupSize.x;
  uint t = gl_LocalInvocationID.x;
  uint ox_log2 = pc.p.ox_log2;
  uint ry_count = wg >> ox_log2;
  uint ox, ry;
  if (pc.p.ox_fast != 0u) {
    ox = t & ((1u << ox_log2) - 1u);
    ry = t >> ox_log2;
  } else {
    ry = t & (ry_count - 1u);
    ox = t / ry_count;
  }
  uint stage = pc.p.stage;
  int64_t nout = pc.p.nout;
  int64_t nred = pc.p.nred;
  int64_t split = int64_t(gl_WorkGroupID.y);
  int64_t r_begin = stage == VKML_RED_STAGE_FINAL ? 0 : split * pc.p.chunk;
  int64_t r_end = stage == VKML_RED_STAGE_FINAL ? nred : min(nred, r_begin + pc.p.chunk);
#ifdef REDUCE_COLUMNS  // the direct or partial pass of the column layout (its FINAL is the plain one)
  reduce_columns(t, ox, ry, ry_count, ox_log2, split, r_begin, r_end);
  return;
#endif

  for (uint og = gl_WorkGroupID.x; og < pc.p.out_groups; og += gl_NumWorkGroups.x) {
    int64_t o = (int64_t(og) << ox_log2) + int64_t(ox);
    bool valid = o < nout;
    State s = init_state();
    int64_t src_off = 0, off0 = 0, off1 = 0;
    if (valid) {
      kept_offsets(o, src_off, off0, off1);
      if (stage == VKML_RED_STAGE_FINAL) {
        uint64_t states = pc.p.partial + uint64_t(o * nred) * uint64_t(STATE_BYTES);
        for (int64_t r = int64_t(ry); r < r_end; r += int64_t(ry_count)) {
          s = combine(s, PState(states + uint64_t(r) * uint64_t(STATE_BYTES)).s);
        }
      } else {
        // Parameters used per element live in registers, not behind the params pointer.
        uint64_t src = pc.p.src;
        bool one_dim = pc.p.red_ndim <= 1u;
        int64_t stride = pc.p.red_ndim == 1u ? pc.p.src_red_strides[0] : 0;
        int64_t r_first = r_begin;
        if (VEC_W > 0u) {
          // Whole vectors of the chunk: thread ry takes vectors ry, ry + ry_count, ... two at a
          // time into two states (two loads in flight), combined in a fixed order at the end.
          const int64_t w = int64_t(VEC_W), step = int64_t(ry_count) * w;
          const int64_t v_end = r_begin + ((r_end - r_begin) / w) * w;
          const uint64_t row = src + uint64_t(src_off) * uint64_t(16u / VEC_W);
          State s2 = init_state();
          int64_t r = r_begin + int64_t(ry) * w;
          for (; r < v_end; r += 2 * step) {
            bool second = r + step < v_end;
            V xa[8], xb[8];
            load_vec(IN_DT, row + uint64_t(r) * uint64_t(16u / VEC_W), xa);
            if (second) load_vec(IN_DT, row + uint64_t(r + step) * uint64_t(16u / VEC_W), xb);
            for (uint k = 0u; k < VEC_W; ++k) {
              V x = CMP_DT != IN_DT ? round_through(CMP_DT, xa[k]) : xa[k];
              s = combine(s, element_state(x, r + int64_t(k)));
            }
            if (second) {
              for (uint k = 0u; k < VEC_W; ++k) {
                V x = CMP_DT != IN_DT ? round_through(CMP_DT, xb[k]) : xb[k];
                s2 = combine(s2, element_state(x, r + step + int64_t(k)));
              }
            }
          }
          s = combine(s, s2);
          r_first = v_end;  // the last few elements: the loop below
        }
        // Four elements per iteration, loaded before any is combined (four loads in flight),
        // into four states combined in a fixed order at the end.
        State more[3];
        for (int u = 0; u < 3; ++u) more[u] = init_state();
        const int64_t ry_step = int64_t(ry_count);
        for (int64_t r = r_first + int64_t(ry); r < r_end; r += 4 * ry_step) {
          V x[4];
          for (int u = 0; u < 4; ++u) {
            int64_t ru = r + int64_t(u) * ry_step;
            if (ru < r_end) {
              int64_t off = src_off + (one_dim ? ru * stride : reduced_offset(ru));
              x[u] = load_as(IN_DT, src, off);
            }
          }
          for (int u = 0; u < 4; ++u) {
            int64_t ru = r + int64_t(u) * ry_step;
            if (ru < r_end) {
              V xu = CMP_DT != IN_DT ? round_through(CMP_DT, x[u]) : x[u];
              if (u == 0) {
                s = combine(s, element_state(xu, ru));
              } else {
                more[u - 1] = combine(more[u - 1], element_state(xu, ru));
              }
            }
          }
        }
        for (int u = 0; u < 3; ++u) s = combine(s, more[u]);
      }
    }
    if (ry_count > 1u) {
      share(t, s);
      barrier();
      uint partner_step = pc.p.ox_fast != 0u ? (1u << ox_log2) : 1u;
      for (uint step = ry_count >> 1; step > 0u; step >>= 1) {
        if (ry < step) {
          s = combine(s, shared_state(t + step * partner_step));
          share(t, s);
        }
        barrier();
      }
    }
    if (ry == 0u && valid) {
      if (stage == VKML_RED_STAGE_PARTIAL) {
        uint64_t slot = uint64_t(o) * uint64_t(pc.p.splits) + uint64_t(split);
        PState(pc.p.partial + slot * uint64_t(STATE_BYTES)).s = s;
      } else {
        write_outputs(s, off0, off1);
      }
    }
  }
}
