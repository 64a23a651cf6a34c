// The softmax family: softmax / log_softmax forward and backward along any dimension.
#include "vkml/softmax.h"

#include <string>

#include "ops/nn_util.h"
#include "ops/softmax/softmax_params.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

// Rows at most this long run one per invocation; longer ones get a workgroup each.
constexpr int64_t kThreadRowMax = 32;

// c = f(a[, b]) along `dim`; b may be null (forward).
void run(Device& dev, const char* op, bool backward, const TensorDesc& c, const TensorDesc& a,
         const TensorDesc* b, int dim, bool log) {
  nn::check_same_sizes(c, a, op);
  if (b) nn::check_same_sizes(c, *b, op);
  int nd = c.ndim();
  if (dim < 0 || dim >= (nd == 0 ? 1 : nd)) {
    throw InvalidArgument(std::string("vkml: ") + op + ": dim " + std::to_string(dim) +
                          " out of range for " + c.describe());
  }
  SoftmaxParams p{};
  p.a_dtype = nn::float_code(a, op);
  p.b_dtype = b ? nn::float_code(*b, op) : nn::kF32;
  p.c_dtype = nn::float_code(c, op);
  bool fp64 = nn::needs_fp64(dev, {&a, b, &c});
  if (c.numel() == 0) return;
  p.log_softmax = log ? 1 : 0;
  p.a = a.address;
  p.b = b ? b->address : 0;
  p.c = c.address;
  if (nd == 0) {  // a 0-dim tensor is one row of one element
    p.rows = 1;
    p.dim_size = 1;
  } else {
    p.dim_size = c.sizes[dim];
    p.a_dim_stride = a.strides[dim];
    p.b_dim_stride = b ? b->strides[dim] : 0;
    p.c_dim_stride = c.strides[dim];
    std::vector<int64_t> sizes;
    for (int d = 0; d < nd; ++d) {
      if (d != dim) sizes.push_back(c.sizes[d]);
    }
    std::vector<int64_t> as = nn::strides_without(a, dim), cs = nn::strides_without(c, dim);
    std::vector<int64_t> bs = b ? nn::strides_without(*b, dim) : cs;
    sizes = coalesce_dims(sizes, {&as, &bs, &cs});
    if (sizes.size() > VKML_SOFTMAX_MAX_DIMS) {
      throw NotSupported(std::string("vkml: ") + op + " over too many non-mergeable dimensions");
    }
    p.rows = 1;
    for (int64_t s : sizes) p.rows *= s;
    p.ndim = static_cast<uint32_t>(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) {
      p.sizes[d] = sizes[d];
      p.a_strides[d] = as[d];
      p.b_strides[d] = bs[d];
      p.c_strides[d] = cs[d];
    }
  }
  std::string base = std::string("softmax_") + (backward ? "bwd" : "fwd");
  MemRange reads[] = {nn::range_of(a), b ? nn::range_of(*b) : MemRange{}};
  MemRange writes[] = {nn::range_of(c)};
  if (p.dim_size <= kThreadRowMax) {
    constexpr uint32_t kWorkgroup = 64;
    nn::dispatch_groups(dev, nn::variant(dev, base + "_thread", fp64, false), kWorkgroup,
                        nn::groups_for(p.rows, kWorkgroup), &p, sizeof(p), reads, writes);
  } else {
    // A quarter of the row per invocation keeps short rows from idling most of the group.
    uint32_t wg = nn::workgroup_for((p.dim_size + 3) / 4);
    nn::dispatch_groups(dev, nn::variant(dev, base + "_row", fp64, true), wg, p.rows, &p, sizeof(p),
                        reads, writes);
  }
}

}  // namespace

void softmax(Device& dev, const TensorDesc& out, const TensorDesc& in, int dim, bool log) {
  run(dev, log ? "log_softmax" : "softmax", false, out, in, nullptr, dim, log);
}

void softmax_backward(Device& dev, const TensorDesc& grad_input, const TensorDesc& grad_output,
                      const TensorDesc& output, int dim, bool log) {
  run(dev, log ? "log_softmax_backward" : "softmax_backward", true, grad_input, grad_output,
      &output, dim, log);
}

}  // namespace vkml::ops
