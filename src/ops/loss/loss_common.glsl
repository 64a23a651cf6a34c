// Shared by the loss shaders: element offsets per slot and the reduced result.
#ifdef VKML_USE_FP64
#define ACC_CODE NN_F64
#else
#define ACC_CODE NN_F32
#endif

ACC loss_param(LossParams p) {
#ifdef VKML_USE_FP64
  return packDouble2x32(uvec2(uint(p.param_bits), uint(p.param_bits >> 32)));
#else
  return p.param;
#endif
}

ACC loss_ld(LossParams p, int s, int64_t off) { return nn_load(p.ptr[s], off, p.dtype[s]); }
bool loss_has(LossParams p, int s) { return p.ptr[s] != 0ul; }

void loss_offsets(LossParams p, int64_t e, out int64_t o[VKML_LOSS_SLOTS]) {
  for (int s = 0; s < VKML_LOSS_SLOTS; ++s) o[s] = 0;
  int64_t rem = e;
  for (int d = int(p.ndim) - 1; d >= 0; --d) {
    int64_t i = rem % p.sizes[d];
    rem /= p.sizes[d];
    for (int s = 0; s < VKML_LOSS_SLOTS; ++s) o[s] += i * p.strides[s][d];
  }
}

// The reduced loss from the summed loss a and summed weight b (nll) or element count.
void loss_finalize(LossParams p, ACC a, ACC b) {
  ACC r = a;
  if (p.reduction == LOSS_REDUCE_MEAN) r = p.kind == LOSS_NLL ? a / b : a / ACC(p.reduce_count);
  nn_store(p.result, 0, p.result_dtype, r);
  if (p.total_weight != 0ul) nn_store(p.total_weight, 0, p.total_weight_dtype, b);
}

// A workgroup's sums: into the partials for loss_finish, or the result when it is alone.
void loss_emit(LossParams p, int64_t group, ACC a, ACC b) {
  if (p.partials != 0ul) {
    nn_store(p.partials, 2 * group, ACC_CODE, a);
    nn_store(p.partials, 2 * group + 1, ACC_CODE, b);
  } else {
    loss_finalize(p, a, b);
  }
}

#define LOSS_LANE int64_t(gl_LocalInvocationID.x)
#define LOSS_START (nn_group_id() * int64_t(gl_WorkGroupSize.x) + LOSS_LANE)
#define LOSS_STEP (nn_group_count() * int64_t(gl_WorkGroupSize.x))
