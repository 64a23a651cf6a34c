// cat on vkml (functional and out=; stack goes through it): one copy dispatch per input.
// Validation runs PyTorch's meta kernel, so errors, the result shape and its memory format
// match the CPU.
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "common/index_util.h"
#include "vkml/shape.h"

namespace torch_vkml::ops_cat {

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

bool any_complex(const std::vector<at::Tensor>& inputs) {
  for (const at::Tensor& t : inputs) {
    if (t.is_complex()) return true;
  }
  return false;
}

// Complex inputs concatenate as (real, imaginary) float pairs, in the promoted dtype.
at::Tensor cat_complex(const std::vector<at::Tensor>& inputs, at::ScalarType type, int64_t dim) {
  std::vector<at::Tensor> pairs;
  int64_t ndim = -1;
  for (const at::Tensor& t : inputs) {
    if (t.dim() == 1 && t.size(0) == 0) continue;  // legacy: skipped whatever the other shapes
    ndim = t.dim();
    pairs.push_back(at::view_as_real(t.to(type).resolve_conj().resolve_neg()));
  }
  // Only legacy empty inputs: the result is one of them, in the promoted dtype.
  if (pairs.empty()) return at::empty({0}, inputs.front().options().dtype(type));
  return at::view_as_complex(at::cat(pairs, at::maybe_wrap_dim(dim, ndim)));
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  std::vector<at::Tensor> inputs = materialize(tensors);
  if (any_complex(inputs)) {
    at::cat(metas(inputs), dim);  // PyTorch's checks
    return cat_complex(inputs, at::native::result_type(tensors), dim);
  }
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
  if (any_complex(inputs) || out.is_complex()) {
    TORCH_CHECK_TYPE(at::canCast(at::native::result_type(tensors), out.scalar_type()),
                     "torch.cat(): input types can't be cast to the desired output type ",
                     out.scalar_type());
    at::Tensor m_out = at::empty({0}, out.options().device(at::kMeta));
    at::cat_out(m_out, metas(inputs), dim);
    at::Tensor r = cat_complex(inputs, out.scalar_type(), dim);
    at::native::resize_output(out, r.sizes());
    return out.copy_(r);
  }
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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", cat);
  m.impl("cat.out", cat_out);
}

}  // namespace torch_vkml::ops_cat
