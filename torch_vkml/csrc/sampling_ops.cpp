// Sampling built from vkml kernels: bernoulli_ with a tensor of probabilities, and multinomial
// (with replacement: a binary search of uniforms in the running sum of each row; without: the
// largest p / Exp(1) keys, PyTorch's own exponential-race formulation).
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>
#include <optional>

#include "bridge.h"

namespace torch_vkml {
namespace {

// self[i] = uniform < p[i] (p broadcast to self), drawn from `gen` (a vkml generator or the
// device default). Like CUDA, p outside [0, 1] is not checked on the host.
at::Tensor& bernoulli_tensor_(at::Tensor& self, const at::Tensor& p,
                              std::optional<at::Generator> gen) {
  TORCH_CHECK(p.device() == self.device() || p.dim() == 0,
              "bernoulli_: expected p on the same device as self, got ", p.device());
  at::ScalarType ut = at::isFloatingType(p.scalar_type()) ? at::promote_types(p.scalar_type(),
                                                                               at::kFloat)
                                                          : at::kFloat;
  at::Tensor u = at::empty(self.sizes(), self.options().dtype(ut)).uniform_(0, 1, gen);
  at::Tensor draw = at::lt(u, p.to(self.device()));
  self.copy_(draw);
  return self;
}

at::Tensor& multinomial_out(const at::Tensor& self, int64_t n_sample, bool replacement,
                            std::optional<at::Generator> gen, at::Tensor& result) {
  TORCH_CHECK(result.device() == self.device(), "multinomial arguments must have the same device");
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "multinomial only supports floating-point dtypes for input, got: ",
              self.scalar_type());
  TORCH_CHECK(result.scalar_type() == at::kLong,
              "multinomial expects Long tensor out, got: ", result.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  int64_t n_categories = self.size(-1);
  TORCH_CHECK(replacement || (n_sample <= n_categories),
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  TORCH_CHECK(n_categories <= (int64_t{1} << 24),
              "number of categories cannot exceed 2^24");
  if (self.dim() == 1) {
    at::native::resize_output(result, {n_sample});
  } else {
    at::native::resize_output(result, {self.size(0), n_sample});
  }
  if (result.numel() == 0) return result;
  // The CPU's checks, read back once: finite, non-negative, and no row summing to zero.
  at::Tensor rows = self.dim() == 1 ? self.unsqueeze(0) : self;
  at::ScalarType acc = self.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor sums = rows.sum(1, false, acc);
  at::Tensor verdict = at::stack({at::logical_and(at::isfinite(rows), at::ge(rows, 0)).all(),
                                  at::eq(sums, 0).any()})
                           .cpu();
  TORCH_CHECK(verdict[0].item<bool>(),
              "probability tensor contains either `inf`, `nan` or element < 0");
  TORCH_CHECK(!verdict[1].item<bool>(),
              "invalid multinomial distribution (sum of probabilities <= 0)");
  at::Tensor out2d = self.dim() == 1 ? result.unsqueeze(0) : result;
  if (!replacement || n_sample == 1) {
    at::Tensor q = at::empty_like(rows).exponential_(1, gen);
    at::div_out(q, rows, q);
    if (n_sample == 1) {
      out2d.copy_(at::argmax(q, -1, /*keepdim=*/true));
    } else {
      out2d.copy_(std::get<1>(at::topk(q, n_sample)));
    }
    return result;
  }
  // With replacement: category i owns [cdf[i-1], cdf[i]) of the row's total, so a zero
  // probability owns nothing.
  at::Tensor cdf = at::cumsum(rows, 1, acc);
  at::Tensor total = cdf.narrow(1, n_categories - 1, 1);
  at::Tensor u = at::empty({rows.size(0), n_sample}, cdf.options()).uniform_(0, 1, gen);
  at::Tensor picks = at::searchsorted(cdf, u.mul_(total), false, /*right=*/true);
  out2d.copy_(picks.clamp_max_(n_categories - 1));
  return result;
}

at::Tensor multinomial(const at::Tensor& self, int64_t n_sample, bool replacement,
                       std::optional<at::Generator> gen) {
  at::Tensor result = at::empty({0}, self.options().dtype(at::kLong));
  return multinomial_out(self, n_sample, replacement, std::move(gen), result);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("bernoulli_.Tensor", bernoulli_tensor_);
  m.impl("multinomial", multinomial);
  m.impl("multinomial.out", multinomial_out);
}

}  // namespace torch_vkml
