#version 460
#extension GL_GOOGLE_include_directive : require
// embedding_bag forward: one invocation per (bag, feature) reduces the bag's weight rows (sum,
// mean or max, per_sample_weights, padding_idx skipped) in index order, as the CPU does; the
// feature-0 invocation of each bag also writes its offset2bag entries and bag size.
#include "vkml_common.glsl"
#include "embedding_bag_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { EmbeddingBagParams p; } pc;

#include "nn_common.glsl"

void report_bad_index(int64_t value) {
  uint64_t rec = pc.p.error_flag;
  if (rec == 0ul) return;
  if (atomicCompSwap(PU32(rec).v, 0u, 1u) == 0u) {
    PU32(rec + 4ul).v = 0u;
    PI64(rec + 8ul).v = value;
  }
}

void main() {
  EmbeddingBagParams p = pc.p;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t d = e % p.dim, b = e / p.dim;
    int64_t start = nn_load_index(p.offsets, b * p.offset_stride, p.index_dtype);
    int64_t end = b + 1 < p.num_offsets
                      ? nn_load_index(p.offsets, (b + 1) * p.offset_stride, p.index_dtype)
                      : p.num_indices;
    start = clamp(start, 0l, p.num_indices);
    end = clamp(end, start, p.num_indices);
    ACC acc = ACC(0);
    int64_t count = 0, arg = -1;
    for (int64_t i = start; i < end; ++i) {
      int64_t idx = nn_load_index(p.indices, i * p.index_stride, p.index_dtype);
      if (d == 0) PI64(p.offset2bag + uint64_t(i) * 8ul).v = b;
      if (idx == p.padding_idx) continue;
      if (idx < 0 || idx >= p.num_weights) {
        report_bad_index(idx);
        continue;
      }
      ACC v = nn_load(p.weight, idx * p.weight_strides[0] + d * p.weight_strides[1], p.weight_dtype);
      if (p.per_sample_weights != 0ul) {
        v *= nn_load(p.per_sample_weights, i * p.psw_stride, p.weight_dtype);
      }
      if (p.mode == EMBEDDING_BAG_MAX) {
        // The first row wins until a strictly greater one comes (CPU order and NaN handling).
        if (count == 0 || v > acc) {
          acc = v;
          arg = idx;
        }
      } else {
        acc += v;
      }
      ++count;
    }
    if (p.mode == EMBEDDING_BAG_MEAN && count > 0) acc /= ACC(count);
    nn_store(p.result, b * p.output_strides[0] + d * p.output_strides[1], p.output_dtype, acc);
    if (p.max_indices != 0ul) {
      PI64(p.max_indices + uint64_t(b * p.max_index_strides[0] + d * p.max_index_strides[1]) * 8ul).v = arg;
    }
    if (d == 0) PI64(p.bag_size + uint64_t(b) * 8ul).v = count;
  }
}
