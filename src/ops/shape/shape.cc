// The shape family: cat (strided copies), flip/roll (remap.comp), tril/triu (remap.comp with
// TRIANGLE) and ranges (range.comp).
#include "vkml/shape.h"

#include <algorithm>
#include <bit>
#include <string>

#include "ops/launch.h"
#include "ops/shape/shape_params.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

void check_supported(const Device& dev, DType t) {
  if (!dev.caps().supports_dtype(t)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                       std::string(dtype_name(t)) + " tensors");
  }
}

MemRange range_of(const TensorDesc& t) { return {t.address, t.span_bytes()}; }

std::string bits_suffix(DType t) { return std::to_string(dtype_size(t) * 8); }

void check_same(const TensorDesc& out, const TensorDesc& self, const char* op) {
  if (out.sizes != self.sizes || out.dtype != self.dtype) {
    throw InvalidArgument(std::string("vkml: ") + op + ": out " + out.describe() +
                          " does not match self " + self.describe());
  }
}

// One raw-bit remap: per dim an optional flip and a cyclic shift of the source coordinate.
void remap(Device& dev, const TensorDesc& out, const TensorDesc& self,
           std::vector<bool> flipped, std::vector<int64_t> shift) {
  if (out.numel() == 0) return;
  check_supported(dev, self.dtype);
  const int nd = self.ndim();
  // Coalesce only dims that are neither flipped nor shifted (those keep their own coordinate).
  std::vector<int64_t> sizes, ds, ss, sh;
  uint32_t flags = 0;
  for (int d = 0; d < nd; ++d) {
    bool plain = !flipped[d] && shift[d] == 0;
    if (self.sizes[d] == 1) continue;
    bool merge = plain && !sizes.empty() && sh.back() == 0 &&
                 !(flags & (1u << (sizes.size() - 1))) &&
                 ds.back() == out.strides[d] * self.sizes[d] &&
                 ss.back() == self.strides[d] * self.sizes[d];
    if (merge) {
      sizes.back() *= self.sizes[d];
      ds.back() = out.strides[d];
      ss.back() = self.strides[d];
      continue;
    }
    if (flipped[d]) flags |= 1u << sizes.size();
    sizes.push_back(self.sizes[d]);
    ds.push_back(out.strides[d]);
    ss.push_back(self.strides[d]);
    sh.push_back(shift[d]);
  }
  if (sizes.size() > VKML_SHAPE_MAX_DIMS) {
    throw NotSupported("vkml: flip/roll over more than 8 non-mergeable dims is not supported");
  }
  RemapParams p{};
  p.numel = out.numel();
  p.ndim = static_cast<uint32_t>(sizes.size());
  p.flags = flags;
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.sizes[d] = sizes[d];
    p.dst_strides[d] = ds[d];
    p.src_strides[d] = ss[d];
    p.shift[d] = sh[d];
  }
  p.dst = out.address;
  p.src = self.address;
  MemRange reads[] = {range_of(self)};
  MemRange writes[] = {range_of(out)};
  launch_elementwise(dev, "remap_u" + bits_suffix(self.dtype), p, p.numel, reads, writes);
}

}  // namespace

void cat(Device& dev, const TensorDesc& out, const std::vector<TensorDesc>& inputs, int dim) {
  if (dim < 0 || dim >= std::max(out.ndim(), 1)) throw InvalidArgument("vkml: cat: bad dim");
  int64_t offset = 0;
  for (const TensorDesc& in : inputs) {
    if (in.ndim() != out.ndim()) throw InvalidArgument("vkml: cat: ranks differ");
    for (int d = 0; d < out.ndim(); ++d) {
      if (d != dim && in.sizes[d] != out.sizes[d]) {
        throw InvalidArgument("vkml: cat: " + in.describe() + " does not fit " + out.describe());
      }
    }
    if (offset + in.sizes[dim] > out.sizes[dim]) throw InvalidArgument("vkml: cat: too long");
    TensorDesc slice = out;
    slice.sizes[dim] = in.sizes[dim];
    slice.address = out.address + static_cast<uint64_t>(offset * out.strides[dim]) *
                                      dtype_size(out.dtype);
    copy(dev, slice, in);
    offset += in.sizes[dim];
  }
  if (offset != out.sizes[dim]) throw InvalidArgument("vkml: cat: inputs do not fill out");
}

void flip(Device& dev, const TensorDesc& out, const TensorDesc& self,
          const std::vector<int>& dims) {
  check_same(out, self, "flip");
  std::vector<bool> flipped(self.ndim(), false);
  for (int d : dims) {
    if (d < 0 || d >= self.ndim()) throw InvalidArgument("vkml: flip: bad dim");
    flipped[d] = true;
  }
  remap(dev, out, self, flipped, std::vector<int64_t>(self.ndim(), 0));
}

void roll(Device& dev, const TensorDesc& out, const TensorDesc& self,
          const std::vector<int64_t>& shifts, const std::vector<int>& dims) {
  check_same(out, self, "roll");
  if (shifts.size() != dims.size()) throw InvalidArgument("vkml: roll: shifts and dims differ");
  std::vector<int64_t> shift(self.ndim(), 0);
  for (size_t k = 0; k < dims.size(); ++k) {
    int d = dims[k];
    if (d < 0 || d >= self.ndim()) throw InvalidArgument("vkml: roll: bad dim");
    int64_t n = self.sizes[d];
    if (n == 0) continue;
    // out[c] = self[(c - s) mod n] = self[(c + shift) mod n] with shift in [0, n).
    int64_t s = ((shift[d] - shifts[k]) % n + n) % n;
    shift[d] = s;
  }
  remap(dev, out, self, std::vector<bool>(self.ndim(), false), shift);
}

void triangle(Device& dev, const TensorDesc& out, const TensorDesc& self, int64_t diagonal,
              bool upper) {
  check_same(out, self, upper ? "triu" : "tril");
  if (self.ndim() < 2) throw InvalidArgument("vkml: tril/triu need at least 2 dims");
  if (out.numel() == 0) return;
  check_supported(dev, self.dtype);
  // Batch dims may merge; the last two keep their coordinates.
  std::vector<int64_t> ds(out.strides.begin(), out.strides.end() - 2);
  std::vector<int64_t> ss(self.strides.begin(), self.strides.end() - 2);
  std::vector<int64_t> sizes =
      coalesce_dims(std::vector<int64_t>(self.sizes.begin(), self.sizes.end() - 2), {&ds, &ss});
  for (int d = self.ndim() - 2; d < self.ndim(); ++d) {
    sizes.push_back(self.sizes[d]);
    ds.push_back(out.strides[d]);
    ss.push_back(self.strides[d]);
  }
  if (sizes.size() > VKML_SHAPE_MAX_DIMS) throw NotSupported("vkml: tril/triu: too many dims");
  RemapParams p{};
  p.numel = out.numel();
  p.ndim = static_cast<uint32_t>(sizes.size());
  p.flags = upper ? 1u : 0u;
  p.diagonal = diagonal;
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.sizes[d] = sizes[d];
    p.dst_strides[d] = ds[d];
    p.src_strides[d] = ss[d];
  }
  p.dst = out.address;
  p.src = self.address;
  MemRange reads[] = {range_of(self)};
  MemRange writes[] = {range_of(out)};
  launch_elementwise(dev, "triangle_u" + bits_suffix(self.dtype), p, p.numel, reads, writes);
}

namespace {

double as_double(Scalar s) { return s.is_float ? s.f : static_cast<double>(s.i); }
int64_t as_int(Scalar s) { return s.is_float ? static_cast<int64_t>(s.f) : s.i; }

// The range's floating-point values, passed as double bits and as floats (see RangeParams).
struct RangeValues {
  double start = 0.0, step = 0.0, end = 0.0, base = 0.0;
};

void launch_range(Device& dev, const TensorDesc& out, RangeParams p, const RangeValues& v) {
  if (out.numel() == 0) return;
  p.start_bits = std::bit_cast<uint64_t>(v.start);
  p.step_bits = std::bit_cast<uint64_t>(v.step);
  p.end_bits = std::bit_cast<uint64_t>(v.end);
  p.base_bits = std::bit_cast<uint64_t>(v.base);
  p.start_f32 = static_cast<float>(v.start);
  p.step_f32 = static_cast<float>(v.step);
  p.end_f32 = static_cast<float>(v.end);
  p.base_f32 = static_cast<float>(v.base);
  if (out.ndim() != 1) throw InvalidArgument("vkml: ranges fill 1-D tensors");
  if (out.dtype == DType::kBool) throw InvalidArgument("vkml: ranges of bool are not supported");
  check_supported(dev, out.dtype);
  p.numel = out.numel();
  p.stride = out.strides[0];
  p.dst = out.address;
  std::string shader = "range_" + std::string(dtype_name(out.dtype));
  if (dev.caps().fp64_math || out.dtype == DType::kF64) shader += "_fp64";
  MemRange writes[] = {range_of(out)};
  launch_elementwise(dev, shader, p, p.numel, {}, writes);
}

// Start/end as the dtype holds them (PyTorch converts them with Scalar::to<scalar_t>()).
double to_dtype_value(DType t, Scalar s) {
  if (dtype_is_float(t)) return as_double(s);
  int64_t v = as_int(s);
  switch (t) {
    case DType::kI8: return static_cast<int8_t>(v);
    case DType::kU8: return static_cast<uint8_t>(v);
    case DType::kI16: return static_cast<int16_t>(v);
    case DType::kI32: return static_cast<int32_t>(v);
    default: return static_cast<double>(v);
  }
}

}  // namespace

void arange(Device& dev, const TensorDesc& out, Scalar start, Scalar step) {
  RangeParams p{};
  p.mode = VKML_RANGE_ARANGE;
  p.start_i = as_int(start);
  p.step_i = as_int(step);
  launch_range(dev, out, p, {.start = as_double(start), .step = as_double(step)});
}

void linspace(Device& dev, const TensorDesc& out, Scalar start, Scalar end) {
  RangeParams p{};
  p.mode = VKML_RANGE_LINSPACE;
  launch_range(dev, out, p,
               {.start = to_dtype_value(out.dtype, start), .end = to_dtype_value(out.dtype, end)});
}

void logspace(Device& dev, const TensorDesc& out, Scalar start, Scalar end, double base) {
  if (out.dtype == DType::kF64) {
    throw NotSupported("vkml: logspace of float64 needs double pow, which shaders lack");
  }
  RangeParams p{};
  p.mode = VKML_RANGE_LOGSPACE;
  launch_range(dev, out, p,
               {.start = to_dtype_value(out.dtype, start),
                .end = to_dtype_value(out.dtype, end),
                .base = base});
}

}  // namespace vkml::ops
