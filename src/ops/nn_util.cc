#include "ops/nn_util.h"

#include <algorithm>
#include <atomic>

#include "ops/launch.h"
#include "vkml/errors.h"

namespace vkml::ops::nn {

namespace {
constexpr uint32_t kSubgroupArithmeticBit = 0x4;  // VK_SUBGROUP_FEATURE_ARITHMETIC_BIT
std::atomic<bool> g_force_tree{false};
std::atomic<bool> g_force_split{false};
}  // namespace

void force_tree_reductions(bool on) { g_force_tree = on; }
void force_split_rows(bool on) { g_force_split = on; }
bool split_rows_forced() { return g_force_split; }

uint32_t float_code(const TensorDesc& t, const char* what) {
  switch (t.dtype) {
    case DType::kF32:
      return kF32;
    case DType::kF16:
      return kF16;
    case DType::kBF16:
      return kBF16;
    case DType::kF64:
      return kF64;
    default:
      throw InvalidArgument(std::string("vkml: ") + what +
                            " must be a floating-point tensor, got " +
                            std::string(dtype_name(t.dtype)));
  }
}

uint32_t index_code(const TensorDesc& t, const char* what) {
  switch (t.dtype) {
    case DType::kI64:
      return kI64;
    case DType::kU8:
      return kU8;
    case DType::kI32:
      return kI32;
    default:
      throw InvalidArgument(std::string("vkml: ") + what +
                            " must hold class indices (int64), got " +
                            std::string(dtype_name(t.dtype)));
  }
}

bool needs_fp64(const Device& dev, std::initializer_list<const TensorDesc*> tensors) {
  bool any = false;
  for (const TensorDesc* t : tensors) {
    if (!t) continue;
    any = any || t->dtype == DType::kF64;
    if (!dev.caps().supports_dtype(t->dtype)) {
      throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                         std::string(dtype_name(t->dtype)) + " tensors");
    }
  }
  return any;
}

std::string variant(const Device& dev, const std::string& base, bool fp64, bool reduces) {
  std::string name = base;
  if (fp64) name += "_f64";
  if (reduces && !g_force_tree && (dev.caps().subgroup_ops & kSubgroupArithmeticBit)) {
    name += "_sg";
  }
  return name;
}

uint32_t workgroup_for(int64_t n, uint32_t max_size) {
  uint32_t wg = 32;
  while (wg < max_size && static_cast<int64_t>(wg) * 2 <= n) wg *= 2;
  return wg;
}

int64_t groups_for(int64_t n, uint32_t workgroup) {
  return std::max<int64_t>(1, (n + workgroup - 1) / workgroup);
}

void dispatch_groups(Device& dev, const std::string& shader, uint32_t workgroup, int64_t groups,
                     const void* params, size_t params_bytes, std::span<const MemRange> reads,
                     std::span<const MemRange> writes) {
  uint32_t spec[] = {workgroup};
  const Pipeline& pipe = dev.pipeline(shader, spec);
  uint64_t addr = dev.stream().params(params, params_bytes);
  int64_t gx = std::min<int64_t>(groups, kMaxGroupsX);
  int64_t gy = std::min<int64_t>((groups + gx - 1) / gx, kMaxGroupsX);
  dev.stream().dispatch(pipe, static_cast<uint32_t>(gx), static_cast<uint32_t>(gy), 1, &addr,
                        sizeof(addr), reads, writes);
}

std::vector<int64_t> strides_without(const TensorDesc& t, int skip) {
  std::vector<int64_t> s;
  for (int d = 0; d < t.ndim(); ++d) {
    if (d != skip) s.push_back(t.strides[d]);
  }
  return s;
}

void check_same_sizes(const TensorDesc& a, const TensorDesc& b, const char* op) {
  if (a.sizes != b.sizes) {
    throw InvalidArgument(std::string("vkml: ") + op + ": shapes differ: " + a.describe() + " vs " +
                          b.describe());
  }
}

}  // namespace vkml::ops::nn
