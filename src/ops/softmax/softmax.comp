#version 460
#extension GL_GOOGLE_include_directive : require
// Softmax / log_softmax along one dimension, forward (a = x, c = y) or backward with
// SOFTMAX_BACKWARD (a = dy, b = y, c = dx). Numerically stable: exp(x - max(x)).
// SOFTMAX_THREAD: one invocation per row (short rows); otherwise one workgroup per row with
// workgroup reductions.
#include "vkml_common.glsl"
#include "softmax_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { SoftmaxParams p; } pc;

#include "nn_common.glsl"

#ifdef SOFTMAX_THREAD
#define LANE 0
#define LANES 1
ACC row_max(ACC v) { return v; }
ACC row_sum(ACC v) { return v; }
#define ROW_START (nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x))
#define ROW_STEP (nn_group_count() * int64_t(gl_WorkGroupSize.x))
#else
#define LANE int64_t(gl_LocalInvocationID.x)
#define LANES int64_t(gl_WorkGroupSize.x)
ACC row_max(ACC v) { return nn_wg_max(v); }
ACC row_sum(ACC v) { return nn_wg_sum(v); }
#define ROW_START nn_group_id()
#define ROW_STEP nn_group_count()
#endif

void main() {
  SoftmaxParams p = pc.p;
  const int64_t n = p.dim_size;
  for (int64_t row = ROW_START; row < p.rows; row += ROW_STEP) {
    int64_t oa = 0, ob = 0, oc = 0, rem = row;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      int64_t i = rem % p.sizes[d];
      rem /= p.sizes[d];
      oa += i * p.a_strides[d];
      ob += i * p.b_strides[d];
      oc += i * p.c_strides[d];
    }
#ifndef SOFTMAX_BACKWARD
    ACC m = -ACC(NN_INF);
    for (int64_t j = LANE; j < n; j += LANES) {
      m = max(m, nn_load(p.a, oa + j * p.a_dim_stride, p.a_dtype));
    }
    m = row_max(m);
    ACC s = ACC(0);
    for (int64_t j = LANE; j < n; j += LANES) {
      s += nn_exp(nn_load(p.a, oa + j * p.a_dim_stride, p.a_dtype) - m);
    }
    s = row_sum(s);
    if (p.log_softmax != 0u) {
      ACC log_sum = nn_log(s);  // subtracted after the max: m + log_sum would round at large m
      for (int64_t j = LANE; j < n; j += LANES) {
        ACC x = nn_load(p.a, oa + j * p.a_dim_stride, p.a_dtype);
        // precise: NVIDIA's compiler otherwise hoists m + log_sum out of the loop, which rounds.
        precise ACC y = (x - m) - log_sum;
        nn_store(p.c, oc + j * p.c_dim_stride, p.c_dtype, y);
      }
    } else {
      ACC inv = ACC(1) / s;
      for (int64_t j = LANE; j < n; j += LANES) {
        ACC x = nn_load(p.a, oa + j * p.a_dim_stride, p.a_dtype);
        nn_store(p.c, oc + j * p.c_dim_stride, p.c_dtype, nn_exp(x - m) * inv);
      }
    }
#else
    // softmax: dx = y * (dy - sum(dy * y)); log_softmax: dx = dy - exp(y) * sum(dy).
    bool lg = p.log_softmax != 0u;
    ACC s = ACC(0);
    for (int64_t j = LANE; j < n; j += LANES) {
      ACC g = nn_load(p.a, oa + j * p.a_dim_stride, p.a_dtype);
      s += lg ? g : g * nn_load(p.b, ob + j * p.b_dim_stride, p.b_dtype);
    }
    s = row_sum(s);
    for (int64_t j = LANE; j < n; j += LANES) {
      ACC g = nn_load(p.a, oa + j * p.a_dim_stride, p.a_dtype);
      ACC y = nn_load(p.b, ob + j * p.b_dim_stride, p.b_dtype);
      nn_store(p.c, oc + j * p.c_dim_stride, p.c_dtype, lg ? g - nn_exp(y) * s : y * (g - s));
    }
#endif
  }
}
