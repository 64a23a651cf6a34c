// Shape and creation ops: cat, flip, roll, tril/triu, arange, linspace, logspace.
// Strided inputs and outputs throughout; flip/roll/triangles move raw bits (every dtype).
#pragma once
#include <cstdint>
#include <vector>

#include "vkml/ops.h"
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// out = cat(inputs, dim): one strided copy per input into its slice of out, converting dtypes
// like copy(). Inputs must match out's sizes except along dim (whose sizes sum to out's).
void cat(Device& dev, const TensorDesc& out, const std::vector<TensorDesc>& inputs, int dim);

// out = self.flip(dims); out and self have the same sizes and dtype and must not overlap.
void flip(Device& dev, const TensorDesc& out, const TensorDesc& self, const std::vector<int>& dims);

// out = self.roll(shifts, dims) for matching shifts/dims (callers flatten the dim-less form).
void roll(Device& dev, const TensorDesc& out, const TensorDesc& self,
          const std::vector<int64_t>& shifts, const std::vector<int>& dims);

// out = self.tril(diagonal) (upper = false) or self.triu(diagonal); out may be self.
void triangle(Device& dev, const TensorDesc& out, const TensorDesc& self, int64_t diagonal,
              bool upper);

// out[i] = start + i * step (1-D out of any numeric dtype, strided).
void arange(Device& dev, const TensorDesc& out, Scalar start, Scalar step);

// out.numel() evenly spaced values from start to end; logspace raises base to them.
void linspace(Device& dev, const TensorDesc& out, Scalar start, Scalar end);
void logspace(Device& dev, const TensorDesc& out, Scalar start, Scalar end, double base);

}  // namespace vkml::ops
