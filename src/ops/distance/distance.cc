// The distance family: cdist and pdist, forward and backward (see distance.comp).
#include "vkml/distance.h"

#include <bit>
#include <cmath>
#include <string>

#include "ops/distance/distance_params.h"
#include "ops/nn_util.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;

uint32_t p_kind(double p) {
  if (!(p >= 0)) throw InvalidArgument("vkml: distances need p >= 0, got " + std::to_string(p));
  if (p == 0) return DIST_P0;
  if (p == 1) return DIST_P1;
  if (p == 2) return DIST_P2;
  if (std::isinf(p)) return DIST_PINF;
  return p < 2 ? DIST_PLT2 : DIST_PGT2;
}

void set_strides(int64_t* dst, const TensorDesc& t) {
  for (int d = 0; d < t.ndim(); ++d) dst[d] = t.strides[d];
}

void check_rank(const TensorDesc& t, int ndim, const char* what) {
  if (t.ndim() != ndim) {
    throw InvalidArgument(std::string("vkml: ") + what + " must have " + std::to_string(ndim) +
                          " dims, got " + t.describe());
  }
}

DistParams base(const TensorDesc& x1, const TensorDesc& x2, const TensorDesc& out, double p,
                uint32_t mode) {
  DistParams q{};
  q.x1 = x1.address;
  q.x2 = x2.address;
  q.dst = out.address;
  q.p_bits = std::bit_cast<uint64_t>(p);
  q.p_f = static_cast<float>(p);
  q.p_kind = p_kind(p);
  q.mode = mode;
  q.dtype[0] = nn::float_code(x1, "distance x1");
  q.dtype[1] = nn::float_code(x2, "distance x2");
  q.dtype[2] = nn::float_code(out, "distance output");
  set_strides(q.x1_strides, x1);
  set_strides(q.x2_strides, x2);
  set_strides(q.out_strides, out);
  q.cols = x1.sizes.back();
  return q;
}

// cdist shapes: common batch dims, matching columns; returns the batch dim count.
int cdist_batch(const TensorDesc& x1, const TensorDesc& x2, const TensorDesc& out,
                const TensorDesc& grad_like, const char* op) {
  const int nb = x1.ndim() - 2;
  if (nb < 0 || nb > VKML_DIST_MAX_BATCH || x2.ndim() != x1.ndim() || out.ndim() != x1.ndim() ||
      grad_like.ndim() != x1.ndim()) {
    throw InvalidArgument(std::string("vkml: ") + op + ": operands need the same 2 to " +
                          std::to_string(VKML_DIST_MAX_BATCH + 2) + " dims, got " +
                          x1.describe() + " and " + x2.describe());
  }
  for (int d = 0; d < nb; ++d) {
    if (x1.sizes[d] != x2.sizes[d] || out.sizes[d] != x1.sizes[d]) {
      throw InvalidArgument(std::string("vkml: ") + op + ": batch dims differ: " + x1.describe() +
                            ", " + x2.describe() + ", " + out.describe());
    }
  }
  if (x1.sizes[nb + 1] != x2.sizes[nb + 1]) {
    throw InvalidArgument(std::string("vkml: ") + op + ": x1 and x2 need the same columns");
  }
  return nb;
}

void record(Device& dev, DistParams& q, bool fp64, std::initializer_list<MemRange> reads,
            const TensorDesc& out) {
  if (q.numel == 0) return;
  MemRange writes[] = {nn::range_of(out)};
  nn::dispatch_groups(dev, nn::variant(dev, "distance", fp64, false), kWorkgroup,
                      nn::groups_for(q.numel, kWorkgroup), &q, sizeof(q),
                      std::span<const MemRange>(reads.begin(), reads.size()), writes);
}

}  // namespace

void cdist(Device& dev, const TensorDesc& out, const TensorDesc& x1, const TensorDesc& x2,
           double p) {
  int nb = cdist_batch(x1, x2, out, out, "cdist");
  if (out.sizes[nb] != x1.sizes[nb] || out.sizes[nb + 1] != x2.sizes[nb]) {
    throw InvalidArgument("vkml: cdist output " + out.describe() + " does not match the rows");
  }
  DistParams q = base(x1, x2, out, p, DIST_CDIST_FWD);
  q.batch_ndim = static_cast<uint32_t>(nb);
  for (int d = 0; d < nb; ++d) q.batch_sizes[d] = x1.sizes[d];
  q.rows1 = x1.sizes[nb];
  q.rows2 = x2.sizes[nb];
  q.numel = out.numel();
  record(dev, q, nn::needs_fp64(dev, {&x1, &x2, &out}), {nn::range_of(x1), nn::range_of(x2)}, out);
}

void cdist_backward(Device& dev, const TensorDesc& grad_x1, const TensorDesc& grad,
                    const TensorDesc& x1, const TensorDesc& x2, double p, const TensorDesc& dist) {
  int nb = cdist_batch(x1, x2, grad, dist, "cdist_backward");
  nn::check_same_sizes(grad_x1, x1, "cdist_backward");
  nn::check_same_sizes(grad, dist, "cdist_backward");
  DistParams q = base(x1, x2, grad_x1, p, DIST_CDIST_BWD);
  q.grad = grad.address;
  q.dist = dist.address;
  q.dtype[3] = nn::float_code(grad, "cdist grad");
  q.dtype[4] = nn::float_code(dist, "cdist distances");
  set_strides(q.grad_strides, grad);
  set_strides(q.dist_strides, dist);
  q.batch_ndim = static_cast<uint32_t>(nb);
  for (int d = 0; d < nb; ++d) q.batch_sizes[d] = x1.sizes[d];
  q.rows1 = x1.sizes[nb];
  q.rows2 = x2.sizes[nb];
  q.numel = grad_x1.numel();
  record(dev, q, nn::needs_fp64(dev, {&x1, &x2, &grad, &dist, &grad_x1}),
         {nn::range_of(x1), nn::range_of(x2), nn::range_of(grad), nn::range_of(dist)}, grad_x1);
}

void pdist(Device& dev, const TensorDesc& out, const TensorDesc& x, double p) {
  check_rank(x, 2, "pdist input");
  check_rank(out, 1, "pdist output");
  const int64_t n = x.sizes[0];
  if (out.sizes[0] != n * (n - 1) / 2 && !(n <= 1 && out.sizes[0] == 0)) {
    throw InvalidArgument("vkml: pdist output " + out.describe() + " does not fit " +
                          x.describe());
  }
  DistParams q = base(x, x, out, p, DIST_PDIST_FWD);
  q.rows1 = q.rows2 = n;
  q.numel = out.numel();
  record(dev, q, nn::needs_fp64(dev, {&x, &out}), {nn::range_of(x)}, out);
}

void pdist_backward(Device& dev, const TensorDesc& grad_x, const TensorDesc& grad,
                    const TensorDesc& x, double p, const TensorDesc& dist) {
  check_rank(x, 2, "pdist input");
  check_rank(grad, 1, "pdist grad");
  nn::check_same_sizes(grad_x, x, "pdist_backward");
  nn::check_same_sizes(grad, dist, "pdist_backward");
  const int64_t n = x.sizes[0];
  if (grad.sizes[0] != (n <= 1 ? 0 : n * (n - 1) / 2)) {
    throw InvalidArgument("vkml: pdist grad " + grad.describe() + " does not fit " +
                          x.describe());
  }
  DistParams q = base(x, x, grad_x, p, DIST_PDIST_BWD);
  q.grad = grad.address;
  q.dist = dist.address;
  q.dtype[3] = nn::float_code(grad, "pdist grad");
  q.dtype[4] = nn::float_code(dist, "pdist distances");
  q.grad_strides[0] = grad.strides[0];
  q.dist_strides[0] = dist.strides[0];
  q.rows1 = q.rows2 = n;
  q.numel = grad_x.numel();
  record(dev, q, nn::needs_fp64(dev, {&x, &grad, &dist, &grad_x}),
         {nn::range_of(x), nn::range_of(grad), nn::range_of(dist)}, grad_x);
}

}  // namespace vkml::ops
