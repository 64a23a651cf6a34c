// The dropout family: a Bernoulli draw (random family) followed by one elementwise step.
#include "vkml/dropout.h"

#include <bit>
#include <string>

#include "ops/dropout/dropout_params.h"
#include "ops/nn_util.h"
#include "vkml/errors.h"
#include "vkml/random.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;

void run(Device& dev, const char* kernel, const TensorDesc& a, const TensorDesc& b,
         const TensorDesc& c, double scale, bool fp64, bool forward) {
  DropoutParams p{};
  std::vector<int64_t> as = a.strides, bs = b.strides, cs = c.strides;
  std::vector<int64_t> sizes = coalesce_dims(c.sizes, {&as, &bs, &cs});
  if (sizes.size() > VKML_DROPOUT_MAX_DIMS) {
    throw NotSupported("vkml: dropout over too many non-mergeable dimensions");
  }
  p.numel = c.numel();
  p.ndim = static_cast<uint32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.sizes[d] = sizes[d];
    p.a_strides[d] = as[d];
    p.b_strides[d] = bs[d];
    p.c_strides[d] = cs[d];
  }
  p.a = a.address;
  p.b = b.address;
  p.c = c.address;
  p.scale_bits = std::bit_cast<uint64_t>(scale);
  p.scale_f = static_cast<float>(scale);
  p.a_dtype = nn::float_code(a, "dropout input");
  p.c_dtype = nn::float_code(c, "dropout output");
  MemRange reads[] = {nn::range_of(a), forward ? nn::range_of(c) : nn::range_of(b)};
  MemRange writes[] = {nn::range_of(c), forward ? nn::range_of(b) : MemRange{}};
  nn::dispatch_groups(dev, nn::variant(dev, kernel, fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

void check_mask(const TensorDesc& mask, const TensorDesc& like) {
  nn::check_same_sizes(mask, like, "dropout");
  if (mask.dtype != DType::kBool) throw InvalidArgument("vkml: dropout mask must be bool");
}

}  // namespace

void dropout(Device& dev, const TensorDesc& out, const TensorDesc& mask, const TensorDesc& input,
             double p, uint64_t seed, uint64_t offset) {
  nn::check_same_sizes(out, input, "dropout");
  check_mask(mask, input);
  if (!(p >= 0.0 && p <= 1.0)) {
    throw InvalidArgument("vkml: dropout probability has to be between 0 and 1, but got " +
                          std::to_string(p));
  }
  bool fp64 = nn::needs_fp64(dev, {&out, &input, &mask});
  nn::float_code(input, "dropout input");
  if (input.numel() == 0) return;
  // Keep decisions first, drawn into out itself; the elementwise step then reads them.
  RandomRequest keep{RandomKind::kBernoulli, seed, offset, 1.0 - p};
  random(dev, out, keep);
  double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  run(dev, "dropout_fwd", input, mask, out, scale, fp64, true);
}

void dropout_backward(Device& dev, const TensorDesc& grad_input, const TensorDesc& grad_output,
                      const TensorDesc& mask, double scale) {
  nn::check_same_sizes(grad_input, grad_output, "dropout_backward");
  check_mask(mask, grad_output);
  bool fp64 = nn::needs_fp64(dev, {&grad_input, &grad_output, &mask});
  if (grad_output.numel() == 0) return;
  run(dev, "dropout_bwd", grad_output, mask, grad_input, scale, fp64, false);
}

}  // namespace vkml::ops
