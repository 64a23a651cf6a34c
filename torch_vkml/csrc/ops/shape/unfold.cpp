// Tensor.unfold on vkml: the forward is a view (as_strided) that repeat() also uses; its
// gradient, unfold_backward, is one strided add per window offset.
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/zeros.h>
#include <c10/core/WrapDimMinimal.h>
#include <torch/library.h>

#include <vector>

namespace torch_vkml::ops_unfold {

// The gradient of x.unfold(dim, size, step): for each offset k inside a window, the windows'
// k-th elements sit `step` apart in x, so one strided add per k gathers them (windows overlap
// only across different k, which the adds accumulate one after another).
at::Tensor unfold_backward(const at::Tensor& grad, c10::SymIntArrayRef input_sizes, int64_t dim,
                           int64_t size, int64_t step) {
  std::vector<int64_t> sizes;
  for (const c10::SymInt& s : input_sizes) sizes.push_back(s.expect_int());
  at::Tensor grad_input = at::zeros(sizes, grad.options());
  int64_t d = c10::maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()), true);
  if (sizes.empty()) {  // a 0-dim input unfolds into one window of one element
    return grad_input.add_(grad.reshape({}));
  }
  int64_t windows = grad.size(d);
  if (windows == 0) return grad_input;
  for (int64_t k = 0; k < size; ++k) {
    at::Tensor slots = grad_input.slice(d, k, k + (windows - 1) * step + 1, step);
    slots.add_(grad.select(-1, k));
  }
  return grad_input;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("unfold", at::native::unfold);  // a view (as_strided); repeat() uses it
  m.impl("unfold_backward", unfold_backward);
}

}  // namespace torch_vkml::ops_unfold
