// Factories on vkml: arange, linspace, logspace, eye and randperm (out= forms; the others
// reach these). Validation runs PyTorch's meta kernels, so errors and sizes match the CPU.
#include <ATen/core/PhiloxRNGEngine.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/logspace.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <mutex>
#include <numeric>

#include "common/index_util.h"
#include "device/generator.h"
#include "vkml/shape.h"

namespace torch_vkml::ops_factories {

void check_range_dtype(const at::Tensor& out, const char* op) {
  check_dtype_supported(out);
  TORCH_CHECK_NOT_IMPLEMENTED(out.scalar_type() != at::kBool, "\"", op,
                              "\" not implemented for 'Bool'");
}

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step,
                       at::Tensor& out) {
  check_range_dtype(out, "arange_cpu");
  c10::DeviceGuard guard(out.device());
  at::Tensor m = meta(out);
  at::arange_out(m, start, end, step);  // size and sign checks, as the CPU computes them
  if (out.numel() != m.numel()) out.resize_({m.numel()});
  if (out.numel() == 0) return out;
  vkml::Device& d = core_device(out);
  translate_errors([&] {
    vkml::ops::arange(d, to_desc(out), to_core_scalar(start), to_core_scalar(step));
  });
  return out;
}

at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps,
                         at::Tensor& out) {
  check_range_dtype(out, "linspace_cpu");
  c10::DeviceGuard guard(out.device());
  at::Tensor m = meta(out);
  at::linspace_out(m, start, end, steps);
  if (out.numel() != steps) out.resize_({steps});
  if (steps == 0) return out;
  vkml::Device& d = core_device(out);
  translate_errors(
      [&] { vkml::ops::linspace(d, to_desc(out), to_core_scalar(start), to_core_scalar(end)); });
  return out;
}

at::Tensor& logspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps,
                         double base, at::Tensor& out) {
  check_range_dtype(out, "logspace_cpu");
  c10::DeviceGuard guard(out.device());
  at::Tensor m = meta(out);
  at::logspace_out(m, start, end, steps, base);
  if (out.numel() != steps) out.resize_({steps});
  if (steps == 0) return out;
  vkml::Device& d = core_device(out);
  translate_errors([&] {
    vkml::ops::logspace(d, to_desc(out), to_core_scalar(start), to_core_scalar(end), base);
  });
  return out;
}

at::Tensor& eye_m_out(int64_t n, int64_t m, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  // Complex too: zero_ and fill_ have complex kernels.
  TORCH_CHECK_NOT_IMPLEMENTED(is_storage_dtype(out.scalar_type()), "vkml: dtype ",
                              out.scalar_type(), " is not supported on vkml devices");
  c10::DeviceGuard guard(out.device());
  out.resize_({n, m});
  out.zero_();
  int64_t diag = std::min(n, m);
  if (diag > 0) out.as_strided({diag}, {out.stride(0) + out.stride(1)}).fill_(1);
  return out;
}

at::Tensor& eye_out(int64_t n, at::Tensor& out) { return eye_m_out(n, n, out); }

// A permutation drawn on the host from the vkml generator's Philox stream (seed, offset): the
// same seed gives the same permutation on every vkml device. O(n) host work, one upload.
at::Tensor& randperm_out(int64_t n, std::optional<at::Generator> generator, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  TORCH_CHECK(!generator.has_value() || !generator->defined() ||
                  generator->device() == out.device(),
              "Expected a '", out.device(), "' generator device but found '",
              generator->device(), "'");
  check_dtype_supported(out);
  if (at::isFloatingType(out.scalar_type())) {
    int64_t digits = out.scalar_type() == at::kHalf ? 11
                     : out.scalar_type() == at::kBFloat16 ? 8
                     : out.scalar_type() == at::kFloat ? 24 : 53;
    TORCH_CHECK(n <= (int64_t{1} << digits), "n cannot be greater than 2^", digits,
                " for the requested dtype");
  } else {
    TORCH_CHECK(out.scalar_type() != at::kBool || n <= 2, "n is too large for result tensor type");
  }
  c10::DeviceGuard guard(out.device());
  out.resize_({n});
  if (n == 0) return out;
  auto* gen = at::get_generator_or_default<VkmlGeneratorImpl>(
      generator, default_generator(out.device().index()));
  std::pair<uint64_t, uint64_t> key;
  {
    std::lock_guard<std::mutex> lock(gen->mutex_);
    key = gen->philox_engine_inputs(1);
  }
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  at::philox_engine engine(key.first, key.second, 0);
  for (int64_t i = n - 1; i > 0; --i) {
    uint64_t bits = (static_cast<uint64_t>(engine()) << 32) | engine();
    std::swap(perm[i], perm[static_cast<int64_t>(bits % static_cast<uint64_t>(i + 1))]);
  }
  at::Tensor host = at::from_blob(perm.data(), {n}, at::TensorOptions().dtype(at::kLong));
  out.copy_(host);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("arange.start_out", arange_out);
  m.impl("linspace.out", linspace_out);
  m.impl("logspace.out", logspace_out);
  m.impl("eye.out", eye_out);
  m.impl("eye.m_out", eye_m_out);
  m.impl("randperm.generator_out", randperm_out);
}

}  // namespace torch_vkml::ops_factories
