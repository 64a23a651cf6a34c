#version 460
#extension GL_GOOGLE_include_directive : require
// One fused optimizer step over a list of parameters of dtype DST_* (OPTIM_ADAM, OPTIM_SGD or
// OPTIM_ADAGRAD): the math of PyTorch's fused CUDA kernels, in the op math type (float for
// f32/f16/bf16, double for f64), every tensor read and written once.
#include "vkml_common.glsl"
#include "optim_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { OptimParams p; } pc;

#if defined(DST_F64)
#define OP double
#define HYPER(p, i) uint64BitsToDouble(p.hyper_f64[i])
double load_val(uint64_t a) { return PF64(a).v; }
#else
#define OP float
#define HYPER(p, i) p.hyper[i]
#if defined(DST_F32)
float load_val(uint64_t a) { return PF32(a).v; }
#elif defined(DST_F16)
float load_val(uint64_t a) { return float(PF16(a).v); }
#elif defined(DST_BF16)
float load_val(uint64_t a) { return bf16_to_float(PU16(a).v); }
#endif
#endif
#define VAL OP
#include "store_cast.glsl"

uint find_tensor(OptimParams p, int64_t i) {
  uint lo = 0u, hi = p.count - 1u;
  while (lo < hi) {
    uint mid = (lo + hi + 1u) >> 1;
    if (p.tensors[mid].start <= i) lo = mid; else hi = mid - 1u;
  }
  return lo;
}

#if defined(DST_F64)
// 1 - beta^step in double, by squaring (optimizers keep whole step counts in a float).
double one_minus_pow(double beta, float log_beta, float step) {
  if (step < 0.0 || step >= 16777216.0 || step != floor(step)) return 1.0 - pow(float(beta), step);
  double r = 1.0, b = beta;
  for (uint n = uint(step); n != 0u; n >>= 1) {
    if ((n & 1u) != 0u) r *= b;
    b *= b;
  }
  return 1.0 - r;
}
#else
// 1 - beta^step = -expm1(step * log(beta)), with log(beta) from the host (double, then rounded):
// 1 - pow(0.999f, step) would cancel (0.999f itself is off by 1.3e-8, 1e-5 after the
// subtraction). expm1 is a Taylor series where |x| < 1 and exp(x) - 1 beyond, where exp(x) <
// 0.37 keeps the subtraction benign. Plain float math: no error-free tricks for compilers to undo.
float one_minus_pow(float beta, float log_beta, float step) {
  float x = step * log_beta;
  if (abs(x) < 1.0) {
    float e = 1.0;
    for (int k = 14; k >= 2; --k) e = 1.0 + x / float(k) * e;
    return -(x * e);
  }
  return 1.0 - exp(x);
}
#endif

void main() {
  OptimParams p = pc.p;
  if (p.found_inf != 0ul && PF32(p.found_inf).v != 0.0) return;  // GradScaler found inf/NaN
  const OP lr = p.lr_tensor != 0ul ? OP(PF32(p.lr_tensor).v) : HYPER(p, VKML_OPTIM_LR);
  const OP weight_decay = HYPER(p, VKML_OPTIM_WEIGHT_DECAY);
  const bool maximize = (p.flags & VKML_OPTIM_FLAG_MAXIMIZE) != 0u;
  const OP grad_scale = p.grad_scale != 0ul ? OP(PF32(p.grad_scale).v) : OP(1);
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.total; i += VKML_GRID_STRIDE) {
    uint t = find_tensor(p, i);
    uint64_t off = uint64_t(i - p.tensors[t].start) * uint64_t(DST_SIZE);
    uint64_t pa = p.tensors[t].param + off, ga = p.tensors[t].grad + off;
    OP param = load_val(pa), grad = load_val(ga);
    if (p.grad_scale != 0ul) {
      grad /= grad_scale;
      store_dst(ga, grad);  // the unscaled grad, as GradScaler's unscale_ would leave it
    }
    if (maximize) grad = -grad;
#if defined(OPTIM_ADAM)
    const OP beta1 = HYPER(p, VKML_OPTIM_BETA1), beta2 = HYPER(p, VKML_OPTIM_BETA2);
    if (weight_decay != OP(0)) {
      if ((p.flags & VKML_OPTIM_FLAG_ADAMW) != 0u) {
        param -= lr * weight_decay * param;
      } else {
        grad += param * weight_decay;
      }
    }
    uint64_t ea = p.tensors[t].state[0] + off, sa = p.tensors[t].state[1] + off;
    OP exp_avg = beta1 * load_val(ea) + HYPER(p, VKML_OPTIM_ONE_MINUS_BETA1) * grad;
    OP exp_avg_sq = beta2 * load_val(sa) + HYPER(p, VKML_OPTIM_ONE_MINUS_BETA2) * grad * grad;
    float step = PF32(p.tensors[t].step).v;
    OP bias_correction1 = one_minus_pow(beta1, p.log_beta1, step);
    OP bias_correction2_sqrt = sqrt(one_minus_pow(beta2, p.log_beta2, step));
    OP step_size = lr / bias_correction1;
    OP second = exp_avg_sq;
    if ((p.flags & VKML_OPTIM_FLAG_AMSGRAD) != 0u) {
      uint64_t ma = p.tensors[t].state[2] + off;
      second = max(load_val(ma), exp_avg_sq);
      store_dst(ma, second);
    }
    OP denom = sqrt(second) / bias_correction2_sqrt + HYPER(p, VKML_OPTIM_EPS);
    param -= step_size * exp_avg / denom;
    store_dst(ea, exp_avg);
    store_dst(sa, exp_avg_sq);
#elif defined(OPTIM_SGD)
    if (weight_decay != OP(0)) grad += weight_decay * param;
    if ((p.flags & VKML_OPTIM_FLAG_MOMENTUM) != 0u) {
      const OP momentum = HYPER(p, VKML_OPTIM_BETA1);
      uint64_t ba = p.tensors[t].state[0] + off;
      OP buf = (p.flags & VKML_OPTIM_FLAG_FIRST_STEP) != 0u
                   ? grad
                   : momentum * load_val(ba) + HYPER(p, VKML_OPTIM_ONE_MINUS_BETA1) * grad;
      store_dst(ba, buf);
      grad = (p.flags & VKML_OPTIM_FLAG_NESTEROV) != 0u ? grad + momentum * buf : buf;
    }
    param -= lr * grad;
#elif defined(OPTIM_ADAGRAD)
    if (weight_decay != OP(0)) grad += param * weight_decay;
    float step = PF32(p.tensors[t].step).v;
    OP clr = lr / (OP(1) + OP(step - 1.0) * HYPER(p, VKML_OPTIM_BETA2));
    uint64_t sa = p.tensors[t].state[0] + off;
    OP state_sum = load_val(sa) + grad * grad;
    store_dst(sa, state_sum);
    param -= clr * grad / (sqrt(state_sum) + HYPER(p, VKML_OPTIM_EPS));
#endif
    store_dst(pa, param);
  }
}
