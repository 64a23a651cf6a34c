// The index family's one general kernel: an iteration shape, a data tensor addressed through
// index operands, and a values tensor (or scalar). Every indexed op lays itself out as one.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ops/index/index_params.h"
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

enum class IndexMode : uint32_t {
  kGather = VKML_INDEX_GATHER,
  kAssign = VKML_INDEX_ASSIGN,
  kSum = VKML_INDEX_SUM,
  kProd = VKML_INDEX_PROD,
  kMax = VKML_INDEX_MAX,
  kMin = VKML_INDEX_MIN,
  kDiv = VKML_INDEX_DIV,
};

struct IndexOperandLayout {
  uint64_t address = 0;
  DType dtype = DType::kI64;     // kI32 or kI64
  std::vector<int64_t> strides;  // on the iteration shape
  int64_t limit = 0;             // size of the data dim it selects along
  int64_t stride = 0;            // data stride of that dim
  MemRange range;                // bytes the index tensor occupies
};

struct IndexLaunch {
  DType dtype = DType::kF32;  // of data and values
  IndexMode mode = IndexMode::kGather;
  std::vector<int64_t> sizes;  // iteration shape
  std::vector<bool> serial;    // per dim: walked in order by one thread (accumulation)
  uint64_t data = 0;
  std::vector<int64_t> data_strides;  // indexed dims have stride 0 here
  MemRange data_range;
  uint64_t values = 0;  // 0 with value_bits: a scalar operand
  std::vector<int64_t> value_strides;
  MemRange values_range;
  uint64_t value_bits = 0;
  std::vector<IndexOperandLayout> indices;
  bool allow_negative = false;
  // Sums add alpha * values. Real dtypes always multiply (alpha 1 is exact); complex ones
  // only with scale_by_alpha, as PyTorch's index_add does (other sums add the values).
  bool scale_by_alpha = false;
  double alpha_f = 1.0;
  double alpha_im = 0.0;  // imaginary part of alpha (complex dtypes)
  int64_t alpha_i = 1;
  std::optional<int64_t> skip_index;
  uint64_t counts = 0;  // i64 per index value: alpha = 1 / counts[index 0]
  MemRange counts_range;
  uint64_t error_flag = 0;
  // Index operand 0 holds flat positions into a tensor of these sizes/strides (take, put_).
  std::vector<int64_t> flat_sizes, flat_strides;
};

// Whether accumulation should use owner-computes threads (see VKML_INDEX_OWNER): a pure
// function of the device and the launch shape; the index policy (index_policy.cc).
bool prefer_owner_threads(const DeviceCaps& caps, int64_t parallel, int64_t owners);

// Coalesces the parallel and the serial dims separately and records one dispatch.
void launch_index(Device& dev, const IndexLaunch& launch);

// Strides of `t` with dim `dim` zeroed (the indexed dim moves into an index operand).
std::vector<int64_t> strides_without(const TensorDesc& t, int dim);

// Index operand whose values vary along iteration dim `dim` only (a 1-D index tensor).
IndexOperandLayout vector_index(const TensorDesc& index, int ndim, int dim, int64_t limit,
                                int64_t stride);

// Index operand laid out like the iteration shape (same sizes as the index tensor).
IndexOperandLayout full_index(const TensorDesc& index, int64_t limit, int64_t stride);

MemRange range_of(const TensorDesc& t);

// Throws InvalidArgument unless dim is in [0, ndim) (callers wrap negative dims first).
void check_dim(int dim, int ndim, const char* op);
void check_index_dtype(const TensorDesc& index, const char* op);
void check_supported(const Device& dev, DType t);

}  // namespace vkml::ops
