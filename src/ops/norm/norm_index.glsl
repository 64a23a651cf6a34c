// Element offsets in the norm view (see norm_params.h): a row index gives every slot's base
// offset, a column index its multi-index, and each slot its own strides over both.
ACC norm_ld(NormParams p, int s, int64_t off) { return nn_load(p.ptr[s], off, p.dtype[s]); }
void norm_st(NormParams p, int s, int64_t off, ACC v) { nn_store(p.ptr[s], off, p.dtype[s], v); }
bool norm_has(NormParams p, int s) { return p.ptr[s] != 0ul; }

void norm_row_offsets(NormParams p, int64_t row, out int64_t ro[VKML_NORM_SLOTS]) {
  for (int s = 0; s < VKML_NORM_SLOTS; ++s) ro[s] = 0;
  int64_t rem = row;
  for (int d = int(p.row_ndim) - 1; d >= 0; --d) {
    int64_t i = rem % p.row_sizes[d];
    rem /= p.row_sizes[d];
    for (int s = 0; s < VKML_NORM_SLOTS; ++s) ro[s] += i * p.row_strides[s][d];
  }
}

void norm_col_index(NormParams p, int64_t j, out int64_t idx[VKML_NORM_MAX_DIMS]) {
  if (p.col_ndim == 1u) {
    idx[0] = j;
    return;
  }
  int64_t rem = j;
  for (int d = int(p.col_ndim) - 1; d >= 0; --d) {
    idx[d] = rem % p.col_sizes[d];
    rem /= p.col_sizes[d];
  }
}

int64_t norm_col_off(NormParams p, int s, int64_t idx[VKML_NORM_MAX_DIMS]) {
  int64_t o = 0;
  for (int d = 0; d < int(p.col_ndim); ++d) o += idx[d] * p.col_strides[s][d];
  return o;
}

// Loads slot s at row base ro and column multi-index idx.
#define NORM_AT(s) norm_ld(p, s, ro[s] + norm_col_off(p, s, idx))

ACC norm_eps(NormParams p) {
#ifdef VKML_USE_FP64
  return packDouble2x32(uvec2(uint(p.eps_bits), uint(p.eps_bits >> 32)));
#else
  return p.eps_f;
#endif
}

ACC norm_momentum(NormParams p) {
#ifdef VKML_USE_FP64
  return packDouble2x32(uvec2(uint(p.momentum_bits), uint(p.momentum_bits >> 32)));
#else
  return p.momentum_f;
#endif
}

// The row's mean and rstd: saved by a forward, or from running statistics (batch norm eval).
void norm_row_stats(NormParams p, int64_t ro[VKML_NORM_SLOTS], out ACC mean, out ACC rstd) {
  bool rms = (p.mode & NORM_RMS) != 0u;
  if ((p.mode & NORM_FIXED_STATS) != 0u) {
    mean = rms ? ACC(0) : norm_ld(p, NORM_RMEAN, ro[NORM_RMEAN]);
    rstd = ACC(1) / sqrt(norm_ld(p, NORM_RVAR, ro[NORM_RVAR]) + norm_eps(p));
  } else {
    mean = rms ? ACC(0) : norm_ld(p, NORM_MEAN, ro[NORM_MEAN]);
    rstd = norm_ld(p, NORM_RSTD, ro[NORM_RSTD]);
  }
}
