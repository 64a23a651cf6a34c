// where / masked_fill (select.comp) and the mask scans behind nonzero, masked_select and
// masked_scatter (mask_scan.comp).
#include <algorithm>
#include <string>

#include "ops/index/index_launch.h"
#include "ops/index/mask_scan_params.h"
#include "ops/index/select_params.h"
#include "ops/launch.h"
#include "vkml/errors.h"
#include "vkml/index.h"

namespace vkml::ops {

namespace {

bool is_mask_dtype(DType t) { return t == DType::kBool || t == DType::kU8; }

std::string bits_suffix(DType t) { return std::to_string(dtype_size(t) * 8); }

}  // namespace

void where(Device& dev, const TensorDesc& out, SelectOperand cond, SelectOperand a,
           SelectOperand b) {
  if (out.numel() == 0) return;
  check_supported(dev, out.dtype);
  const int nd = out.ndim();
  std::vector<int64_t> os = out.strides, cs(nd, 0), as(nd, 0), bs(nd, 0);
  auto take = [&](const SelectOperand& op, std::vector<int64_t>* strides, bool is_cond) {
    if (!op.tensor) return;
    if (op.tensor->sizes != out.sizes) {
      throw InvalidArgument("vkml: where: operand " + op.tensor->describe() +
                            " is not laid out on the result " + out.describe());
    }
    if (is_cond ? !is_mask_dtype(op.tensor->dtype) : op.tensor->dtype != out.dtype) {
      throw InvalidArgument("vkml: where: operand dtype " +
                            std::string(dtype_name(op.tensor->dtype)) + " does not fit");
    }
    *strides = op.tensor->strides;
  };
  take(cond, &cs, true);
  take(a, &as, false);
  take(b, &bs, false);
  std::vector<int64_t> sizes = coalesce_dims(out.sizes, {&os, &cs, &as, &bs});
  if (sizes.size() > VKML_SELECT_MAX_DIMS) {
    throw NotSupported("vkml: where over more than 8 non-mergeable dims is not supported");
  }
  SelectParams p{};
  p.numel = out.numel();
  p.ndim = static_cast<uint32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.sizes[d] = sizes[d];
    p.out_strides[d] = os[d];
    p.cond_strides[d] = cs[d];
    p.a_strides[d] = as[d];
    p.b_strides[d] = bs[d];
  }
  p.dst = out.address;
  std::vector<MemRange> reads;
  auto addr = [&](const SelectOperand& op, uint64_t* a_out, uint64_t* bits_out) {
    *a_out = op.tensor ? op.tensor->address : 0;
    *bits_out = op.bits;
    if (op.tensor) reads.push_back(range_of(*op.tensor));
  };
  addr(cond, &p.cond, &p.cond_bits);
  addr(a, &p.a, &p.a_bits);
  addr(b, &p.b, &p.b_bits);
  p.keep_unselected = b.tensor && b.tensor->address == out.address && b.tensor->strides ==
                      out.strides ? 1u : 0u;
  MemRange writes[] = {range_of(out)};
  launch_elementwise(dev, "select_u" + bits_suffix(out.dtype), p, p.numel, reads, writes);
}

void masked_fill(Device& dev, const TensorDesc& self, const TensorDesc& mask, Scalar value,
                 const TensorDesc* value_tensor) {
  SelectOperand cond{&mask, 0}, a, b{&self, 0};
  TensorDesc v;
  if (value_tensor) {
    if (value_tensor->numel() != 1 || value_tensor->dtype != self.dtype) {
      throw InvalidArgument("vkml: masked_fill: value must be one element of self's dtype");
    }
    v = *value_tensor;
    v.sizes = self.sizes;
    v.strides.assign(self.ndim(), 0);
    a.tensor = &v;
  } else {
    a.bits = scalar_bits(self.dtype, value);
  }
  where(dev, self, cond, a, b);
}

uint64_t MaskScan::scratch_bytes(int64_t numel) {
  int64_t nblocks = (numel + VKML_MASK_SCAN_BLOCK - 1) / VKML_MASK_SCAN_BLOCK;
  return static_cast<uint64_t>(nblocks + 1) * 8;
}

namespace {

void fill_dims(MaskScanParams* p, const std::vector<int64_t>& sizes,
               const std::vector<int64_t>& mask_strides, const std::vector<int64_t>* data_strides) {
  if (sizes.size() > VKML_MASK_SCAN_MAX_DIMS) {
    throw NotSupported("vkml: masks with more than 8 non-mergeable dims are not supported");
  }
  p->ndim = static_cast<uint32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    p->sizes[d] = sizes[d];
    p->mask_strides[d] = mask_strides[d];
    if (data_strides) p->data_strides[d] = (*data_strides)[d];
  }
}

MaskScanParams base_params(const TensorDesc& mask, uint64_t scratch, int64_t nblocks) {
  MaskScanParams p{};
  p.numel = mask.numel();
  p.mask = mask.address;
  p.blocks = scratch;
  p.nblocks = nblocks;
  p.mask_kind = mask.dtype == DType::kC64  ? VKML_MASK_KIND_COMPLEX
                : dtype_is_float(mask.dtype) ? VKML_MASK_KIND_FLOAT
                                             : VKML_MASK_KIND_BITS;
  return p;
}

void dispatch_scan(Device& dev, const std::string& shader, const MaskScanParams& p,
                   uint32_t groups, std::span<const MemRange> reads,
                   std::span<const MemRange> writes) {
  const Pipeline& pipe = dev.pipeline(shader);
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  dev.stream().dispatch(pipe, groups, 1, 1, &addr, sizeof(addr), reads, writes);
}

uint32_t block_groups(int64_t nblocks) {
  return static_cast<uint32_t>(std::min<int64_t>(nblocks, kMaxGroupsX));
}

}  // namespace

MaskScan::MaskScan(Device& dev, const TensorDesc& mask, uint64_t scratch)
    : dev_(dev), mask_(mask), scratch_(scratch) {
  nblocks_ = (mask.numel() + VKML_MASK_SCAN_BLOCK - 1) / VKML_MASK_SCAN_BLOCK;
  if (nblocks_ == 0) return;
  check_supported(dev, mask.dtype);
  std::vector<int64_t> ms = mask.strides;
  std::vector<int64_t> sizes = coalesce_dims(mask.sizes, {&ms});
  MaskScanParams p = base_params(mask, scratch, nblocks_);
  fill_dims(&p, sizes, ms, nullptr);
  MemRange blocks{scratch, scratch_bytes(mask.numel())};
  MemRange mask_range = range_of(mask);
  dispatch_scan(dev, "mask_scan_count_m" + bits_suffix(mask.dtype), p, block_groups(nblocks_),
                {&mask_range, 1}, {&blocks, 1});
  dispatch_scan(dev, "mask_scan_blocks", p, 1, {&blocks, 1}, {&blocks, 1});
}

int64_t MaskScan::total() {
  if (nblocks_ == 0) return 0;
  int64_t n = 0;
  dev_.stream().download(scratch_ + static_cast<uint64_t>(nblocks_) * 8, &n, sizeof(n));
  return n;
}

void MaskScan::write(uint32_t mode, const TensorDesc* out, const TensorDesc* data,
                     const TensorDesc* src) {
  if (nblocks_ == 0) return;
  MaskScanParams p = base_params(mask_, scratch_, nblocks_);
  p.mode = mode;
  std::vector<MemRange> reads = {range_of(mask_), {scratch_, scratch_bytes(mask_.numel())}};
  std::vector<MemRange> writes;
  if (mode == VKML_MASK_SCAN_NONZERO) {
    fill_dims(&p, mask_.sizes, mask_.strides, nullptr);  // coordinates: dims stay as they are
    p.dst = out->address;
    p.out_stride0 = out->strides[0];
    p.out_stride1 = out->strides[1];
    writes.push_back(range_of(*out));
  } else {
    if (data->sizes != mask_.sizes) throw InvalidArgument("vkml: mask and data shapes differ");
    check_supported(dev_, data->dtype);
    std::vector<int64_t> ms = mask_.strides, ds = data->strides;
    std::vector<int64_t> sizes = coalesce_dims(mask_.sizes, {&ms, &ds});
    fill_dims(&p, sizes, ms, &ds);
    p.data = data->address;
    p.data_bytes = static_cast<uint32_t>(dtype_size(data->dtype));
    if (mode == VKML_MASK_SCAN_SELECT) {
      if (out->dtype != data->dtype) throw InvalidArgument("vkml: masked_select: dtypes differ");
      p.dst = out->address;
      p.out_stride0 = out->ndim() ? out->strides[0] : 1;
      reads.push_back(range_of(*data));
      writes.push_back(range_of(*out));
    } else {
      if (src->dtype != data->dtype) throw InvalidArgument("vkml: masked_scatter: dtypes differ");
      if (src->ndim() > VKML_MASK_SCAN_MAX_DIMS) {
        throw NotSupported("vkml: source has too many dims");
      }
      p.src = src->address;
      p.src_numel = src->numel();
      p.src_ndim = static_cast<uint32_t>(src->ndim());
      for (int d = 0; d < src->ndim(); ++d) {
        p.src_sizes[d] = src->sizes[d];
        p.src_strides[d] = src->strides[d];
      }
      reads.push_back(range_of(*src));
      writes.push_back(range_of(*data));
    }
  }
  dispatch_scan(dev_, "mask_scan_write_m" + bits_suffix(mask_.dtype), p, block_groups(nblocks_),
                reads, writes);
}

void MaskScan::write_nonzero(const TensorDesc& out) {
  if (out.dtype != DType::kI64 || out.ndim() != 2 || out.sizes[1] != mask_.ndim()) {
    throw InvalidArgument("vkml: nonzero: out must be int64 (count, ndim), got " +
                          out.describe());
  }
  if (out.numel() == 0) return;
  write(VKML_MASK_SCAN_NONZERO, &out, nullptr, nullptr);
}

void MaskScan::write_select(const TensorDesc& out, const TensorDesc& data) {
  if (out.numel() == 0) return;
  write(VKML_MASK_SCAN_SELECT, &out, &data, nullptr);
}

void MaskScan::write_scatter(const TensorDesc& data, const TensorDesc& src) {
  if (src.numel() == 0) return;
  write(VKML_MASK_SCAN_SCATTER, nullptr, &data, &src);
}

}  // namespace vkml::ops
