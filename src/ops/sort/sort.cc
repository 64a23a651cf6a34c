// The sort family: (key, position) pairs per line, a bitonic sort in shared memory for each block
// of 2048 pairs, global-memory merge steps for longer lines, then a gather of the selected range.
#include "vkml/sort.h"

#include <string>

#include "ops/launch.h"
#include "ops/sort/sort_params.h"
#include "vkml/errors.h"

namespace vkml::ops {
namespace {

void dispatch_block(Device& dev, SortParams p, uint32_t k, std::span<const MemRange> scratch) {
  p.k = k;
  const Pipeline& pipe = dev.pipeline("sort_block");
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  int64_t blocks = (p.total + VKML_SORT_BLOCK - 1) / VKML_SORT_BLOCK;
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(blocks, kMaxGroupsX));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), scratch, scratch);
}

void check_output(const TensorDesc& in, int dim, int64_t count, const TensorDesc& out,
                  const char* what) {
  bool ok = out.ndim() == in.ndim();
  for (int d = 0; ok && d < in.ndim(); ++d) {
    ok = out.sizes[d] == (d == dim ? count : in.sizes[d]);
  }
  if (!ok) {
    throw InvalidArgument(std::string("vkml: sort ") + what + " has shape " + out.describe() +
                          ", expected " + in.describe() + " with " + std::to_string(count) +
                          " along dim " + std::to_string(dim));
  }
}

}  // namespace

void sort_lines(Device& dev, const TensorDesc& in, int dim, const SortSelection& sel,
                const TensorDesc* values, const TensorDesc* indices) {
  int nd = in.ndim();
  if (nd == 0) dim = 0;
  if (nd > 0 && (dim < 0 || dim >= nd)) {
    throw InvalidArgument("vkml: sort dim " + std::to_string(dim) + " out of range");
  }
  if (!dev.caps().supports_dtype(in.dtype)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                       std::string(dtype_name(in.dtype)) + " tensors");
  }
  if (nd - 1 > VKML_SORT_MAX_DIMS) throw NotSupported("vkml: sort of a tensor with >9 dims");
  int64_t n = nd == 0 ? 1 : in.sizes[dim];
  int64_t count = sel.count < 0 ? n : sel.count;
  if (sel.start < 0 || sel.start + count > n) {
    throw InvalidArgument("vkml: sort selection out of range of the line");
  }
  if (n >= (int64_t{1} << 31)) throw NotSupported("vkml: sort of lines with 2^31+ elements");
  if (values && values->dtype != in.dtype) throw InvalidArgument("vkml: sort values dtype differs");
  if (indices && indices->dtype != DType::kI64) {
    throw InvalidArgument("vkml: sort indices must be int64");
  }
  if (nd > 0) {
    if (values) check_output(in, dim, count, *values, "values");
    if (indices) check_output(in, dim, count, *indices, "indices");
  }
  int64_t rows = n == 0 ? 0 : in.numel() / n;
  if (rows == 0 || count == 0 || (!values && !indices)) return;

  SortParams p{};
  p.rows = rows;
  p.n = n;
  p.padded = 1;
  while (p.padded < n) p.padded <<= 1;
  p.total = rows * p.padded;
  int o = 0;
  for (int d = 0; d < nd; ++d) {
    if (d == dim) {
      p.in_dim_stride = in.strides[d];
      p.val_dim_stride = values ? values->strides[d] : 0;
      p.idx_dim_stride = indices ? indices->strides[d] : 0;
      continue;
    }
    p.sizes[o] = in.sizes[d];
    p.in_strides[o] = in.strides[d];
    p.val_strides[o] = values ? values->strides[d] : 0;
    p.idx_strides[o] = indices ? indices->strides[d] : 0;
    ++o;
  }
  p.ndim = static_cast<uint32_t>(o);
  p.src = in.address;
  p.vals = values ? values->address : 0;
  p.idxs = indices ? indices->address : 0;
  p.out_start = sel.start;
  p.out_count = count;
  p.descending = sel.descending ? 1 : 0;
  p.elem_bytes = static_cast<uint32_t>(dtype_size(in.dtype));
  p.nan_first = sel.nan_median && dtype_is_float(in.dtype) ? 1 : 0;

  uint64_t scratch = dev.allocate(static_cast<uint64_t>(p.total) * 12);
  p.keys = scratch;
  p.order = scratch + static_cast<uint64_t>(p.total) * 8;
  MemRange scratch_range[] = {{scratch, static_cast<uint64_t>(p.total) * 12}};
  MemRange in_range[] = {{in.address, in.span_bytes()}};
  launch_elementwise(dev, "sort_keys_" + std::string(dtype_name(in.dtype)), p, p.total, in_range,
                     scratch_range);
  dispatch_block(dev, p, 0, scratch_range);
  for (int64_t k = 2 * VKML_SORT_BLOCK; k <= p.padded; k <<= 1) {
    for (int64_t j = k / 2; j >= VKML_SORT_BLOCK; j >>= 1) {
      SortParams step = p;
      step.k = static_cast<uint32_t>(k);
      step.j = static_cast<uint32_t>(j);
      launch_elementwise(dev, "sort_step", step, p.total, scratch_range, scratch_range);
    }
    dispatch_block(dev, p, static_cast<uint32_t>(k), scratch_range);
  }
  MemRange reads[] = {{in.address, in.span_bytes()}, scratch_range[0]};
  MemRange writes[2];
  int nw = 0;
  if (values) writes[nw++] = {values->address, values->span_bytes()};
  if (indices) writes[nw++] = {indices->address, indices->span_bytes()};
  launch_elementwise(dev, "sort_gather", p, rows * count, reads, std::span(writes, nw));
  dev.free(scratch);
}

}  // namespace vkml::ops
