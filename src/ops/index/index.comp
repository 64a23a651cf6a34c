#version 460
#extension GL_GOOGLE_include_directive : require
// Gather, scatter and indexed reductions over strided tensors (see index_params.h).
// Variants: DST_* names the dtype of data and values. Copies move raw bits; reductions compute
// in VAL (float for 16-bit floats, like PyTorch's opmath; a (real, imaginary) vec2 for complex64)
// and round once per update.
#include "vkml_common.glsl"
#include "index_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { IndexParams p; } pc;

#include "index_types.glsl"

// Raw element moves: copies never round or canonicalise NaNs.
void copy_raw(uint64_t dst, uint64_t src) {
#if ELEM_BYTES == 1
  PU8(dst).v = PU8(src).v;
#elif ELEM_BYTES == 2
  PU16(dst).v = PU16(src).v;
#elif ELEM_BYTES == 4
  PU32(dst).v = PU32(src).v;
#else
  PU64(dst).v = PU64(src).v;
#endif
}

void store_bits(uint64_t dst, uint64_t bits) {
#if ELEM_BYTES == 1
  PU8(dst).v = uint8_t(bits);
#elif ELEM_BYTES == 2
  PU16(dst).v = uint16_t(bits);
#elif ELEM_BYTES == 4
  PU32(dst).v = uint(bits);
#else
  PU64(dst).v = bits;
#endif
}

#if defined(KIND_COMPLEX)
// Complex products and quotients with c10::complex's formulas (the CPU's results); `precise`
// keeps the driver from fusing a product into the sum, which the CPU does not do.
VAL cmul(VAL a, VAL b) {
  precise float re = a.x * b.x - a.y * b.y;
  precise float im = a.x * b.y + a.y * b.x;
  return VAL(re, im);
}
VAL cdiv(VAL a, VAL b) {
  if (abs(b.x) >= abs(b.y)) {
    if (b.x == 0.0 && b.y == 0.0) return VAL(a.x / abs(b.x), a.y / abs(b.y));
    float rat = b.y / b.x, scl = 1.0 / (b.x + b.y * rat);
    return VAL((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }
  float rat = b.x / b.y, scl = 1.0 / (b.y + b.x * rat);
  return VAL((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}

// Sums, products and quotients only: complex numbers have no order, so the host refuses
// max/min.
VAL combine(uint mode, VAL cur, VAL v, VAL alpha) {
  bool scale = (pc.p.flags & (VKML_INDEX_SCALE_BY_ALPHA | VKML_INDEX_SCALE_BY_COUNT)) != 0u;
  if (mode == VKML_INDEX_SUM) return cur + (scale ? cmul(alpha, v) : v);
  if (mode == VKML_INDEX_PROD) return cmul(cur, v);
  if (mode == VKML_INDEX_DIV) return v == VAL(0.0) ? cur : cdiv(cur, v);
  return cur;
}
#else
#ifdef KIND_FLOAT
bool is_nan(VAL v) { return isnan(v); }
#else
bool is_nan(VAL v) { return false; }
#endif

VAL combine(uint mode, VAL cur, VAL v, VAL alpha) {
  if (mode == VKML_INDEX_SUM) return cur + alpha * v;
  if (mode == VKML_INDEX_DIV) {
    if (v == VAL(0)) return cur;
#if defined(SRC_KIND_INT)
    // floor, as div_(rounding_mode='floor'): one step down when the remainder is nonzero and
    // of the divisor's opposite sign. (lavapipe compiles a form comparing the signs of cur and v
    // into plain truncation in the int32 variant.)
    VAL q = cur / v;
    VAL r = cur - q * v;
    if (r != VAL(0) && ((r < VAL(0)) != (v < VAL(0)))) q -= VAL(1);
    return q;
#else
    return cur / v;
#endif
  }
  if (mode == VKML_INDEX_PROD) return cur * v;
  // max/min as std::max/std::min with NaN from either side propagating (PyTorch's scatter).
  if (is_nan(cur)) return cur;
  if (is_nan(v)) return v;
  if (mode == VKML_INDEX_MAX) return v > cur ? v : cur;
  return v < cur ? v : cur;
}
#endif

void report_bad_index(uint k, int64_t value) {
  uint64_t rec = pc.p.error_flag;
  if (rec == 0ul) return;
  if (atomicCompSwap(PU32(rec).v, 0u, 1u) == 0u) {
    PU32(rec + 4ul).v = k;
    PI64(rec + 8ul).v = value;
  }
}

int64_t load_index(uint k, int64_t off) {
  uint64_t a = pc.p.index_addr[k];
  if ((pc.p.index_i32_mask & (1u << k)) != 0u) return int64_t(PI32(a + uint64_t(off) * 4ul).v);
  return PI64(a + uint64_t(off) * 8ul).v;
}

// Data offset of index value idx of operand k: idx * stride, or a flat position's offset.
int64_t scaled_index(uint k, int64_t idx) {
  if (k != 0u || pc.p.flat_ndim == 0u) return idx * pc.p.index_stride[k];
  int64_t off = 0, rem = idx;
  for (int d = int(pc.p.flat_ndim) - 1; d >= 0; --d) {
    off += (rem % pc.p.flat_sizes[d]) * pc.p.flat_strides[d];
    rem /= pc.p.flat_sizes[d];
  }
  return off;
}

// Element offsets of parallel position i (dims [0, npar)) and serial position s (the rest).
void walk(int64_t pos, int lo, int hi, inout int64_t doff, inout int64_t voff,
          inout int64_t ioff[VKML_INDEX_MAX_INDICES], uint nidx) {
  int64_t rem = pos;
  for (int d = hi - 1; d >= lo; --d) {
    int64_t c = rem % pc.p.sizes[d];
    rem /= pc.p.sizes[d];
    doff += c * pc.p.data_strides[d];
    voff += c * pc.p.value_strides[d];
    for (uint k = 0u; k < nidx; ++k) ioff[k] += c * pc.p.index_strides[k * VKML_INDEX_MAX_DIMS + d];
  }
}

void main() {
  const uint nd = pc.p.ndim, npar = pc.p.nparallel, nidx = pc.p.nindex, mode = pc.p.mode;
  const uint flags = pc.p.flags;
  const bool allow_negative = (flags & VKML_INDEX_ALLOW_NEGATIVE) != 0u;
  const bool value_scalar = (flags & VKML_INDEX_VALUE_SCALAR) != 0u;
  const bool owner_mode = (flags & VKML_INDEX_OWNER) != 0u;
  const int64_t serial = pc.p.numel_serial, owners = pc.p.owners;
#if defined(SRC_KIND_INT)
  const VAL alpha0 = pc.p.alpha_i;
#elif defined(DST_C64)
  const VAL alpha0 = bits_val(pc.p.alpha_bits);  // (real, imaginary) floats
#elif defined(DST_F64)
  const VAL alpha0 = packDouble2x32(uvec2(uint(pc.p.alpha_bits), uint(pc.p.alpha_bits >> 32)));
#else
  const VAL alpha0 = pc.p.alpha_f;
#endif
  const int64_t total = pc.p.numel_parallel * owners;
  for (int64_t t = int64_t(gl_GlobalInvocationID.x); t < total; t += VKML_GRID_STRIDE) {
    int64_t dbase = 0, vbase = 0;
    int64_t ibase[VKML_INDEX_MAX_INDICES];
    for (uint k = 0u; k < nidx; ++k) ibase[k] = 0;
    walk(t / owners, 0, int(npar), dbase, vbase, ibase, nidx);
    // Owner mode: the index values this thread owns (digits of t % owners over the limits).
    int64_t own[VKML_INDEX_MAX_INDICES];
    int64_t dest = dbase;
    if (owner_mode) {
      int64_t rem = t % owners;
      for (int k = int(nidx) - 1; k >= 0; --k) {
        own[k] = rem % pc.p.index_limit[k];
        rem /= pc.p.index_limit[k];
        dest += scaled_index(k, own[k]);
      }
    }
    bool touched = false;
    VAL acc = VAL(0);
    // Serial part: one thread visits these positions in order (deterministic accumulation).
    for (int64_t s = 0; s < serial; ++s) {
      int64_t doff = dbase, voff = vbase;
      int64_t ioff[VKML_INDEX_MAX_INDICES];
      for (uint k = 0u; k < nidx; ++k) ioff[k] = ibase[k];
      walk(s, int(npar), int(nd), doff, voff, ioff, nidx);
      bool ok = true, mine = true;
      int64_t first = 0;
      for (uint k = 0u; k < nidx && ok; ++k) {
        int64_t raw = load_index(k, ioff[k]);
        int64_t lim = pc.p.index_limit[k];
        int64_t idx = (allow_negative && raw < 0) ? raw + lim : raw;
        if (idx < 0 || idx >= lim) {
          report_bad_index(k, raw);
          ok = false;
        }
        if (k == 0u) first = idx;
        if (owner_mode && idx != own[k]) mine = false;
        doff += scaled_index(k, idx);
      }
      uint64_t vaddr = pc.p.values + uint64_t(voff * ELEM_BYTES);
      if (!ok) {
        // The address above was never dereferenced; a gather leaves zero behind.
        if (mode == VKML_INDEX_GATHER) store_bits(vaddr, 0ul);
        continue;
      }
      if (!mine) continue;
      if ((flags & VKML_INDEX_SKIP) != 0u && first == pc.p.skip_index) continue;
      uint64_t daddr = pc.p.data + uint64_t(doff * ELEM_BYTES);
      if (mode == VKML_INDEX_GATHER) {
        copy_raw(vaddr, daddr);
      } else if (mode == VKML_INDEX_ASSIGN) {
        if (value_scalar) {
          store_bits(daddr, pc.p.value_bits);
        } else {
          copy_raw(daddr, vaddr);
        }
      } else {
        VAL v = value_scalar ? bits_val(pc.p.value_bits) : load_val(vaddr);
        VAL alpha = alpha0;
        if ((flags & VKML_INDEX_SCALE_BY_COUNT) != 0u) {
          int64_t n = PI64(pc.p.counts + uint64_t(first) * 8ul).v;
#if defined(KIND_COMPLEX)
          alpha = VAL(1.0 / float(n), 0.0);
#else
          alpha = VAL(1) / VAL(n);  // floats only: the bridge rejects integer gradients
#endif
        }
        if (owner_mode) {
          // Fold in a register, rounding to the dtype after every update like the plain path.
          if (!touched) acc = load_val(daddr);
          touched = true;
          acc = round_val(combine(mode, acc, v, alpha));
        } else {
          store_dst(daddr, combine(mode, load_val(daddr), v, alpha));
        }
      }
    }
    if (touched) store_dst(pc.p.data + uint64_t(dest * ELEM_BYTES), acc);
  }
}
