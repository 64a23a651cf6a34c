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

// Pairs compare by key, then by original position: all pairs differ, so the result is stable.
bool pair_greater(uint64_t ka, uint ia, uint64_t kb, uint ib) {
  return ka > kb || (ka == kb && ia > ib);
}
