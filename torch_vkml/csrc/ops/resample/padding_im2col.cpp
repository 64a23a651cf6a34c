// Reflection and replication padding (1-D to 3-D, with backward) and im2col/col2im
// (unfold/fold) on vkml, in functional and out= forms. Padding forwards and im2col copy any
// dtype the CPU pads (bit for bit, complex64 included); backwards gather in float math.
#include <ATen/native/Padding.h>
#include <ATen/native/im2col_shape_check.h>
#include <ATen/ops/empty.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include <sstream>

#include "common/index_util.h"
#include "common/nn_bridge.h"
#include "vkml/resample.h"

namespace torch_vkml::ops_padding_im2col {

using vkml::ops::ResampleMode;
using vkml::ops::ResampleSpec;
using SymRef = c10::SymIntArrayRef;

const char* pad_name(ResampleMode m, int n) {
  if (m == ResampleMode::kPadReflect) {
    return n == 1 ? "reflection_pad1d" : n == 2 ? "reflection_pad2d" : "reflection_pad3d";
  }
  return n == 1 ? "replication_pad1d" : n == 2 ? "replication_pad2d" : "replication_pad3d";
}

// Checks as the CPU does; returns the padded shape and fills spec.pad_before (D, H, W order).
template <int N>
std::vector<int64_t> pad_plan(ResampleMode mode, const at::Tensor& input, at::IntArrayRef padding,
                              ResampleSpec& spec) {
  at::native::padding::check_valid_input<N>(input, padding);
  spec.mode = mode;
  std::vector<int64_t> out(input.sizes().begin(), input.sizes().end());
  int lead = input.dim() - N;
  // padding lists (left, right) of the last dim first.
  std::ostringstream in_desc, out_desc;
  bool too_small = false;
  static const char* kDimNames[] = {"D", "H", "W"};
  for (int i = 0; i < N; ++i) {
    int dim = input.dim() - 1 - i;
    int64_t before = padding[2 * i], after = padding[2 * i + 1], size = input.size(dim);
    if (mode == ResampleMode::kPadReflect) {
      TORCH_CHECK(before < size && after < size, "Argument #", 4 + 2 * i,
                  ": Padding size should be less than the corresponding input dimension, but got:"
                  " padding (", before, ", ", after, ") at dimension ", dim, " of input ",
                  input.sizes());
    }
    out[dim] = size + before + after;
    too_small = too_small || out[dim] < 1;
    spec.pad_before[2 - i] = before;
  }
  for (int k = 0; k < N; ++k) {
    int dim = lead + k;
    const char* sep = k == 0 ? "" : ", ";
    in_desc << sep << kDimNames[3 - N + k] << ": " << input.size(dim);
    out_desc << " " << kDimNames[3 - N + k] << ": " << out[dim];
  }
  TORCH_CHECK(!too_small, "input (", in_desc.str(), ") is too small. Calculated output",
              out_desc.str());
  return out;
}

void check_pad_dtype(const at::Tensor& t, const char* op) {
  auto s = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(s != at::kBool, "\"", op, "\" not implemented for '",
                              c10::toString(s), "'");
  check_element_dtype(t);  // complex128 has no kernel
}

// Resizes an out= tensor, keeping `like`'s memory format for fresh (empty) outputs.
void prepare(at::Tensor& out, at::IntArrayRef sizes, const at::Tensor& like, const char* op) {
  nn::check_on_device(like, out, op, "out");
  TORCH_CHECK(out.scalar_type() == like.scalar_type(), "Expected out tensor to have dtype ",
              like.scalar_type(), ", but got ", out.scalar_type(), " instead");
  if (out.sizes() != sizes) {
    if (out.numel() == 0) {
      out.resize_(sizes, like.suggest_memory_format());
    } else {
      at::native::resize_output(out, sizes);
    }
  }
}

template <ResampleMode M, int N>
at::Tensor& pad_out(const at::Tensor& self, SymRef padding, at::Tensor& out) {
  ResampleSpec spec;
  auto sizes = pad_plan<N>(M, self, C10_AS_INTARRAYREF_SLOW(padding), spec);
  check_pad_dtype(self, pad_name(M, N));
  prepare(out, sizes, self, pad_name(M, N));
  if (out.numel() == 0) return out;
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::resample(dev, spec, to_element_desc(out), to_element_desc(self), N);
  });
  return out;
}

template <ResampleMode M, int N>
at::Tensor pad(const at::Tensor& self, SymRef padding) {
  ResampleSpec spec;
  auto sizes = pad_plan<N>(M, self, C10_AS_INTARRAYREF_SLOW(padding), spec);
  at::Tensor out = at::empty(sizes, self.options().memory_format(self.suggest_memory_format()));
  return pad_out<M, N>(self, padding, out);
}

template <ResampleMode M, int N>
at::Tensor& pad_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                             SymRef padding, at::Tensor& grad_input) {
  ResampleSpec spec;
  auto sizes = pad_plan<N>(M, self, C10_AS_INTARRAYREF_SLOW(padding), spec);
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(sizes), "grad_output shape ",
              grad_output.sizes(), " does not match the padded shape ", at::IntArrayRef(sizes));
  std::string op = std::string(pad_name(M, N)) + "_backward";
  nn::check_floating(self, op.c_str());
  nn::check_on_device(self, grad_output, op.c_str(), "grad_output");
  prepare(grad_input, self.sizes(), self, op.c_str());
  if (grad_input.numel() == 0) return grad_input;
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::resample_backward(dev, spec, to_desc(grad_input), to_desc(grad_output), N);
  });
  return grad_input;
}

template <ResampleMode M, int N>
at::Tensor pad_backward(const at::Tensor& grad_output, const at::Tensor& self, SymRef padding) {
  at::Tensor gi = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  return pad_backward_out<M, N>(grad_output, self, padding, gi);
}

// ---- im2col / col2im ------------------------------------------------------------------------

vkml::ops::UnfoldWindow window(at::IntArrayRef k, at::IntArrayRef d, at::IntArrayRef p,
                               at::IntArrayRef s) {
  TORCH_CHECK(k.size() == 2, "It is expected kernel_size equals to 2, but got size ", k.size());
  TORCH_CHECK(d.size() == 2, "It is expected dilation equals to 2, but got size ", d.size());
  TORCH_CHECK(p.size() == 2, "It is expected padding equals to 2, but got size ", p.size());
  TORCH_CHECK(s.size() == 2, "It is expected stride equals to 2, but got size ", s.size());
  vkml::ops::UnfoldWindow w;
  for (int i = 0; i < 2; ++i) {
    w.kernel[i] = k[i];
    w.dilation[i] = d[i];
    w.pad[i] = p[i];
    w.stride[i] = s[i];
  }
  return w;
}

// Output positions of a sliding window (at::native's helper is missing before torch 2.13).
int64_t sliding_windows(int64_t size, int64_t pad, int64_t dilation, int64_t kernel, int64_t stride) {
  return (size + 2 * pad - (dilation * (kernel - 1) + 1)) / stride + 1;
}

void check_fold_dtype(const at::Tensor& t, const char* op, bool complex_ok) {
  auto s = t.scalar_type();
  if (complex_ok && at::isComplexType(s)) return check_element_dtype(t);
  TORCH_CHECK_NOT_IMPLEMENTED(s == at::kBool || s == at::kFloat || s == at::kHalf ||
                                  s == at::kBFloat16 || s == at::kDouble,
                              "\"", op, "\" not implemented for '", c10::toString(s), "'");
}

at::Tensor& im2col_out(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef d,
                       at::IntArrayRef p, at::IntArrayRef s, at::Tensor& out) {
  auto w = window(k, d, p, s);
  at::native::im2col_shape_check(self, at::Tensor(), k[0], k[1], d[0], d[1], p[0], p[1], s[0],
                                 s[1]);
  check_fold_dtype(self, "im2col_out_cpu", true);
  bool batched = self.dim() == 4;
  at::Tensor image = batched ? self : self.unsqueeze(0);
  int64_t oh = sliding_windows(image.size(2), p[0], d[0], k[0], s[0]);
  int64_t ow = sliding_windows(image.size(3), p[1], d[1], k[1], s[1]);
  int64_t rows = image.size(1) * k[0] * k[1];
  std::vector<int64_t> sizes = {image.size(0), rows, oh * ow};
  if (!batched) sizes.erase(sizes.begin());
  nn::check_on_device(self, out, "im2col", "out");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, sizes);
  if (out.numel() == 0) return out;
  at::Tensor columns = batched ? out : out.unsqueeze(0);
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::im2col(dev, to_element_desc(columns), to_element_desc(image), w);
  });
  return out;
}

at::Tensor im2col(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef d, at::IntArrayRef p,
                  at::IntArrayRef s) {
  at::Tensor out = at::empty({0}, self.options());
  return im2col_out(self, k, d, p, s, out);
}

at::Tensor& col2im_out(const at::Tensor& self, SymRef output_size, at::IntArrayRef k,
                       at::IntArrayRef d, at::IntArrayRef p, at::IntArrayRef s, at::Tensor& out) {
  auto os = C10_AS_INTARRAYREF_SLOW(output_size);
  TORCH_CHECK(os.size() == 2, "It is expected output_size equals to 2, but got size ", os.size());
  auto w = window(k, d, p, s);
  at::native::col2im_shape_check(self, at::Tensor(), os[0], os[1], k[0], k[1], d[0], d[1], p[0],
                                 p[1], s[0], s[1]);
  check_fold_dtype(self, "col2im_out_cpu", false);
  bool batched = self.dim() == 3;
  at::Tensor columns = batched ? self : self.unsqueeze(0);
  int64_t channels = columns.size(1) / (k[0] * k[1]);
  std::vector<int64_t> sizes = {columns.size(0), channels, os[0], os[1]};
  if (!batched) sizes.erase(sizes.begin());
  nn::check_on_device(self, out, "col2im", "out");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, sizes);
  if (out.numel() == 0) return out;
  at::Tensor image = batched ? out : out.unsqueeze(0);
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::col2im(dev, to_desc(image), to_desc(columns), w);
  });
  return out;
}

at::Tensor col2im(const at::Tensor& self, SymRef output_size, at::IntArrayRef k,
                  at::IntArrayRef d, at::IntArrayRef p, at::IntArrayRef s) {
  at::Tensor out = at::empty({0}, self.options());
  return col2im_out(self, output_size, k, d, p, s, out);
}

constexpr ResampleMode kReflect = ResampleMode::kPadReflect;
constexpr ResampleMode kReplicate = ResampleMode::kPadReplicate;

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("reflection_pad1d", pad<kReflect, 1>);
  m.impl("reflection_pad1d.out", pad_out<kReflect, 1>);
  m.impl("reflection_pad1d_backward", pad_backward<kReflect, 1>);
  m.impl("reflection_pad1d_backward.grad_input", pad_backward_out<kReflect, 1>);
  m.impl("reflection_pad2d", pad<kReflect, 2>);
  m.impl("reflection_pad2d.out", pad_out<kReflect, 2>);
  m.impl("reflection_pad2d_backward", pad_backward<kReflect, 2>);
  m.impl("reflection_pad2d_backward.grad_input", pad_backward_out<kReflect, 2>);
  m.impl("reflection_pad3d", pad<kReflect, 3>);
  m.impl("reflection_pad3d.out", pad_out<kReflect, 3>);
  m.impl("reflection_pad3d_backward", pad_backward<kReflect, 3>);
  m.impl("reflection_pad3d_backward.grad_input", pad_backward_out<kReflect, 3>);
  m.impl("replication_pad1d", pad<kReplicate, 1>);
  m.impl("replication_pad1d.out", pad_out<kReplicate, 1>);
  m.impl("replication_pad1d_backward", pad_backward<kReplicate, 1>);
  m.impl("replication_pad1d_backward.grad_input", pad_backward_out<kReplicate, 1>);
  m.impl("replication_pad2d", pad<kReplicate, 2>);
  m.impl("replication_pad2d.out", pad_out<kReplicate, 2>);
  m.impl("replication_pad2d_backward", pad_backward<kReplicate, 2>);
  m.impl("replication_pad2d_backward.grad_input", pad_backward_out<kReplicate, 2>);
  m.impl("replication_pad3d", pad<kReplicate, 3>);
  m.impl("replication_pad3d.out", pad_out<kReplicate, 3>);
  m.impl("replication_pad3d_backward", pad_backward<kReplicate, 3>);
  m.impl("replication_pad3d_backward.grad_input", pad_backward_out<kReplicate, 3>);
  m.impl("im2col", im2col);
  m.impl("im2col.out", im2col_out);
  m.impl("col2im", col2im);
  m.impl("col2im.out", col2im_out);
}

}  // namespace torch_vkml::ops_padding_im2col
