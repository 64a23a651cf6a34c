// searchsorted and bucketize on vkml (Tensor and Scalar forms, functional and out=): one binary
// search per query, with the CPU's checks and messages.
#include <ATen/ATen.h>
#include <ATen/native/BucketizationUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <optional>

#include "common/bridge.h"
#include "vkml/sort.h"

namespace torch_vkml::ops_searchsorted_bucketize {

at::Tensor& searchsorted_out(const at::Tensor& boundaries, const at::Tensor& self, bool out_int32,
                             bool right, std::optional<std::string_view> side,
                             const std::optional<at::Tensor>& sorter_opt, at::Tensor& out) {
  const at::Tensor sorter = sorter_opt.value_or(at::Tensor());
  at::native::resize_output(out, self.sizes());
  // The same checks, in the same order and with the same messages, as the CPU and CUDA kernels.
  at::native::searchsorted_pre_check(boundaries, self, out, out_int32, right, side, sorter);
  bool upper = right || (side && *side == "right");
  at::ScalarType common = at::result_type(boundaries, self);
  TORCH_CHECK_NOT_IMPLEMENTED(is_supported_dtype(common), "vkml: searchsorted does not support ",
                              common);
  at::Tensor b = boundaries.scalar_type() == common ? boundaries : boundaries.to(common);
  at::Tensor q = self.scalar_type() == common ? self : self.to(common);
  if (self.numel() == 0) return out;
  bool alias = out.is_alias_of(boundaries) || out.is_alias_of(self);
  at::Tensor result = alias ? at::empty_like(out, at::MemoryFormat::Contiguous) : out;
  translate_errors([&] {
    vkml::TensorDesc bd = to_desc(b), qd = to_desc(q), od = to_desc(result);
    vkml::TensorDesc sd = sorter.defined() ? to_desc(sorter) : vkml::TensorDesc{};
    vkml::ops::searchsorted(core_device(self), bd, sorter.defined() ? &sd : nullptr, qd, od, upper);
  });
  if (alias) out.copy_(result);
  return out;
}

at::Tensor searchsorted_tensor(const at::Tensor& boundaries, const at::Tensor& self, bool out_int32,
                               bool right, std::optional<std::string_view> side,
                               const std::optional<at::Tensor>& sorter) {
  at::Tensor out = at::empty(self.sizes(), self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return searchsorted_out(boundaries, self, out_int32, right, side, sorter, out);
}

at::Tensor& searchsorted_scalar_out(const at::Tensor& boundaries, const at::Scalar& self,
                                    bool out_int32, bool right,
                                    std::optional<std::string_view> side,
                                    const std::optional<at::Tensor>& sorter, at::Tensor& out) {
  at::Tensor q = at::native::searchsorted_scalar_tensor(self, boundaries.device());
  return searchsorted_out(boundaries, q, out_int32, right, side, sorter, out);
}

at::Tensor searchsorted_scalar(const at::Tensor& boundaries, const at::Scalar& self, bool out_int32,
                               bool right, std::optional<std::string_view> side,
                               const std::optional<at::Tensor>& sorter) {
  at::Tensor q = at::native::searchsorted_scalar_tensor(self, boundaries.device());
  return searchsorted_tensor(boundaries, q, out_int32, right, side, sorter);
}

at::Tensor& bucketize_out(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                          bool right, at::Tensor& out) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return searchsorted_out(boundaries, self, out_int32, right, std::nullopt, std::nullopt, out);
}

at::Tensor bucketize_tensor(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                            bool right) {
  at::Tensor out = at::empty(self.sizes(), self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return bucketize_out(self, boundaries, out_int32, right, out);
}

at::Tensor bucketize_scalar(const at::Scalar& self, const at::Tensor& boundaries, bool out_int32,
                            bool right) {
  return bucketize_tensor(at::native::searchsorted_scalar_tensor(self, boundaries.device()),
                          boundaries, out_int32, right);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("searchsorted.Tensor", searchsorted_tensor);
  m.impl("searchsorted.Tensor_out", searchsorted_out);
  m.impl("searchsorted.Scalar", searchsorted_scalar);
  m.impl("searchsorted.Scalar_out", searchsorted_scalar_out);
  m.impl("bucketize.Tensor", bucketize_tensor);
  m.impl("bucketize.Tensor_out", bucketize_out);
  m.impl("bucketize.Scalar", bucketize_scalar);
}

}  // namespace torch_vkml::ops_searchsorted_bucketize
