// Pooling on vkml: max_pool{2,3}d_with_indices, avg_pool{2,3}d, adaptive avg/max pool 2d and 3d,
// each with its backward, in functional and out= forms. max_pool1d/avg_pool1d/max_pool2d and
// adaptive_avg_pool1d reach these through PyTorch's decompositions. Outputs keep the input's
// memory format (channels_last stays channels_last), as on the CPU.
#include <ATen/ops/empty.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include "common/nn_bridge.h"
#include "vkml/pool.h"

namespace torch_vkml::ops_pooling {

using vkml::ops::PoolKind;
using vkml::ops::PoolWindow;

// A 1- or n-element argument expanded to n entries (PyTorch's int[n] parameters).
std::vector<int64_t> expand_arg(at::IntArrayRef v, int n, const char* op, const char* what,
                                const char* count_word, bool may_be_empty,
                                int64_t empty_value = 0) {
  if (v.empty() && may_be_empty) return std::vector<int64_t>(n, empty_value);
  TORCH_CHECK(static_cast<int>(v.size()) == 1 || static_cast<int>(v.size()) == n, op, ": ", what,
              may_be_empty ? " must either be omitted, a single int, or a tuple of "
                           : " must either be a single int, or a tuple of ",
              count_word, " ints");
  return v.size() == 1 ? std::vector<int64_t>(n, v[0]) : v.vec();
}

// The checked window and output spatial sizes of a max/avg pool over `n` spatial dims.
struct Pooling {
  PoolWindow window;
  std::vector<int64_t> out_sizes;  // full output shape
};

Pooling plan(const at::Tensor& input, int n, const char* op, at::IntArrayRef kernel_size,
             at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
             bool ceil_mode) {
  const char* count = n == 2 ? "two" : "three";
  auto k = expand_arg(kernel_size, n, op, "kernel_size", count, false);
  auto s = stride.empty() ? k : expand_arg(stride, n, op, "stride", count, true);
  auto p = expand_arg(padding, n, op, "padding", count, false);
  auto d = expand_arg(dilation, n, op, "dilation", count, false);
  TORCH_CHECK(input.dim() == n + 1 || input.dim() == n + 2, "non-empty ", n + 1, "D or ", n + 2,
              "D (batch mode) tensor expected for input");
  // pooling_output_shape's checks come first (so a zero kernel reports the zero stride it
  // implies), then pool2d_shape_check's.
  for (int i = 0; i < n; ++i) {
    TORCH_CHECK(s[i] != 0, "stride should not be zero");
    TORCH_CHECK(p[i] >= 0, "pad must be non-negative, but got pad: ", p[i]);
    TORCH_CHECK(p[i] <= ((k[i] - 1) * d[i] + 1) / 2,
                "pad should be at most half of effective "
                "kernel size, but got pad=",
                p[i], ", kernel_size=", k[i], " and dilation=", d[i]);
  }
  for (int i = 0; i < n; ++i) {
    TORCH_CHECK(k[i] > 0, "kernel size should be greater than zero, but got kernel_size=", k[i]);
    TORCH_CHECK(s[i] > 0, "stride should be greater than zero, but got stride=", s[i]);
    TORCH_CHECK(d[i] > 0, "dilation should be greater than zero, but got dilation=", d[i]);
  }
  int lead = input.dim() - n;
  bool valid = true;
  for (int i = 1; i < input.dim(); ++i) valid = valid && input.size(i) != 0;
  if (lead == 1) valid = valid && input.size(0) != 0;
  TORCH_CHECK(valid, "Expected ", n + 1, "D or ", n + 2,
              "D (batch mode) tensor with optional 0 "
              "dim batch size for input, but got:",
              input.sizes());
  Pooling plan;
  plan.out_sizes.assign(input.sizes().begin(), input.sizes().begin() + lead);
  std::ostringstream in_desc, out_desc;
  in_desc << input.size(lead - 1);
  out_desc << input.size(lead - 1);
  bool too_small = false;
  for (int i = 0; i < n; ++i) {
    int64_t in = input.size(lead + i);
    int64_t out = vkml::ops::pool_output_size(in, k[i], p[i], s[i], d[i], ceil_mode);
    plan.out_sizes.push_back(out);
    too_small = too_small || out < 1;
    in_desc << "x" << in;
    out_desc << "x" << out;
    int w = 3 - n + i;
    plan.window.kernel[w] = k[i];
    plan.window.stride[w] = s[i];
    plan.window.pad[w] = p[i];
    plan.window.dilation[w] = d[i];
  }
  TORCH_CHECK(!too_small, "Given input size: (", in_desc.str(), "). Calculated output size: (",
              out_desc.str(), "). Output size is too small");
  plan.window.ceil_mode = ceil_mode;
  return plan;
}

at::Tensor new_like_format(at::IntArrayRef sizes, const at::Tensor& input, at::ScalarType dtype) {
  return at::empty(sizes,
                   input.options().dtype(dtype).memory_format(input.suggest_memory_format()));
}

// Resizes an out= tensor, keeping the input's memory format for fresh (empty) outputs.
void prepare(at::Tensor& out, at::IntArrayRef sizes, at::ScalarType dtype, const at::Tensor& input,
             const char* what) {
  TORCH_CHECK(out.scalar_type() == dtype, "expected dtype ", dtype, " for `", what,
              "` but got dtype ", out.scalar_type());
  nn::check_on_device(input, out, "pool", what);
  if (out.sizes() != sizes) {
    if (out.numel() == 0) {
      out.resize_(sizes, input.suggest_memory_format());
    } else {
      at::native::resize_output(out, sizes);
    }
  }
}

void run_pool(PoolKind kind, const at::Tensor& input, int n, const PoolWindow& window,
              at::Tensor& out, at::Tensor* indices) {
  // The CPU's dtypes: max pools of any integer but bool, average pools of int64 too.
  auto t = input.scalar_type();
  bool integral_ok = (kind == PoolKind::kMax && at::isIntegralType(t, false)) ||
                     (kind == PoolKind::kAvg && t == at::kLong);
  if (!integral_ok) nn::check_floating(input, kind == PoolKind::kAvg ? "avg_pool2d" : "max_pool2d");
  if (out.numel() == 0) return;
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc ix;
    if (indices) ix = to_desc(*indices);
    vkml::ops::pool(dev, kind, to_desc(out), indices ? &ix : nullptr, to_desc(input), n, window);
  });
}

void run_pool_backward(PoolKind kind, const at::Tensor& grad_output, const at::Tensor& input, int n,
                       const PoolWindow& window, const at::Tensor* indices,
                       at::Tensor& grad_input) {
  nn::check_floating(input, "pool_backward");
  nn::check_on_device(input, grad_output, "pool_backward", "grad_output");
  if (indices) {
    nn::check_on_device(input, *indices, "pool_backward", "indices");
    TORCH_CHECK(indices->scalar_type() == at::kLong, "expected indices of dtype Long, got ",
                indices->scalar_type());
    TORCH_CHECK(indices->sizes() == grad_output.sizes(), "indices shape ", indices->sizes(),
                " does not match grad_output ", grad_output.sizes());
  }
  prepare(grad_input, input.sizes(), input.scalar_type(), input, "grad_input");
  if (grad_input.numel() == 0) return;
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc ix;
    if (indices) ix = to_desc(*indices);
    vkml::ops::pool_backward(dev, kind, to_desc(grad_input), to_desc(grad_output),
                             indices ? &ix : nullptr, n, window);
  });
}

// ---- max pool -------------------------------------------------------------------------------

template <int N>
std::tuple<at::Tensor&, at::Tensor&> max_pool_out(const at::Tensor& self, at::IntArrayRef k,
                                                  at::IntArrayRef s, at::IntArrayRef p,
                                                  at::IntArrayRef d, bool ceil_mode,
                                                  at::Tensor& out, at::Tensor& indices) {
  Pooling pl = plan(self, N, N == 2 ? "max_pool2d" : "max_pool3d", k, s, p, d, ceil_mode);
  prepare(out, pl.out_sizes, self.scalar_type(), self, "out");
  prepare(indices, pl.out_sizes, at::kLong, self, "indices");
  run_pool(PoolKind::kMax, self, N, pl.window, out, &indices);
  return {out, indices};
}

template <int N>
std::tuple<at::Tensor, at::Tensor> max_pool(const at::Tensor& self, at::IntArrayRef k,
                                            at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                                            bool ceil_mode) {
  Pooling pl = plan(self, N, N == 2 ? "max_pool2d" : "max_pool3d", k, s, p, d, ceil_mode);
  at::Tensor out = new_like_format(pl.out_sizes, self, self.scalar_type());
  at::Tensor indices = new_like_format(pl.out_sizes, self, at::kLong);
  run_pool(PoolKind::kMax, self, N, pl.window, out, &indices);
  return {out, indices};
}

template <int N>
at::Tensor& max_pool_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                  at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                                  at::IntArrayRef d, bool ceil_mode, const at::Tensor& indices,
                                  at::Tensor& grad_input) {
  Pooling pl = plan(self, N, N == 2 ? "max_pool2d" : "max_pool3d", k, s, p, d, ceil_mode);
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(pl.out_sizes), "grad_output shape ",
              grad_output.sizes(), " does not match the pooled shape ",
              at::IntArrayRef(pl.out_sizes));
  run_pool_backward(PoolKind::kMax, grad_output, self, N, pl.window, &indices, grad_input);
  return grad_input;
}

template <int N>
at::Tensor max_pool_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                             at::IntArrayRef d, bool ceil_mode, const at::Tensor& indices) {
  at::Tensor gi = new_like_format(self.sizes(), self, self.scalar_type());
  return max_pool_backward_out<N>(grad_output, self, k, s, p, d, ceil_mode, indices, gi);
}

// ---- average pool ---------------------------------------------------------------------------

template <int N>
Pooling avg_plan(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                 bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor) {
  TORCH_CHECK(!divisor.has_value() || *divisor != 0, "divisor must be not zero");
  std::vector<int64_t> ones(N, 1);
  Pooling pl = plan(self, N, N == 2 ? "avg_pool2d" : "avg_pool3d", k, s, p, ones, ceil_mode);
  pl.window.count_include_pad = count_include_pad;
  pl.window.divisor_override = divisor.value_or(0);
  return pl;
}

template <int N>
at::Tensor& avg_pool_out(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                         at::IntArrayRef p, bool ceil_mode, bool count_include_pad,
                         std::optional<int64_t> divisor, at::Tensor& out) {
  Pooling pl = avg_plan<N>(self, k, s, p, ceil_mode, count_include_pad, divisor);
  prepare(out, pl.out_sizes, self.scalar_type(), self, "out");
  run_pool(PoolKind::kAvg, self, N, pl.window, out, nullptr);
  return out;
}

template <int N>
at::Tensor avg_pool(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                    bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor) {
  Pooling pl = avg_plan<N>(self, k, s, p, ceil_mode, count_include_pad, divisor);
  at::Tensor out = new_like_format(pl.out_sizes, self, self.scalar_type());
  run_pool(PoolKind::kAvg, self, N, pl.window, out, nullptr);
  return out;
}

template <int N>
at::Tensor& avg_pool_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                  at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                                  bool ceil_mode, bool count_include_pad,
                                  std::optional<int64_t> divisor, at::Tensor& grad_input) {
  Pooling pl = avg_plan<N>(self, k, s, p, ceil_mode, count_include_pad, divisor);
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(pl.out_sizes), "grad_output shape ",
              grad_output.sizes(), " does not match the pooled shape ",
              at::IntArrayRef(pl.out_sizes));
  run_pool_backward(PoolKind::kAvg, grad_output, self, N, pl.window, nullptr, grad_input);
  return grad_input;
}

template <int N>
at::Tensor avg_pool_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                             bool ceil_mode, bool count_include_pad,
                             std::optional<int64_t> divisor) {
  at::Tensor gi = new_like_format(self.sizes(), self, self.scalar_type());
  return avg_pool_backward_out<N>(grad_output, self, k, s, p, ceil_mode, count_include_pad, divisor,
                                  gi);
}

// ---- adaptive pools -------------------------------------------------------------------------

template <int N>
std::vector<int64_t> adaptive_plan(const at::Tensor& self, at::IntArrayRef output_size,
                                   bool is_max) {
  const char* op = is_max ? (N == 2 ? "adaptive_max_pool2d" : "adaptive_max_pool3d")
                          : (N == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d");
  TORCH_CHECK(static_cast<int>(output_size.size()) == N, op, ": output_size must be ", N);
  int64_t ndim = self.dim();
  TORCH_CHECK(ndim == N + 1 || ndim == N + 2, op, "(): Expected ", N + 1, "D or ", N + 2,
              "D tensor, but got ", self.sizes());
  for (int64_t i = ndim - N - (is_max ? 1 : 0); i < ndim; ++i) {
    if (i == 0 && ndim == N + 2) continue;
    TORCH_CHECK(self.size(i) > 0, op,
                "(): Expected input to have non-zero size for non-batch "
                "dimensions, but input has sizes ",
                self.sizes(), " with dimension ", i, " being empty");
  }
  for (int64_t s : output_size) {
    TORCH_CHECK(s >= 0, op,
                ": elements of output_size must be greater than or equal to 0 but "
                "received ",
                output_size);
  }
  std::vector<int64_t> out(self.sizes().begin(), self.sizes().end() - N);
  out.insert(out.end(), output_size.begin(), output_size.end());
  return out;
}

template <int N>
at::Tensor& adaptive_avg_out(const at::Tensor& self, c10::SymIntArrayRef output_size,
                             at::Tensor& out) {
  auto sizes = adaptive_plan<N>(self, C10_AS_INTARRAYREF_SLOW(output_size), false);
  prepare(out, sizes, self.scalar_type(), self, "output");
  nn::check_floating(self, N == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d");
  if (out.numel() == 0) return out;
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::pool(dev, PoolKind::kAdaptiveAvg, to_desc(out), nullptr, to_desc(self), N, {});
  });
  return out;
}

template <int N>
at::Tensor adaptive_avg(const at::Tensor& self, c10::SymIntArrayRef output_size) {
  auto sizes = adaptive_plan<N>(self, C10_AS_INTARRAYREF_SLOW(output_size), false);
  at::Tensor out = new_like_format(sizes, self, self.scalar_type());
  return adaptive_avg_out<N>(self, output_size, out);
}

template <int N>
at::Tensor adaptive_avg_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  at::Tensor gi = new_like_format(self.sizes(), self, self.scalar_type());
  TORCH_CHECK(grad_output.dim() == self.dim(), "adaptive_avg_pool backward: grad_output ",
              grad_output.sizes(), " does not match input ", self.sizes());
  run_pool_backward(PoolKind::kAdaptiveAvg, grad_output, self, N, {}, nullptr, gi);
  return gi;
}

template <int N>
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_out(const at::Tensor& self,
                                                      at::IntArrayRef output_size, at::Tensor& out,
                                                      at::Tensor& indices) {
  auto sizes = adaptive_plan<N>(self, output_size, true);
  prepare(out, sizes, self.scalar_type(), self, "out");
  prepare(indices, sizes, at::kLong, self, "indices");
  run_pool(PoolKind::kAdaptiveMax, self, N, {}, out, &indices);
  return {out, indices};
}

template <int N>
std::tuple<at::Tensor, at::Tensor> adaptive_max(const at::Tensor& self,
                                                at::IntArrayRef output_size) {
  auto sizes = adaptive_plan<N>(self, output_size, true);
  at::Tensor out = new_like_format(sizes, self, self.scalar_type());
  at::Tensor indices = new_like_format(sizes, self, at::kLong);
  run_pool(PoolKind::kAdaptiveMax, self, N, {}, out, &indices);
  return {out, indices};
}

template <int N>
at::Tensor& adaptive_max_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                      const at::Tensor& indices, at::Tensor& grad_input) {
  TORCH_CHECK(grad_output.dim() == self.dim(), "adaptive_max_pool backward: grad_output ",
              grad_output.sizes(), " does not match input ", self.sizes());
  run_pool_backward(PoolKind::kAdaptiveMax, grad_output, self, N, {}, &indices, grad_input);
  return grad_input;
}

template <int N>
at::Tensor adaptive_max_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                 const at::Tensor& indices) {
  at::Tensor gi = new_like_format(self.sizes(), self, self.scalar_type());
  return adaptive_max_backward_out<N>(grad_output, self, indices, gi);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_pool2d_with_indices", max_pool<2>);
  m.impl("max_pool2d_with_indices.out", max_pool_out<2>);
  m.impl("max_pool2d_with_indices_backward", max_pool_backward<2>);
  m.impl("max_pool2d_with_indices_backward.grad_input", max_pool_backward_out<2>);
  m.impl("max_pool3d_with_indices", max_pool<3>);
  m.impl("max_pool3d_with_indices.out", max_pool_out<3>);
  m.impl("max_pool3d_with_indices_backward", max_pool_backward<3>);
  m.impl("max_pool3d_with_indices_backward.grad_input", max_pool_backward_out<3>);
  m.impl("avg_pool2d", avg_pool<2>);
  m.impl("avg_pool2d.out", avg_pool_out<2>);
  m.impl("avg_pool2d_backward", avg_pool_backward<2>);
  m.impl("avg_pool2d_backward.grad_input", avg_pool_backward_out<2>);
  m.impl("avg_pool3d", avg_pool<3>);
  m.impl("avg_pool3d.out", avg_pool_out<3>);
  m.impl("avg_pool3d_backward", avg_pool_backward<3>);
  m.impl("avg_pool3d_backward.grad_input", avg_pool_backward_out<3>);
  m.impl("_adaptive_avg_pool2d", adaptive_avg<2>);
  m.impl("adaptive_avg_pool2d.out", adaptive_avg_out<2>);
  m.impl("_adaptive_avg_pool2d_backward", adaptive_avg_backward<2>);
  m.impl("_adaptive_avg_pool3d", adaptive_avg<3>);
  m.impl("adaptive_avg_pool3d.out", adaptive_avg_out<3>);
  m.impl("_adaptive_avg_pool3d_backward", adaptive_avg_backward<3>);
  m.impl("adaptive_max_pool2d", adaptive_max<2>);
  m.impl("adaptive_max_pool2d.out", adaptive_max_out<2>);
  m.impl("adaptive_max_pool2d_backward", adaptive_max_backward<2>);
  m.impl("adaptive_max_pool2d_backward.grad_input", adaptive_max_backward_out<2>);
  m.impl("adaptive_max_pool3d", adaptive_max<3>);
  m.impl("adaptive_max_pool3d.out", adaptive_max_out<3>);
  m.impl("adaptive_max_pool3d_backward", adaptive_max_backward<3>);
  m.impl("adaptive_max_pool3d_backward.grad_input", adaptive_max_backward_out<3>);
}

}  // namespace torch_vkml::ops_pooling
