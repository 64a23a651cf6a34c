// Helpers of the reduce family's kernels: running PyTorch's own structured meta functions for
// vkml (so shapes, dtypes and errors are PyTorch's), and calling the core reduction.
#pragma once
#include <ATen/TensorMeta.h>
#if __has_include(<ATen/core/Dimname.h>)
#include <ATen/core/Dimname.h>  // torch <= 2.12 passes dimension names to meta outputs
#define VKML_META_HAS_NAMES 1
#endif
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>

#include <array>
#include <vector>

#include "common/bridge.h"
#include "vkml/reduce.h"

namespace torch_vkml::reduce {

enum class Mode { kFunctional, kOut, kInplace };

// A structured op's meta class with PyTorch's output handling for a PrivateUse1 kernel:
// functional calls allocate, out= calls check dtype/device and resize, in-place calls check
// that the meta function agrees with self (as the generated RegisterCPU.cpp code does).
template <class Meta, size_t N = 1>
class Structured final : public Meta {
 public:
  explicit Structured(Mode mode, std::array<at::Tensor, N> given = {})
      : mode_(mode), outputs_(std::move(given)) {}

#ifndef VKML_META_HAS_NAMES
  void set_output_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                          at::TensorOptions options) override {
    set_output(i, sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              at::TensorOptions options) override {
    set_output(i, sizes, strides, options);
  }
#else
  void set_output_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                          at::TensorOptions options, at::DimnameList) override {
    set_output(i, sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              at::TensorOptions options, at::DimnameList) override {
    set_output(i, sizes, strides, options);
  }
#endif
  const at::Tensor& maybe_get_output(int64_t i) override { return outputs_[i]; }
  const at::Tensor& output(size_t i) const { return outputs_[i]; }

 private:
  void set_output(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                  const at::TensorOptions& options) {
    at::Tensor& out = outputs_[i];
    if (mode_ == Mode::kFunctional) {
      out = strides.empty() ? at::empty(sizes, options)
                            : at::empty_strided(sizes, strides, options);
      return;
    }
    if (mode_ == Mode::kInplace) {
      TORCH_CHECK(options.dtype() == out.dtype(), "Bad in-place call: input tensor dtype ",
                  out.dtype(), " and output tensor dtype ", options.dtype(), " should match");
      TORCH_CHECK(options.device() == out.device(), "Bad in-place call: input tensor device ",
                  out.device(), " and output tensor device ", options.device(), " should match");
      TORCH_CHECK(sizes == out.sizes(), "Bad in-place call: input tensor size ", out.sizes(),
                  " and output tensor size ", sizes, " should match");
      return;
    }
    TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ",
                options.dtype(), ", but got ", out.dtype(), " instead");
    TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ",
                options.device(), ", but got ", out.device(), " instead");
    bool resized = at::native::resize_output(out, sizes);
    if (resized && !strides.empty()) out.as_strided_(sizes, strides);
  }

  Mode mode_;
  std::array<at::Tensor, N> outputs_;
};

// `out` seen with the input's rank: size 1 and stride 0 in the reduced dims.
inline vkml::TensorDesc keepdim_view(const at::Tensor& out, int64_t ndim,
                                     const at::native::DimMask& mask, bool keepdim) {
  vkml::TensorDesc d = to_desc(out);
  if (keepdim) return d;
  d.sizes.clear();
  d.strides.clear();
  int64_t j = 0;
  for (int64_t i = 0; i < ndim; ++i) {
    if (mask[i]) {
      d.sizes.push_back(1);
      d.strides.push_back(0);
    } else {
      d.sizes.push_back(out.size(j));
      d.strides.push_back(out.stride(j));
      ++j;
    }
  }
  return d;
}

struct ReduceCall {
  vkml::ops::ReduceOp op = vkml::ops::ReduceOp::kSum;
  at::ScalarType compute = at::kFloat;
  double p = 2.0;
  double correction = 1.0;
};

// Reduces `self` over `mask` into out0 / out1 (undefined = not wanted), with outputs in the
// layout PyTorch gives them for `keepdim`. Records GPU work only; never waits.
inline void run(const ReduceCall& call, const at::Tensor& self, const at::native::DimMask& mask,
                bool keepdim, const at::Tensor& out0, const at::Tensor& out1 = {}) {
  bool has0 = out0.defined() && out0.numel() > 0;
  bool has1 = out1.defined() && out1.numel() > 0;
  if (!has0 && !has1) return;
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_complex(), "vkml: complex tensors are not supported");
  c10::DeviceGuard guard(self.device());
  int64_t ndim = self.dim();
  vkml::ops::ReduceArgs a;
  a.op = call.op;
  a.src = to_desc(self);
  for (int64_t d = 0; d < ndim; ++d) {
    if (mask[d]) a.dims.push_back(static_cast<int>(d));
  }
  if (has0) a.out0 = keepdim_view(out0, ndim, mask, keepdim);
  if (has1) a.out1 = keepdim_view(out1, ndim, mask, keepdim);
  a.compute = to_core_dtype(call.compute);
  a.p = call.p;
  a.correction = call.correction;
  vkml::Device& dev = core_device(self);
  translate_errors([&] { vkml::ops::reduce(dev, a); });
}

inline void check_same_device(const at::Tensor& self, const at::Tensor& out) {
  TORCH_CHECK(self.device() == out.device(), "Expected out tensor to have device ",
              self.device(), ", but got ", out.device(), " instead");
}

}  // namespace torch_vkml::reduce
