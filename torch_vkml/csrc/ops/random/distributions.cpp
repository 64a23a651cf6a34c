// Random sampling on vkml, driven by the vkml Philox generator (seed + offset), so a seed
// reproduces the same numbers on every vkml device: the in-place fills uniform_, normal_,
// bernoulli_ (float p), exponential_ and random_, and, built from vkml kernels, bernoulli_ with a
// tensor of probabilities and multinomial (with replacement: a binary search of uniforms in the
// running sum of each row; without: the largest p / Exp(1) keys, PyTorch's own
// exponential-race formulation).
#include <ATen/ATen.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/core/Generator.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <optional>

#include "common/bridge.h"
#include "device/generator.h"
#include "vkml/random.h"

namespace torch_vkml::ops_distributions {

void draw(at::Tensor& self, std::optional<at::Generator> generator, vkml::ops::RandomRequest req) {
  if (self.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  auto* gen = at::get_generator_or_default<VkmlGeneratorImpl>(
      generator, default_generator(self.device().index()));
  {
    std::lock_guard<std::mutex> lock(gen->mutex_);
    auto [seed, offset] = gen->philox_engine_inputs(
        vkml::ops::random_counter_increment(self.numel()));
    req.seed = seed;
    req.offset = offset;
  }
  vkml::Device& d = core_device(self);
  translate_errors([&] { vkml::ops::random(d, to_desc(self), req); });
}

// Largest integer of the dtype that random_() may produce, plus one (PyTorch's rules).
uint64_t default_range(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return (1ull << std::numeric_limits<float>::digits) + 1;
    case at::kDouble: return (1ull << std::numeric_limits<double>::digits) + 1;
    case at::kHalf: return (1ull << 11) + 1;
    case at::kBFloat16: return (1ull << 8) + 1;
    case at::kBool: return 2;
    case at::kByte: return 256;
    case at::kChar: return 128;
    case at::kShort: return 1ull << 15;
    case at::kInt: return 1ull << 31;
    case at::kLong: return 1ull << 63;
    default: TORCH_CHECK(false, "vkml: random_ of ", t, " is not supported");
  }
}

at::Tensor& uniform_(at::Tensor& self, double from, double to,
                     std::optional<at::Generator> gen) {
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  draw(self, gen, {vkml::ops::RandomKind::kUniform, 0, 0, from, to});
  return self;
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (self.is_complex()) {
    // As the CPU: real and imaginary parts each normal with std / sqrt(2).
    at::Tensor pairs = at::view_as_real(self);
    draw(pairs, gen, {vkml::ops::RandomKind::kNormal, 0, 0, mean, std / std::sqrt(2.0)});
    return self;
  }
  draw(self, gen, {vkml::ops::RandomKind::kNormal, 0, 0, mean, std});
  return self;
}

at::Tensor& bernoulli_float(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  if (!self.is_floating_point()) {
    at::Tensor tmp = at::empty_like(self, self.options().dtype(at::kFloat));
    draw(tmp, gen, {vkml::ops::RandomKind::kBernoulli, 0, 0, p});
    self.copy_(tmp);
    return self;
  }
  draw(self, gen, {vkml::ops::RandomKind::kBernoulli, 0, 0, p});
  return self;
}

at::Tensor& exponential_(at::Tensor& self, double lambd, std::optional<at::Generator> gen) {
  TORCH_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  draw(self, gen, {vkml::ops::RandomKind::kExponential, 0, 0, lambd});
  return self;
}

at::Tensor& random_range(at::Tensor& self, int64_t from, uint64_t range,
                         std::optional<at::Generator> gen) {
  vkml::ops::RandomRequest req;
  req.kind = vkml::ops::RandomKind::kIntRange;
  req.base = from;
  req.range = range;
  draw(self, gen, req);
  return self;
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        std::optional<at::Generator> gen) {
  uint64_t range;
  if (to.has_value()) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", *to);
    range = static_cast<uint64_t>(*to - from);
  } else {
    range = default_range(self.scalar_type()) - static_cast<uint64_t>(from);
  }
  return random_range(self, from, range, gen);
}

at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 < to, "random_ expects 'from' to be less than 'to', but got from=0 >= to=", to);
  return random_range(self, 0, static_cast<uint64_t>(to), gen);
}

at::Tensor& random_default(at::Tensor& self, std::optional<at::Generator> gen) {
  return random_range(self, 0, default_range(self.scalar_type()), gen);
}

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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("uniform_", uniform_);
  m.impl("normal_", normal_);
  m.impl("bernoulli_.float", bernoulli_float);
  m.impl("exponential_", exponential_);
  m.impl("random_.from", random_from);
  m.impl("random_.to", random_to);
  m.impl("random_", random_default);
  m.impl("bernoulli_.Tensor", bernoulli_tensor_);
  m.impl("multinomial", multinomial);
  m.impl("multinomial.out", multinomial_out);
}

}  // namespace torch_vkml::ops_distributions
