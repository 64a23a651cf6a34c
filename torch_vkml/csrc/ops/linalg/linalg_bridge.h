// Helpers shared by the linalg bridge files (factorizations.cpp, eigh_svd.cpp): dtype
// checks, real and complex descriptors, out= tensors shaped like PyTorch's meta results, batch
// expansion, triangles and the device run.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/view_as_real.h>

#include <utility>
#include <vector>

#include "common/nn_bridge.h"

namespace torch_vkml::linalg {

// The kernels compute in float32, float64, complex64 or complex128 (as LAPACK does), with
// AT_DISPATCH's message for other dtypes.
inline void check_linalg_dtype(const at::Tensor& t, const char* op) {
  auto s = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(
      s == at::kFloat || s == at::kDouble || s == at::kComplexFloat || s == at::kComplexDouble,
      "\"", op, "\" not implemented for '", c10::toString(s), "'");
}

// An input as the kernels read it: a complex tensor's lazy conj/neg bits materialised (a no-op
// for every other tensor).
inline at::Tensor resolved(const at::Tensor& t) {
  return t.defined() && t.is_complex() ? t.resolve_conj().resolve_neg() : t;
}

// The descriptor of a real, integer or complex tensor (complex ones as kC64/kC128 pairs, with
// their lazy bits resolved by the caller).
inline vkml::TensorDesc desc(const at::Tensor& t) {
  if (!t.is_complex()) return to_desc(t);
  TORCH_CHECK(!t.is_conj() && !t.is_neg(),
              "vkml: linalg kernels take complex tensors without lazy conj/neg bits");
  return to_complex_desc(t);
}

// out = triu(in, diagonal) (upper) or tril(in, diagonal) by the shape family's kernels; complex128
// tensors (which those kernels do not take) through the real views of their two parts.
inline void triangle_out(const at::Tensor& out, const at::Tensor& in, bool upper,
                         int64_t diagonal = 0) {
  auto one = [&](at::Tensor o, const at::Tensor& i) {
    if (upper) {
      at::triu_out(o, i, diagonal);
    } else {
      at::tril_out(o, i, diagonal);
    }
  };
  if (in.scalar_type() != at::kComplexDouble) return one(out, in);
  at::Tensor o = at::view_as_real(out), i = at::view_as_real(resolved(in));
  one(o.select(-1, 0), i.select(-1, 0));
  one(o.select(-1, 1), i.select(-1, 1));
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
