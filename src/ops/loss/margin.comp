#version 460
#extension GL_GOOGLE_include_directive : require
// Margin losses with PyTorch's CPU formulas (all divided by the class count C):
//   multi_margin: sum_{d != y} w[y] max(0, margin - x[y] + x[d])^p;
//   multilabel_margin: sum_{j in targets} sum_{d not a target} max(0, 1 - x[j] + x[d]), the
//   targets being the labels before the first negative one (repeats count again).
// MARGIN_FORWARD: one invocation per frame (per-frame output) or one workgroup summing all frames
// (mean divides by the frame count); multilabel also writes is_target. Otherwise backward, one
// invocation per grad_input element. A target class out of range (multilabel: any label outside
// [-1, C), as the CPU checks) gives NaN and is recorded in error_flag for the host to raise.
#include "vkml_common.glsl"
#include "margin_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { MarginParams p; } pc;

#include "nn_common.glsl"
#include "loss_report.glsl"

ACC margin_value(MarginParams p) {
#ifdef VKML_USE_FP64
  return packDouble2x32(uvec2(uint(p.margin_bits), uint(p.margin_bits >> 32)));
#else
  return p.margin_f;
#endif
}

ACC x_at(MarginParams p, int64_t f, int64_t c) {
  return nn_load(p.x, f * p.in_strides[0] + c * p.in_strides[1], p.dtype_in);
}
int64_t label_at(MarginParams p, int64_t f, int64_t j) {
  return nn_load_index(p.target, f * p.target_strides[0] + j * p.target_strides[1],
                       p.dtype_target);
}
int64_t is_target_off(MarginParams p, int64_t f, int64_t c) {
  return f * p.is_target_strides[0] + c * p.is_target_strides[1];
}
bool is_target(MarginParams p, int64_t f, int64_t c) {
  return nn_load(p.is_target, is_target_off(p, f, c), p.dtype_is_target) != ACC(0);
}
// Labels of frame f before the first negative one (C at most).
int64_t label_count(MarginParams p, int64_t f) {
  int64_t n = 0;
  while (n < p.classes && label_at(p, f, n) >= 0) ++n;
  return n;
}
bool labels_in_range(MarginParams p, int64_t f, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    if (label_at(p, f, j) >= p.classes) return false;
  }
  return true;
}

#ifdef MARGIN_FORWARD
ACC frame_loss(MarginParams p, int64_t f) {
  const int64_t C = p.classes;
  ACC sum = ACC(0);
  if (p.kind == MARGIN_MULTI) {
    int64_t y = label_at(p, f, 0);
    if (y < 0 || y >= C) {
      loss_report_bad_target(p.error_flag, 0u, y);
      return ACC(NN_NAN);
    }
    ACC xy = x_at(p, f, y), m = margin_value(p);
    ACC w = p.weight != 0ul ? nn_load(p.weight, y * p.weight_stride, p.dtype_weight) : ACC(1);
    for (int64_t d = 0; d < C; ++d) {
      if (d == y) continue;
      ACC z = m - xy + x_at(p, f, d);
      if (z > ACC(0)) sum += (p.p == 1u ? z : z * z) * w;
    }
    return sum / ACC(C);
  }
  int64_t n = label_count(p, f);
  for (int64_t c = 0; c < C; ++c) {
    nn_store(p.is_target, is_target_off(p, f, c), p.dtype_is_target, ACC(0));
    if (p.error_flag != 0ul) {
      int64_t l = label_at(p, f, c);
      if (l < -1 || l >= C) loss_report_bad_target(p.error_flag, 0u, l);
    }
  }
  if (!labels_in_range(p, f, n)) return ACC(NN_NAN);
  for (int64_t j = 0; j < n; ++j) {
    nn_store(p.is_target, is_target_off(p, f, label_at(p, f, j)), p.dtype_is_target, ACC(1));
  }
  for (int64_t j = 0; j < n; ++j) {
    ACC xt = x_at(p, f, label_at(p, f, j));
    for (int64_t d = 0; d < C; ++d) {
      if (is_target(p, f, d)) continue;
      ACC z = ACC(1) - xt + x_at(p, f, d);
      if (z > ACC(0)) sum += z;
    }
  }
  return sum / ACC(C);
}
#endif

void main() {
  MarginParams p = pc.p;
  const int64_t lane = int64_t(gl_LocalInvocationID.x), lanes = int64_t(gl_WorkGroupSize.x);
  const int64_t start = nn_group_id() * lanes + lane, step = nn_group_count() * lanes;
#ifdef MARGIN_FORWARD
  if (p.reduction == 0u) {
    for (int64_t f = start; f < p.frames; f += step) {
      nn_store(p.loss, f * p.out_stride, p.dtype_out, frame_loss(p, f));
    }
    return;
  }
  ACC sum = ACC(0);
  for (int64_t f = lane; f < p.frames; f += lanes) sum += frame_loss(p, f);
  sum = nn_wg_sum(sum);
  if (lane == 0) {
    nn_store(p.loss, 0, p.dtype_out, p.reduction == 1u ? sum / ACC(p.frames) : sum);
  }
#else
  const int64_t C = p.classes;
  ACC g = ACC(1) / ACC(p.reduction == 1u ? p.frames * C : C);
  for (int64_t e = start; e < p.frames * C; e += step) {
    int64_t f = e / C, c = e % C;
    ACC v = ACC(0);
    if (p.kind == MARGIN_MULTI) {
      int64_t y = label_at(p, f, 0);
      if (y < 0 || y >= C) {
        if (c == 0) loss_report_bad_target(p.error_flag, 0u, y);
        v = ACC(NN_NAN);
      } else {
        ACC xy = x_at(p, f, y), m = margin_value(p);
        ACC w = p.weight != 0ul ? nn_load(p.weight, y * p.weight_stride, p.dtype_weight) : ACC(1);
        // d(loss)/dx[d] = g' for each violated d; x[y] collects minus their sum.
        for (int64_t d = 0; d < C; ++d) {
          if (d == y || (c != y && d != c)) continue;
          ACC z = m - xy + x_at(p, f, d);
          if (z > ACC(0)) {
            ACC h = (p.p == 1u ? g : ACC(2) * g * z) * w;
            v += c == y ? -h : h;
          }
        }
      }
    } else {
      int64_t n = label_count(p, f);
      if (p.error_flag != 0ul) {  // each element checks the label in its own column
        int64_t l = label_at(p, f, c);
        if (l < -1 || l >= C) loss_report_bad_target(p.error_flag, 0u, l);
      }
      if (!labels_in_range(p, f, n)) {
        v = ACC(NN_NAN);
      } else if (is_target(p, f, c)) {
        // Once per listing of c among the targets, minus g per violated non-target d.
        ACC xc = x_at(p, f, c);
        int64_t listed = 0, violated = 0;
        for (int64_t j = 0; j < n; ++j) listed += label_at(p, f, j) == c ? 1 : 0;
        for (int64_t d = 0; d < C; ++d) {
          if (!is_target(p, f, d) && ACC(1) - xc + x_at(p, f, d) > ACC(0)) ++violated;
        }
        v = -g * ACC(listed * violated);
      } else {
        ACC xc = x_at(p, f, c);
        int64_t violated = 0;
        for (int64_t j = 0; j < n; ++j) {
          if (ACC(1) - x_at(p, f, label_at(p, f, j)) + xc > ACC(0)) ++violated;
        }
        v = g * ACC(violated);
      }
    }
    v *= nn_load(p.grad_out, f * p.grad_out_stride, p.dtype_grad_out);
    nn_store(p.grad, f * p.grad_strides[0] + c * p.grad_strides[1], p.dtype_grad, v);
  }
#endif
}
