// Shared by the neural-network families (softmax, norm, loss, pool, dropout): dtype-generic
// element access, double-precision exp/log (GLSL has none), and workgroup reductions.
// Floating tensors carry a runtime dtype code, so one variant serves f32/f16/bf16 (computed in
// float); variants built with VKML_USE_FP64 also read f64 and compute in double.
// Include after vkml_common.glsl and after the local_size declaration.
#ifndef VKML_NN_COMMON_GLSL_
#define VKML_NN_COMMON_GLSL_

// Dtype codes; keep in sync with ops/nn_util.h.
#define NN_F32 0u
#define NN_F16 1u
#define NN_BF16 2u
#define NN_F64 3u
#define NN_I64 4u
#define NN_U8 5u
#define NN_I32 6u

#ifdef VKML_USE_FP64
#define ACC double
#else
#define ACC float
#endif

#define NN_INF uintBitsToFloat(0x7F800000u)
#define NN_NAN uintBitsToFloat(0x7FC00000u)

ACC nn_load(uint64_t base, int64_t i, uint dt) {
  if (dt == NN_F16) return ACC(float(PF16(base + uint64_t(i) * 2ul).v));
  if (dt == NN_BF16) return ACC(bf16_to_float(PU16(base + uint64_t(i) * 2ul).v));
#ifdef VKML_USE_FP64
  if (dt == NN_F64) return PF64(base + uint64_t(i) * 8ul).v;
#endif
  return ACC(PF32(base + uint64_t(i) * 4ul).v);
}

void nn_store(uint64_t base, int64_t i, uint dt, ACC v) {
  if (dt == NN_F16) {
    PF16(base + uint64_t(i) * 2ul).v = float16_t(float(v));
  } else if (dt == NN_BF16) {
    PU16(base + uint64_t(i) * 2ul).v = float_to_bf16(float(v));
#ifdef VKML_USE_FP64
  } else if (dt == NN_F64) {
    PF64(base + uint64_t(i) * 8ul).v = v;
#endif
  } else {
    PF32(base + uint64_t(i) * 4ul).v = float(v);
  }
}

// Class indices (nll_loss targets): int64, uint8 or int32.
int64_t nn_load_index(uint64_t base, int64_t i, uint dt) {
  if (dt == NN_U8) return int64_t(PU8(base + uint64_t(i)).v);
  if (dt == NN_I32) return int64_t(PI32(base + uint64_t(i) * 4ul).v);
  return PI64(base + uint64_t(i) * 8ul).v;
}

#ifdef VKML_USE_FP64
// exp and log in double: Cody-Waite range reduction plus series, accurate to a few ulp.
double nn_exp(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384) return double(NN_INF);
  if (x < -745.2) return 0.0;
  double k = floor(x * 1.4426950408889634 + 0.5);
  double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // Two steps keep 2^k representable when the result is subnormal or near overflow.
  int ki = int(k);
  int half_k = ki / 2;
  return ldexp(ldexp(p, half_k), ki - half_k);
}

double nn_log(double x) {
  if (isnan(x) || x < 0.0) return double(NN_NAN);
  if (x == 0.0) return -double(NN_INF);
  if (isinf(x)) return x;
  int e;
  double m = frexp(x, e);
  if (m < 0.70710678118654752) {
    m *= 2.0;
    e -= 1;
  }
  double f = (m - 1.0) / (m + 1.0);
  double f2 = f * f;
  double s = 1.0 / 23.0;
  for (int k = 10; k >= 0; --k) s = s * f2 + 1.0 / double(2 * k + 1);
  return 2.0 * f * s + double(e) * 6.93147180559945309417e-01;
}

double nn_log1p(double x) {
  double u = 1.0 + x;
  if (u == 1.0) return x;
  return nn_log(u) * (x / (u - 1.0));
}
#else
float nn_exp(float x) { return exp(x); }
// GLSL leaves log undefined at x <= 0; PyTorch's losses rely on log(0) = -inf.
float nn_log(float x) {
  if (x == 0.0) return -NN_INF;
  if (x < 0.0) return NN_NAN;
  return log(x);
}
// log(1 + x) without cancellation for small x (Goldberg's trick).
float nn_log1p(float x) {
  float u = 1.0 + x;
  if (u == 1.0) return x;
  return log(u) * (x / (u - 1.0));
}
#endif

ACC nn_inv_sqrt(ACC x) { return ACC(1) / sqrt(x); }

// Workgroup reductions over gl_WorkGroupSize.x (a power of two, at most 256) invocations.
// Every invocation receives the result; callers must reach them in uniform control flow.
#ifdef VKML_NN_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
shared ACC nn_partials[2][64];

void nn_wg_sum2(inout ACC a, inout ACC b) {
  a = subgroupAdd(a);
  b = subgroupAdd(b);
  if (subgroupElect()) {
    nn_partials[0][gl_SubgroupID] = a;
    nn_partials[1][gl_SubgroupID] = b;
  }
  barrier();
  a = ACC(0);
  b = ACC(0);
  for (uint s = 0u; s < gl_NumSubgroups; ++s) {
    a += nn_partials[0][s];
    b += nn_partials[1][s];
  }
  barrier();
}

ACC nn_wg_sum(ACC v) {
  v = subgroupAdd(v);
  if (subgroupElect()) nn_partials[0][gl_SubgroupID] = v;
  barrier();
  v = ACC(0);
  for (uint s = 0u; s < gl_NumSubgroups; ++s) v += nn_partials[0][s];
  barrier();
  return v;
}

ACC nn_wg_max(ACC v) {
  v = subgroupMax(v);
  if (subgroupElect()) nn_partials[0][gl_SubgroupID] = v;
  barrier();
  v = nn_partials[0][0];
  for (uint s = 1u; s < gl_NumSubgroups; ++s) v = max(v, nn_partials[0][s]);
  barrier();
  return v;
}
#else
shared ACC nn_tree[2][256];

void nn_wg_sum2(inout ACC a, inout ACC b) {
  uint t = gl_LocalInvocationID.x;
  nn_tree[0][t] = a;
  nn_tree[1][t] = b;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
    if (t < s) {
      nn_tree[0][t] += nn_tree[0][t + s];
      nn_tree[1][t] += nn_tree[1][t + s];
    }
    barrier();
  }
  a = nn_tree[0][0];
  b = nn_tree[1][0];
  barrier();
}

ACC nn_wg_sum(ACC v) {
  uint t = gl_LocalInvocationID.x;
  nn_tree[0][t] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
    if (t < s) nn_tree[0][t] += nn_tree[0][t + s];
    barrier();
  }
  v = nn_tree[0][0];
  barrier();
  return v;
}

ACC nn_wg_max(ACC v) {
  uint t = gl_LocalInvocationID.x;
  nn_tree[0][t] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
    if (t < s) nn_tree[0][t] = max(nn_tree[0][t], nn_tree[0][t + s]);
    barrier();
  }
  v = nn_tree[0][0];
  barrier();
  return v;
}
#endif

// Linear workgroup index over a 2-D grid (more than 65535 groups) and the grid's size.
int64_t nn_group_id() {
  return int64_t(gl_WorkGroupID.x) + int64_t(gl_WorkGroupID.y) * int64_t(gl_NumWorkGroups.x);
}
int64_t nn_group_count() { return int64_t(gl_NumWorkGroups.x) * int64_t(gl_NumWorkGroups.y); }

#endif  // VKML_NN_COMMON_GLSL_
