// The attention family's GEMM path: S = q k^T into fp32 scratch, row-wise softmax / dS shaders,
// and the products with v, dout, k and q on the GEMM kernels (cooperative matrices for fp16 /
// bf16 where the device has them). The (batch, key head) pairs go in chunks whose scratch fits a
// budget; grouped-query heads loop over the index g within a group, each GEMM batched over
// (batch, key head) with the query-side head stride times the group size.
#include "ops/attention/attention_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ops/attention/attention_policy.h"
#include "ops/launch.h"
#include "ops/nn_util.h"
#include "vkml/config.h"
#include "vkml/device.h"
#include "vkml/errors.h"
#include "vkml/gemm.h"

namespace vkml::ops::attention_gemm {

namespace {

constexpr uint64_t kMiB = 1ull << 20;

DType data_dtype(const AttentionParams& p) {
  return p.dtype == nn::kF16 ? DType::kF16 : p.dtype == nn::kBF16 ? DType::kBF16 : DType::kF32;
}

// Total bytes of score scratch one call may hold: VKML_ATTENTION_SCRATCH, else 256 MiB within
// ops::scratch_budget.
uint64_t score_scratch_budget(const DeviceCaps& caps) {
  const int64_t set = config().attention_scratch;
  return set != kConfigAuto ? static_cast<uint64_t>(set) : ops::scratch_budget(caps, 256 * kMiB);
}

// Elements between rows of the score scratch: kv_len rounded up to 8, so that each row starts
// 16 bytes aligned and the GEMMs writing S and dP store whole vectors (ViT's 197 keys: scalar
// stores at every row otherwise).
int64_t score_ld(const AttentionParams& p) { return (p.kv_len + 7) / 8 * 8; }

// Elements of one (batch, key head) pair's score buffer: q_len padded rows.
int64_t pair_elems(const AttentionParams& p) { return p.q_len * score_ld(p); }

// Scratch bytes per (batch, key head) pair: fp32 buffers plus half copies of P / dS.
uint64_t pair_bytes(const AttentionParams& p, int fp32_buffers, int half_buffers) {
  return static_cast<uint64_t>(pair_elems(p)) * (4ull * fp32_buffers + 2ull * half_buffers);
}

// Pairs per chunk: whole batches of key heads when they fit, else runs of heads of one batch.
struct Chunk {
  int64_t batches = 0, heads = 0;
};

Chunk chunk_for(const AttentionParams& p, uint64_t per_pair, uint64_t budget) {
  const int64_t fit = static_cast<int64_t>(budget / std::max<uint64_t>(per_pair, 1));
  if (fit >= p.kv_heads) return {std::min(p.batch, fit / p.kv_heads), p.kv_heads};
  return {1, std::max<int64_t>(fit, 1)};
}

// Heads h_first, h_first + h_step, ... of batches b0, b0 + 1, ... of a 4-D tensor.
MatrixView heads_view(uint64_t base, const int64_t* st, DType t, int64_t b0, int64_t h_first,
                      int64_t h_step) {
  MatrixView v;
  v.address = base + dtype_size(t) * static_cast<uint64_t>(b0 * st[0] + h_first * st[1]);
  v.row_stride = st[2];
  v.col_stride = st[3];
  v.batch_stride[0] = st[0];
  v.batch_stride[1] = st[1] * h_step;
  return v;
}

// Row-major L x S scores of each pair of a (batches, heads) chunk.
MatrixView scores_view(uint64_t base, const AttentionParams& p, int64_t heads) {
  MatrixView v;
  v.address = base;
  v.row_stride = score_ld(p);
  v.col_stride = 1;
  v.batch_stride[1] = pair_elems(p);
  v.batch_stride[0] = heads * v.batch_stride[1];
  return v;
}

// One chunk of the loop: batches [b0, b0 + nb), key heads [hk0, hk0 + nh), group index g.
struct Step {
  int64_t b0, nb, hk0, nh, g;
};

void product(Device& dev, const Step& s, int64_t m, int64_t n, int64_t k, DType in, DType out,
             const MatrixView& a, const MatrixView& b, const MatrixView& c, double alpha,
             bool accumulate) {
  GemmDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.batch[0] = s.nb;
  d.batch[1] = s.nh;
  d.in_dtype = in;
  d.out_dtype = out;
  d.a = a;
  d.b = b;
  d.c = c;
  d.alpha = alpha;
  if (accumulate) {
    d.c_in = c;
    d.beta = 1.0;
  }
  gemm(dev, d);
}

void rows_pass(Device& dev, const char* shader, const AttentionParams& p, const Step& s,
               AttentionRowsParams rp, std::span<const MemRange> reads,
               std::span<const MemRange> writes) {
  rp.attn = dev.stream().params(&p, sizeof(p));
  rp.rows = s.nb * s.nh * p.q_len;
  rp.b0 = s.b0;
  rp.hk0 = s.hk0;
  rp.chunk_heads = s.nh;
  rp.group_index = s.g;
  rp.ld = score_ld(p);
  // About 4 keys per thread: short rows share a workgroup, long ones get all of it.
  const uint32_t wg = attention_rows_workgroup(dev.caps());
  uint32_t row_threads = 1;
  while (row_threads < wg && row_threads * 4 < p.kv_len) row_threads *= 2;
  rp.row_threads = row_threads;
  const int64_t rows_per_group = wg / row_threads;
  nn::dispatch_groups(dev, shader, wg, (rp.rows + rows_per_group - 1) / rows_per_group, &rp,
                      sizeof(rp), reads, writes);
}

// Calls fn(step) over every chunk of pairs and group index (g innermost, so that the key-side
// gradients of one chunk accumulate over g in consecutive GEMMs).
template <typename Fn>
void for_each_step(const AttentionParams& p, const Chunk& c, Fn&& fn) {
  const int64_t group = p.heads / p.kv_heads;
  for (int64_t b0 = 0; b0 < p.batch; b0 += c.batches) {
    for (int64_t hk0 = 0; hk0 < p.kv_heads; hk0 += c.heads) {
      for (int64_t g = 0; g < group; ++g) {
        fn(Step{b0, std::min(c.batches, p.batch - b0), hk0, std::min(c.heads, p.kv_heads - hk0),
                g});
      }
    }
  }
}

MemRange bytes_at(uint64_t address, uint64_t bytes) { return {address, address ? bytes : 0}; }

}  // namespace

bool applies(const Device& dev, const AttentionParams& p, bool backward) {
  // auto: the attention policy's choice; gemm forces the GEMMs, fused the fused kernels; flash
  // chooses as auto where its kernel does not apply (the backward, other dtypes, other devices).
  const std::string& mode = config().attention;
  const bool forced = mode == "gemm" || (mode == "gemm-backward" && backward);
  const bool by_policy = mode == "auto" || mode == "flash" || mode == "flash-forward";
  if (!forced && !by_policy) return false;
  if (by_policy && !attention_gemm_by_default(dev.caps(), p.kv_len)) return false;
  if (p.batch * p.heads == 0 || p.q_len == 0 || p.kv_len == 0 || p.head_dim == 0 ||
      p.v_head_dim == 0) {
    return false;
  }
  const bool half = p.dtype != nn::kF32;
  const uint64_t per_pair = backward ? pair_bytes(p, 2, half ? 2 : 0) : pair_bytes(p, 1, half);
  return per_pair <= score_scratch_budget(dev.caps());
}

void forward(Device& dev, const AttentionParams& p, const TensorDesc& lse, const MemRange& mask) {
  const DType dt = data_dtype(p);
  const bool half = dt != DType::kF32;
  const Chunk c = chunk_for(p, pair_bytes(p, 1, half), score_scratch_budget(dev.caps()));
  const uint64_t elems = static_cast<uint64_t>(c.batches * c.heads * pair_elems(p));
  nn::Scratch scores(dev, elems * 4);
  nn::Scratch prob_half(dev, half ? elems * 2 : 0);
  const uint64_t prob = half ? prob_half.address() : scores.address();
  const int64_t group = p.heads / p.kv_heads;
  const MemRange lse_range = nn::range_of(lse);
  for_each_step(p, c, [&](const Step& s) {
    const uint64_t n = static_cast<uint64_t>(s.nb * s.nh * pair_elems(p));
    const MatrixView q = heads_view(p.q, p.q_strides, dt, s.b0, s.hk0 * group + s.g, group);
    const MatrixView k = heads_view(p.k, p.k_strides, dt, s.b0, s.hk0, 1);
    const MatrixView v = heads_view(p.v, p.v_strides, dt, s.b0, s.hk0, 1);
    const MatrixView o = heads_view(p.o, p.o_strides, dt, s.b0, s.hk0 * group + s.g, group);
    product(dev, s, p.q_len, p.kv_len, p.head_dim, dt, DType::kF32, q, k.transposed(),
            scores_view(scores.address(), p, s.nh), 1.0, false);
    AttentionRowsParams rp{};
    rp.scores = scores.address();
    rp.prob = prob;
    rp.out_dtype = p.dtype;
    const MemRange reads[] = {bytes_at(scores.address(), n * 4), mask};
    const MemRange writes[] = {bytes_at(prob, n * (half ? 2 : 4)), lse_range};
    rows_pass(dev, "attention_rows_fwd", p, s, rp, reads, writes);
    product(dev, s, p.q_len, p.v_head_dim, p.kv_len, dt, dt, scores_view(prob, p, s.nh), v, o,
            1.0, false);
  });
}

void backward(Device& dev, const AttentionParams& p, const TensorDesc& grad_q,
              const TensorDesc& grad_k, const TensorDesc& grad_v, const TensorDesc& lse, const MemRange& delta, const MemRange& mask) {
  const DType dt = data_dtype(p);
  const bool half = dt != DType::kF32;
  const bool want_q = grad_q.address && grad_q.numel() > 0;
  const bool want_k = grad_k.address && grad_k.numel() > 0;
  const bool want_v = grad_v.address && grad_v.numel() > 0;
  if (!want_q && !want_k && !want_v) return;
  const bool want_ds = want_q || want_k;
  const int fp32_buffers = want_ds ? 2 : 1;
  const int half_buffers = half ? (want_ds ? 1 : 0) + (want_v ? 1 : 0) : 0;
  const Chunk c = chunk_for(p, pair_bytes(p, fp32_buffers, half_buffers),
                            score_scratch_budget(dev.caps()));
  const uint64_t elems = static_cast<uint64_t>(c.batches * c.heads * pair_elems(p));
  nn::Scratch scores(dev, elems * 4);
  nn::Scratch dprob(dev, want_ds ? elems * 4 : 0);
  nn::Scratch prob_half(dev, half && want_v ? elems * 2 : 0);
  nn::Scratch ds_half(dev, half && want_ds ? elems * 2 : 0);
  // fp32: P_dropped and dS overwrite the scores and dP in place.
  const uint64_t prob = !want_v ? 0 : half ? prob_half.address() : scores.address();
  const uint64_t ds = !want_ds ? 0 : half ? ds_half.address() : dprob.address();
  const uint64_t out_size = half ? 2 : 4;
  const int64_t group = p.heads / p.kv_heads;
  const MemRange lse_range = nn::range_of(lse);
  const double scale = p.scale;
  for_each_step(p, c, [&](const Step& s) {
    const uint64_t n = static_cast<uint64_t>(s.nb * s.nh * pair_elems(p));
    const int64_t hq = s.hk0 * group + s.g;
    const MatrixView q = heads_view(p.q, p.q_strides, dt, s.b0, hq, group);
    const MatrixView k = heads_view(p.k, p.k_strides, dt, s.b0, s.hk0, 1);
    const MatrixView v = heads_view(p.v, p.v_strides, dt, s.b0, s.hk0, 1);
    const MatrixView dout = heads_view(p.dout, p.dout_strides, dt, s.b0, hq, group);
    product(dev, s, p.q_len, p.kv_len, p.head_dim, dt, DType::kF32, q, k.transposed(),
            scores_view(scores.address(), p, s.nh), 1.0, false);
    if (want_ds) {
      product(dev, s, p.q_len, p.kv_len, p.v_head_dim, dt, DType::kF32, dout, v.transposed(),
              scores_view(dprob.address(), p, s.nh), 1.0, false);
    }
    AttentionRowsParams rp{};
    rp.scores = scores.address();
    rp.dprob = want_ds ? dprob.address() : 0;
    rp.prob = prob;
    rp.dscore = ds;
    rp.out_dtype = p.dtype;
    const MemRange reads[] = {bytes_at(scores.address(), n * 4),
                              bytes_at(rp.dprob, n * 4), lse_range, delta, mask};
    const MemRange writes[] = {bytes_at(prob, n * out_size), bytes_at(ds, n * out_size)};
    rows_pass(dev, "attention_rows_bwd", p, s, rp, reads, writes);
    // Key-side gradients sum over the query heads of a group: the first g writes, the rest add.
    const bool add = s.g > 0;
    if (want_v) {
      const MatrixView gv = heads_view(grad_v.address, grad_v.strides.data(), dt, s.b0, s.hk0, 1);
      product(dev, s, p.kv_len, p.v_head_dim, p.q_len, dt, dt,
              scores_view(prob, p, s.nh).transposed(), dout, gv, 1.0, add);
    }
    if (want_q) {
      const MatrixView gq = heads_view(grad_q.address, grad_q.strides.data(), dt, s.b0, hq, group);
      product(dev, s, p.q_len, p.head_dim, p.kv_len, dt, dt, scores_view(ds, p, s.nh), k, gq,
              scale, false);
    }
    if (want_k) {
      const MatrixView gk = heads_view(grad_k.address, grad_k.strides.data(), dt, s.b0, s.hk0, 1);
      product(dev, s, p.kv_len, p.head_dim, p.q_len, dt, dt,
              scores_view(ds, p, s.nh).transposed(), q, gk, scale, add);
    }
  });
}

}  // namespace vkml::ops::attention_gemm
