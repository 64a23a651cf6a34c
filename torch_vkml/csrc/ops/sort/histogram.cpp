// torch.histogram with a bin count or with given edges on vkml, composed from vkml kernels: the
// edges are linspace(min, max, bins + 1) as on the CPU; an element's bin is the right-sided search
// of the edges minus one (the CPU's linear guess refined by a local search lands on the same bin
// for evenly spaced edges), the last edge belongs to the last bin, and elements outside the range
// go to a spare bin that is dropped. Without an explicit range the data's min and max are read
// back (two values), as the CPU does.
#include <ATen/ops/aminmax.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>

namespace torch_vkml::ops_histogram {

std::pair<double, double> outer_edges(const at::Tensor& x, std::optional<at::ArrayRef<double>> range) {
  double lo = 0, hi = 0;
  if (range.has_value()) {
    TORCH_CHECK(range->size() == 2, "torch.histogramdd: for a 1-dimensional histogram, range ",
                "should have 2 elements, but got ", range->size());
    lo = (*range)[0];
    hi = (*range)[1];
  } else if (x.numel() > 0) {
    auto [mn, mx] = at::aminmax(x);
    // Widened on the host: devices without fp64 hold no float64 tensor.
    at::Tensor both = at::stack({mn, mx}).cpu().to(at::kDouble);
    lo = both[0].item<double>();
    hi = both[1].item<double>();
  }
  TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histogramdd: dimension 0's range [",
              lo, ", ", hi, "] is not finite");
  TORCH_CHECK(lo <= hi, "torch.histogramdd: min should not exceed max, but got min ", lo, " max ",
              hi, " for dimension 0");
  if (lo == hi) {  // an empty range widens as numpy's does
    lo -= 0.5;
    hi += 0.5;
  }
  return {lo, hi};
}

void check_inputs(const at::Tensor& x, const std::optional<at::Tensor>& weight) {
  TORCH_CHECK_NOT_IMPLEMENTED(x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble,
                              "\"histogram_cpu\" not implemented for '", x.scalar_type(), "'");
  if (weight.has_value() && weight->defined()) {
    TORCH_CHECK(weight->sizes().equals(x.sizes()), "torch.histogramdd: expected weight to have ",
                "the same shape as input, but got ", weight->sizes());
    TORCH_CHECK(weight->scalar_type() == x.scalar_type(), "torch.histogramdd: if weight tensor ",
                "is provided it should have the same dtype as the input tensor");
  }
}

// hist[i] = the count (or weight) of elements in [edges[i], edges[i+1]), the last bin closed.
void fill_histogram(const at::Tensor& x, const at::Tensor& edges,
                    const std::optional<at::Tensor>& weight, bool density, at::Tensor& hist) {
  const int64_t bins = edges.numel() - 1;
  at::native::resize_output(hist, {bins});
  if (x.numel() == 0 || bins == 0) {
    hist.zero_();
  } else {
    // Range tests against the edges as stored in the input dtype, as the CPU compares.
    at::Tensor first = edges.narrow(0, 0, 1).reshape({});
    at::Tensor last = edges.narrow(0, bins, 1).reshape({});
    at::Tensor inside = at::logical_and(x.ge(first), x.le(last));
    at::Tensor bin = at::searchsorted(edges, x, /*out_int32=*/false, /*right=*/true).sub_(1);
    bin = at::minimum(bin, at::scalar_tensor(bins - 1, bin.options()));
    bin = at::where(inside, bin, at::scalar_tensor(bins, bin.options()));
    at::Tensor counts = at::zeros({bins + 1}, x.options());
    bool weighted = weight.has_value() && weight->defined();
    at::Tensor add = weighted ? *weight : at::ones_like(x);
    counts.index_add_(0, bin.reshape({-1}), add.reshape({-1}));
    hist.copy_(counts.narrow(0, 0, bins));
  }
  if (density) {
    hist.div_(hist.sum());
    hist.div_(at::sub(edges.narrow(0, 1, bins), edges.narrow(0, 0, bins)));
  }
}

std::tuple<at::Tensor&, at::Tensor&> histogram_out(const at::Tensor& x, int64_t bins,
                                                    std::optional<at::ArrayRef<double>> range,
                                                    const std::optional<at::Tensor>& weight,
                                                    bool density, at::Tensor& hist,
                                                    at::Tensor& edges) {
  check_inputs(x, weight);
  TORCH_CHECK(bins > 0, "torch.histogramdd(): bins must be > 0, but got ", bins, " for dimension 0");
  auto [lo, hi] = outer_edges(x, range);
  at::native::resize_output(edges, {bins + 1});
  at::linspace_out(edges, lo, hi, bins + 1);
  fill_histogram(x, edges, weight, density, hist);
  return {hist, edges};
}

// histogram.bins_tensor: the given edges (increasing), searched the same way.
std::tuple<at::Tensor&, at::Tensor&> histogram_edges_out(const at::Tensor& x,
                                                          const at::Tensor& bins,
                                                          const std::optional<at::Tensor>& weight,
                                                          bool density, at::Tensor& hist,
                                                          at::Tensor& edges) {
  check_inputs(x, weight);
  TORCH_CHECK(bins.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ",
              bins.dim(), " dimensions in the bins tensor for dimension 0");
  TORCH_CHECK(bins.numel() > 0, "torch.histogramdd: bins tensor should have at least 1 element, ",
              "but got ", bins.numel(), " elements for dimension 0");
  TORCH_CHECK(bins.scalar_type() == x.scalar_type(), "torch.histogramdd: input tensor and bins ",
              "tensors should have the same dtype, but got input ", x.scalar_type(),
              " and bins for dimension 0 ", bins.scalar_type());
  at::native::resize_output(edges, bins.sizes());
  edges.copy_(bins);
  fill_histogram(x, edges, weight, density, hist);
  return {hist, edges};
}

std::tuple<at::Tensor, at::Tensor> histogram_edges(const at::Tensor& x, const at::Tensor& bins,
                                                   const std::optional<at::Tensor>& weight,
                                                   bool density) {
  at::Tensor hist = at::empty({0}, x.options()), edges = at::empty({0}, x.options());
  histogram_edges_out(x, bins, weight, density, hist, edges);
  return {hist, edges};
}

std::tuple<at::Tensor, at::Tensor> histogram(const at::Tensor& x, int64_t bins,
                                             std::optional<at::ArrayRef<double>> range,
                                             const std::optional<at::Tensor>& weight,
                                             bool density) {
  at::Tensor hist = at::empty({0}, x.options()), edges = at::empty({0}, x.options());
  histogram_out(x, bins, range, weight, density, hist, edges);
  return {hist, edges};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("histogram.bin_ct", histogram);
  m.impl("histogram.bin_ct_out", histogram_out);
  m.impl("histogram.bins_tensor", histogram_edges);
  m.impl("histogram.bins_tensor_out", histogram_edges_out);
}

}  // namespace torch_vkml::ops_histogram
