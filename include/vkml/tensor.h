// Tensor descriptors: what the ops layer knows of a tensor. Strides are in elements, may be 0
// (broadcast) and need not be contiguous; `address` already includes the storage offset.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkml/dtype.h"

namespace vkml {

constexpr int kMaxDims = 8;

struct TensorDesc {
  uint64_t address = 0;
  DType dtype = DType::kF32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  int ndim() const { return static_cast<int>(sizes.size()); }
  bool is_contiguous() const;
  // Bytes from the first to one past the last element addressed (for hazard tracking).
  uint64_t span_bytes() const;
  // Lowest address touched (strides may be negative in principle; torch's are not).
  std::string describe() const;
};

// Merges dimensions that are contiguous with each other in every tensor, and drops size-1 dims.
// All tensors must have the same sizes. Returns the coalesced sizes; strides are updated in place.
std::vector<int64_t> coalesce_dims(std::vector<int64_t> sizes,
                                   std::vector<std::vector<int64_t>*> strides);

}  // namespace vkml
