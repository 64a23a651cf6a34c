// The reduce family, scans (cumulative.comp): cumsum, cumprod, cummax/cummin and logcumsumexp.
#include <algorithm>
#include <string>

#include "ops/reduce/reduce_params.h"
#include "ops/reduce/reduce_policy.h"
#include "ops/reduce/reduce_util.h"
#include "vkml/errors.h"
#include "vkml/reduce.h"

namespace vkml::ops {

using namespace reduce_detail;

namespace {

constexpr uint32_t kWorkgroup = VKML_REDUCE_WORKGROUP;
constexpr uint32_t kMaxGroups = 65535;
constexpr int64_t kTile = int64_t{kWorkgroup} * VKML_SCAN_ITEMS;

bool is_extreme(ScanOp op) { return op == ScanOp::kCumMax || op == ScanOp::kCumMin; }

void check_same_shape(const TensorDesc& src, const TensorDesc& out) {
  if (out.sizes != src.sizes || out.strides.size() != out.sizes.size()) {
    throw InvalidArgument("vkml: scan output " + out.describe() + " does not match input " +
                          src.describe());
  }
}

}  // namespace

void scan(Device& dev, const ScanArgs& a, const ScanOverride& force) {
  const TensorDesc& src = a.src;
  int nd = src.ndim();
  if (a.dim < 0 || a.dim >= std::max(nd, 1) || static_cast<int>(src.strides.size()) != nd) {
    throw InvalidArgument("vkml: bad scan dim " + std::to_string(a.dim) + " for " +
                          src.describe());
  }
  check_same_shape(src, a.out0);
  bool extreme = is_extreme(a.op);
  if (extreme) {
    check_same_shape(src, a.out1);
    if (a.out1.dtype != DType::kI64) throw InvalidArgument("vkml: cummax/cummin indices: int64");
  }
  check_dtype(dev, src.dtype);
  check_dtype(dev, a.compute);
  check_dtype(dev, a.out0.dtype);
  if (a.op == ScanOp::kLogCumSumExp && !dtype_is_float(a.compute)) {
    throw InvalidArgument("vkml: logcumsumexp needs a floating-point dtype");
  }
  if (src.numel() == 0) return;

  // A 0-dim tensor is one line of one element.
  int64_t len = nd == 0 ? 1 : src.sizes[a.dim];
  int64_t src_stride = nd == 0 ? 0 : src.strides[a.dim];
  int64_t out0_stride = nd == 0 ? 0 : a.out0.strides[a.dim];
  int64_t out1_stride = extreme && nd > 0 ? a.out1.strides[a.dim] : 0;
  const std::vector<int64_t>& o1 = extreme ? a.out1.strides : a.out0.strides;
  std::vector<int64_t> ls, lsrc, l0, l1;
  for (int d = 0; d < nd; ++d) {
    if (d == a.dim) continue;
    ls.push_back(src.sizes[d]);
    lsrc.push_back(src.strides[d]);
    l0.push_back(a.out0.strides[d]);
    l1.push_back(o1[d]);
  }
  int64_t nlines = 1;
  for (int64_t s : ls) nlines *= s;
  std::vector<int64_t> sizes = coalesce_dims(ls, {&lsrc, &l0, &l1});
  if (sizes.size() > VKML_REDUCE_MAX_DIMS) {
    throw NotSupported("vkml: scans over tensors with more than " +
                       std::to_string(VKML_REDUCE_MAX_DIMS) +
                       " non-mergeable dimensions are not supported");
  }

  ScanParams p{};
  p.src = src.address;
  p.out0 = a.out0.address;
  p.out1 = extreme ? a.out1.address : 0;
  p.nlines = nlines;
  p.len = len;
  p.src_stride = src_stride;
  p.out0_stride = out0_stride;
  p.out1_stride = out1_stride;
  p.line_ndim = static_cast<uint32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.line_sizes[d] = sizes[d];
    p.src_line_strides[d] = lsrc[d];
    p.out0_line_strides[d] = l0[d];
    p.out1_line_strides[d] = l1[d];
  }

  // One thread per line when lines are short, or when there are many lines whose neighbours
  // are neighbours in memory (then the threads' loads coalesce).
  bool lines_contiguous = !lsrc.empty() && lsrc.back() == 1 && src_stride != 1;
  bool per_thread = len <= 16 || (lines_contiguous && nlines >= 2048);
  if (force.per_thread >= 0) per_thread = force.per_thread != 0;
  uint32_t splits = 1;
  if (!per_thread) {
    const int64_t target = reduce_split_target(dev.caps(), ReduceSplit::kScan);
    if (nlines * 2 <= target && len >= 4 * kTile) {
      splits = static_cast<uint32_t>(
          std::min<int64_t>({ceil_div(target, nlines), ceil_div(len, 2 * kTile), 1024}));
    }
    if (force.splits > 0) splits = force.splits;
  }
  int64_t block = ceil_div(ceil_div(len, splits), kTile) * kTile;
  splits = static_cast<uint32_t>(ceil_div(len, block));
  p.block = block;
  p.splits = splits;
  p.per_thread = per_thread ? 1u : 0u;

  DType vdt = (a.op == ScanOp::kCumSum || a.op == ScanOp::kCumProd ||
               a.op == ScanOp::kLogCumSumExp)
                  ? a.compute
                  : src.dtype;
  // logcumsumexp accumulates in double where the device has it, as PyTorch's CPU kernel does
  // (acc_type<float> is double there): its backward cancels, and magnifies float32 rounding.
  // So does a float32 cumprod: a float running product overflows (or underflows) where the CPU's
  // double one comes back into range ([3e38, 10, 1e-10] ends at 3e29 there).
  bool wide_cumprod = a.op == ScanOp::kCumProd && vdt == DType::kF32;
  bool touches_f64 = src.dtype == DType::kF64 || vdt == DType::kF64 ||
                     a.out0.dtype == DType::kF64 ||
                     ((a.op == ScanOp::kLogCumSumExp || wide_cumprod) && dev.caps().fp64_math);
  std::string shader = variant_name("cumulative", acc_kind(vdt), touches_f64);
  bool idx64 = force.idx64 || nlines > kInt31 || len > kInt31;
  uint32_t spec[] = {kWorkgroup,
                     static_cast<uint32_t>(a.op),
                     static_cast<uint32_t>(src.dtype),
                     static_cast<uint32_t>(vdt),
                     static_cast<uint32_t>(a.out0.dtype),
                     static_cast<uint32_t>(DType::kI64),
                     idx64 ? 1u : 0u};
  const Pipeline& pipe = dev.pipeline(shader, spec);
  Stream& stream = dev.stream();
  MemRange src_range{src.address, src.span_bytes()};
  MemRange outs[2] = {{a.out0.address, a.out0.span_bytes()},
                      {extreme ? a.out1.address : 0, extreme ? a.out1.span_bytes() : 0}};
  auto launch = [&](uint32_t stage, uint32_t gx, uint32_t gy, std::span<const MemRange> reads,
                    std::span<const MemRange> writes) {
    p.stage = stage;
    uint64_t addr = stream.params(&p, sizeof(p));
    stream.dispatch(pipe, gx, gy, 1, &addr, sizeof(addr), reads, writes);
  };
  if (per_thread) {
    int64_t groups = ceil_div(nlines, kWorkgroup);
    uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, kMaxGroups));
    launch(VKML_SCAN_STAGE_LINES, gx, 1, {&src_range, 1}, {outs, extreme ? 2u : 1u});
    return;
  }
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(nlines, kMaxGroups));
  if (splits == 1) {
    launch(VKML_SCAN_STAGE_LINES, gx, 1, {&src_range, 1}, {outs, extreme ? 2u : 1u});
    return;
  }
  uint64_t totals_bytes = static_cast<uint64_t>(nlines) * splits * 16;
  uint64_t totals = dev.allocate(totals_bytes);
  p.totals = totals;
  MemRange totals_range{totals, totals_bytes};
  launch(VKML_SCAN_STAGE_TOTALS, gx, splits, {&src_range, 1}, {&totals_range, 1});
  MemRange reads[2] = {src_range, totals_range};
  launch(VKML_SCAN_STAGE_LINES, gx, splits, reads, {outs, extreme ? 2u : 1u});
  // Later users of this memory are ordered after the scan by the stream's hazard tracking.
  dev.free(totals);
}

}  // namespace vkml::ops
