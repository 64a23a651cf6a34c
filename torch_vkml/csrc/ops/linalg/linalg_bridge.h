// Helpers shared by the linalg bridge files (factorizations.cpp, eigh_svd.cpp): dtype
// checks, out= tensors shaped like PyTorch's meta results, batch expansion and the device run.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty_strided.h>

#include <utility>
#include <vector>

#include "common/nn_bridge.h"

namespace torch_vkml::linalg {

// The kernels compute in float32 or float64 only (as LAPACK does), with AT_DISPATCH's message.
inline void check_linalg_dtype(const at::Tensor& t, const char* op) {
  auto s = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(s == at::kFloat || s == at::kDouble, "\"", op,
                              "\" not implemented for '", c10::toString(s), "'");
}

// An out= tensor as structured kernels treat it: dtype and device checked, resized to the meta
// result's sizes and, when resized, given the meta result's strides.
inline void fit_out(const at::Tensor& out, const at::Tensor& like, const at::Tensor& self) {
  TORCH_CHECK(out.scalar_type() == like.scalar_type(), "Expected out tensor to have dtype ",
              like.scalar_type(), ", but got ", out.scalar_type(), " instead");
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to have device ",
              self.device(), ", but got ", out.device(), " instead");
  if (at::native::resize_output(out, like.sizes())) {
    out.as_strided_(like.sizes(), like.strides());
  }
}

// A new vkml tensor laid out like the meta result.
inline at::Tensor like_meta(const at::Tensor& m, const at::Tensor& self) {
  return at::empty_strided(m.sizes(), m.strides(), m.options().device(self.device()));
}

inline std::vector<int64_t> batch_of(const at::Tensor& t, int trailing) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - trailing);
}

// `t` expanded to `batch` followed by its own last `trailing` dims (a view; stride 0 where
// broadcast).
inline at::Tensor expand_batch(const at::Tensor& t, const std::vector<int64_t>& batch,
                               int trailing) {
  std::vector<int64_t> s = batch;
  s.insert(s.end(), t.sizes().end() - trailing, t.sizes().end());
  return t.expand(s);
}

template <typename Fn>
inline void run(const at::Tensor& t, Fn&& fn) {
  nn::run_on(t, std::forward<Fn>(fn));
}


// `batch` followed by `tail`.
inline std::vector<int64_t> with_tail(std::vector<int64_t> batch,
                                      std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

}  // namespace torch_vkml::linalg
