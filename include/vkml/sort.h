// The sort family: stable sorts along one dim of any dtype (NaN largest, as PyTorch's CPU sorts),
// selections from the sorted order (topk, kthvalue, median), and searchsorted.
#pragma once
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// Which sorted positions of each line are written: [start, start + count).
struct SortSelection {
  bool descending = false;
  int64_t start = 0;
  int64_t count = -1;       // -1: the whole line
  bool nan_median = false;  // a line holding a NaN yields its first NaN (torch.median)
};

// Sorts `in` along `dim` (already wrapped) and writes the selected positions to `values` and
// `indices` (int64); either may be null. Outputs have in's sizes except `count` along dim. Ties
// keep their original order, so the result is the stable sort in every case.
void sort_lines(Device& dev, const TensorDesc& in, int dim, const SortSelection& sel,
                const TensorDesc* values, const TensorDesc* indices);

// For every query, the number of boundaries < query (right: <=) in its line of sorted
// `boundaries`: a 1-D tensor shared by all queries, or one line per query row (same leading
// sizes). `sorter` (int64, boundaries' shape, may be null) reads boundaries through a permutation.
// `out` is int64 or int32 with the queries' sizes; boundaries and queries share a dtype.
void searchsorted(Device& dev, const TensorDesc& boundaries, const TensorDesc* sorter,
                  const TensorDesc& queries, const TensorDesc& out, bool right);

}  // namespace vkml::ops
