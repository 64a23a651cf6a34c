// max_unpool2d / max_unpool3d on vkml (max_unpool1d reaches 2d through PyTorch's Python), the
// CPU's floating dtypes (the kernel copies any), functional and out= forms; deterministic for
// duplicate indices (the last input wins, as on the CPU). Bad indices raise after one host sync
// (VKML_CHECK_INDICES=0 skips it). The backward is PyTorch's gather formula, which runs natively.
#include <ATen/ops/empty.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include <sstream>

#include "common/index_util.h"
#include "common/nn_bridge.h"
#include "vkml/resample.h"

namespace torch_vkml::ops_max_unpool {

template <int N>
std::vector<int64_t> plan(const at::Tensor& self, const at::Tensor& indices,
                          at::IntArrayRef output_size) {
  const char* name = N == 2 ? "max_unpooling2d_forward_out_cpu(): "
                            : "max_unpooling3d_forward_out_cpu(): ";
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "elements in indices should be type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(static_cast<int>(output_size.size()) == N, "There should be exactly ",
              N == 2 ? "two elements (height, width)" : "three elements (depth, height, width)",
              " in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == N + 1 || self.dim() == N + 2, "Input to max_unpooling", N,
              "d should be a ", N + 1, "d or ", N + 2, "d Tensor, but got a tensor with ",
              self.dim(), " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(),
              "Expected shape of indices to be same as that of the input tensor (", self.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i) {
    TORCH_CHECK(self.size(i) > 0, name,
                "Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  }
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - N);
  sizes.insert(sizes.end(), output_size.begin(), output_size.end());
  return sizes;
}

template <int N>
at::Tensor& unpool_out(const at::Tensor& self, const at::Tensor& indices,
                       at::IntArrayRef output_size, at::Tensor& out) {
  auto sizes = plan<N>(self, indices, output_size);
  nn::check_floating(self, N == 2 ? "max_unpool2d" : "max_unpool3d");  // the CPU's dtypes
  nn::check_on_device(self, indices, "max_unpool", "indices");
  nn::check_on_device(self, out, "max_unpool", "out");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  if (out.sizes() != at::IntArrayRef(sizes)) {
    if (out.numel() == 0) {
      out.resize_(sizes, self.suggest_memory_format());
    } else {
      at::native::resize_output(out, sizes);
    }
  }
  if (out.numel() == 0) return out;
  bool batched = self.dim() == N + 2;
  at::Tensor s = batched ? self : self.unsqueeze(0);
  at::Tensor ix = batched ? indices : indices.unsqueeze(0);
  at::Tensor o = batched ? out : out.unsqueeze(0);
  c10::DeviceGuard guard(self.device());
  BadIndexCheck check(self, self.numel() > 0);
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::max_unpool(dev, to_desc(o), to_desc(s), to_desc(ix), check.address());
  });
  check.raise_if_bad(BadIndexError::kRuntime, [&](int64_t v, uint32_t) {
    std::ostringstream msg;
    msg << "Found an invalid max index: " << v << " (output volumes are of size ";
    for (int k = 0; k < N; ++k) msg << (k ? "x" : "") << output_size[k];
    return msg.str();
  });
  return out;
}

at::Tensor& unpool2d_out(const at::Tensor& self, const at::Tensor& indices,
                         c10::SymIntArrayRef output_size, at::Tensor& out) {
  return unpool_out<2>(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), out);
}

at::Tensor unpool2d(const at::Tensor& self, const at::Tensor& indices,
                    c10::SymIntArrayRef output_size) {
  at::Tensor out = at::empty({0}, self.options());
  return unpool2d_out(self, indices, output_size, out);
}

at::Tensor& unpool3d_out(const at::Tensor& self, const at::Tensor& indices,
                         c10::SymIntArrayRef output_size, at::IntArrayRef stride,
                         at::IntArrayRef padding, at::Tensor& out) {
  TORCH_CHECK(stride.size() == 3, "There should be exactly three elements (depth, height, width) "
              "in stride, but got: ", stride.size(), " elements.");
  TORCH_CHECK(padding.size() == 3, "There should be exactly three elements (depth, height, width) "
              "in padding, but got: ", padding.size(), " elements.");
  for (int k = 0; k < 3; ++k) {
    TORCH_CHECK(stride[k] > 0, "strides should be greater than zero, but got stride: ", stride);
  }
  return unpool_out<3>(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), out);
}

at::Tensor unpool3d(const at::Tensor& self, const at::Tensor& indices,
                    c10::SymIntArrayRef output_size, at::IntArrayRef stride,
                    at::IntArrayRef padding) {
  at::Tensor out = at::empty({0}, self.options());
  return unpool3d_out(self, indices, output_size, stride, padding, out);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_unpool2d", unpool2d);
  m.impl("max_unpool2d.out", unpool2d_out);
  m.impl("max_unpool3d", unpool3d);
  m.impl("max_unpool3d.out", unpool3d_out);
}

}  // namespace torch_vkml::ops_max_unpool
