// Embedding lookups' kernels on vkml: embedding_dense_backward (the forward is index_select)
// and embedding_renorm_ (F.embedding with max_norm), composed from native vkml kernels.
#include <ATen/AccumulateType.h>
#include <ATen/TensorUtils.h>
#include <ATen/ops/embedding_dense_backward.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/where.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "common/index_util.h"
#include "common/nn_bridge.h"
#include "vkml/embedding.h"

namespace torch_vkml::ops_embedding {

at::Tensor embedding_dense_backward(const at::Tensor& grad, const at::Tensor& indices,
                                   int64_t num_weights, int64_t padding_idx,
                                   bool scale_grad_by_freq) {
  check_dtype_supported(grad);
  check_same_device(grad, indices, "embedding_dense_backward");
  c10::DeviceGuard guard(grad.device());
  at::Tensor m = at::embedding_dense_backward(meta(grad), meta(indices), num_weights,
                                              padding_idx, scale_grad_by_freq);
  at::Tensor grad_weight = at::empty(m.sizes(), grad.options());
  if (grad_weight.numel() == 0) return grad_weight;
  // Rows of grad by index position: grad is indices.shape + [D] unless the caller flattened.
  at::Tensor g = grad;
  std::vector<int64_t> rows(indices.sizes().begin(), indices.sizes().end());
  rows.push_back(grad.size(-1));
  if (g.sizes() != c10::IntArrayRef(rows)) g = grad.reshape(rows);
  at::Tensor counts;
  if (scale_grad_by_freq) counts = at::empty({num_weights}, indices.options().dtype(at::kLong));
  vkml::Device& d = core_device(grad);
  // No bad-index record: the forward pass (index_select) already checked these indices.
  translate_errors([&] {
    vkml::ops::embedding_backward(
        d, to_desc(grad_weight), to_desc(g), to_desc(indices), padding_idx,
        counts.defined() ? reinterpret_cast<uint64_t>(counts.data_ptr()) : 0);
  });
  return grad_weight;
}

// The rows of an embedding table that `indices` name are scaled to max_norm where their p-norm
// exceeds it (F.embedding with max_norm). Repeated indices rescale the same original row, so the
// copies written back agree.
at::Tensor& embedding_renorm_(at::Tensor& self, const at::Tensor& indices, double max_norm,
                              double norm_type) {
  at::checkDim("embedding_renorm_", at::TensorArg(self, "self", 1), 2);
  at::checkScalarTypes("embedding_renorm_", at::TensorArg(indices, "indices", 2),
                       {at::kLong, at::kInt});
  nn::check_on_device(self, indices, "embedding_renorm_", "indices");
  if (indices.numel() == 0) return self;
  at::Tensor idx = indices.reshape({-1});
  at::Tensor rows = self.index_select(0, idx);
  const auto dtype = self.scalar_type();
  const auto acc = at::toAccumulateType(dtype, /*is_cuda=*/true);
  at::Tensor norm = at::linalg_vector_norm(rows, norm_type, {1}, /*keepdim=*/true,
                                           acc != dtype ? std::optional(acc) : std::nullopt);
  at::Tensor scaled = at::full_like(norm, max_norm).div(norm.add(1e-7));
  at::Tensor factor = at::where(norm.gt(max_norm), scaled, at::ones_like(norm));
  self.index_copy_(0, idx, rows.mul(factor.to(dtype)));
  return self;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("embedding_dense_backward", embedding_dense_backward);
}

}  // namespace torch_vkml::ops_embedding

namespace torch_vkml {

// PyTorch registers its CPU embedding_renorm_ for PrivateUse1 too, so ours replaces it. The
// dispatcher warns on every import about that replacement; the registration runs at module
// initialisation under a handler that drops that one message (others pass through).
void register_embedding_renorm() {
  struct QuietOverride : c10::WarningHandler {
    c10::WarningHandler* next = c10::WarningUtils::get_warning_handler();
    void process(const c10::Warning& w) override {
      if (w.msg().find("Overriding a previously registered kernel") == std::string::npos) {
        next->process(w);
      }
    }
  };
  static QuietOverride quiet;
  c10::WarningUtils::WarningHandlerGuard guard(&quiet);
  static torch::Library lib(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                            __LINE__);
  lib.impl("embedding_renorm_", ops_embedding::embedding_renorm_);
}

}  // namespace torch_vkml
