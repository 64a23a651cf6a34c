// flip, roll, tril and triu (functional, in-place, out=) on vkml. Validation runs PyTorch's
// meta kernels, so errors and result shapes match the CPU.
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/roll.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "common/index_util.h"
#include "vkml/shape.h"

namespace torch_vkml::ops_flip_roll_tril_triu {

// Complex tensors flip and roll as their (real, imaginary) float pairs; tril and triu take
// complex64 as kC64 elements.
at::Tensor as_pairs(const at::Tensor& self) {
  return at::view_as_real(self.resolve_conj().resolve_neg());
}
std::vector<int64_t> wrap_all(at::IntArrayRef dims, int64_t ndim) {
  std::vector<int64_t> w;
  for (int64_t d : dims) w.push_back(at::maybe_wrap_dim(d, ndim));
  return w;
}

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  if (self.is_complex()) {
    return at::view_as_complex(
        ops_flip_roll_tril_triu::flip(as_pairs(self), wrap_all(dims, self.dim())));
  }
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
  if (self.is_complex() && !dims.empty()) {
    return at::view_as_complex(roll_kernel(as_pairs(self), shifts, wrap_all(dims, self.dim())));
  }
  if (!self.is_complex()) check_dtype_supported(self);
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
  translate_errors([&] {
    vkml::ops::triangle(d, to_element_desc(out), to_element_desc(self), diagonal, upper);
  });
}

template <bool kUpper>
at::Tensor triangle(const at::Tensor& self, int64_t diagonal) {
  check_element_dtype(self);
  c10::DeviceGuard guard(self.device());
  kUpper ? at::triu(meta(self), diagonal) : at::tril(meta(self), diagonal);
  at::Tensor out = at::empty(self.sizes(), self.options());
  triangle_into(out, self, diagonal, kUpper);
  return out;
}

template <bool kUpper>
at::Tensor& triangle_(at::Tensor& self, int64_t diagonal) {
  check_element_dtype(self);
  c10::DeviceGuard guard(self.device());
  kUpper ? at::triu(meta(self), diagonal) : at::tril(meta(self), diagonal);
  triangle_into(self, self, diagonal, kUpper);
  return self;
}

template <bool kUpper>
at::Tensor& triangle_out(const at::Tensor& self, int64_t diagonal, at::Tensor& out) {
  check_element_dtype(self);
  check_same_device(self, out, kUpper ? "triu" : "tril");
  c10::DeviceGuard guard(self.device());
  kUpper ? at::triu(meta(self), diagonal) : at::tril(meta(self), diagonal);
  prepare_out(out, self, self.sizes(), self.scalar_type());
  if (!out.is_same(self)) at::assert_no_overlap(out, self);
  triangle_into(out, self, diagonal, kUpper);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("flip", flip);
  m.impl("roll", roll_kernel);
  m.impl("tril", triangle<false>);
  m.impl("tril_", triangle_<false>);
  m.impl("tril.out", triangle_out<false>);
  m.impl("triu", triangle<true>);
  m.impl("triu_", triangle_<true>);
  m.impl("triu.out", triangle_out<true>);
}

}  // namespace torch_vkml::ops_flip_roll_tril_triu
