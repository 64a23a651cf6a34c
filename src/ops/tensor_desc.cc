#include <algorithm>
#include <sstream>

#include "vkml/tensor.h"

namespace vkml {

bool TensorDesc::is_contiguous() const {
  int64_t expected = 1;
  for (int d = ndim() - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

uint64_t TensorDesc::span_bytes() const {
  if (numel() == 0) return 0;
  int64_t last = 0;
  for (int d = 0; d < ndim(); ++d) last += (sizes[d] - 1) * std::max<int64_t>(strides[d], 0);
  return static_cast<uint64_t>(last + 1) * dtype_size(dtype);
}

std::string TensorDesc::describe() const {
  std::ostringstream os;
  os << dtype_name(dtype) << "[";
  for (int d = 0; d < ndim(); ++d) os << (d ? "," : "") << sizes[d];
  os << "] strides [";
  for (int d = 0; d < ndim(); ++d) os << (d ? "," : "") << strides[d];
  os << "]";
  return os.str();
}

std::vector<int64_t> coalesce_dims(std::vector<int64_t> sizes,
                                   std::vector<std::vector<int64_t>*> strides) {
  // Drop size-1 dims first: their strides are irrelevant.
  std::vector<int64_t> out_sizes;
  std::vector<std::vector<int64_t>> out_strides(strides.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !out_sizes.empty();
    for (size_t t = 0; t < strides.size() && merge; ++t) {
      merge = out_strides[t].back() == (*strides[t])[d] * sizes[d];
    }
    if (merge) {
      out_sizes.back() *= sizes[d];
      for (size_t t = 0; t < strides.size(); ++t) out_strides[t].back() = (*strides[t])[d];
    } else {
      out_sizes.push_back(sizes[d]);
      for (size_t t = 0; t < strides.size(); ++t) out_strides[t].push_back((*strides[t])[d]);
    }
  }
  for (size_t t = 0; t < strides.size(); ++t) *strides[t] = out_strides[t];
  return out_sizes;
}

}  // namespace vkml
