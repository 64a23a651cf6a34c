// Distances on vkml: _cdist_forward / _cdist_backward and _pdist_forward / _pdist_backward, which
// torch.cdist, torch.pdist and F.pdist reach (cdist's matmul-based euclidean path for many rows
// is composite and runs on the gemm and elementwise kernels). Like CUDA, half and bfloat16 work.
#include <ATen/ExpandUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include "common/nn_bridge.h"
#include "vkml/distance.h"

namespace torch_vkml::ops_cdist_pdist {

struct Expanded {
  at::Tensor x1, x2;
  std::vector<int64_t> out_shape;  // [batch..., r1, r2]
  int64_t batch = 1;
};

// cdist_impl's checks and batch broadcasting.
Expanded expand_cdist(const at::Tensor& x1, const at::Tensor& x2, double p) {
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1),
              "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()),
              "cdist only supports floating-point dtypes, X1 got: ", x1.scalar_type());
  TORCH_CHECK(at::isFloatingType(x2.scalar_type()),
              "cdist only supports floating-point dtypes, X2 got: ", x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  TORCH_CHECK(x1.device() == x2.device(), "X1 and X2 must have the same device type. X1: ",
              x1.device(), " X2: ", x2.device());
  TORCH_CHECK(x1.scalar_type() == x2.scalar_type(), "expected scalar type ", x1.scalar_type(),
              " but found ", x2.scalar_type());
  Expanded e;
  auto batch = at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
  for (int64_t s : batch) e.batch *= s;
  std::vector<int64_t> s1 = batch, s2 = batch;
  s1.insert(s1.end(), {x1.size(-2), x1.size(-1)});
  s2.insert(s2.end(), {x2.size(-2), x2.size(-1)});
  e.x1 = x1.expand(s1);
  e.x2 = x2.expand(s2);
  e.out_shape = batch;
  e.out_shape.insert(e.out_shape.end(), {x1.size(-2), x2.size(-2)});
  return e;
}

at::Tensor cdist_forward(const at::Tensor& x1, const at::Tensor& x2, double p,
                         std::optional<int64_t> compute_mode) {
  int64_t mode = compute_mode.value_or(0);
  TORCH_CHECK(mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: ", mode);
  Expanded e = expand_cdist(x1, x2, p);
  if (x1.size(-1) == 0) return at::zeros(e.out_shape, x1.options());
  at::Tensor out = at::empty(e.out_shape, x1.options());
  if (out.numel() == 0) return out;
  nn::run_on(x1, [&](vkml::Device& dev) {
    vkml::ops::cdist(dev, to_desc(out), to_desc(e.x1), to_desc(e.x2), p);
  });
  return out;
}

at::Tensor cdist_backward(const at::Tensor& grad, const at::Tensor& x1, const at::Tensor& x2,
                          double p, const at::Tensor& cdist) {
  Expanded e = expand_cdist(x1, x2, p);
  for (const at::Tensor* t : {&grad, &cdist}) {
    nn::check_on_device(x1, *t, "_cdist_backward", "tensor");
  }
  if (x1.size(-2) == 0 || x2.size(-2) == 0 || x1.size(-1) == 0 || e.batch == 0) {
    return at::zeros_like(x1);
  }
  TORCH_CHECK(grad.sizes() == at::IntArrayRef(e.out_shape) &&
                  cdist.sizes() == at::IntArrayRef(e.out_shape),
              "_cdist_backward: grad ", grad.sizes(), " and cdist ", cdist.sizes(),
              " must have shape ", at::IntArrayRef(e.out_shape));
  // Like the CPU: the gradient of the broadcast x1; autograd sums it back to x1's shape.
  at::Tensor gx = at::empty(e.x1.sizes(), x1.options());
  nn::run_on(x1, [&](vkml::Device& dev) {
    vkml::ops::cdist_backward(dev, to_desc(gx), to_desc(grad), to_desc(e.x1), to_desc(e.x2), p,
                              to_desc(cdist));
  });
  return gx;
}

at::Tensor pdist_forward(const at::Tensor& self, double p) {
  TORCH_CHECK(self.is_contiguous(), "_pdist_forward requires contiguous input");
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "pdist only supports floating-point dtypes");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
  const int64_t n = self.size(0);
  at::Tensor out = at::empty({n <= 1 ? 0 : n * (n - 1) / 2}, self.options());
  if (out.numel() == 0) return out;
  if (self.size(1) == 0) return out.zero_();
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::pdist(dev, to_desc(out), to_desc(self), p);
  });
  return out;
}

at::Tensor pdist_backward(const at::Tensor& grad, const at::Tensor& self, double p,
                          const at::Tensor& pdist) {
  TORCH_CHECK(self.is_contiguous(), "_pdist_backward requires self to be contiguous");
  TORCH_CHECK(pdist.is_contiguous(), "_pdist_backward requires pdist to be contiguous");
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  for (const at::Tensor* t : {&grad, &pdist}) {
    nn::check_on_device(self, *t, "_pdist_backward", "tensor");
  }
  at::Tensor gx = at::empty(self.sizes(), self.options());
  if (gx.numel() == 0) return gx;
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::pdist_backward(dev, to_desc(gx), to_desc(grad), to_desc(self), p, to_desc(pdist));
  });
  return gx;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_cdist_forward", cdist_forward);
  m.impl("_cdist_backward", cdist_backward);
  m.impl("_pdist_forward", pdist_forward);
  m.impl("_pdist_backward", pdist_backward);
}

}  // namespace torch_vkml::ops_cdist_pdist
