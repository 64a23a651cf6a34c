#version 460
#extension GL_GOOGLE_include_directive : require
// CTC loss (Graves et al. 2006) in log space, one workgroup per batch item.
// CTC_FORWARD: alpha_t(s) = lp_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1),
//   alpha_{t-1}(s-2) when l'_s != l'_{s-2}) over the extended labels l' = (blank, l_1, blank, ...),
//   written to log_alpha (-inf outside the item's lengths); nll = -logsumexp of the last 2 states.
// CTC_BETA: beta runs from the end the same way into scratch, with the label links ctc_grad uses.
// CTC_GRAD: grad_t(c) = (exp(lp_t(c)) - exp(logsumexp_{s: l'_s = c}(alpha_t(s) + beta_t(s)) + nll
//   - lp_t(c))) * grad_out, 0 past the input length (and for infinite losses with zero_infinity).
// The forward and beta passes record a label out of [0, C) in error_flag (it reads as NaN).
// Steps communicate through coherent device memory, ordered by memory barriers. Loops per
// invocation stay short (llvmpipe stops any loop after 65535 iterations of an invocation).
#include "vkml_common.glsl"
#include "ctc_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { CtcParams p; } pc;

#include "nn_common.glsl"
#include "loss_report.glsl"

#ifdef VKML_USE_FP64
layout(buffer_reference, scalar, buffer_reference_align = 8) coherent buffer CtcAcc { double v; };
#define ACC_BYTES 8ul
#else
layout(buffer_reference, scalar, buffer_reference_align = 4) coherent buffer CtcAcc { float v; };
#define ACC_BYTES 4ul
#endif

#define NEG_INF (-ACC(NN_INF))

ACC acc_ld(uint64_t base, int64_t i) { return CtcAcc(base + uint64_t(i) * ACC_BYTES).v; }
void acc_st(uint64_t base, int64_t i, ACC v) { CtcAcc(base + uint64_t(i) * ACC_BYTES).v = v; }
void sync_memory() {
  memoryBarrierBuffer();
  barrier();
}

int64_t len_at(CtcParams p, int64_t row, int64_t b) {
  return PI64(p.lengths + uint64_t(row * p.batch + b) * 8ul).v;
}

// The extended label at state s: blank for even s, the ((s - 1) / 2)-th target otherwise.
int64_t label_at(CtcParams p, int64_t toff, int64_t s) {
  if ((s & 1) == 0) return p.blank;
  return nn_load_index(p.targets, toff + (s >> 1) * p.target_stride, p.target_dtype);
}

ACC lp_at(CtcParams p, int64_t t, int64_t b, int64_t c) {
  if (c < 0 || c >= p.classes) return ACC(NN_NAN);  // a label out of range: no stray read
  return nn_load(p.log_probs, t * p.lp_strides[0] + b * p.lp_strides[1] + c * p.lp_strides[2],
                 p.lp_dtype);
}

int64_t alpha_off(CtcParams p, int64_t b, int64_t t, int64_t s) {
  return b * p.alpha_strides[0] + t * p.alpha_strides[1] + s * p.alpha_strides[2];
}

// log(exp(a) + exp(b) + exp(c)) as PyTorch's CPU kernel computes it (max 0 when all are -inf).
ACC log_add3(ACC a, ACC b, ACC c) {
  ACC m = max(a, max(b, c));
  if (m == NEG_INF) m = ACC(0);
  return nn_log(nn_exp(a - m) + nn_exp(b - m) + nn_exp(c - m)) + m;
}

void main() {
  CtcParams p = pc.p;
  const int64_t lane = int64_t(gl_LocalInvocationID.x), lanes = int64_t(gl_WorkGroupSize.x);
#ifndef CTC_GRAD
  for (int64_t b = nn_group_id(); b < p.batch; b += nn_group_count()) {
    const int64_t in_len = len_at(p, 0, b), tg_len = len_at(p, 1, b), toff = len_at(p, 2, b);
    const int64_t states = 2 * tg_len + 1;
    for (int64_t j = lane; j < tg_len && p.error_flag != 0ul; j += lanes) {
      int64_t l = label_at(p, toff, 2 * j + 1);
      if (l < 0 || l >= p.classes) loss_report_bad_target(p.error_flag, 0u, l);
    }
#ifdef CTC_FORWARD
    for (int64_t t = 0; t < p.max_time; ++t) {
      for (int64_t s = lane; s < p.max_states; s += lanes) {
        ACC v = NEG_INF;
        if (t < in_len && s < states) {
          int64_t l = label_at(p, toff, s);
          if (t == 0) {
            if (s < 2) v = lp_at(p, 0, b, l);
          } else {
            ACC a1 = acc_ld(p.log_alpha, alpha_off(p, b, t - 1, s));
            ACC a2 = s > 0 ? acc_ld(p.log_alpha, alpha_off(p, b, t - 1, s - 1)) : NEG_INF;
            ACC a3 = NEG_INF;
            if (s > 1 && label_at(p, toff, s - 2) != l) {
              a3 = acc_ld(p.log_alpha, alpha_off(p, b, t - 1, s - 2));
            }
            v = log_add3(a1, a2, a3) + lp_at(p, t, b, l);
          }
        }
        acc_st(p.log_alpha, alpha_off(p, b, t, s), v);
      }
      sync_memory();
    }
    if (lane == 0) {
      ACC nll;
      if (in_len == 0) {
        nll = tg_len == 0 ? ACC(0) : ACC(NN_INF);
      } else {
        ACC l1 = acc_ld(p.log_alpha, alpha_off(p, b, in_len - 1, 2 * tg_len));
        ACC l2 = tg_len > 0 ? acc_ld(p.log_alpha, alpha_off(p, b, in_len - 1, 2 * tg_len - 1))
                            : NEG_INF;
        nll = -log_add3(l1, l2, NEG_INF);
      }
      nn_store(p.nll, b * p.nll_stride, p.lp_dtype, nll);
    }
#elif defined(CTC_BETA)
    // Label links for ctc_grad: next state with the same label, and each class's first state.
    const uint64_t next = p.links + uint64_t(b * p.max_states) * 4ul;
    const uint64_t first = p.links + uint64_t(p.batch * p.max_states + b * p.classes) * 4ul;
    for (int64_t c = lane; c < p.classes; c += lanes) PI32(first + uint64_t(c) * 4ul).v = -1;
    sync_memory();
    for (int64_t s = lane; s < states; s += lanes) {
      int64_t l = label_at(p, toff, s);
      int64_t q = s + 1;
      while (q < states && label_at(p, toff, q) != l) ++q;
      PI32(next + uint64_t(s) * 4ul).v = q < states ? int(q) : -1;
      bool is_first = true;
      for (int64_t r = s - 1; r >= 0 && is_first; --r) is_first = label_at(p, toff, r) != l;
      if (is_first && l >= 0 && l < p.classes) PI32(first + uint64_t(l) * 4ul).v = int(s);
    }
    // beta_t(s) = lp_t(l'_s) + logsumexp(beta_{t+1}(s), beta_{t+1}(s+1), beta_{t+1}(s+2) when
    // l'_s != l'_{s+2}), from the last two states at the item's last step.
    const uint64_t beta = p.beta + uint64_t(b * p.max_time * p.max_states) * ACC_BYTES;
    for (int64_t t = in_len - 1; t >= 0; --t) {
      const uint64_t row = beta + uint64_t(t * p.max_states) * ACC_BYTES;
      const uint64_t later = row + uint64_t(p.max_states) * ACC_BYTES;
      for (int64_t s = lane; s < states; s += lanes) {
        int64_t l = label_at(p, toff, s);
        ACC v = NEG_INF;
        if (t == in_len - 1) {
          if (s >= states - 2) v = lp_at(p, t, b, l);
        } else {
          ACC b1 = acc_ld(later, s);
          ACC b2 = s < states - 1 ? acc_ld(later, s + 1) : NEG_INF;
          ACC b3 = NEG_INF;
          if (s < states - 2 && label_at(p, toff, s + 2) != l) b3 = acc_ld(later, s + 2);
          v = log_add3(b1, b2, b3) + lp_at(p, t, b, l);
        }
        acc_st(row, s, v);
      }
      sync_memory();
    }
#endif
  }
#endif
#ifdef CTC_GRAD
  // One invocation per element (t, b, c) of grad: collect alpha + beta over the states of class
  // c (a walk along the label links), then PyTorch's formula.
  const int64_t total = p.max_time * p.batch * p.classes;
  for (int64_t e = nn_group_id() * lanes + lane; e < total; e += nn_group_count() * lanes) {
    const int64_t c = e % p.classes, b = (e / p.classes) % p.batch, t = e / (p.classes * p.batch);
    const ACC nll = nn_load(p.nll, b * p.nll_stride, p.lp_dtype);
    const bool zeroed = p.zero_infinity != 0u && isinf(nll) && nll > ACC(0);
    ACC v = ACC(0);
    if (!zeroed && t < len_at(p, 0, b)) {
      const uint64_t next = p.links + uint64_t(b * p.max_states) * 4ul;
      const uint64_t beta = p.beta + uint64_t((b * p.max_time + t) * p.max_states) * ACC_BYTES;
      int first = PI32(p.links + uint64_t(p.batch * p.max_states + b * p.classes + c) * 4ul).v;
      ACC m = NEG_INF, sum = ACC(0);
      for (int s = first; s >= 0; s = PI32(next + uint64_t(s) * 4ul).v) {  // online logsumexp
        ACC x = acc_ld(p.log_alpha, alpha_off(p, b, t, s)) + acc_ld(beta, s);
        if (x == NEG_INF) continue;
        if (x > m) {
          sum = sum * nn_exp(m - x) + ACC(1);
          m = x;
        } else {
          sum += nn_exp(x - m);
        }
      }
      ACC lcab = m == NEG_INF ? NEG_INF : nn_log(sum) + m;
      ACC lp = lp_at(p, t, b, c);
      v = (nn_exp(lp) - nn_exp(lcab + nll - lp)) * nn_load(p.grad_out, b * p.grad_out_stride,
                                                             p.lp_dtype);
    }
    nn_store(p.grad, t * p.grad_strides[0] + b * p.grad_strides[1] + c * p.grad_strides[2],
             p.lp_dtype, v);
  }
#endif
}
