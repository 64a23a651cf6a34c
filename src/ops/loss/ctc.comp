#version 460
#extension GL_GOOGLE_include_directive : require
// CTC loss (Graves et al. 2006) in log space, one workgroup per batch item.
// CTC_FORWARD: alpha_t(s) = lp_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1),
//   alpha_{t-1}(s-2) when l'_s != l'_{s-2}) over the extended labels l' = (blank, l_1, blank, ...),
//   written to log_alpha (-inf outside the item's lengths); nll = -logsumexp of the last two states.
// Otherwise backward: beta runs from the end the same way (two rows kept in scratch) and
//   grad_t(c) = (exp(lp_t(c)) - exp(logsumexp_{s: l'_s = c}(alpha_t(s) + beta_t(s)) + nll - lp_t(c)))
//   * grad_out, 0 past the input length (and for infinite losses with zero_infinity).
// Steps communicate through coherent device memory, ordered by memory barriers.
#include "vkml_common.glsl"
#include "ctc_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { CtcParams p; } pc;

#include "nn_common.glsl"

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

int64_t len_at(CtcParams p, int64_t row, int64_t b) { return PI64(p.lengths + uint64_t(row * p.batch + b) * 8ul).v; }

// The extended label at state s: blank for even s, the ((s - 1) / 2)-th target otherwise.
int64_t label_at(CtcParams p, int64_t toff, int64_t s) {
  if ((s & 1) == 0) return p.blank;
  return nn_load_index(p.targets, toff + (s >> 1) * p.target_stride, p.target_dtype);
}

ACC lp_at(CtcParams p, int64_t t, int64_t b, int64_t c) {
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
  for (int64_t b = nn_group_id(); b < p.batch; b += nn_group_count()) {
    const int64_t in_len = len_at(p, 0, b), tg_len = len_at(p, 1, b), toff = len_at(p, 2, b);
    const int64_t states = 2 * tg_len + 1;
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
#else
    const ACC nll = nn_load(p.nll, b * p.nll_stride, p.lp_dtype);
    const ACC gr = nn_load(p.grad_out, b * p.grad_out_stride, p.lp_dtype);
    const bool zeroed = p.zero_infinity != 0u && isinf(nll) && nll > ACC(0);
    const int64_t live = zeroed ? 0 : in_len;  // steps with a gradient
    for (int64_t e = live * p.classes + lane; e < p.max_time * p.classes; e += lanes) {
      int64_t t = e / p.classes, c = e % p.classes;
      acc_st(p.grad, t * p.grad_strides[0] + b * p.grad_strides[1] + c * p.grad_strides[2],
             ACC(0));
    }
    const uint64_t beta = p.beta + uint64_t(b * 2 * p.max_states) * ACC_BYTES;
    for (int64_t t = live - 1; t >= 0; --t) {
      const uint64_t row = beta + uint64_t((t & 1) * p.max_states) * ACC_BYTES;
      const uint64_t next = beta + uint64_t(((t + 1) & 1) * p.max_states) * ACC_BYTES;
      for (int64_t s = lane; s < states; s += lanes) {
        int64_t l = label_at(p, toff, s);
        ACC v = NEG_INF;
        if (t == live - 1) {
          if (s >= states - 2) v = lp_at(p, t, b, l);
        } else {
          ACC b1 = acc_ld(next, s);
          ACC b2 = s < states - 1 ? acc_ld(next, s + 1) : NEG_INF;
          ACC b3 = NEG_INF;
          if (s < states - 2 && label_at(p, toff, s + 2) != l) b3 = acc_ld(next, s + 2);
          v = log_add3(b1, b2, b3) + lp_at(p, t, b, l);
        }
        acc_st(row, s, v);
      }
      // Every class first gets the term of no collected state, then the collected ones.
      for (int64_t c = lane; c < p.classes; c += lanes) {
        ACC lp = lp_at(p, t, b, c);
        acc_st(p.grad, t * p.grad_strides[0] + b * p.grad_strides[1] + c * p.grad_strides[2],
               (nn_exp(lp) - nn_exp(NEG_INF + nll - lp)) * gr);
      }
      sync_memory();
      // One invocation per distinct label: state 0 for blank, else the label's first occurrence.
      for (int64_t s = lane; s < states; s += lanes) {
        int64_t l = label_at(p, toff, s);
        bool owner = s == 0;
        if ((s & 1) == 1 && l != p.blank) {
          owner = true;
          for (int64_t q = 1; q < s; q += 2) owner = owner && label_at(p, toff, q) != l;
        }
        if (!owner) continue;
        ACC m = NEG_INF;
        for (int64_t q = 0; q < states; ++q) {
          if (label_at(p, toff, q) != l) continue;
          m = max(m, acc_ld(p.log_alpha, alpha_off(p, b, t, q)) + acc_ld(row, q));
        }
        ACC sum = ACC(0);
        ACC shift = m == NEG_INF ? ACC(0) : m;
        for (int64_t q = 0; q < states; ++q) {
          if (label_at(p, toff, q) != l) continue;
          sum += nn_exp(acc_ld(p.log_alpha, alpha_off(p, b, t, q)) + acc_ld(row, q) - shift);
        }
        ACC lcab = m == NEG_INF ? NEG_INF : nn_log(sum) + shift;
        ACC lp = lp_at(p, t, b, l);
        acc_st(p.grad, t * p.grad_strides[0] + b * p.grad_strides[1] + l * p.grad_strides[2],
               (nn_exp(lp) - nn_exp(lcab + nll - lp)) * gr);
      }
      sync_memory();
    }
#endif
  }
}
