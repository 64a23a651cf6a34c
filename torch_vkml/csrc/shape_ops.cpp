// Shape and creation ops: cat (stack goes through it), flip, roll, tril/triu, arange, linspace,
// logspace, eye and randperm. Validation runs PyTorch's meta kernels, so errors, result shapes
// and (for cat) memory formats match the CPU.
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/PhiloxRNGEngine.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/logspace.h>
#include <ATen/ops/roll.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/unfold_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <mutex>
#include <numeric>

#include "generator.h"
#include "index_util.h"
#include "vkml/shape.h"

namespace torch_vkml {

namespace {

// ---- cat ----------------------------------------------------------------------------------

std::vector<at::Tensor> materialize(const at::ITensorListRef& tensors) {
  std::vector<at::Tensor> v;
  for (const at::Tensor& t : tensors) v.push_back(t);
  return v;
}

// Copies every input into its slice of out (one dispatch per input, converting dtypes).
void cat_into(const at::Tensor& out, const std::vector<at::Tensor>& inputs, int64_t dim) {
  if (out.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, out.dim());
  std::vector<vkml::TensorDesc> descs;
  for (const at::Tensor& t : inputs) {
    // Legacy: 1-D empty tensors are skipped whatever the other shapes are.
    if (t.dim() == 1 && t.size(0) == 0) continue;
    descs.push_back(to_desc(t));
  }
  vkml::Device& d = core_device(out);
  translate_errors([&] { vkml::ops::cat(d, to_desc(out), descs, static_cast<int>(dim)); });
}

void check_cat_inputs(const std::vector<at::Tensor>& inputs, const char* op) {
  TORCH_CHECK(!inputs.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const at::Tensor* anchor = nullptr;
  for (const at::Tensor& t : inputs) {
    if (on_vkml(t)) anchor = &t;
  }
  TORCH_CHECK(anchor, "vkml: ", op, " without a vkml tensor");
  for (const at::Tensor& t : inputs) {
    check_same_device(*anchor, t, op);
    check_dtype_supported(t);
  }
}

std::vector<at::Tensor> metas(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> m;
  for (const at::Tensor& t : inputs) m.push_back(meta(t));
  return m;
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  std::vector<at::Tensor> inputs = materialize(tensors);
  check_cat_inputs(inputs, "cat");
  const at::Tensor& anchor = inputs.front();
  c10::DeviceGuard guard(anchor.device());
  at::Tensor m = at::cat(metas(inputs), dim);
  at::Tensor out = at::empty_strided(m.sizes(), m.strides(), anchor.options().dtype(m.dtype()));
  cat_into(out, inputs, dim);
  return out;
}

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  std::vector<at::Tensor> inputs = materialize(tensors);
  check_cat_inputs(inputs, "cat");
  check_same_device(inputs.front(), out, "cat");
  c10::DeviceGuard guard(out.device());
  TORCH_CHECK_TYPE(at::canCast(at::native::result_type(tensors), out.scalar_type()),
                   "torch.cat(): input types can't be cast to the desired output type ",
                   out.scalar_type());
  // An empty meta out: the checks run, the resize warning comes once (from resize_output).
  at::Tensor m_out = at::empty({0}, out.options().device(at::kMeta));
  at::cat_out(m_out, metas(inputs), dim);
  at::assert_no_internal_overlap(out);
  for (const at::Tensor& t : inputs) at::assert_no_overlap(out, t);
  at::native::resize_output(out, m_out.sizes());
  cat_into(out, inputs, dim);
  return out;
}

// ---- flip / roll / tril / triu ------------------------------------------------------------

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  check_dtype_supported(self);
  c10::DeviceGuard guard(self.device());
  at::flip(meta(self), dims);
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  if (out.numel() == 0) return out;
  std::vector<int> wrapped;
  for (int64_t d : dims) wrapped.push_back(static_cast<int>(at::maybe_wrap_dim(d, self.dim())));
  vkml::Device& d = core_device(self);
  translate_errors([&] { vkml::ops::flip(d, to_desc(out), to_desc(self), wrapped); });
  return out;
}

at::Tensor roll_kernel(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  check_dtype_supported(self);
  c10::DeviceGuard guard(self.device());
  at::roll(meta(self), shifts, dims);
  if (dims.empty()) {
    // Rolls the flattened tensor (row-major order), then restores the shape.
    at::Tensor flat = self.reshape({-1});
    return roll_kernel(flat, shifts, {0}).view(self.sizes());
  }
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  if (out.numel() == 0) return out;
  std::vector<int> wrapped;
  for (int64_t d : dims) wrapped.push_back(static_cast<int>(at::maybe_wrap_dim(d, self.dim())));
  std::vector<int64_t> sh(shifts.begin(), shifts.end());
  vkml::Device& d = core_device(self);
  translate_errors([&] { vkml::ops::roll(d, to_desc(out), to_desc(self), sh, wrapped); });
  return out;
}

void triangle_into(const at::Tensor& out, const at::Tensor& self, int64_t diagonal, bool upper) {
  if (out.numel() == 0) return;
  vkml::Device& d = core_device(self);
  translate_errors(
      [&] { vkml::ops::triangle(d, to_desc(out), to_desc(self), diagonal, upper); });
}

template <bool kUpper>
at::Tensor triangle(const at::Tensor& self, int64_t diagonal) {
  check_dtype_supported(self);
  c10::DeviceGuard guard(self.device());
  kUpper ? at::triu(meta(self), diagonal) : at::tril(meta(self), diagonal);
  at::Tensor out = at::empty(self.sizes(), self.options());
  triangle_into(out, self, diagonal, kUpper);
  return out;
}

template <bool kUpper>
at::Tensor& triangle_(at::Tensor& self, int64_t diagonal) {
  check_dtype_supported(self);
  c10::DeviceGuard guard(self.device());
  kUpper ? at::triu(meta(self), diagonal) : at::tril(meta(self), diagonal);
  triangle_into(self, self, diagonal, kUpper);
  return self;
}

template <bool kUpper>
at::Tensor& triangle_out(const at::Tensor& self, int64_t diagonal, at::Tensor& out) {
  check_dtype_supported(self);
  check_same_device(self, out, kUpper ? "triu" : "tril");
  c10::DeviceGuard guard(self.device());
  kUpper ? at::triu(meta(self), diagonal) : at::tril(meta(self), diagonal);
  prepare_out(out, self, self.sizes(), self.scalar_type());
  if (!out.is_same(self)) at::assert_no_overlap(out, self);
  triangle_into(out, self, diagonal, kUpper);
  return out;
}

// ---- ranges, eye, randperm ----------------------------------------------------------------

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
  check_dtype_supported(out);
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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", cat);
  m.impl("cat.out", cat_out);
  m.impl("flip", flip);
  m.impl("roll", roll_kernel);
  m.impl("unfold", at::native::unfold);  // a view (as_strided); repeat() uses it
  m.impl("tril", triangle<false>);
  m.impl("tril_", triangle_<false>);
  m.impl("tril.out", triangle_out<false>);
  m.impl("triu", triangle<true>);
  m.impl("triu_", triangle_<true>);
  m.impl("triu.out", triangle_out<true>);
  m.impl("arange.start_out", arange_out);
  m.impl("linspace.out", linspace_out);
  m.impl("logspace.out", logspace_out);
  m.impl("eye.out", eye_out);
  m.impl("eye.m_out", eye_m_out);
  m.impl("randperm.generator_out", randperm_out);
}

}  // namespace torch_vkml
