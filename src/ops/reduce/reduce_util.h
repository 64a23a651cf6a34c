// Helpers shared by the reduction and scan hosts: accumulator kinds and variant names.
#pragma once
#include <cstdint>
#include <string>

#include "vkml/runtime.h"
#include "vkml/dtype.h"
#include "vkml/errors.h"

namespace vkml::ops::reduce_detail {

enum class AccKind { kF32, kF64, kI64 };

inline AccKind acc_kind(DType t) {
  if (t == DType::kF64) return AccKind::kF64;
  return dtype_is_float(t) ? AccKind::kF32 : AccKind::kI64;
}

// Shader variant for an accumulator kind; any f64 tensor needs a variant with fp64 pointers,
// and float accumulation then runs in double (more precise, never less).
inline std::string variant_name(const char* family, AccKind kind, bool touches_f64) {
  std::string base = std::string(family) + "_";
  if (kind == AccKind::kF64 || (kind == AccKind::kF32 && touches_f64)) return base + "f64";
  if (kind == AccKind::kI64) return base + (touches_f64 ? "i64_fp64" : "i64");
  return base + "f32";
}

inline void check_dtype(const Device& dev, DType t) {
  if (!dev.caps().supports_dtype(t)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                       std::string(dtype_name(t)) + " tensors");
  }
}

inline uint32_t ceil_log2(uint64_t v) {
  uint32_t l = 0;
  while ((uint64_t{1} << l) < v) ++l;
  return l;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int64_t kInt31 = (int64_t{1} << 31) - 1;

}  // namespace vkml::ops::reduce_detail
