// The split-KV decode forward: launch plan (rows per workgroup, the key splits) and the two
// dispatches. The shape per device class comes from the attention policy.
#include "ops/attention/attention_decode.h"

#include <algorithm>
#include <optional>
#include <string>

#include "ops/attention/attention_policy.h"
#include "ops/nn_util.h"
#include "vkml/config.h"
#include "vkml/device.h"

namespace vkml::ops::attention_decode {

namespace {

constexpr uint32_t kChunkColumns = 32;  // key columns per staged chunk (DC)
constexpr int64_t kMaxHeadDim = 256;    // 4 columns per thread of 64 or more cover it
constexpr uint32_t kReduceThreads = 64;
constexpr uint32_t kSubgroupArithmetic = 0x4;  // VK_SUBGROUP_FEATURE_ARITHMETIC_BIT
constexpr int64_t kMaxGroups = 65535;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Whether rows of `dim` elements at address + strides can be read 4 elements at a time: unit
// column stride, the other strides and the row length multiples of 4, the base 4-element aligned.
uint32_t reads_by_four(uint64_t address, const int64_t* strides, int64_t dim, uint32_t dtype) {
  const uint64_t element = dtype == nn::kF32 ? 4 : 2;
  const bool ok = strides[3] == 1 && dim % 4 == 0 && strides[0] % 4 == 0 &&
                  strides[1] % 4 == 0 && strides[2] % 4 == 0 && address % (4 * element) == 0;
  return ok ? 1u : 0u;
}

struct Plan {
  uint32_t threads, rows, subgroups;  // T, RB and NSG of the shader
  int64_t row_blocks, splits, split_keys;
};

uint64_t shared_bytes(uint32_t t, uint32_t rb, uint32_t nsg) {
  return 4ull * (rb * kChunkColumns + t * (kChunkColumns + 1) + rb * t + rb * nsg);
}

std::optional<Plan> plan_for(const DeviceCaps& caps, const AttentionParams& p, bool gpu_shape) {
  if (!(caps.subgroup_ops & kSubgroupArithmetic)) return std::nullopt;
  if (p.head_dim > kMaxHeadDim || p.v_head_dim > kMaxHeadDim) return std::nullopt;
  if (p.batch * p.heads == 0 || p.q_len == 0 || p.kv_len == 0 || p.head_dim == 0 ||
      p.v_head_dim == 0) {
    return std::nullopt;
  }
  const bool cpu = caps.device_class == DeviceClass::kCpu;
  const DecodeShape shape =
      attention_decode_shape(gpu_shape && cpu ? DeviceClass::kGeneric : caps.device_class);
  Plan plan{};
  plan.threads = shape.threads;
  const int64_t rows = p.heads / p.kv_heads * p.q_len;
  plan.rows = 1;
  while (plan.rows < shape.max_rows && plan.rows < rows) plan.rows *= 2;
  plan.subgroups = plan.threads / std::max<uint32_t>(1, caps.min_subgroup_size);
  while (plan.rows > 1 &&
         shared_bytes(plan.threads, plan.rows, plan.subgroups) > caps.max_shared_memory) {
    plan.rows /= 2;
  }
  if (shared_bytes(plan.threads, plan.rows, plan.subgroups) > caps.max_shared_memory ||
      plan.threads > caps.max_workgroup_invocations || plan.threads * 4 < kMaxHeadDim) {
    return std::nullopt;
  }
  plan.row_blocks = ceil_div(rows, plan.rows);
  // Top-left causal alignment hides the keys from q_len on from every query.
  const int64_t keys = p.causal ? std::min(p.kv_len, p.q_len) : p.kv_len;
  const int64_t resident = std::min(p.batch * p.kv_heads, kMaxGroups) * plan.row_blocks;
  int64_t splits = ceil_div(shape.target_workgroups, resident);
  splits = std::clamp<int64_t>(splits, 1, ceil_div(keys, shape.min_split_keys));
  plan.split_keys = ceil_div(ceil_div(keys, splits), plan.threads) * plan.threads;
  plan.splits = ceil_div(keys, plan.split_keys);
  if (plan.row_blocks > kMaxGroups || plan.splits > kMaxGroups) return std::nullopt;
  return plan;
}

}  // namespace

bool applies(const Device& dev, const AttentionParams& p, bool gpu_shape) {
  const std::string& mode = config().attention;
  // flash and flash-forward choose as auto where the flash kernel does not apply.
  const bool by_policy = mode == "auto" || mode == "flash" || mode == "flash-forward";
  if (!by_policy && mode != "decode") return false;
  if (by_policy && !attention_decode_by_default(dev.caps(), p.q_len,
                                                     p.heads / std::max<int64_t>(p.kv_heads, 1) *
                                                         p.q_len,
                                                     p.kv_len)) {
    return false;
  }
  return plan_for(dev.caps(), p, gpu_shape).has_value();
}

void forward(Device& dev, const AttentionParams& p, bool gpu_shape,
             std::span<const MemRange> reads, std::span<const MemRange> writes) {
  const Plan plan = *plan_for(dev.caps(), p, gpu_shape);
  AttentionDecodeParams dp{};
  dp.rows = p.heads / p.kv_heads * p.q_len;
  dp.splits = plan.splits;
  dp.split_keys = plan.split_keys;
  dp.vec_k = reads_by_four(p.k, p.k_strides, p.head_dim, p.dtype);
  dp.vec_v = reads_by_four(p.v, p.v_strides, p.v_head_dim, p.dtype);
  const uint64_t slots = static_cast<uint64_t>(p.batch * p.kv_heads * dp.rows * plan.splits);
  const bool merge = plan.splits > 1;
  nn::Scratch part_o(dev, merge ? slots * static_cast<uint64_t>(p.v_head_dim) * 4 : 0);
  nn::Scratch part_ml(dev, merge ? slots * 8 : 0);
  dp.part_o = part_o.address();
  dp.part_ml = part_ml.address();
  dp.attn = dev.stream().params(&p, sizeof(p));
  const MemRange parts[] = {{dp.part_o, slots * static_cast<uint64_t>(p.v_head_dim) * 4},
                            {dp.part_ml, slots * 8}};

  const uint32_t spec[] = {plan.threads, plan.rows, kChunkColumns, plan.subgroups};
  const Pipeline& split = dev.pipeline("attention_decode_split_sg", spec);
  uint64_t addr = dev.stream().params(&dp, sizeof(dp));
  const auto gy = static_cast<uint32_t>(std::min(p.batch * p.kv_heads, kMaxGroups));
  dev.stream().dispatch(split, static_cast<uint32_t>(plan.splits), gy,
                        static_cast<uint32_t>(plan.row_blocks), &addr, sizeof(addr), reads,
                        merge ? std::span<const MemRange>(parts) : writes);
  if (!merge) return;

  const uint32_t reduce_spec[] = {kReduceThreads};
  const Pipeline& reduce = dev.pipeline("attention_decode_reduce", reduce_spec);
  const int64_t out_rows = p.batch * p.heads * p.q_len;
  const int64_t gx = std::min(out_rows, kMaxGroups);
  const int64_t gr = std::min(ceil_div(out_rows, gx), kMaxGroups);  // the shader loops over more
  dev.stream().dispatch(reduce, static_cast<uint32_t>(gx), static_cast<uint32_t>(gr), 1, &addr,
                        sizeof(addr), parts, writes);
}

}  // namespace vkml::ops::attention_decode
