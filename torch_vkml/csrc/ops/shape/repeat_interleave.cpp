// repeat_interleave's index form on vkml (repeat_interleave.Tensor; the other overloads
// compose it): cumulative counts and a right-sided search. The output size is read back
// unless given, because it lives on the host, as on CUDA.
#include <ATen/ops/arange.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/stack.h>
#include <torch/library.h>

namespace torch_vkml::ops_repeat_interleave {

// repeat_interleave(repeats): index i repeated repeats[i] times. The cumulative counts give each
// output slot its index by a right-sided search; the total size (and a negative count) needs one
// read of two values.
at::Tensor repeat_interleave(const at::Tensor& repeats, std::optional<c10::SymInt> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
              "repeats has to be Long or Int tensor");
  if (repeats.size(0) == 0) return at::empty({0}, repeats.options());
  at::Tensor ends = at::cumsum(repeats, 0);
  int64_t total;
  if (output_size.has_value()) {
    TORCH_CHECK(repeats.min().item<int64_t>() >= 0, "repeats can not be negative");
    total = output_size->expect_int();
  } else {
    at::Tensor facts = at::stack({ends[-1], repeats.min().to(at::kLong)}).cpu();
    TORCH_CHECK(facts[1].item<int64_t>() >= 0, "repeats can not be negative");
    total = facts[0].item<int64_t>();
  }
  at::Tensor slots = at::arange(total, ends.options());
  return at::searchsorted(ends, slots, repeats.scalar_type() == at::kInt, /*right=*/true);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("repeat_interleave.Tensor", repeat_interleave);
}

}  // namespace torch_vkml::ops_repeat_interleave
