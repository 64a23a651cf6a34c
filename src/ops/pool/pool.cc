// The pool family: max / average / adaptive pooling forward and backward in one shader pair.
#include "vkml/pool.h"

#include <initializer_list>
#include <string>

#include "ops/nn_util.h"
#include "ops/pool/pool_params.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;

bool is_max(PoolKind k) { return k == PoolKind::kMax || k == PoolKind::kAdaptiveMax; }

// Fills the spatial part of one side from the trailing `spatial` dims (depth 1 for 2-D).
void spatial(const TensorDesc& t, int spatial_dims, int64_t* sizes, int64_t* strides) {
  int lead = t.ndim() - spatial_dims;
  for (int k = 0; k < 3; ++k) {
    int d = lead + k - (3 - spatial_dims);
    sizes[k] = d >= lead ? t.sizes[d] : 1;
    strides[k] = d >= lead ? t.strides[d] : 0;
  }
}

// Fills params common to both directions; a = input side, b = output side.
PoolParams make_params(PoolKind kind, const TensorDesc& a, const TensorDesc& b,
                       const TensorDesc* indices, int spatial_dims, const PoolWindow& w,
                       bool backward) {
  const char* op = backward ? "pool backward" : "pool";
  if (spatial_dims != 2 && spatial_dims != 3) {
    throw InvalidArgument(std::string("vkml: ") + op + ": 2 or 3 spatial dims, got " +
                          std::to_string(spatial_dims));
  }
  int lead = a.ndim() - spatial_dims;
  if (lead < 0 || b.ndim() != a.ndim() ||
      !std::equal(a.sizes.begin(), a.sizes.begin() + lead, b.sizes.begin())) {
    throw InvalidArgument(std::string("vkml: ") + op + ": input " + a.describe() + " and output " +
                          b.describe() + " do not match");
  }
  if (indices) nn::check_same_sizes(*indices, b, op);
  if (indices && indices->dtype != DType::kI64) {
    throw InvalidArgument(std::string("vkml: ") + op + ": indices must be int64");
  }
  if (is_max(kind) && !indices && backward) {
    throw InvalidArgument("vkml: max pool backward needs the forward's indices");
  }
  PoolParams p{};
  p.kind = static_cast<uint32_t>(kind);
  bool integral = !dtype_is_float(a.dtype) && !backward;
  if (integral) {
    // Integer pools: max in any integer dtype, average in int64, as on the CPU.
    bool ok = a.dtype == b.dtype && a.dtype != DType::kBool &&
              (kind == PoolKind::kMax || (kind == PoolKind::kAvg && a.dtype == DType::kI64));
    if (!ok) {
      throw InvalidArgument(std::string("vkml: ") + op + " of " + std::string(dtype_name(a.dtype)) +
                            " tensors is not supported");
    }
  } else {
    p.a_dtype = nn::float_code(a, op);
    p.b_dtype = nn::float_code(b, op);
  }
  spatial(a, spatial_dims, p.a_size, p.a_strides);
  spatial(b, spatial_dims, p.b_size, p.b_strides);
  if (indices) {
    int64_t unused[3];
    spatial(*indices, spatial_dims, unused, p.i_strides);
    p.indices = indices->address;
  }
  bool adaptive = kind == PoolKind::kAdaptiveAvg || kind == PoolKind::kAdaptiveMax;
  for (int k = 0; k < 3; ++k) {
    bool used = k >= 3 - spatial_dims && !adaptive;  // a 2-D pool has depth 1
    p.kernel[k] = used ? w.kernel[k] : 1;
    p.stride[k] = used ? w.stride[k] : 1;
    p.pad[k] = used ? w.pad[k] : 0;
    p.dilation[k] = used && kind == PoolKind::kMax ? w.dilation[k] : 1;
    if (p.kernel[k] <= 0 || p.stride[k] <= 0 || p.dilation[k] <= 0 || p.pad[k] < 0) {
      throw InvalidArgument(std::string("vkml: ") + op + ": invalid pooling window");
    }
  }
  if (adaptive) {
    for (int k = 0; k < 3; ++k) {
      if (p.a_size[k] == 0 || p.b_size[k] == 0) {
        if (a.numel() != 0) throw InvalidArgument(std::string("vkml: ") + op + ": empty dims");
      }
    }
  } else {
    for (int k = 0; k < 3; ++k) {
      int64_t want = pool_output_size(p.a_size[k], p.kernel[k], p.pad[k], p.stride[k],
                                      p.dilation[k], w.ceil_mode);
      if (p.b_size[k] != want) {
        throw InvalidArgument(std::string("vkml: ") + op + ": output " + b.describe() +
                              " does not have the pooled size of input " + a.describe());
      }
    }
  }
  // 64-bit division is emulated on GPUs (tens of instructions); positions below 2^31 split in 32.
  p.index32 = std::max(a.numel(), b.numel()) < (int64_t{1} << 31) ? 1u : 0u;
  p.count_include_pad = w.count_include_pad ? 1 : 0;
  p.divisor_override = kind == PoolKind::kAvg ? w.divisor_override : 0;
  // Leading dims, coalesced over all sides.
  std::vector<int64_t> sizes(a.sizes.begin(), a.sizes.begin() + lead);
  std::vector<int64_t> as(a.strides.begin(), a.strides.begin() + lead);
  std::vector<int64_t> bs(b.strides.begin(), b.strides.begin() + lead);
  std::vector<int64_t> is =
      indices ? std::vector<int64_t>(indices->strides.begin(), indices->strides.begin() + lead)
              : bs;
  sizes = coalesce_dims(sizes, {&as, &bs, &is});
  if (sizes.size() > VKML_POOL_PLANE_DIMS) {
    throw NotSupported(std::string("vkml: ") + op + " with too many non-mergeable leading dims");
  }
  p.plane_ndim = static_cast<uint32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.plane_sizes[d] = sizes[d];
    p.a_plane_strides[d] = as[d];
    p.b_plane_strides[d] = bs[d];
    p.i_plane_strides[d] = is[d];
  }
  p.a = a.address;
  p.b = b.address;
  return p;
}

// Element counts below 2^31 (p.index32) and every side's offsets too: the float *32 variants
// walk windows in 32 bits.
std::string float_variant(const Device& dev, const std::string& base, bool fp64,
                          const PoolParams& p, std::initializer_list<const TensorDesc*> sides) {
  bool fits = !fp64 && p.index32 != 0;
  for (const TensorDesc* t : sides) {
    if (t && t->span_bytes() / dtype_size(t->dtype) >= (uint64_t{1} << 31)) fits = false;
  }
  return fits ? base + "32" : nn::variant(dev, base, fp64, false);
}

}  // namespace

int64_t pool_output_size(int64_t input, int64_t kernel, int64_t pad, int64_t stride,
                         int64_t dilation, bool ceil_mode) {
  int64_t num = input + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t q = num / stride, r = num % stride;
  if (r != 0 && ((r < 0) != (stride < 0))) --q;  // round towards -inf
  int64_t out = q + 1;
  // The last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= input + pad) --out;
  return out;
}

void pool(Device& dev, PoolKind kind, const TensorDesc& out, const TensorDesc* indices,
          const TensorDesc& input, int spatial_dims, const PoolWindow& window) {
  PoolParams p = make_params(kind, input, out, indices, spatial_dims, window, false);
  bool fp64 = nn::needs_fp64(dev, {&input, &out});
  p.numel = out.numel();
  if (p.numel == 0) return;
  MemRange reads[] = {nn::range_of(input)};
  MemRange writes[] = {nn::range_of(out), indices ? nn::range_of(*indices) : MemRange{}};
  std::string shader = dtype_is_float(input.dtype)
                           ? float_variant(dev, "pool_fwd", fp64, p, {&input, &out, indices})
                           : "pool_fwd_" + std::string(dtype_name(input.dtype));
  nn::dispatch_groups(dev, shader, kWorkgroup, nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p),
                      reads, writes);
}

void pool_backward(Device& dev, PoolKind kind, const TensorDesc& grad_input,
                   const TensorDesc& grad_output, const TensorDesc* indices, int spatial_dims,
                   const PoolWindow& window) {
  PoolParams p = make_params(kind, grad_input, grad_output, indices, spatial_dims, window, true);
  bool fp64 = nn::needs_fp64(dev, {&grad_input, &grad_output});
  p.numel = grad_input.numel();
  if (p.numel == 0) return;
  MemRange reads[] = {nn::range_of(grad_output), indices ? nn::range_of(*indices) : MemRange{}};
  MemRange writes[] = {nn::range_of(grad_input)};
  const std::string shader =
      float_variant(dev, "pool_bwd", fp64, p, {&grad_input, &grad_output, indices});
  nn::dispatch_groups(dev, shader, kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

}  // namespace vkml::ops
