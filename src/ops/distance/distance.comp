#version 460
#extension GL_GOOGLE_include_directive : require
// p-norm distances between rows: cdist (all pairs of x1 and x2 rows, batched) and pdist (pairs
// i < j of one matrix), forward and backward, with PyTorch's formulas per p (0, 1, 2, inf,
// 0 < p < 2, p > 2). Backward invocations own one element x1[b, i, k] and sum over the rows j:
//   d dist / d x1 = sign(d) |d|^(p-1) / dist^(p-1) (p = 2: d / dist, inf: sign(d) [|d| = dist]).
#include "vkml_common.glsl"
#include "distance_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { DistParams p; } pc;

#include "nn_common.glsl"

ACC p_value(DistParams p) {
#ifdef VKML_USE_FP64
  return packDouble2x32(uvec2(uint(p.p_bits), uint(p.p_bits >> 32)));
#else
  return p.p_f;
#endif
}

// x^e for x >= 0 (0^e is 0 for e > 0, 1 for e = 0).
ACC pow_nonneg(ACC x, ACC e) {
  if (x == ACC(0)) return e > ACC(0) ? ACC(0) : (e == ACC(0) ? ACC(1) : ACC(NN_INF));
  if (isinf(x)) return e > ACC(0) ? x : (e == ACC(0) ? ACC(1) : ACC(0));
  return nn_exp(e * nn_log(x));
}

ACC sign_of(ACC d) { return d > ACC(0) ? ACC(1) : (d < ACC(0) ? ACC(-1) : ACC(0)); }

// Offsets of batch index `bi` in the strides of one tensor.
int64_t batch_off(DistParams p, int64_t bi, int which) {
  int64_t o = 0, rem = bi;
  for (int d = int(p.batch_ndim) - 1; d >= 0; --d) {
    int64_t i = rem % p.batch_sizes[d];
    rem /= p.batch_sizes[d];
    int64_t s = which == 0   ? p.x1_strides[d]
                : which == 1 ? p.x2_strides[d]
                : which == 2 ? p.out_strides[d]
                : which == 3 ? p.grad_strides[d]
                             : p.dist_strides[d];
    o += i * s;
  }
  return o;
}

#define ROW(s) s[p.batch_ndim]
#define COL(s) s[p.batch_ndim + 1]

// The distance between rows at x1 offset a and x2 offset b.
ACC distance(DistParams p, int64_t a, int64_t b) {
  const ACC pv = p_value(p);
  ACC acc = ACC(0);
  for (int64_t k = 0; k < p.cols; ++k) {
    ACC d = abs(nn_load(p.x1, a + k * COL(p.x1_strides), p.dtype[0]) -
                nn_load(p.x2, b + k * COL(p.x2_strides), p.dtype[1]));
    if (p.p_kind == DIST_P0) {
      acc += d != ACC(0) ? ACC(1) : ACC(0);
    } else if (p.p_kind == DIST_P1) {
      acc += d;
    } else if (p.p_kind == DIST_P2) {
      acc += d * d;
    } else if (p.p_kind == DIST_PINF) {
      acc = max(acc, d);
    } else {
      acc += pow_nonneg(d, pv);
    }
  }
  if (p.p_kind == DIST_P2) return sqrt(acc);
  if (p.p_kind == DIST_PLT2 || p.p_kind == DIST_PGT2) return pow_nonneg(acc, ACC(1) / pv);
  return acc;
}

// d dist / d x1 for coordinate difference d = x1 - x2 and distance dist.
ACC grad_term(DistParams p, ACC d, ACC dist) {
  const ACC pv = p_value(p);
  if (p.p_kind == DIST_P0) return ACC(0);
  if (p.p_kind == DIST_P1) return sign_of(d);
  if (dist == ACC(0)) return ACC(0);
  if (p.p_kind == DIST_P2) return d / dist;
  if (p.p_kind == DIST_PINF) return abs(d) == dist ? sign_of(d) : ACC(0);
  if (p.p_kind == DIST_PLT2) {
    if (d == ACC(0) && pv < ACC(1)) return ACC(0);
    return sign_of(d) * pow_nonneg(abs(d), pv - ACC(1)) / pow_nonneg(dist, pv - ACC(1));
  }
  return d * pow_nonneg(abs(d), pv - ACC(2)) / pow_nonneg(dist, pv - ACC(1));
}

// The first row i of pdist pair e (pairs (i, j > i) in row-major order).
int64_t pair_row(int64_t n, int64_t e) {
  float fn = float(2 * n - 1);
  int64_t i = int64_t(max(floor((fn - sqrt(max(fn * fn - 8.0 * float(e), 0.0))) * 0.5), 0.0));
  i = min(i, n - 2);
  while (i > 0 && i * (2 * n - i - 1) / 2 > e) --i;
  while (i + 1 < n - 1 && (i + 1) * (2 * n - i - 2) / 2 <= e) ++i;
  return i;
}

int64_t pair_index(int64_t n, int64_t i, int64_t j) { return i * (2 * n - i - 1) / 2 + j - i - 1; }

void main() {
  DistParams p = pc.p;
  const int64_t step = nn_group_count() * int64_t(gl_WorkGroupSize.x);
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += step) {
    if (p.mode == DIST_CDIST_FWD) {
      int64_t j = e % p.rows2, i = (e / p.rows2) % p.rows1, bi = e / (p.rows2 * p.rows1);
      ACC v = distance(p, batch_off(p, bi, 0) + i * ROW(p.x1_strides),
                       batch_off(p, bi, 1) + j * ROW(p.x2_strides));
      nn_store(p.dst, batch_off(p, bi, 2) + i * ROW(p.out_strides) + j * COL(p.out_strides),
               p.dtype[2], v);
    } else if (p.mode == DIST_PDIST_FWD) {
      int64_t i = pair_row(p.rows1, e), j = e - pair_index(p.rows1, i, i + 1) + i + 1;
      ACC v = distance(p, i * ROW(p.x1_strides), j * ROW(p.x2_strides));
      nn_store(p.dst, e * p.out_strides[0], p.dtype[2], v);
    } else {
      // Backward: element (b, i, k) of grad_x1.
      const bool pdist = p.mode == DIST_PDIST_BWD;
      int64_t k = e % p.cols, i = (e / p.cols) % p.rows1, bi = e / (p.cols * p.rows1);
      int64_t o1 = batch_off(p, bi, 0), o2 = batch_off(p, bi, 1);
      int64_t og = batch_off(p, bi, 3), od = batch_off(p, bi, 4);
      ACC x = nn_load(p.x1, o1 + i * ROW(p.x1_strides) + k * COL(p.x1_strides), p.dtype[0]);
      ACC sum = ACC(0);
      for (int64_t j = 0; j < p.rows2; ++j) {
        int64_t go, dof;
        if (pdist) {
          if (j == i) continue;
          int64_t pi = pair_index(p.rows1, min(i, j), max(i, j));
          go = pi * p.grad_strides[0];
          dof = pi * p.dist_strides[0];
        } else {
          go = og + i * ROW(p.grad_strides) + j * COL(p.grad_strides);
          dof = od + i * ROW(p.dist_strides) + j * COL(p.dist_strides);
        }
        ACC d = x - nn_load(p.x2, o2 + j * ROW(p.x2_strides) + k * COL(p.x2_strides), p.dtype[1]);
        ACC g = nn_load(p.grad, go, p.dtype[3]);
        sum += grad_term(p, d, nn_load(p.dist, dof, p.dtype[4])) * g;
      }
      nn_store(p.dst, batch_off(p, bi, 2) + i * ROW(p.out_strides) + k * COL(p.out_strides),
               p.dtype[2], sum);
    }
  }
}
