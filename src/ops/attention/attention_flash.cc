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
  if (p.dtype != nn::kF16 && p.dtype != nn::kBF16) return std::nullopt;
  const DType t = p.dtype == nn::kF16 ? DType::kF16 : DType::kBF16;
  const std::string shader = t == DType::kF16 ? "attention_flash_f16" : "attention_flash_bf16";
  const uint32_t sg = caps.subgroup_size;
  const uint32_t ops = kSubgroupVoteBit | kSubgroupShuffleBit;
  if (!coopmat_16(caps, t) || !has_shader(shader) || !(sg == 16 || sg == 32 || sg == 64) ||
      (caps.subgroup_ops & ops) != ops) {
    return std::nullopt;
  }
  if (p.head_dim < 1 || p.head_dim > 256 || p.v_head_dim < 1 || p.v_head_dim > 256) {
    return std::nullopt;
  }
  const uint32_t d = static_cast<uint32_t>(ceil_div(p.head_dim, 16) * 16);
  const uint32_t dv = static_cast<uint32_t>(ceil_div(p.v_head_dim, 16) * 16);
  const bool vec = vector_loads(p.q, p.q_strides, p.head_dim) &&
                   vector_loads(p.k, p.k_strides, p.head_dim) &&
                   vector_loads(p.v, p.v_strides, p.v_head_dim);
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

}  // namespace vkml::ops::attention_flash
