// Helpers shared by the neural-network kernels of the bridge (softmax, norm, loss, pool,
// dropout): device and dtype checks with PyTorch's messages, out= resizing, optional tensors.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>

#include <optional>
#include <string>

#include "common/bridge.h"
#include "vkml/loss.h"

namespace torch_vkml::nn {

// Every tensor an op reads or writes must live on the vkml device of the first one.
inline void check_on_device(const at::Tensor& like, const at::Tensor& t, const char* op,
                            const char* arg) {
  if (!t.defined()) return;
  TORCH_CHECK(t.device() == like.device(), op, ": expected ", arg, " on ", like.device(),
              " but got a tensor on ", t.device());
}

// Floating dtypes the NN kernels compute on, with the message AT_DISPATCH gives otherwise.
inline void check_floating(const at::Tensor& t, const char* kernel) {
  auto s = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(
      s == at::kFloat || s == at::kHalf || s == at::kBFloat16 || s == at::kDouble, "\"", kernel,
      "\" not implemented for '", c10::toString(s), "'");
}

// An out= tensor: the dtype must match (as structured kernels require) and the shape is resized.
inline void prepare_out(at::Tensor& out, at::IntArrayRef sizes, at::ScalarType dtype,
                        const at::Tensor& like) {
  TORCH_CHECK(out.scalar_type() == dtype, "Expected out tensor to have dtype ", dtype, ", but got ",
              out.scalar_type(), " instead");
  check_on_device(like, out, "out=", "out");
  at::native::resize_output(out, sizes);
}

// A loss's `reduction` argument (0 none, 1 mean, 2 sum) as the kernels' enum.
inline vkml::ops::Reduction to_reduction(int64_t r) {
  TORCH_CHECK(r >= 0 && r <= 2, r, " is not a valid value for reduction");
  return static_cast<vkml::ops::Reduction>(r);
}

inline const at::Tensor& value_or_undefined(const std::optional<at::Tensor>& t) {
  static const at::Tensor undefined;
  return t.has_value() ? *t : undefined;
}

// A descriptor for an optional tensor (address 0 when undefined).
inline vkml::TensorDesc desc_or_empty(const at::Tensor& t) {
  return t.defined() ? to_desc(t) : vkml::TensorDesc{};
}

// Runs `fn` on the core device of `t` with the device guard set, translating core errors.
template <typename Fn>
void run_on(const at::Tensor& t, Fn&& fn) {
  c10::DeviceGuard guard(t.device());
  vkml::Device& d = core_device(t);
  translate_errors([&] { fn(d); });
}

}  // namespace torch_vkml::nn
