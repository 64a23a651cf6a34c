// In-place random fills, driven by the vkml Philox generator (seed + offset), so a seed
// reproduces the same numbers on every vkml device.
#include <ATen/core/DistributionsHelper.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <mutex>

#include "bridge.h"
#include "generator.h"
#include "vkml/random.h"

namespace torch_vkml {

namespace {

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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("uniform_", uniform_);
  m.impl("normal_", normal_);
  m.impl("bernoulli_.float", bernoulli_float);
  m.impl("exponential_", exponential_);
  m.impl("random_.from", random_from);
  m.impl("random_.to", random_to);
  m.impl("random_", random_default);
}

}  // namespace torch_vkml
