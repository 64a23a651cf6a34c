#include "ops/index/index_launch.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ops/launch.h"
#include "vkml/config.h"
#include "vkml/errors.h"
#include "vkml/ops.h"

namespace vkml::ops {

namespace {

// Coalesces the dims in `group` (indices into the iteration shape) over every stride vector.
std::vector<int64_t> coalesce_group(const std::vector<int64_t>& sizes,
                                    const std::vector<int>& group,
                                    std::vector<std::vector<int64_t>>* strides) {
  std::vector<int64_t> gsizes;
  std::vector<std::vector<int64_t>> gstrides(strides->size());
  for (int d : group) {
    gsizes.push_back(sizes[d]);
    for (size_t t = 0; t < strides->size(); ++t) gstrides[t].push_back((*strides)[t][d]);
  }
  std::vector<std::vector<int64_t>*> ptrs;
  for (auto& s : gstrides) ptrs.push_back(&s);
  std::vector<int64_t> out = coalesce_dims(gsizes, ptrs);
  *strides = std::move(gstrides);
  return out;
}

// VKML_INDEX_OWNER=1 forces owner-computes wherever it applies, 0 turns it off, auto: -1.
int owner_override() {
  const std::string& v = config().index_owner;
  return v == "auto" ? -1 : v == "1" ? 1 : 0;
}

}  // namespace

void check_supported(const Device& dev, DType t) {
  if (!dev.caps().supports_dtype(t)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                       std::string(dtype_name(t)) + " tensors");
  }
}

void check_dim(int dim, int ndim, const char* op) {
  if (dim < 0 || dim >= std::max(ndim, 1)) {
    throw InvalidArgument(std::string("vkml: ") + op + ": dim " + std::to_string(dim) +
                          " out of range for a tensor of " + std::to_string(ndim) + " dims");
  }
}

void check_index_dtype(const TensorDesc& index, const char* op) {
  if (index.dtype != DType::kI64 && index.dtype != DType::kI32) {
    throw InvalidArgument(std::string("vkml: ") + op + ": index must be int32 or int64, not " +
                          std::string(dtype_name(index.dtype)));
  }
}

MemRange range_of(const TensorDesc& t) { return {t.address, t.span_bytes()}; }

std::vector<int64_t> strides_without(const TensorDesc& t, int dim) {
  std::vector<int64_t> s = t.strides;
  if (dim < static_cast<int>(s.size())) s[dim] = 0;
  return s;
}

IndexOperandLayout vector_index(const TensorDesc& index, int ndim, int dim, int64_t limit,
                                int64_t stride) {
  IndexOperandLayout op;
  op.address = index.address;
  op.dtype = index.dtype;
  op.strides.assign(ndim, 0);
  if (dim < ndim) op.strides[dim] = index.ndim() == 0 ? 0 : index.strides[0];
  op.limit = limit;
  op.stride = stride;
  op.range = range_of(index);
  return op;
}

IndexOperandLayout full_index(const TensorDesc& index, int64_t limit, int64_t stride) {
  IndexOperandLayout op;
  op.address = index.address;
  op.dtype = index.dtype;
  op.strides = index.strides;
  op.limit = limit;
  op.stride = stride;
  op.range = range_of(index);
  return op;
}

void launch_index(Device& dev, const IndexLaunch& l) {
  int64_t numel = 1;
  for (int64_t s : l.sizes) numel *= s;
  if (numel == 0) return;
  check_supported(dev, l.dtype);
  if (dtype_is_complex(l.dtype) && (l.mode == IndexMode::kMax || l.mode == IndexMode::kMin)) {
    throw NotSupported("vkml: max/min reductions of complex values are not defined");
  }
  if (l.indices.size() > VKML_INDEX_MAX_INDICES) {
    throw NotSupported("vkml: at most " + std::to_string(VKML_INDEX_MAX_INDICES) +
                       " index tensors are supported");
  }
  const size_t nd = l.sizes.size();
  // Stride vectors in one list: data, values, then each index operand.
  std::vector<std::vector<int64_t>> all = {l.data_strides, l.value_strides};
  if (all[1].empty()) all[1].assign(nd, 0);
  for (const auto& ix : l.indices) all.push_back(ix.strides);
  for (const auto& s : all) {
    if (s.size() != nd) throw InvalidArgument("vkml: index launch with inconsistent strides");
  }
  std::vector<int> par, ser;
  for (size_t d = 0; d < nd; ++d) {
    (d < l.serial.size() && l.serial[d] ? ser : par).push_back(static_cast<int>(d));
  }
  std::vector<std::vector<int64_t>> pstr = all, sstr = all;
  std::vector<int64_t> psizes = coalesce_group(l.sizes, par, &pstr);
  std::vector<int64_t> ssizes = coalesce_group(l.sizes, ser, &sstr);
  if (psizes.size() + ssizes.size() > VKML_INDEX_MAX_DIMS) {
    throw NotSupported("vkml: indexing with more than " + std::to_string(VKML_INDEX_MAX_DIMS) +
                       " non-mergeable dimensions is not supported");
  }
  IndexParams p{};
  int64_t npar = 1, nser = 1;
  auto put = [&](size_t slot, int64_t size, const std::vector<std::vector<int64_t>>& str,
                 size_t j) {
    p.sizes[slot] = size;
    p.data_strides[slot] = str[0][j];
    p.value_strides[slot] = str[1][j];
    for (size_t k = 0; k < l.indices.size(); ++k) {
      p.index_strides[k * VKML_INDEX_MAX_DIMS + slot] = str[2 + k][j];
    }
  };
  for (size_t j = 0; j < psizes.size(); ++j) {
    put(j, psizes[j], pstr, j);
    npar *= psizes[j];
  }
  for (size_t j = 0; j < ssizes.size(); ++j) {
    put(psizes.size() + j, ssizes[j], sstr, j);
    nser *= ssizes[j];
  }
  p.ndim = static_cast<uint32_t>(psizes.size() + ssizes.size());
  p.nparallel = static_cast<uint32_t>(psizes.size());
  p.nindex = static_cast<uint32_t>(l.indices.size());
  p.numel_parallel = npar;
  p.numel_serial = nser;
  p.owners = 1;
  bool reduce = l.mode != IndexMode::kGather && l.mode != IndexMode::kAssign &&
                l.mode != IndexMode::kDiv;
  bool owner_ok = reduce && nser > 1 && !l.indices.empty();
  for (size_t j = 0; j < ssizes.size() && owner_ok; ++j) owner_ok = sstr[0][j] == 0;
  int64_t owners = 1;
  for (size_t k = 0; k < l.indices.size() && owner_ok; ++k) {
    if (l.indices[k].limit <= 0 || owners > (int64_t{1} << 40) / l.indices[k].limit) {
      owner_ok = false;
    } else {
      owners *= l.indices[k].limit;
    }
  }
  int forced = owner_override();
  bool owner = forced == 1 || (forced == -1 && prefer_owner_threads(dev.caps(), npar, owners));
  if (owner_ok && owner) {
    p.flags |= VKML_INDEX_OWNER;
    p.owners = owners;
  }
  p.mode = static_cast<uint32_t>(l.mode);
  p.data = l.data;
  p.values = l.values;
  p.value_bits = l.value_bits;
  p.error_flag = l.error_flag;
  p.counts = l.counts;
  p.alpha_bits = l.dtype == DType::kC64
                     ? scalar_bits(DType::kC64, Scalar::from_complex(l.alpha_f, l.alpha_im))
                     : std::bit_cast<uint64_t>(l.alpha_f);
  p.alpha_f = static_cast<float>(l.alpha_f);
  p.alpha_i = l.alpha_i;
  p.flags |= l.allow_negative ? VKML_INDEX_ALLOW_NEGATIVE : 0u;
  if (l.values == 0) p.flags |= VKML_INDEX_VALUE_SCALAR;
  if (l.skip_index) {
    p.flags |= VKML_INDEX_SKIP;
    p.skip_index = *l.skip_index;
  }
  if (l.counts) p.flags |= VKML_INDEX_SCALE_BY_COUNT;
  if (l.scale_by_alpha) p.flags |= VKML_INDEX_SCALE_BY_ALPHA;
  if (!l.flat_sizes.empty()) {
    std::vector<int64_t> fs = l.flat_strides;
    std::vector<int64_t> fsizes = coalesce_dims(l.flat_sizes, {&fs});
    if (fsizes.size() > VKML_INDEX_MAX_DIMS) throw NotSupported("vkml: take/put_: too many dims");
    p.flat_ndim = static_cast<uint32_t>(fsizes.size());
    for (size_t d = 0; d < fsizes.size(); ++d) {
      p.flat_sizes[d] = fsizes[d];
      p.flat_strides[d] = fs[d];
    }
  }
  std::vector<MemRange> reads, writes;
  for (size_t k = 0; k < l.indices.size(); ++k) {
    const auto& ix = l.indices[k];
    if (ix.dtype != DType::kI32 && ix.dtype != DType::kI64) {
      throw InvalidArgument("vkml: index tensors must be int32 or int64");
    }
    p.index_addr[k] = ix.address;
    p.index_limit[k] = ix.limit;
    p.index_stride[k] = ix.stride;
    if (ix.dtype == DType::kI32) p.index_i32_mask |= 1u << k;
    reads.push_back(ix.range);
  }
  if (l.mode == IndexMode::kGather) {
    reads.push_back(l.data_range);
    writes.push_back(l.values_range);
  } else {
    if (l.mode != IndexMode::kAssign) reads.push_back(l.data_range);
    if (l.values) reads.push_back(l.values_range);
    writes.push_back(l.data_range);
  }
  if (l.counts) reads.push_back(l.counts_range);
  if (l.error_flag) writes.push_back({l.error_flag, VKML_INDEX_ERROR_BYTES});
  std::string shader = "index_" + std::string(dtype_name(l.dtype));
  uint32_t spec[] = {kElementwiseWorkgroup};
  const Pipeline& pipe = dev.pipeline(shader, spec);
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  int64_t threads = npar * p.owners;
  int64_t groups = (threads + kElementwiseWorkgroup - 1) / kElementwiseWorkgroup;
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, kMaxGroupsX));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), reads, writes);
}

}  // namespace vkml::ops
