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
double one_minus_pow(double beta, float beta_lo, float step) {
  if (step < 0.0 || step >= 16777216.0 || step != floor(step)) return 1.0 - pow(float(beta), step);
  double r = 1.0, b = beta;
  for (uint n = uint(step); n != 0u; n >>= 1) {
    if ((n & 1u) != 0u) r *= b;
    b *= b;
  }
  return 1.0 - r;
}
#else
// Without doubles: beta^step by squaring in float-float arithmetic (hi + lo, ~48 bits), so that
// 1 - beta^step, which cancels for beta2 = 0.999, still comes out to float precision, like the
// double math of PyTorch's kernels. Products are split by Dekker's method (Vulkan may evaluate
// fma() unfused); `precise` keeps the compiler from folding the error terms away.
vec2 split(float a) {
  precise float c = 4097.0 * a;
  precise float hi = c - (c - a);
  return vec2(hi, a - hi);
}
vec2 two_prod(float a, float b) {
  precise float p = a * b;
  vec2 as = split(a), bs = split(b);
  precise float err = ((as.x * bs.x - p) + as.x * bs.y + as.y * bs.x) + as.y * bs.y;
  return vec2(p, err);
}
vec2 ff_mul(vec2 a, vec2 b) {
  vec2 pe = two_prod(a.x, b.x);
  precise float e = pe.y + (a.x * b.y + a.y * b.x);
  precise float s = pe.x + e;
  return vec2(s, e - (s - pe.x));
}
float one_minus_pow(float beta, float beta_lo, float step) {
  if (step < 0.0 || step >= 16777216.0 || step != floor(step)) return 1.0 - pow(beta, step);
  vec2 r = vec2(1.0, 0.0), b = vec2(beta, beta_lo);
  for (uint n = uint(step); n != 0u; n >>= 1) {
    if ((n & 1u) != 0u) r = ff_mul(r, b);
    b = ff_mul(b, b);
  }
  precise float hi = 1.0 - r.x;  // exact: r.x is in [0.5, 1] or the result is far from 0
  return hi - r.y;
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
    OP bias_correction1 = one_minus_pow(beta1, p.beta1_lo, step);
    OP bias_correction2_sqrt = sqrt(one_minus_pow(beta2, p.beta2_lo, step));
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
