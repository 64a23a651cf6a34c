// The copy family: strided copies, dtype casts and fills.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ops/copy/copy_params.h"
#include "ops/launch.h"
#include "vkml/config.h"
#include "vkml/errors.h"
#include "vkml/ops.h"

namespace vkml::ops {

namespace {

uint16_t float_to_half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7FFFFFFFu;
  if (mag >= 0x7F800000u) return static_cast<uint16_t>(sign | (mag > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (mag >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to infinity
  if (mag < 0x38800000u) {  // subnormal half (or zero): round to nearest even at 2^-24
    float af;
    std::memcpy(&af, &mag, 4);
    float scaled = af * 16777216.0f;  // exact: multiply by 2^24
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  uint32_t rounded = mag + 0xFFFu + ((mag >> 13) & 1u);  // round to nearest even on 13 dropped bits
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

uint16_t float_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

std::string variant_suffix(DType t) { return std::string(dtype_name(t)); }

// A same-dtype copy whose unit-stride dimension differs between source and destination (NCHW to
// channels-last, a matrix transpose), with at most one further (batch) dimension, after
// coalescing: 32x32 tiles through shared memory (copy_transpose.comp), so that reads and writes
// both coalesce; the generic strided copy reads one element per memory transaction there.
// Measurements: docs/design/elementwise.md#copies.
bool transpose_copy(Device& dev, const std::vector<int64_t>& sizes, const std::vector<int64_t>& ds,
                    const std::vector<int64_t>& ss, const TensorDesc& dst, const TensorDesc& src,
                    uint64_t esize) {
  const bool off = !config().copy_transpose;  // the generic strided copy, for comparisons
  const int nd = static_cast<int>(sizes.size());
  if (off || nd < 2 || nd > 3 || esize > 8) return false;
  int r = -1, c = -1;  // r: the destination's unit-stride dim, c: the source's
  for (int i = 0; i < nd; ++i) {
    if (ds[i] == 1 && r < 0) r = i;
    if (ss[i] == 1 && c < 0) c = i;
  }
  if (r < 0 || c < 0 || r == c || sizes[r] < 16 || sizes[c] < 16) return false;
  const int b = nd == 3 ? 3 - r - c : -1;
  TransposeParams p{};
  p.dst = dst.address;
  p.src = src.address;
  p.batch = b >= 0 ? sizes[b] : 1;
  p.rows = sizes[r];
  p.cols = sizes[c];
  p.src_batch = b >= 0 ? ss[b] : 0;
  p.src_row = ss[r];
  p.dst_batch = b >= 0 ? ds[b] : 0;
  p.dst_col = ds[c];
  const auto& maxc = dev.caps().max_workgroup_count;
  const int64_t gx = (p.cols + 31) / 32, gy = (p.rows + 31) / 32;
  if (gx > maxc[0] || gy > maxc[1]) return false;
  const int64_t gz = std::min<int64_t>({p.batch, maxc[2], 65535});
  const uint32_t spec[] = {256};
  const Pipeline& pipe = dev.pipeline("copy_transpose_u" + std::to_string(esize * 8), spec);
  MemRange reads[] = {{src.address, src.span_bytes()}};
  MemRange writes[] = {{dst.address, dst.span_bytes()}};
  dev.stream().dispatch(pipe, static_cast<uint32_t>(gx), static_cast<uint32_t>(gy),
                        static_cast<uint32_t>(gz), &p, sizeof p, reads, writes);
  return true;
}

// A same-dtype strided copy whose innermost dimension is contiguous on both sides (a permute that
// keeps the last dim, a slice of rows) moves whole 16-, 8- or 4-byte units when every stride, both
// addresses and the row length allow it: one index computation per unit instead of per element.
// Rewrites sizes and strides in units; returns the unit size and sets units to the count.
uint64_t widen_unit(std::vector<int64_t>& sizes, std::vector<int64_t>& ds, std::vector<int64_t>& ss,
                    uint64_t dst_address, uint64_t src_address, uint64_t esize, int64_t& units) {
  if (sizes.empty() || ds.back() != 1 || ss.back() != 1) return esize;
  for (uint64_t unit : {16ull, 8ull, 4ull}) {
    if (unit <= esize) break;
    const int64_t per = static_cast<int64_t>(unit / esize);
    bool ok = sizes.back() % per == 0 && dst_address % unit == 0 && src_address % unit == 0;
    for (size_t d = 0; ok && d + 1 < sizes.size(); ++d) ok = ds[d] % per == 0 && ss[d] % per == 0;
    if (!ok) continue;
    sizes.back() /= per;
    for (size_t d = 0; d + 1 < sizes.size(); ++d) {
      ds[d] /= per;
      ss[d] /= per;
    }
    units /= per;
    return unit;
  }
  return esize;
}

void check_supported(const Device& dev, DType t) {
  if (!dev.caps().supports_dtype(t)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                       std::string(dtype_name(t)) + " tensors");
  }
}

}  // namespace

uint64_t scalar_bits(DType t, Scalar v) {
  double d = v.is_float ? v.f : static_cast<double>(v.i);
  auto as_int = [&](auto via) -> int64_t {
    using T = decltype(via);
    return v.is_float ? static_cast<int64_t>(static_cast<T>(v.f)) : v.i;
  };
  switch (t) {
    case DType::kF32: {
      float f = v.is_float ? static_cast<float>(v.f) : static_cast<float>(v.i);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case DType::kF64: {
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return b;
    }
    case DType::kF16:
      return float_to_half_bits(v.is_float ? static_cast<float>(v.f) : static_cast<float>(v.i));
    case DType::kBF16:
      return float_to_bf16_bits(v.is_float ? static_cast<float>(v.f) : static_cast<float>(v.i));
    case DType::kBool: return (v.is_float ? v.f != 0.0 : v.i != 0) ? 1 : 0;
    case DType::kI8: return static_cast<uint8_t>(static_cast<int8_t>(as_int(int32_t{})));
    case DType::kU8: return static_cast<uint8_t>(as_int(int64_t{}));
    case DType::kI16: return static_cast<uint16_t>(static_cast<int16_t>(as_int(int32_t{})));
    case DType::kI32: return static_cast<uint32_t>(static_cast<int32_t>(as_int(int64_t{})));
    case DType::kI64: return static_cast<uint64_t>(as_int(int64_t{}));
    case DType::kC64: {
      // (real, imaginary) floats: the real part in the low word, as in memory.
      float parts[2] = {v.is_float ? static_cast<float>(v.f) : static_cast<float>(v.i),
                        static_cast<float>(v.im)};
      uint64_t b;
      std::memcpy(&b, parts, 8);
      return b;
    }
    default: throw InvalidArgument("vkml: fill of an unknown dtype");
  }
}

void copy_bytes(Device& dev, uint64_t dst, uint64_t src, uint64_t bytes) {
  // A transfer command on a compute queue may run on a copy engine several times slower than a
  // shader, so the 16-byte-aligned bulk goes through the vec4 shader.
  uint64_t vec_bytes = ((dst | src) % 16 == 0) ? bytes / 16 * 16 : 0;
  if (vec_bytes >= (64u << 10)) {
    struct {
      uint64_t dst, src;
      int64_t count;
    } push{dst, src, static_cast<int64_t>(vec_bytes / 16)};
    uint32_t spec[] = {kElementwiseWorkgroup};
    const Pipeline& pipe = dev.pipeline("copy_vec4", spec);
    uint64_t groups = (vec_bytes / 16 + kElementwiseWorkgroup - 1) / kElementwiseWorkgroup;
    MemRange r{src, vec_bytes}, w{dst, vec_bytes};
    dev.stream().dispatch(pipe, static_cast<uint32_t>(std::min<uint64_t>(groups, kMaxGroupsX)), 1,
                          1, &push, sizeof push, {&r, 1}, {&w, 1});
  } else {
    vec_bytes = 0;
  }
  if (bytes > vec_bytes) dev.stream().copy(src + vec_bytes, dst + vec_bytes, bytes - vec_bytes);
}

void copy(Device& dev, const TensorDesc& dst, const TensorDesc& src) {
  if (dst.sizes != src.sizes) {
    throw InvalidArgument("vkml: copy between different shapes: " + dst.describe() + " <- " +
                          src.describe());
  }
  if (dst.numel() == 0) return;
  check_supported(dev, dst.dtype);
  check_supported(dev, src.dtype);
  std::vector<int64_t> ds = dst.strides, ss = src.strides;
  std::vector<int64_t> sizes = coalesce_dims(dst.sizes, {&ds, &ss});
  uint64_t esize = dtype_size(dst.dtype);
  bool dense = sizes.size() <= 1 && (sizes.empty() || (ds[0] == 1 && ss[0] == 1));
  if (dst.dtype == src.dtype && dense) {
    if (dst.address == src.address) return;
    uint64_t bytes = static_cast<uint64_t>(dst.numel()) * esize;
    bool disjoint = dst.address + bytes <= src.address || src.address + bytes <= dst.address;
    if (disjoint) {
      copy_bytes(dev, dst.address, src.address, bytes);
      return;
    }
  }
  if (dst.dtype == src.dtype && transpose_copy(dev, sizes, ds, ss, dst, src, esize)) return;
  int64_t units = dst.numel();
  if (dst.dtype == src.dtype) esize = widen_unit(sizes, ds, ss, dst.address, src.address, esize, units);
  std::string shader = dst.dtype == src.dtype
                           ? "copy_raw_u" + std::to_string(esize * 8)
                           : "copy_cast_" + variant_suffix(src.dtype) + "_" + variant_suffix(dst.dtype);
  StridedParams p{};
  fill_strided_params(&p, sizes, ds, ss, units);
  p.dst = dst.address;
  p.src = src.address;
  MemRange reads[] = {{src.address, src.span_bytes()}};
  MemRange writes[] = {{dst.address, dst.span_bytes()}};
  launch_elementwise(dev, shader, p, units, reads, writes);
}

void fill(Device& dev, const TensorDesc& dst, Scalar value) {
  if (dst.numel() == 0) return;
  check_supported(dev, dst.dtype);
  uint64_t bits = scalar_bits(dst.dtype, value);
  std::vector<int64_t> ds = dst.strides;
  std::vector<int64_t> sizes = coalesce_dims(dst.sizes, {&ds});
  uint64_t esize = dtype_size(dst.dtype);
  uint64_t bytes = static_cast<uint64_t>(dst.numel()) * esize;
  bool dense = sizes.empty() || (sizes.size() == 1 && ds[0] == 1);
  if (dense && (dst.address % 4 == 0) && (bytes % 4 == 0) &&
      (esize < 8 || (bits >> 32) == (bits & 0xFFFFFFFFu))) {
    uint32_t pattern = static_cast<uint32_t>(bits);
    if (esize == 1) pattern = (pattern & 0xFFu) * 0x01010101u;
    if (esize == 2) pattern = (pattern & 0xFFFFu) * 0x00010001u;
    dev.stream().fill(dst.address, bytes, pattern);
    return;
  }
  StridedParams p{};
  fill_strided_params(&p, sizes, ds, ds, dst.numel());
  p.dst = dst.address;
  p.src = dst.address;
  p.value = bits;
  MemRange writes[] = {{dst.address, dst.span_bytes()}};
  launch_elementwise(dev, "fill_u" + std::to_string(esize * 8), p, dst.numel(), {}, writes);
}

}  // namespace vkml::ops
