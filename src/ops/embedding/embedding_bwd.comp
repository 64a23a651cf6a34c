#version 460
#extension GL_GOOGLE_include_directive : require
// embedding_dense_backward from stably sorted indices: grad_weight[key] is the sum of the grad
// rows whose index is key, added in position order (as the index kernel's serial walk adds them,
// with the same rounding after every update), by one thread per (run of equal keys, column).
// Threads whose sorted position does not start a run return at once. Neighbouring threads take
// neighbouring columns, so the grad rows are read whole.
#include "vkml_common.glsl"
#include "embedding_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { EmbeddingBwdParams p; } pc;

#include "index_types.glsl"  // index family; DST_F32, DST_F16, DST_BF16 or DST_F64 builds

int64_t key_at(int64_t i) {
  if ((pc.p.flags & VKML_EMBEDDING_KEYS_I32) != 0u) return int64_t(PI32(pc.p.keys + i * 4).v);
  return PI64(pc.p.keys + i * 8).v;
}

void main() {
  const int64_t n = pc.p.n, columns = pc.p.columns;
  const bool skip = (pc.p.flags & VKML_EMBEDDING_SKIP) != 0u;
  for (int64_t t = int64_t(gl_GlobalInvocationID.x); t < n * columns; t += VKML_GRID_STRIDE) {
    const int64_t i = t / columns, c = t - i * columns;
    const int64_t key = key_at(i);
    if (i > 0 && key_at(i - 1) == key) continue;  // inside a run: its first thread sums it
    // Bad indices were reported by the forward pass; they are never dereferenced here.
    if (key < 0 || key >= pc.p.rows || (skip && key == pc.p.padding_idx)) continue;
    VAL acc = VAL(0);
    for (int64_t j = i; j < n && key_at(j) == key; ++j) {
      const int64_t pos = PI64(pc.p.positions + j * 8).v;
      acc = round_val(acc + load_val(pc.p.grad + (pos * pc.p.grad_row + c * pc.p.grad_col) *
                                                     ELEM_BYTES));
    }
    store_dst(pc.p.grad_weight + (key * pc.p.weight_row + c * pc.p.weight_col) * ELEM_BYTES, acc);
  }
}
