// Reductions over any set of dims, and scans along one dim, on strided device tensors.
// Semantics follow PyTorch: inputs are cast to the computation dtype first, sums of floats
// accumulate in f32 (f64 for f64), integer sums and products in int64, max/min propagate NaN and
// report the first occurrence of the extreme.
#pragma once
#include <cstdint>
#include <vector>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

enum class ReduceOp : uint32_t {
  kSum = 0,
  kNanSum = 1,
  kProd = 2,
  kMean = 3,
  kMax = 4,
  kMin = 5,
  kArgMax = 6,  // out0: the value (optional), out1: its int64 index within the reduced dims
  kArgMin = 7,
  kAll = 8,
  kAny = 9,
  kVar = 10,  // out0: variance with `correction`, out1: mean (optional)
  kStd = 11,
  kNorm = 12,  // vector p-norm, p = `p` (0, 1, 2, +-inf or any other value)
  kLogSumExp = 13,
  kCountNonzero = 14,
  kAminmax = 15,  // out0: min, out1: max
};

// A reduction of `src` over `dims`. Outputs keep src's rank with size 1 in the reduced dims
// (any strides; a non-keepdim result is viewed with stride 0 there). An output whose address
// is 0 is not written (e.g. argmax without values).
struct ReduceArgs {
  ReduceOp op = ReduceOp::kSum;
  TensorDesc src;
  std::vector<int> dims;  // reduced dims of src, each once
  TensorDesc out0;
  TensorDesc out1;
  DType compute = DType::kF32;  // src is cast to this dtype before accumulating (PyTorch's dtype=)
  double p = 2.0;               // kNorm
  double correction = 1.0;      // kVar, kStd
};

// How a reduction is spread over the GPU: outputs per workgroup, thread layout and splits of
// the reduced range. A pure function of the shapes and the device (tested without a GPU).
struct ReducePlan {
  uint32_t ox_log2 = 0;  // 1 << ox_log2 outputs per workgroup; the other threads share each one
  bool ox_fast = false;  // neighbouring threads take neighbouring outputs (column reductions)
  uint32_t splits = 1;   // > 1: partial states per split, then a combining pass
  int64_t chunk = 0;     // reduced elements per split
  // > 0: column layout; each thread takes col_w adjacent outputs along the contiguous kept dim
  // (16-byte loads where aligned), 1 << ox_log2 such column blocks per workgroup.
  uint32_t col_w = 0;
};

// nred: reduced elements per output; red_stride / kept_stride: src strides of the innermost
// reduced and kept dims after coalescing (0 when there is none). col_width: outputs one thread may
// take along a contiguous kept dim (16 bytes of src: 8 for f16/bf16/i16, 4 for f32/i32, 2 for
// f64/i64; 0: one), col_extent: the size of that innermost kept dim.
ReducePlan plan_reduce(int64_t nout, int64_t nred, int64_t red_stride, int64_t kept_stride,
                       const DeviceCaps& caps, uint32_t col_width = 0, int64_t col_extent = 0);

// For tests: force a thread layout, a number of splits (0 / -1 = let plan_reduce decide) or the
// 64-bit index arithmetic that only tensors with more than 2^31 elements need.
struct ReduceOverride {
  int ox_log2 = -1;
  int ox_fast = -1;
  uint32_t splits = 0;
  bool idx64 = false;
  int vec = -1;  // 0: never the 16-byte vector loads of contiguous rows
  int col = -1;  // 0: never the column layout (several adjacent outputs per thread)
};

void reduce(Device& dev, const ReduceArgs& args, const ReduceOverride& force = {});

enum class ScanOp : uint32_t {
  kCumSum = 0,
  kCumProd = 1,
  kCumMax = 2,  // out1: int64 index of the running extreme (the last one on ties, as PyTorch)
  kCumMin = 3,
  kLogCumSumExp = 4,
};

// An inclusive scan of `src` along `dim` into `out0` (same sizes); cummax/cummin also write
// indices into `out1`. src is cast to `compute` first (cumsum/cumprod dtype=).
struct ScanArgs {
  ScanOp op = ScanOp::kCumSum;
  TensorDesc src;
  int dim = 0;
  TensorDesc out0;
  TensorDesc out1;
  DType compute = DType::kF32;
};

struct ScanOverride {
  int per_thread = -1;  // 1: one thread per line, 0: a workgroup per line
  uint32_t splits = 0;  // blocks per line (> 1: block totals first, then carried in)
  bool idx64 = false;   // 64-bit index arithmetic (tests)
};

void scan(Device& dev, const ScanArgs& args, const ScanOverride& force = {});

}  // namespace vkml::ops
