// Shared by the sort shaders: parameters and line addressing.
#include "vkml_common.glsl"
#include "sort_params.h"

layout(push_constant) uniform Push { SortParams p; } pc;

// Element offsets (in elements) of line `row` in the input and both outputs.
void line_offsets(SortParams p, int64_t row, out int64_t in_off, out int64_t val_off,
                  out int64_t idx_off) {
  in_off = 0;
  val_off = 0;
  idx_off = 0;
  int64_t rem = row;
  for (int d = int(p.ndim) - 1; d >= 0; --d) {
    int64_t c = rem % p.sizes[d];
    rem /= p.sizes[d];
    in_off += c * p.in_strides[d];
    val_off += c * p.val_strides[d];
    idx_off += c * p.idx_strides[d];
  }
}

// Line and position of flat index t over lines of n: no 64-bit division (slow on CPU devices,
// where it is not vectorised) when there is one line or the indices fit 32 bits.
void split_index(int64_t t, int64_t n, int64_t rows, out int64_t row, out int64_t pos) {
  if (rows == 1) {
    row = 0;
    pos = t;
  } else if (rows * n <= 0x7FFFFFFFl) {
    uint q = uint(t) / uint(n);
    row = int64_t(q);
    pos = int64_t(uint(t) - q * uint(n));
  } else {
    row = t / n;
    pos = t - row * n;
  }
}

// Pairs compare by key, then by original position: all pairs differ, so the result is stable.
bool pair_greater(uint64_t ka, uint ia, uint64_t kb, uint ib) {
  return ka > kb || (ka == kb && ia > ib);
}

// Radix sort: pass q moves nothing when every line's digit q is constant, as its scan found
// (skips[q]) or its key range showed beforehand (skips[8 + q]).
bool radix_skipped(SortParams p, uint pass) {
  return PU32(p.skips + uint64_t(pass) * 4ul).v == uint(p.rows) ||
         PU32(p.skips + uint64_t(8u + pass) * 4ul).v == uint(p.rows);
}

// Which buffer holds the pairs before pass `pass`: every moving pass swapped the buffers.
uint radix_parity(SortParams p, uint pass) {
  uint flips = 0u;
  for (uint q = 0u; q < pass; ++q) {
    if (!radix_skipped(p, q)) flips ^= 1u;
  }
  return flips;
}
