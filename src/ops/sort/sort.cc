// The sort family: (key, position) pairs per line, sorted by a bitonic network (a shared-memory
// sort for each block of 2048 pairs, global-memory merge steps for longer lines) or, for long
// lines, by an LSD radix sort (8-bit digits, one histogram / scan / scatter round per key byte);
// then a gather of the selected range.
#include "vkml/sort.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ops/launch.h"
#include "ops/sort/sort_params.h"
#include "ops/sort/sort_policy.h"
#include "vkml/config.h"
#include "vkml/errors.h"

namespace vkml::ops {
namespace {

// Lines at least this long take the radix sort (the sort policy; VKML_SORT_RADIX_MIN for tests).
int64_t radix_min_length(const DeviceCaps& caps) {
  if (config().sort_radix_min != kConfigAuto) return config().sort_radix_min;
  return sort_radix_min_length(caps);
}

void dispatch_groups(Device& dev, const std::string& shader, const SortParams& p, int64_t groups,
                     std::span<const MemRange> scratch) {
  const Pipeline& pipe = dev.pipeline(shader);
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  uint32_t gx = static_cast<uint32_t>(std::clamp<int64_t>(groups, 1, kMaxGroupsX));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), scratch, scratch);
}

// Serial digit counts per tile (radix_serial.comp) or shared-memory ranking: the sort policy;
// VKML_SORT_RADIX_SERIAL forces either on any device (tests).
bool radix_serial(const DeviceCaps& caps) {
  if (config().sort_radix_serial != "auto") return config().sort_radix_serial == "1";
  return sort_radix_serial(caps);
}

uint64_t align_up(uint64_t v) { return (v + 255) & ~uint64_t{255}; }

// LSD radix sort of every line's (key, position) pairs into the scratch buffers of `p` (returns
// the scratch allocation); sort_gather then finds the result through p.skips.
MemRange radix_sort(Device& dev, SortParams& p, DType dtype, std::span<const MemRange> in_range) {
  uint64_t total = static_cast<uint64_t>(p.rows * p.n);
  p.padded = p.n;
  p.total = p.rows * p.n;
  p.key_bytes = dtype_size(dtype) == 8 ? 8 : 4;
  bool is_unsigned = dtype == DType::kU8 || dtype == DType::kBool;
  p.value_kind = dtype_is_float(dtype) ? VKML_SORT_VALUES_FLOAT
                 : is_unsigned         ? VKML_SORT_VALUES_UNSIGNED
                                       : VKML_SORT_VALUES_SIGNED;
  p.passes = static_cast<uint32_t>(dtype_size(dtype));
  bool serial = radix_serial(dev.caps());
  p.tile_len = serial ? VKML_RADIX_SERIAL_TILE : VKML_RADIX_TILE;
  p.tiles = (p.n + p.tile_len - 1) / p.tile_len;
  // 32-bit keys share a 64-bit word with their position; 64-bit keys have a position array.
  uint64_t keys_bytes = align_up(total * 8);
  uint64_t order_bytes = p.key_bytes == 8 ? align_up(total * 4) : 0;
  uint64_t counts_bytes = align_up(static_cast<uint64_t>(p.rows * 256 * p.tiles) * 4);
  uint64_t totals_bytes = align_up(static_cast<uint64_t>(p.rows) * 256 * 4);
  uint64_t bounds_bytes = align_up(static_cast<uint64_t>(p.rows) * 16);
  uint64_t bytes =
      2 * keys_bytes + 2 * order_bytes + counts_bytes + totals_bytes + bounds_bytes + 256;
  uint64_t scratch = dev.allocate(bytes);
  p.keys = scratch;
  p.keys_alt = p.keys + keys_bytes;
  p.order = p.keys_alt + keys_bytes;
  p.order_alt = p.order + order_bytes;
  p.counts = p.order_alt + order_bytes;
  p.totals = p.counts + counts_bytes;
  p.bounds = p.totals + totals_bytes;
  p.skips = p.bounds + bounds_bytes;
  MemRange scratch_range[] = {{scratch, bytes}};
  launch_elementwise(dev, "radix_keys_" + std::string(dtype_name(dtype)), p, p.total, in_range,
                     scratch_range);
  const char* key_width = p.key_bytes == 8 ? "_k64" : "_k32";
  std::string width = std::string(serial ? "_serial" : "") + key_width;
  int64_t tiles = p.rows * p.tiles;
  // Each line's smallest key and key range: digits are taken relative to the smallest key, and
  // passes above the range's highest byte are skipped outright.
  p.stage = 0;
  dispatch_groups(dev, std::string("radix_range") + key_width, p, tiles, scratch_range);
  p.stage = 1;
  dispatch_groups(dev, std::string("radix_range") + key_width, p, p.rows, scratch_range);
  int64_t hist_groups = serial ? (tiles + 7) / 8 : tiles;  // radix_serial: 8 tiles per group
  int64_t scan_groups = p.tiles <= VKML_RADIX_SERIAL_TILES ? p.rows : p.rows * 256;
  for (uint32_t pass = 0; pass < p.passes; ++pass) {
    p.pass = pass;
    dispatch_groups(dev, "radix_hist" + width, p, hist_groups, scratch_range);
    dispatch_groups(dev, "radix_scan", p, scan_groups, scratch_range);
    dispatch_groups(dev, "radix_scatter" + width, p, tiles, scratch_range);
  }
  return scratch_range[0];
}

void dispatch_block(Device& dev, SortParams p, uint32_t k, std::span<const MemRange> scratch) {
  p.k = k;
  const Pipeline& pipe = dev.pipeline("sort_block");
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  int64_t blocks = (p.total + VKML_SORT_BLOCK - 1) / VKML_SORT_BLOCK;
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(blocks, kMaxGroupsX));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), scratch, scratch);
}

// The bitonic network over lines padded to a power of two (returns the scratch allocation).
MemRange bitonic_sort(Device& dev, SortParams& p, DType dtype, std::span<const MemRange> in_range) {
  p.padded = 1;
  while (p.padded < p.n) p.padded <<= 1;
  p.total = p.rows * p.padded;
  p.key_bytes = 8;
  uint64_t scratch = dev.allocate(static_cast<uint64_t>(p.total) * 12);
  p.keys = scratch;
  p.order = scratch + static_cast<uint64_t>(p.total) * 8;
  MemRange scratch_range[] = {{scratch, static_cast<uint64_t>(p.total) * 12}};
  launch_elementwise(dev, "sort_keys_" + std::string(dtype_name(dtype)), p, p.total, in_range,
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
  return scratch_range[0];
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

  MemRange in_range[] = {{in.address, in.span_bytes()}};
  bool radix = n >= radix_min_length(dev.caps());
  MemRange scratch_range[] = {radix ? radix_sort(dev, p, in.dtype, in_range)
                                    : bitonic_sort(dev, p, in.dtype, in_range)};
  MemRange reads[] = {in_range[0], scratch_range[0]};
  MemRange writes[2];
  int nw = 0;
  if (values) writes[nw++] = {values->address, values->span_bytes()};
  if (indices) writes[nw++] = {indices->address, indices->span_bytes()};
  launch_elementwise(dev, "sort_gather", p, rows * count, reads, std::span(writes, nw));
  dev.free(scratch_range[0].address);
}

}  // namespace vkml::ops
