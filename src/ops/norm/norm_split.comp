#version 460
#extension GL_GOOGLE_include_directive : require
// The split path of the norms, for few long rows (batch norm over N*H*W): enough workgroups
// even with a handful of channels, and a deterministic result. One stage per variant:
//   SPLIT_FWD_PARTIAL  workgroup per (row, chunk): count, chunk mean, sum of squared deviations
//   SPLIT_FWD_COMBINE  invocation per row: merges the chunks in order (Chan et al.), writes
//                      mean/rstd (slots and scratch) and updates running statistics
//   SPLIT_BWD_PARTIAL  workgroup per (row, chunk): sums of w*dy, w*dy*xhat, dy*xhat, dy
//   SPLIT_BWD_COMBINE  invocation per row: adds the chunks, writes per-row param grads
//   SPLIT_APPLY        invocation per element: y (forward) or dx (SPLIT_BACKWARD) from the
//                      per-row results (or running statistics when they are fixed)
// Scratch (ACC): partials at 0 (rows * splits * 4), per-row results after them (rows * 2).
#include "vkml_common.glsl"
#include "norm_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { NormParams p; } pc;

#include "nn_common.glsl"
#include "norm_index.glsl"

#ifdef VKML_USE_FP64
#define ACC_CODE NN_F64
#else
#define ACC_CODE NN_F32
#endif
#define SCR_LD(i) nn_load(p.scratch, (i), ACC_CODE)
#define SCR_ST(i, v) nn_store(p.scratch, (i), ACC_CODE, (v))
#define RESULT(row) (p.rows * p.splits * 4 + (row) * 2)

void main() {
  NormParams p = pc.p;
  const int64_t n = p.cols;
  const int64_t lane = int64_t(gl_LocalInvocationID.x), lanes = int64_t(gl_WorkGroupSize.x);
  const bool rms = (p.mode & NORM_RMS) != 0u;
  const bool has_w = norm_has(p, NORM_W);
  int64_t idx[VKML_NORM_MAX_DIMS];
  int64_t ro[VKML_NORM_SLOTS];
#if defined(SPLIT_FWD_PARTIAL) || defined(SPLIT_BWD_PARTIAL)
  const int64_t chunk = (n + p.splits - 1) / p.splits;
  for (int64_t g = nn_group_id(); g < p.rows * p.splits; g += nn_group_count()) {
    int64_t row = g / p.splits;
    int64_t j0 = (g % p.splits) * chunk, j1 = min(j0 + chunk, n);
    norm_row_offsets(p, row, ro);
#ifdef SPLIT_FWD_PARTIAL
    ACC cmean = ACC(0);
    int64_t count = max(j1 - j0, 0l);
    if (!rms) {
      ACC s = ACC(0);
      for (int64_t j = j0 + lane; j < j1; j += lanes) {
        norm_col_index(p, j, idx);
        s += NORM_AT(NORM_X);
      }
      s = nn_wg_sum(s);
      cmean = count > 0 ? s / ACC(count) : ACC(0);
    }
    ACC m2 = ACC(0);
    for (int64_t j = j0 + lane; j < j1; j += lanes) {
      norm_col_index(p, j, idx);
      ACC d = NORM_AT(NORM_X) - cmean;
      m2 += d * d;
    }
    m2 = nn_wg_sum(m2);
    if (lane == 0) {
      SCR_ST(4 * g, ACC(count));
      SCR_ST(4 * g + 1, cmean);
      SCR_ST(4 * g + 2, m2);
    }
#else
    ACC mean, rstd;
    norm_row_stats(p, ro, mean, rstd);
    ACC a = ACC(0), b = ACC(0), c = ACC(0), d = ACC(0);
    for (int64_t j = j0 + lane; j < j1; j += lanes) {
      norm_col_index(p, j, idx);
      ACC dy = NORM_AT(NORM_DY);
      ACC xhat = (NORM_AT(NORM_X) - mean) * rstd;
      ACC w = has_w ? NORM_AT(NORM_W) : ACC(1);
      a += w * dy;
      b += w * dy * xhat;
      c += dy * xhat;
      d += dy;
    }
    nn_wg_sum2(a, b);
    nn_wg_sum2(c, d);
    if (lane == 0) {
      SCR_ST(4 * g, a);
      SCR_ST(4 * g + 1, b);
      SCR_ST(4 * g + 2, c);
      SCR_ST(4 * g + 3, d);
    }
#endif
  }
#elif defined(SPLIT_FWD_COMBINE) || defined(SPLIT_BWD_COMBINE)
  for (int64_t row = nn_group_id() * lanes + lane; row < p.rows; row += nn_group_count() * lanes) {
    norm_row_offsets(p, row, ro);
#ifdef SPLIT_FWD_COMBINE
    ACC count = ACC(0), mean = ACC(0), m2 = ACC(0);
    for (int64_t s = 0; s < p.splits; ++s) {
      int64_t g = row * p.splits + s;
      ACC nb = SCR_LD(4 * g);
      if (nb == ACC(0)) continue;
      ACC total = count + nb, delta = SCR_LD(4 * g + 1) - mean;
      mean += delta * (nb / total);
      m2 += SCR_LD(4 * g + 2) + delta * delta * (count * nb / total);
      count = total;
    }
    if (rms) mean = ACC(0);
    ACC rstd = ACC(1) / sqrt(max(m2 / ACC(n), ACC(0)) + norm_eps(p));
    SCR_ST(RESULT(row), mean);
    SCR_ST(RESULT(row) + 1, rstd);
    if (norm_has(p, NORM_MEAN)) norm_st(p, NORM_MEAN, ro[NORM_MEAN], mean);
    if (norm_has(p, NORM_RSTD)) norm_st(p, NORM_RSTD, ro[NORM_RSTD], rstd);
    if ((p.mode & NORM_UPDATE_RUNNING) != 0u) {
      ACC m = norm_momentum(p);
      if (norm_has(p, NORM_RMEAN)) {
        ACC old = norm_ld(p, NORM_RMEAN, ro[NORM_RMEAN]);
        norm_st(p, NORM_RMEAN, ro[NORM_RMEAN], m * mean + (ACC(1) - m) * old);
      }
      if (norm_has(p, NORM_RVAR)) {
        ACC old = norm_ld(p, NORM_RVAR, ro[NORM_RVAR]);
        norm_st(p, NORM_RVAR, ro[NORM_RVAR], m * (m2 / ACC(n - 1)) + (ACC(1) - m) * old);
      }
    }
#else
    ACC a = ACC(0), b = ACC(0), c = ACC(0), d = ACC(0);
    for (int64_t s = 0; s < p.splits; ++s) {
      int64_t g = row * p.splits + s;
      a += SCR_LD(4 * g);
      b += SCR_LD(4 * g + 1);
      c += SCR_LD(4 * g + 2);
      d += SCR_LD(4 * g + 3);
    }
    SCR_ST(RESULT(row), a);
    SCR_ST(RESULT(row) + 1, b);
    if ((p.mode & NORM_ROW_PARAM_GRADS) != 0u) {
      if (norm_has(p, NORM_GW)) norm_st(p, NORM_GW, ro[NORM_GW], c);
      if (norm_has(p, NORM_GB)) norm_st(p, NORM_GB, ro[NORM_GB], d);
    }
#endif
  }
#else  // SPLIT_APPLY
  const bool fixed_stats = (p.mode & NORM_FIXED_STATS) != 0u;
  for (int64_t e = nn_group_id() * lanes + lane; e < p.rows * n; e += nn_group_count() * lanes) {
    int64_t row = e / n, j = e % n;
    norm_row_offsets(p, row, ro);
    norm_col_index(p, j, idx);
    ACC mean, rstd;
#ifdef SPLIT_BACKWARD
    norm_row_stats(p, ro, mean, rstd);
    ACC dy = NORM_AT(NORM_DY);
    ACC w = has_w ? NORM_AT(NORM_W) : ACC(1);
    ACC dx;
    if (fixed_stats) {
      dx = w * dy * rstd;
    } else {
      ACC mean_wdy = rms ? ACC(0) : SCR_LD(RESULT(row)) / ACC(n);
      ACC xhat = (NORM_AT(NORM_X) - mean) * rstd;
      dx = rstd * (w * dy - mean_wdy - xhat * (SCR_LD(RESULT(row) + 1) / ACC(n)));
    }
    norm_st(p, NORM_Y, ro[NORM_Y] + norm_col_off(p, NORM_Y, idx), dx);
#else
    if (fixed_stats) {
      norm_row_stats(p, ro, mean, rstd);
    } else {
      mean = SCR_LD(RESULT(row));
      rstd = SCR_LD(RESULT(row) + 1);
    }
    ACC y = (NORM_AT(NORM_X) - mean) * rstd;
    if (has_w) y *= NORM_AT(NORM_W);
    if (norm_has(p, NORM_B)) y += NORM_AT(NORM_B);
    norm_st(p, NORM_Y, ro[NORM_Y] + norm_col_off(p, NORM_Y, idx), y);
#endif
  }
#endif
}
