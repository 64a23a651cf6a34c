// The complex elementwise family (see complex_math.comp and complex_math.glsl).
#include "vkml/complex_math.h"

#include <string>
#include <vector>

#include "ops/complex/complex_params.h"
#include "ops/nn_util.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;
static_assert(static_cast<uint32_t>(ComplexFn::kPow) == CM_POW);
static_assert(static_cast<uint32_t>(ComplexFn::kPow) + 1 == CM_NUM_OPS);

void check_operand(const Device& dev, const TensorDesc& t, const TensorDesc& out,
                   const char* what) {
  if (t.dtype != out.dtype || !dtype_is_complex(t.dtype)) {
    throw InvalidArgument(std::string("vkml: complex function: ") + what +
                          " must be complex of the output's dtype, got " + t.describe() +
                          " for output " + out.describe());
  }
  if (t.sizes != out.sizes) {
    throw InvalidArgument(std::string("vkml: complex function: ") + what + " " + t.describe() +
                          " does not match the output " + out.describe());
  }
  if (!dev.caps().supports_dtype(t.dtype)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support complex128 tensors");
  }
}

void run(Device& dev, ComplexFn fn, const TensorDesc& out, const TensorDesc& a,
         const TensorDesc* b) {
  check_operand(dev, a, out, "input");
  if (b) check_operand(dev, *b, out, "exponent");
  if (out.numel() == 0) return;
  std::vector<int64_t> as = a.strides, bs = b ? b->strides : a.strides, ds = out.strides;
  std::vector<int64_t> sizes = coalesce_dims(out.sizes, {&as, &bs, &ds});
  if (sizes.size() > CM_MAX_DIMS) {
    throw NotSupported("vkml: complex functions take at most " + std::to_string(CM_MAX_DIMS) +
                       " non-mergeable dimensions, got " + out.describe());
  }
  ComplexMathParams p{};
  p.a = a.address;
  p.b = b ? b->address : a.address;
  p.dst = out.address;
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.sizes[d] = sizes[d];
    p.a_strides[d] = as[d];
    p.b_strides[d] = bs[d];
    p.dst_strides[d] = ds[d];
  }
  p.ndim = static_cast<uint32_t>(sizes.size());
  p.numel = out.numel();
  p.op = static_cast<uint32_t>(fn);
  const bool fp64 = out.dtype == DType::kC128;
  std::vector<MemRange> reads = {nn::range_of(a)};
  if (b) reads.push_back(nn::range_of(*b));
  MemRange writes[] = {nn::range_of(out)};
  nn::dispatch_groups(dev, fp64 ? "complex_math_f64" : "complex_math", kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

}  // namespace

void complex_unary(Device& dev, ComplexFn fn, const TensorDesc& out, const TensorDesc& a) {
  if (fn == ComplexFn::kPow) {
    throw InvalidArgument("vkml: complex_unary: pow takes two operands");
  }
  run(dev, fn, out, a, nullptr);
}

void complex_binary(Device& dev, ComplexFn fn, const TensorDesc& out, const TensorDesc& a,
                    const TensorDesc& b) {
  if (fn != ComplexFn::kPow) {
    throw InvalidArgument("vkml: complex_binary: only pow takes two operands");
  }
  run(dev, fn, out, a, &b);
}

}  // namespace vkml::ops
