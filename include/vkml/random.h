// Counter-based random numbers on the device (Philox4x32-10): results depend only on
// (seed, offset, element index), never on the GPU or the launch shape.
#pragma once
#include <cstdint>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

enum class RandomKind : uint32_t { kUniform = 0, kNormal = 1, kBernoulli = 2, kIntRange = 3,
                                   kExponential = 4 };

struct RandomRequest {
  RandomKind kind = RandomKind::kUniform;
  uint64_t seed = 0;
  uint64_t offset = 0;  // a counter word; each call needs a fresh one (see random_counter_increment)
  double a = 0.0, b = 1.0;  // uniform [a, b); normal mean a, std b; bernoulli p = a; exponential rate a
  uint64_t range = 0;       // kIntRange: values in [base, base + range); range 0 = full 64 bits
  int64_t base = 0;
};

void random(Device& dev, const TensorDesc& dst, const RandomRequest& req);

// How far a call of `numel` elements advances the generator's offset word.
uint64_t random_counter_increment(int64_t numel);

}  // namespace vkml::ops
