// The attention family: validation, tile plan and launches of the fused kernels.
#include "vkml/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ops/attention/attention_decode.h"
#include "ops/attention/attention_flash.h"
#include "ops/attention/attention_gemm.h"
#include "ops/attention/attention_params.h"
#include "ops/attention/attention_policy.h"
#include "ops/nn_util.h"
#include "vkml/config.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Workgroup shape: BR rows of TPR threads, tiles of BC, staged chunks of EC columns.
struct Tiles {
  uint32_t threads, br, bc, ec;
};

std::atomic<bool> g_force_gpu_tiles{false};

bool cpu_tiles(const DeviceCaps& caps) { return attention_small_tiles(caps) && !g_force_gpu_tiles; }

Tiles tiles_for(const DeviceCaps& caps) {
  // A CPU (lavapipe) has few cores: small workgroups keep them all busy on small problems.
  Tiles t = cpu_tiles(caps) ? Tiles{64, 16, 32, 16} : Tiles{128, 32, 64, 16};
  auto shared_bytes = [](const Tiles& x) {
    return 4u * ((x.br + x.bc) * (x.ec + 1) + 2 * x.br * x.bc + x.threads);
  };
  while (shared_bytes(t) > caps.max_shared_memory || t.threads > caps.max_workgroup_invocations) {
    if (t.br <= 4) throw NotSupported("vkml: attention tiles do not fit this device");
    t = Tiles{t.threads / 2, t.br / 2, t.bc / 2, t.ec};
  }
  return t;
}

// Output columns per workgroup, fixed per device so that each kernel has one pipeline; wider
// heads take several workgroups, each recomputing the scores. lavapipe compiles every pipeline
// with LLVM, so it gets a small block (short compiles) and GPUs one that covers usual heads.
uint32_t column_block(const DeviceCaps& caps) { return cpu_tiles(caps) ? 32 : 128; }

void copy_strides(int64_t* dst, const TensorDesc& t) {
  for (int d = 0; d < 4; ++d) dst[d] = t.strides[d];
}

void check_4d(const TensorDesc& t, const char* what) {
  if (t.ndim() != 4) {
    throw InvalidArgument(std::string("vkml: attention: ") + what +
                          " must be 4-D (batch, heads, seq, dim), got " + t.describe());
  }
}

void check_sizes(const TensorDesc& t, std::initializer_list<int64_t> sizes, const char* what) {
  if (t.sizes != std::vector<int64_t>(sizes)) {
    throw InvalidArgument(std::string("vkml: attention: ") + what + " has the wrong shape: " +
                          t.describe());
  }
}

// Fills everything but the gradient pointers; validates shapes, dtypes and the mask.
AttentionParams make_params(const Device& dev, const TensorDesc& q, const TensorDesc& k,
                            const TensorDesc& v, const TensorDesc& mask,
                            const AttentionOptions& opt) {
  check_4d(q, "query");
  check_4d(k, "key");
  check_4d(v, "value");
  AttentionParams p{};
  p.batch = q.sizes[0];
  p.heads = q.sizes[1];
  p.q_len = q.sizes[2];
  p.head_dim = q.sizes[3];
  p.kv_heads = k.sizes[1];
  p.kv_len = k.sizes[2];
  p.v_head_dim = v.sizes[3];
  check_sizes(k, {p.batch, p.kv_heads, p.kv_len, p.head_dim}, "key");
  check_sizes(v, {p.batch, p.kv_heads, p.kv_len, p.v_head_dim}, "value");
  if (p.kv_heads == 0 ? p.heads != 0 : p.heads % p.kv_heads != 0) {
    throw InvalidArgument("vkml: attention: query heads (" + std::to_string(p.heads) +
                          ") must be a multiple of key/value heads (" +
                          std::to_string(p.kv_heads) + ")");
  }
  if (q.dtype != k.dtype || q.dtype != v.dtype) {
    throw InvalidArgument("vkml: attention: query, key and value must share one dtype");
  }
  p.dtype = nn::float_code(q, "attention query");
  if (p.dtype == nn::kF64) {
    throw NotSupported("vkml: attention: float64 has no fused kernel (use the math path)");
  }
  (void)dev;
  p.q = q.address;
  p.k = k.address;
  p.v = v.address;
  copy_strides(p.q_strides, q);
  copy_strides(p.k_strides, k);
  copy_strides(p.v_strides, v);
  p.mask_dtype = VKML_ATTN_MASK_NONE;
  if (mask.address != 0) {
    if (mask.ndim() > 4) throw InvalidArgument("vkml: attention: mask has more than 4 dims");
    const int64_t full[4] = {p.batch, p.heads, p.q_len, p.kv_len};
    const int off = 4 - mask.ndim();
    for (int d = 0; d < 4; ++d) {
      int64_t size = d < off ? 1 : mask.sizes[d - off];
      if (size != full[d] && size != 1) {
        throw InvalidArgument("vkml: attention: mask " + mask.describe() +
                              " does not broadcast to (B, H, L, S)");
      }
      p.mask_strides[d] = size == 1 ? 0 : mask.strides[d - off];
    }
    if (mask.dtype == DType::kBool) {
      p.mask_dtype = VKML_ATTN_MASK_BOOL;
    } else if (mask.dtype == q.dtype) {
      p.mask_dtype = p.dtype;
    } else {
      throw InvalidArgument("vkml: attention: mask must be bool or of the query's dtype");
    }
    p.mask = mask.address;
  }
  if (!(opt.dropout_p >= 0.0 && opt.dropout_p <= 1.0)) {
    throw InvalidArgument("vkml: attention: dropout probability must be in [0, 1]");
  }
  p.scale = static_cast<float>(opt.scale);
  p.causal = opt.causal ? 1u : 0u;
  p.dropout = opt.dropout_p > 0.0 ? 1u : 0u;
  p.keep_prob = static_cast<float>(1.0 - opt.dropout_p);
  p.keep_scale = opt.dropout_p >= 1.0 ? 0.0f : static_cast<float>(1.0 / (1.0 - opt.dropout_p));
  p.seed = opt.seed;
  p.offset = opt.offset;
  return p;
}

// One dispatch of attention_<mode>: `rows` rows per (batch, head pair), `cols` output columns.
void launch(Device& dev, const std::string& mode, const AttentionParams& p, int64_t pairs,
            int64_t rows, int64_t cols, std::span<const MemRange> reads,
            std::span<const MemRange> writes) {
  const Tiles t = tiles_for(dev.caps());
  const uint32_t xc = column_block(dev.caps());
  const uint32_t spec[] = {t.threads, t.br, t.bc, t.ec, xc};
  const int64_t gx = ceil_div(rows, t.br), gz = ceil_div(cols, xc);
  const int64_t gy = std::min<int64_t>(pairs, 65535);  // the shader loops over the rest
  if (gx > 65535 || gz > 65535) throw NotSupported("vkml: attention: sequence too long");
  const Pipeline& pipe = dev.pipeline("attention_" + mode, spec);
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  dev.stream().dispatch(pipe, static_cast<uint32_t>(gx), static_cast<uint32_t>(gy),
                        static_cast<uint32_t>(gz), &addr, sizeof(addr), reads, writes);
}

// The cooperative-matrix forward's launch shape, when it applies: fp16/bf16 data, a device with
// 16x16x16 coopmat of that type into f32, the variant built, a supported subgroup size, head
// dims up to 256 and tiles that fit shared memory. VKML_SDPA_COOPMAT=0 turns it off; =1 makes
// the forward raise NotSupported where it does not apply (to be sure a test exercises it).
struct CoopPlan {
  std::string shader;
  std::vector<uint32_t> spec;
  uint32_t rows_per_group = 0;
};

std::optional<CoopPlan> coopmat_plan(const DeviceCaps& caps, DType t, int64_t e, int64_t ev) {
  if (config().sdpa_coopmat == "0") return std::nullopt;
  if (t != DType::kF16 && t != DType::kBF16) return std::nullopt;
  const std::string shader = t == DType::kF16 ? "attention_coopmat_f16" : "attention_coopmat_bf16";
  const uint32_t sg = caps.subgroup_size;
  if (!attention_flash::coopmat_16(caps, t) || !has_shader(shader) || !(sg == 16 || sg == 32 || sg == 64)) {
    return std::nullopt;
  }
  if (e > 256 || ev > 256) return std::nullopt;
  const uint32_t d = static_cast<uint32_t>(ceil_div(std::max<int64_t>(e, 1), 16) * 16);
  const uint32_t dv = static_cast<uint32_t>(ceil_div(std::max<int64_t>(ev, 1), 16) * 16);
  const uint32_t bc = 32, pad = 8;
  for (uint32_t nsg : {4u, 2u, 1u}) {
    const uint32_t br = 16 * nsg, krows = std::max(br, bc), wi = std::max(sg, 16u);
    const uint64_t bytes = 2ull * (krows * (d + pad) + bc * (dv + pad) + nsg * 16 * (bc + pad)) +
                           4ull * (nsg * 16 * (bc + 4) + nsg * wi * 2 + nsg * 32);
    if (bytes <= caps.max_shared_memory && nsg * sg <= caps.max_workgroup_invocations) {
      return CoopPlan{shader, {nsg * sg, nsg, bc, d, dv, sg}, br};
    }
  }
  return std::nullopt;
}

MemRange mask_range(const TensorDesc& mask) {
  return mask.address ? nn::range_of(mask) : MemRange{};
}

}  // namespace

void attention_force_gpu_tiles(bool on) { g_force_gpu_tiles = on; }

void attention_forward(Device& dev, const TensorDesc& out, const TensorDesc& lse,
                       const TensorDesc& q, const TensorDesc& k, const TensorDesc& v,
                       const TensorDesc& mask, const AttentionOptions& opt) {
  AttentionParams p = make_params(dev, q, k, v, mask, opt);
  check_sizes(out, {p.batch, p.heads, p.q_len, p.v_head_dim}, "output");
  check_sizes(lse, {p.batch, p.heads, p.q_len}, "logsumexp");
  if (out.dtype != q.dtype) throw InvalidArgument("vkml: attention: output dtype differs");
  if (lse.dtype != DType::kF32 || !lse.is_contiguous()) {
    throw InvalidArgument("vkml: attention: logsumexp must be contiguous float32");
  }
  if (out.numel() == 0) return;
  p.o = out.address;
  p.lse = lse.address;
  copy_strides(p.o_strides, out);
  MemRange reads[] = {nn::range_of(q), nn::range_of(k), nn::range_of(v), mask_range(mask)};
  MemRange writes[] = {nn::range_of(out), nn::range_of(lse)};
  if (config().attention == "flash" || config().attention == "flash-forward") {
    if (std::optional<attention_flash::Plan> fp = attention_flash::plan(dev.caps(), p)) {
      attention_flash::forward(dev, p, *fp, reads, writes);
      return;
    }
    if (config().sdpa_coopmat == "1") {
      throw NotSupported("vkml: attention: VKML_ATTENTION=flash with VKML_SDPA_COOPMAT=1 but the "
                         "flash kernel does not apply here (device, build, dtype or head dim)");
    }
  }
  if (attention_decode::applies(dev, p, g_force_gpu_tiles)) {
    attention_decode::forward(dev, p, g_force_gpu_tiles, reads, writes);
    return;
  }
  if (attention_gemm::applies(dev, p, false)) {
    attention_gemm::forward(dev, p, lse, mask_range(mask));
    return;
  }
  std::optional<CoopPlan> plan = coopmat_plan(dev.caps(), q.dtype, p.head_dim, p.v_head_dim);
  if (!plan && config().sdpa_coopmat == "1") {
    throw NotSupported("vkml: attention: VKML_SDPA_COOPMAT=1 but the cooperative-matrix kernel "
                       "does not apply here (device, build, dtype or head dim)");
  }
  if (plan) {
    const int64_t gx = ceil_div(p.q_len, plan->rows_per_group);
    const int64_t gy = std::min<int64_t>(p.batch * p.heads, 65535);
    if (gx > 65535) throw NotSupported("vkml: attention: sequence too long");
    const Pipeline& pipe = dev.pipeline(plan->shader, plan->spec);
    uint64_t addr = dev.stream().params(&p, sizeof(p));
    dev.stream().dispatch(pipe, static_cast<uint32_t>(gx), static_cast<uint32_t>(gy), 1, &addr,
                          sizeof(addr), reads, writes);
    return;
  }
  launch(dev, "fwd", p, p.batch * p.heads, p.q_len, p.v_head_dim, reads, writes);
}

void attention_backward(Device& dev, const TensorDesc& grad_q, const TensorDesc& grad_k,
                        const TensorDesc& grad_v, const TensorDesc& grad_out,
                        const TensorDesc& q, const TensorDesc& k, const TensorDesc& v,
                        const TensorDesc& out, const TensorDesc& lse, const TensorDesc& mask,
                        const AttentionOptions& opt) {
  AttentionParams p = make_params(dev, q, k, v, mask, opt);
  check_sizes(out, {p.batch, p.heads, p.q_len, p.v_head_dim}, "output");
  check_sizes(grad_out, {p.batch, p.heads, p.q_len, p.v_head_dim}, "grad_output");
  check_sizes(lse, {p.batch, p.heads, p.q_len}, "logsumexp");
  if (lse.dtype != DType::kF32 || !lse.is_contiguous()) {
    throw InvalidArgument("vkml: attention: logsumexp must be contiguous float32");
  }
  if (out.dtype != q.dtype || grad_out.dtype != q.dtype) {
    throw InvalidArgument("vkml: attention: output and grad_output must have the query's dtype");
  }
  if (grad_q.address) check_sizes(grad_q, {p.batch, p.heads, p.q_len, p.head_dim}, "grad_query");
  if (grad_k.address) check_sizes(grad_k, {p.batch, p.kv_heads, p.kv_len, p.head_dim}, "grad_key");
  if (grad_v.address) {
    check_sizes(grad_v, {p.batch, p.kv_heads, p.kv_len, p.v_head_dim}, "grad_value");
  }
  for (const TensorDesc* g : {&grad_q, &grad_k, &grad_v}) {
    if (g->address && g->dtype != q.dtype) {
      throw InvalidArgument("vkml: attention: gradients must have the query's dtype");
    }
  }
  p.o = out.address;
  p.lse = lse.address;
  p.dout = grad_out.address;
  copy_strides(p.o_strides, out);
  copy_strides(p.dout_strides, grad_out);
  const int64_t rows = p.batch * p.heads * p.q_len;
  nn::Scratch delta(dev, static_cast<uint64_t>(std::max<int64_t>(rows, 1)) * 4);
  p.delta = delta.address();
  const MemRange delta_range{delta.address(), static_cast<uint64_t>(rows) * 4};
  if (rows > 0) {
    MemRange reads[] = {nn::range_of(out), nn::range_of(grad_out)};
    MemRange writes[] = {delta_range};
    constexpr uint32_t kWorkgroup = 64;
    nn::dispatch_groups(dev, "attention_delta", kWorkgroup, nn::groups_for(rows, kWorkgroup), &p,
                        sizeof(p), reads, writes);
  }
  if (config().attention == "flash") {
    if (std::optional<attention_flash::Plan> fp = attention_flash::backward_plan(dev.caps(), p)) {
      const MemRange flash_reads[] = {nn::range_of(q),   nn::range_of(k),        nn::range_of(v),
                                      nn::range_of(lse), nn::range_of(grad_out), delta_range,
                                      mask_range(mask)};
      attention_flash::backward(dev, p, *fp, grad_q, grad_k, grad_v, flash_reads);
      return;
    }
    if (config().sdpa_coopmat == "1") {
      throw NotSupported("vkml: attention: VKML_ATTENTION=flash with VKML_SDPA_COOPMAT=1 but the "
                         "flash backward does not apply here (device, build, dtype or head dim)");
    }
  }
  if (attention_gemm::applies(dev, p, true)) {
    attention_gemm::backward(dev, p, grad_q, grad_k, grad_v, lse, delta_range, mask_range(mask));
    return;
  }
  MemRange reads[] = {nn::range_of(q),   nn::range_of(k),        nn::range_of(v),
                      nn::range_of(lse), nn::range_of(grad_out), delta_range,
                      mask_range(mask)};
  auto run = [&](const TensorDesc& g, const char* mode, int64_t pairs, int64_t n_rows,
                 int64_t cols) {
    if (!g.address || g.numel() == 0) return;
    AttentionParams pg = p;
    pg.g = g.address;
    copy_strides(pg.g_strides, g);
    MemRange writes[] = {nn::range_of(g)};
    launch(dev, mode, pg, pairs, n_rows, cols, reads, writes);
  };
  run(grad_q, "dq", p.batch * p.heads, p.q_len, p.head_dim);
  run(grad_k, "dk", p.batch * p.kv_heads, p.kv_len, p.head_dim);
  run(grad_v, "dv", p.batch * p.kv_heads, p.kv_len, p.v_head_dim);
}

}  // namespace vkml::ops
