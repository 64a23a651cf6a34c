// The attention family's single-pass cooperative-matrix forward (attention_flash.comp): launch
// plan and recording. Tile choices: docs/design/attention.md#flash-forward
#include "ops/attention/attention_flash.h"

#include <algorithm>

#include "ops/nn_util.h"
#include "vkml/config.h"
#include "vkml/device.h"
#include "vkml/errors.h"

namespace vkml::ops::attention_flash {

namespace {

constexpr uint32_t kSubgroupVoteBit = 0x2;      // VK_SUBGROUP_FEATURE_VOTE_BIT
constexpr uint32_t kSubgroupShuffleBit = 0x10;  // VK_SUBGROUP_FEATURE_SHUFFLE_BIT

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// 16-byte loads of one operand: unit column stride, other strides and the base address multiples
// of 8 elements, and a head dim that is a multiple of 8.
bool vector_loads(uint64_t address, const int64_t* strides, int64_t cols) {
  return strides[3] == 1 && strides[0] % 8 == 0 && strides[1] % 8 == 0 && strides[2] % 8 == 0 &&
         address % 16 == 0 && cols % 8 == 0;
}

// Shared bytes of the kernel's arrays for one tile shape (see attention_flash.comp).
uint64_t shared_bytes(uint32_t nsg, uint32_t qb, uint32_t bc, uint32_t d, uint32_t dv,
                      uint32_t stages) {
  const uint64_t rows = 16ull * qb * nsg;
  const uint64_t stage = uint64_t(bc) * ((d / 8 + 1) + (dv / 8 + 1));
  const uint64_t kv = std::max<uint64_t>(stages * stage, rows * (d / 8 + 1));
  return 16 * kv + 4 * rows * (bc + 4) + 2 * rows * (bc + 8);
}

// Shared bytes of the backward kernels' arrays (the largest of the three modes).
uint64_t backward_shared_bytes(uint32_t nsg, uint32_t bc, uint32_t d, uint32_t dv) {
  const uint64_t rows = 16ull * nsg, xld = d / 8 + 1, yld = dv / 8 + 1;
  const uint64_t kv = std::max<uint64_t>(bc * (xld + yld), rows * std::max(xld, yld));
  return 16 * kv + 2 * 4 * rows * (bc + 4) + 2 * rows * (bc + 8) + 2 * 4 * bc;
}

// What the forward and the backward share: the variants' dtype suffix, the padded head dims and
// the load width; nothing where the device or the build lacks what the kernels need.
struct Common {
  std::string suffix;  // _f16 or _bf16
  uint32_t sg = 0, d = 0, dv = 0;
  bool vec = false;
};

std::optional<Common> common(const DeviceCaps& caps, const AttentionParams& p,
                             const std::string& probe) {
  if (p.dtype != nn::kF16 && p.dtype != nn::kBF16) return std::nullopt;
  const DType t = p.dtype == nn::kF16 ? DType::kF16 : DType::kBF16;
  const std::string suffix = t == DType::kF16 ? "_f16" : "_bf16";
  const uint32_t sg = caps.subgroup_size;
  const uint32_t ops = kSubgroupVoteBit | kSubgroupShuffleBit;
  if (!coopmat_16(caps, t) || !has_shader(probe + suffix) || !(sg == 16 || sg == 32 || sg == 64) ||
      (caps.subgroup_ops & ops) != ops) {
    return std::nullopt;
  }
  if (p.head_dim < 1 || p.head_dim > 256 || p.v_head_dim < 1 || p.v_head_dim > 256) {
    return std::nullopt;
  }
  Common c;
  c.suffix = suffix;
  c.sg = sg;
  c.d = static_cast<uint32_t>(ceil_div(p.head_dim, 16) * 16);
  c.dv = static_cast<uint32_t>(ceil_div(p.v_head_dim, 16) * 16);
  c.vec = vector_loads(p.q, p.q_strides, p.head_dim) &&
          vector_loads(p.k, p.k_strides, p.head_dim) &&
          vector_loads(p.v, p.v_strides, p.v_head_dim);
  return c;
}

}  // namespace

bool coopmat_16(const DeviceCaps& caps, DType t) {
  if (!caps.coopmat || (t == DType::kBF16 && !caps.coopmat_bf16)) return false;
  for (const CoopMatShape& s : caps.coopmat_shapes) {
    if (s.m == 16 && s.n == 16 && s.k == 16 && s.a == t && s.b == t && s.c == DType::kF32 &&
        s.result == DType::kF32) {
      return true;
    }
  }
  return false;
}

std::optional<Plan> plan(const DeviceCaps& caps, const AttentionParams& p) {
  const std::optional<Common> c = common(caps, p, "attention_flash");
  if (!c) return std::nullopt;
  const std::string shader = "attention_flash" + c->suffix;
  const uint32_t sg = c->sg, d = c->d, dv = c->dv;
  const bool vec = c->vec;
  // Two query blocks per subgroup reuse each staged key and value fragment twice; above 64
  // columns their queries and accumulators no longer fit the registers.
  std::vector<uint32_t> qbs = d <= 64 && dv <= 64 ? std::vector<uint32_t>{2, 1}
                                                  : std::vector<uint32_t>{1};
  const std::string& set = config().attention_flash_qblocks;
  if (set != "auto") qbs = {static_cast<uint32_t>(std::stoul(set))};
  for (uint32_t qb : qbs) {
    for (uint32_t nsg : {4u, 2u}) {
      if (nsg * sg > caps.max_workgroup_invocations) continue;
      for (uint32_t bc : {64u, 32u, 16u}) {
        for (uint32_t stages : {2u, 1u}) {
          if (shared_bytes(nsg, qb, bc, d, dv, stages) > caps.max_shared_memory) continue;
          return Plan{shader, {nsg * sg, nsg, qb, bc, d, dv, sg, stages, vec ? 1u : 0u},
                      16 * qb * nsg};
        }
      }
    }
  }
  return std::nullopt;
}

void forward(Device& dev, const AttentionParams& p, const Plan& plan,
             std::span<const MemRange> reads, std::span<const MemRange> writes) {
  const int64_t gx = ceil_div(p.q_len, plan.rows_per_group);
  const int64_t gy = std::min<int64_t>(p.batch * p.heads, 65535);  // the shader loops over the rest
  if (gx > 65535) throw NotSupported("vkml: attention: sequence too long");
  if (gx == 0 || gy == 0) return;
  const Pipeline& pipe = dev.pipeline(plan.shader, plan.spec);
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  dev.stream().dispatch(pipe, static_cast<uint32_t>(gx), static_cast<uint32_t>(gy), 1, &addr,
                        sizeof(addr), reads, writes);
}


std::optional<Plan> backward_plan(const DeviceCaps& caps, const AttentionParams& p) {
  const std::optional<Common> c = common(caps, p, "attention_flash_dq");
  if (!c || !has_shader("attention_flash_dk" + c->suffix) ||
      !has_shader("attention_flash_dv" + c->suffix)) {
    return std::nullopt;
  }
  // dout is staged too (in registers for dq, as tiles for dk and dv).
  const bool vec = c->vec && vector_loads(p.dout, p.dout_strides, p.v_head_dim);
  for (uint32_t nsg : {4u, 2u}) {
    if (nsg * c->sg > caps.max_workgroup_invocations) continue;
    for (uint32_t bc : {64u, 32u, 16u}) {
      if (backward_shared_bytes(nsg, bc, c->d, c->dv) > caps.max_shared_memory) continue;
      return Plan{c->suffix, {nsg * c->sg, nsg, bc, c->d, c->dv, c->sg, vec ? 1u : 0u}, 16 * nsg};
    }
  }
  return std::nullopt;
}

void backward(Device& dev, const AttentionParams& p, const Plan& plan, const TensorDesc& grad_q,
              const TensorDesc& grad_k, const TensorDesc& grad_v, std::span<const MemRange> reads) {
  auto run = [&](const TensorDesc& g, const char* mode, int64_t pairs, int64_t rows) {
    if (!g.address || g.numel() == 0) return;
    AttentionParams pg = p;
    pg.g = g.address;
    for (int d = 0; d < 4; ++d) pg.g_strides[d] = g.strides[d];
    const int64_t gx = ceil_div(rows, plan.rows_per_group);
    const int64_t gy = std::min<int64_t>(pairs, 65535);  // the shader loops over the rest
    if (gx > 65535) throw NotSupported("vkml: attention: sequence too long");
    const MemRange writes[] = {nn::range_of(g)};
    const Pipeline& pipe = dev.pipeline(std::string("attention_flash_") + mode + plan.shader,
                                        plan.spec);
    uint64_t addr = dev.stream().params(&pg, sizeof(pg));
    dev.stream().dispatch(pipe, static_cast<uint32_t>(gx), static_cast<uint32_t>(gy), 1, &addr,
                          sizeof(addr), reads, writes);
  };
  run(grad_q, "dq", p.batch * p.heads, p.q_len);
  run(grad_k, "dk", p.batch * p.kv_heads, p.kv_len);
  run(grad_v, "dv", p.batch * p.kv_heads, p.kv_len);
}

}  // namespace vkml::ops::attention_flash
