// The random family: uniform, normal, bernoulli, exponential and integer-range draws.
#include "vkml/random.h"

#include <bit>
#include <string>

#include "ops/launch.h"
#include "ops/random/random_params.h"
#include "vkml/errors.h"

namespace vkml::ops {

void random(Device& dev, const TensorDesc& dst, const RandomRequest& req) {
  if (dst.numel() == 0) return;
  if (!dev.caps().supports_dtype(dst.dtype)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                       std::string(dtype_name(dst.dtype)) + " tensors");
  }
  std::vector<int64_t> strides = dst.strides;
  std::vector<int64_t> sizes = coalesce_dims(dst.sizes, {&strides});
  if (sizes.size() > VKML_RANDOM_MAX_DIMS) {
    throw NotSupported("vkml: random fill of a tensor with too many dimensions");
  }
  RandomParams p{};
  p.numel = dst.numel();
  p.ndim = static_cast<uint32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.sizes[d] = sizes[d];
    p.strides[d] = strides[d];
  }
  p.dst = dst.address;
  p.seed = req.seed;
  p.offset = req.offset;
  p.a_bits = std::bit_cast<uint64_t>(req.a);
  p.b_bits = std::bit_cast<uint64_t>(req.b);
  p.a_f = static_cast<float>(req.a);
  p.b_f = static_cast<float>(req.b);
  p.range = req.range;
  p.base = req.base;
  p.kind = static_cast<uint32_t>(req.kind);
  bool ints = req.kind == RandomKind::kIntRange;
  if (!ints && !dtype_is_float(dst.dtype)) {
    throw InvalidArgument("vkml: this random distribution needs a floating-point tensor");
  }
  std::string shader = std::string(ints ? "random_int_" : "random_float_") +
                       std::string(dtype_name(dst.dtype));
  MemRange writes[] = {{dst.address, dst.span_bytes()}};
  launch_elementwise(dev, shader, p, p.numel, {}, writes);
}

uint64_t random_counter_increment(int64_t numel) {
  // One Philox counter per 4 elements; the offset is a separate counter word.
  return 1;
}

}  // namespace vkml::ops
