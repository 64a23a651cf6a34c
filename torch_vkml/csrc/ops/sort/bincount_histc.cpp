// ATen kernels that count values into bins: bincount and histc. Counts come from sorting the
// bin numbers and a binary search of every bin's first position (parallel and exact); weighted
// bins accumulate through index_add_ in index order, as the CPU's loop adds them. The output
// size depends on the data where the CPU's does, and is then read back once (CUDA too).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>
#include <utility>

#include "common/bridge.h"

namespace torch_vkml::ops_bincount_histc {

// counts[b] = occurrences of b in `bins` (int64, values in [0, nbins]; nbins itself is the
// bucket of skipped elements and is not counted).
at::Tensor count_bins(const at::Tensor& bins, int64_t nbins) {
  at::Tensor sorted = std::get<0>(at::sort(bins.reshape({-1}), false, 0, false));
  at::Tensor edges = at::searchsorted(sorted, at::arange(nbins + 1, bins.options()));
  return at::sub(edges.narrow(0, 1, nbins), edges.narrow(0, 0, nbins));
}

// Reads [min, max] of `self` with one download.
std::pair<double, double> extrema(const at::Tensor& self) {
  auto [lo, hi] = at::aminmax(self);
  // Widened on the host: devices without fp64 hold no float64 tensor.
  at::Tensor both = at::stack({lo, hi}).cpu().to(at::kDouble);
  return {both[0].item<double>(), both[1].item<double>()};
}

at::Tensor& bincount_out(const at::Tensor& self, const std::optional<at::Tensor>& weights_opt,
                         int64_t minlength, at::Tensor& out) {
  TORCH_CHECK(c10::isIntegralType(self.scalar_type(), /*includeBool=*/false),
                "bincount only supports 1-d non-negative integral inputs.");
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  const at::Tensor weights = weights_opt.value_or(at::Tensor());
  bool weighted = weights.defined();
  TORCH_CHECK(!weighted || (weights.dim() == 1 && weights.size(0) == self.size(0)),
              "weights should be 1-d and have the same length as input");
  at::ScalarType dtype = !weighted ? at::kLong
                                   : (weights.scalar_type() == at::kFloat ? at::kFloat
                                                                          : at::kDouble);
  TORCH_CHECK(out.scalar_type() == dtype, "bincount: expected out dtype ", dtype, " but got ",
              out.scalar_type());
  int64_t nbins = minlength;
  if (self.numel() > 0) {
    auto [lo, hi] = extrema(self);
    TORCH_CHECK(lo >= 0, "bincount only supports 1-d non-negative integral inputs.");
    nbins = std::max(static_cast<int64_t>(hi) + 1, minlength);
  }
  at::native::resize_output(out, {nbins});
  if (!weighted) {
    if (self.numel() == 0) return out.zero_();
    return out.copy_(count_bins(self.to(at::kLong), nbins));
  }
  out.zero_();
  if (self.numel() > 0) out.index_add_(0, self.to(at::kLong), weights.to(dtype));
  return out;
}

at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights,
                    int64_t minlength) {
  bool weighted = weights.has_value() && weights->defined();
  at::ScalarType dtype = !weighted ? at::kLong
                                   : (weights->scalar_type() == at::kFloat ? at::kFloat
                                                                           : at::kDouble);
  at::Tensor out = at::empty({0}, self.options().dtype(dtype));
  return bincount_out(self, weights, minlength, out);
}

// histc's outer edges: [min, max] as given, the data's range when they are equal, widened by 1
// on both sides when still equal.
std::pair<double, double> histc_range(const at::Tensor& self, const at::Scalar& min,
                                      const at::Scalar& max) {
  double lo = min.to<double>(), hi = max.to<double>();
  if (lo == hi && self.numel() > 0) std::tie(lo, hi) = extrema(self);
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(!(std::isinf(lo) || std::isinf(hi) || std::isnan(lo) || std::isnan(hi)),
              "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  return {lo, hi};
}

at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                      const at::Scalar& max, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"histogram_vkml\" not implemented for '", self.scalar_type(),
                              "'");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
              "input ", self.scalar_type(), " and hist ", out.scalar_type());
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins,
              " for dimension 0");
  at::native::resize_output(out, {bins});
  auto [lo, hi] = histc_range(self, min, max);
  if (self.numel() == 0) return out.zero_();
  // The CPU's arithmetic, each step rounded to the input dtype: the edges are the dtype's
  // values of lo and hi, pos = (x - left) * bins / (right - left), truncated.
  double left = 0, right = 0, width = 0, scale = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "histc", [&] {
    scalar_t l = static_cast<scalar_t>(lo), r = static_cast<scalar_t>(hi);
    left = static_cast<double>(l);
    right = static_cast<double>(r);
    width = static_cast<double>(static_cast<scalar_t>(r - l));
    scale = static_cast<double>(static_cast<scalar_t>(bins));
  });
  at::Tensor pos = at::sub(self, left).mul_(scale).div_(width).to(at::kLong).clamp_max_(bins - 1);
  // Elements outside [left, right] and NaNs count nowhere: they go to the spare bin.
  at::Tensor inside = at::logical_and(at::ge(self, left), at::le(self, right));
  pos.masked_fill_(inside.logical_not(), bins);
  return out.copy_(count_bins(pos, bins));
}

at::Tensor histc(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                 const at::Scalar& max) {
  at::Tensor out = at::empty({0}, self.options());
  return histc_out(self, bins, min, max, out);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("bincount", bincount);
  m.impl("bincount.out", bincount_out);
  m.impl("histc", histc);
  m.impl("histc.out", histc_out);
}

}  // namespace torch_vkml::ops_bincount_histc
