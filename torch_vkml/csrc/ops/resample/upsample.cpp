// Upsampling on vkml: upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d,
// upsample_linear1d, upsample_bilinear2d, upsample_bicubic2d and upsample_trilinear3d, each with
// its backward, in functional and out= forms (the .vec overloads decompose to these). Outputs
// keep the input's memory format (channels_last stays channels_last), as on the CPU.
#include <ATen/native/UpSample.h>
#include <ATen/ops/empty.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include "common/nn_bridge.h"
#include "vkml/resample.h"

namespace torch_vkml::ops_upsample {

using vkml::ops::ResampleMode;
using vkml::ops::ResampleSpec;
using Scales = std::array<std::optional<double>, 3>;

const char* mode_name(ResampleMode m, int n) {
  switch (m) {
    case ResampleMode::kNearest:
      return n == 1 ? "upsample_nearest1d" : n == 2 ? "upsample_nearest2d" : "upsample_nearest3d";
    case ResampleMode::kNearestExact:
      return n == 1 ? "_upsample_nearest_exact1d"
                    : n == 2 ? "_upsample_nearest_exact2d" : "_upsample_nearest_exact3d";
    case ResampleMode::kLinear:
      return n == 1 ? "upsample_linear1d" : n == 2 ? "upsample_bilinear2d" : "upsample_trilinear3d";
    default:
      return "upsample_bicubic2d";
  }
}

// PyTorch's upsample_{1,2,3}d_common_check; returns the full output shape.
std::vector<int64_t> check_sizes(int n, at::IntArrayRef input_size, at::IntArrayRef output_size) {
  if (n == 1) {
    auto s = at::native::upsample_1d_common_check(input_size, output_size);
    return {s.begin(), s.end()};
  }
  if (n == 2) {
    auto s = at::native::upsample_2d_common_check(input_size, output_size);
    return {s.begin(), s.end()};
  }
  auto s = at::native::upsample_3d_common_check(input_size, output_size);
  return {s.begin(), s.end()};
}

std::vector<int64_t> forward_sizes(ResampleMode mode, int n, const at::Tensor& self,
                                   at::IntArrayRef output_size) {
  auto full = check_sizes(n, self.sizes(), output_size);
  TORCH_CHECK(self.numel() != 0 || c10::multiply_integers(self.sizes().begin() + 1,
                                                          self.sizes().end()),
              "Non-empty ", n + 2, "D data tensor expected but got a tensor with sizes ",
              self.sizes());
  auto t = self.scalar_type();
  bool nearest = mode == ResampleMode::kNearest || mode == ResampleMode::kNearestExact;
  // The CPU interpolates uint8 images with its own fixed-point rounding; vkml has no such kernel.
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kByte || nearest, "vkml: ", mode_name(mode, n),
                              " has no uint8 kernel yet");
  if (t != at::kByte) nn::check_floating(self, mode_name(mode, n));
  return full;
}

ResampleSpec make_spec(ResampleMode mode, bool align_corners, int n, const Scales& scales) {
  ResampleSpec spec;
  spec.mode = mode;
  spec.align_corners = align_corners;
  for (int i = 0; i < n; ++i) spec.scales[3 - n + i] = scales[i].value_or(0.0);
  return spec;
}

at::Tensor& upsample_out(ResampleMode mode, int n, const at::Tensor& self,
                         at::IntArrayRef output_size, bool align_corners, const Scales& scales,
                         at::Tensor& out) {
  auto sizes = forward_sizes(mode, n, self, output_size);
  nn::check_on_device(self, out, mode_name(mode, n), "out");
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
  nn::run_on(self, [&](vkml::Device& dev) {
    vkml::ops::resample(dev, make_spec(mode, align_corners, n, scales), to_desc(out),
                        to_desc(self), n);
  });
  return out;
}

at::Tensor upsample(ResampleMode mode, int n, const at::Tensor& self, at::IntArrayRef output_size,
                    bool align_corners, const Scales& scales) {
  auto sizes = forward_sizes(mode, n, self, output_size);
  at::Tensor out = at::empty(sizes, self.options().memory_format(self.suggest_memory_format()));
  return upsample_out(mode, n, self, output_size, align_corners, scales, out);
}

at::Tensor& upsample_backward_out(ResampleMode mode, int n, const at::Tensor& grad_output,
                                  at::IntArrayRef output_size, at::IntArrayRef input_size,
                                  bool align_corners, const Scales& scales,
                                  at::Tensor& grad_input) {
  auto full = check_sizes(n, input_size, output_size);
  TORCH_CHECK(grad_output.dim() == n + 2, "Expected grad_output to be a tensor of dimension ",
              n + 2, " but got: dimension ", grad_output.dim());
  for (int i = 0; i < n + 2; ++i) {
    TORCH_CHECK(grad_output.size(i) == full[i], "Expected grad_output to have the same shape as ",
                "output; output.size(", i, ") = ", full[i], " but got grad_output.size(", i,
                ") = ", grad_output.size(i));
  }
  nn::check_floating(grad_output, (std::string(mode_name(mode, n)) + "_backward").c_str());
  nn::check_on_device(grad_output, grad_input, "upsample backward", "grad_input");
  TORCH_CHECK(grad_input.scalar_type() == grad_output.scalar_type(),
              "Expected out tensor to have dtype ", grad_output.scalar_type(), ", but got ",
              grad_input.scalar_type(), " instead");
  if (grad_input.sizes() != input_size) {
    if (grad_input.numel() == 0) {
      grad_input.resize_(input_size, grad_output.suggest_memory_format());
    } else {
      at::native::resize_output(grad_input, input_size);
    }
  }
  if (grad_input.numel() == 0) return grad_input;
  nn::run_on(grad_output, [&](vkml::Device& dev) {
    vkml::ops::resample_backward(dev, make_spec(mode, align_corners, n, scales),
                                 to_desc(grad_input), to_desc(grad_output), n);
  });
  return grad_input;
}

at::Tensor upsample_backward(ResampleMode mode, int n, const at::Tensor& grad_output,
                             at::IntArrayRef output_size, at::IntArrayRef input_size,
                             bool align_corners, const Scales& scales) {
  at::Tensor gi = at::empty(
      input_size, grad_output.options().memory_format(grad_output.suggest_memory_format()));
  return upsample_backward_out(mode, n, grad_output, output_size, input_size, align_corners,
                               scales, gi);
}

using OptD = std::optional<double>;
using SymRef = c10::SymIntArrayRef;
#define AS_REF(x) C10_AS_INTARRAYREF_SLOW(x)

// ---- nearest / nearest-exact: (self, output_size, scales...) ----------------------------------

template <ResampleMode M>
at::Tensor nearest1d(const at::Tensor& self, SymRef os, OptD s) {
  return upsample(M, 1, self, AS_REF(os), false, {s});
}
template <ResampleMode M>
at::Tensor& nearest1d_out(const at::Tensor& self, SymRef os, OptD s, at::Tensor& out) {
  return upsample_out(M, 1, self, AS_REF(os), false, {s}, out);
}
template <ResampleMode M>
at::Tensor nearest1d_bwd(const at::Tensor& g, SymRef os, SymRef is, OptD s) {
  return upsample_backward(M, 1, g, AS_REF(os), AS_REF(is), false, {s});
}
template <ResampleMode M>
at::Tensor& nearest1d_bwd_out(const at::Tensor& g, SymRef os, SymRef is, OptD s, at::Tensor& gi) {
  return upsample_backward_out(M, 1, g, AS_REF(os), AS_REF(is), false, {s}, gi);
}

template <ResampleMode M>
at::Tensor nearest2d(const at::Tensor& self, SymRef os, OptD h, OptD w) {
  return upsample(M, 2, self, AS_REF(os), false, {h, w});
}
template <ResampleMode M>
at::Tensor& nearest2d_out(const at::Tensor& self, SymRef os, OptD h, OptD w, at::Tensor& out) {
  return upsample_out(M, 2, self, AS_REF(os), false, {h, w}, out);
}
template <ResampleMode M>
at::Tensor nearest2d_bwd(const at::Tensor& g, SymRef os, SymRef is, OptD h, OptD w) {
  return upsample_backward(M, 2, g, AS_REF(os), AS_REF(is), false, {h, w});
}
template <ResampleMode M>
at::Tensor& nearest2d_bwd_out(const at::Tensor& g, SymRef os, SymRef is, OptD h, OptD w,
                              at::Tensor& gi) {
  return upsample_backward_out(M, 2, g, AS_REF(os), AS_REF(is), false, {h, w}, gi);
}

template <ResampleMode M>
at::Tensor nearest3d(const at::Tensor& self, SymRef os, OptD d, OptD h, OptD w) {
  return upsample(M, 3, self, AS_REF(os), false, {d, h, w});
}
template <ResampleMode M>
at::Tensor& nearest3d_out(const at::Tensor& self, SymRef os, OptD d, OptD h, OptD w,
                          at::Tensor& out) {
  return upsample_out(M, 3, self, AS_REF(os), false, {d, h, w}, out);
}
template <ResampleMode M>
at::Tensor nearest3d_bwd(const at::Tensor& g, SymRef os, SymRef is, OptD d, OptD h, OptD w) {
  return upsample_backward(M, 3, g, AS_REF(os), AS_REF(is), false, {d, h, w});
}
template <ResampleMode M>
at::Tensor& nearest3d_bwd_out(const at::Tensor& g, SymRef os, SymRef is, OptD d, OptD h, OptD w,
                              at::Tensor& gi) {
  return upsample_backward_out(M, 3, g, AS_REF(os), AS_REF(is), false, {d, h, w}, gi);
}

// ---- linear / cubic: (self, output_size, align_corners, scales...) ----------------------------

at::Tensor linear1d(const at::Tensor& self, SymRef os, bool ac, OptD s) {
  return upsample(ResampleMode::kLinear, 1, self, AS_REF(os), ac, {s});
}
at::Tensor& linear1d_out(const at::Tensor& self, SymRef os, bool ac, OptD s, at::Tensor& out) {
  return upsample_out(ResampleMode::kLinear, 1, self, AS_REF(os), ac, {s}, out);
}
at::Tensor linear1d_bwd(const at::Tensor& g, SymRef os, SymRef is, bool ac, OptD s) {
  return upsample_backward(ResampleMode::kLinear, 1, g, AS_REF(os), AS_REF(is), ac, {s});
}
at::Tensor& linear1d_bwd_out(const at::Tensor& g, SymRef os, SymRef is, bool ac, OptD s,
                             at::Tensor& gi) {
  return upsample_backward_out(ResampleMode::kLinear, 1, g, AS_REF(os), AS_REF(is), ac, {s}, gi);
}

template <ResampleMode M>
at::Tensor interp2d(const at::Tensor& self, SymRef os, bool ac, OptD h, OptD w) {
  return upsample(M, 2, self, AS_REF(os), ac, {h, w});
}
template <ResampleMode M>
at::Tensor& interp2d_out(const at::Tensor& self, SymRef os, bool ac, OptD h, OptD w,
                         at::Tensor& out) {
  return upsample_out(M, 2, self, AS_REF(os), ac, {h, w}, out);
}
template <ResampleMode M>
at::Tensor interp2d_bwd(const at::Tensor& g, SymRef os, SymRef is, bool ac, OptD h, OptD w) {
  return upsample_backward(M, 2, g, AS_REF(os), AS_REF(is), ac, {h, w});
}
template <ResampleMode M>
at::Tensor& interp2d_bwd_out(const at::Tensor& g, SymRef os, SymRef is, bool ac, OptD h, OptD w,
                             at::Tensor& gi) {
  return upsample_backward_out(M, 2, g, AS_REF(os), AS_REF(is), ac, {h, w}, gi);
}

at::Tensor trilinear(const at::Tensor& self, SymRef os, bool ac, OptD d, OptD h, OptD w) {
  return upsample(ResampleMode::kLinear, 3, self, AS_REF(os), ac, {d, h, w});
}
at::Tensor& trilinear_out(const at::Tensor& self, SymRef os, bool ac, OptD d, OptD h, OptD w,
                          at::Tensor& out) {
  return upsample_out(ResampleMode::kLinear, 3, self, AS_REF(os), ac, {d, h, w}, out);
}
at::Tensor trilinear_bwd(const at::Tensor& g, SymRef os, SymRef is, bool ac, OptD d, OptD h,
                         OptD w) {
  return upsample_backward(ResampleMode::kLinear, 3, g, AS_REF(os), AS_REF(is), ac, {d, h, w});
}
at::Tensor& trilinear_bwd_out(const at::Tensor& g, SymRef os, SymRef is, bool ac, OptD d, OptD h,
                              OptD w, at::Tensor& gi) {
  return upsample_backward_out(ResampleMode::kLinear, 3, g, AS_REF(os), AS_REF(is), ac,
                               {d, h, w}, gi);
}

constexpr ResampleMode kNearest = ResampleMode::kNearest;
constexpr ResampleMode kExact = ResampleMode::kNearestExact;
constexpr ResampleMode kLinear = ResampleMode::kLinear;
constexpr ResampleMode kCubic = ResampleMode::kCubic;

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_nearest1d", nearest1d<kNearest>);
  m.impl("upsample_nearest1d.out", nearest1d_out<kNearest>);
  m.impl("upsample_nearest1d_backward", nearest1d_bwd<kNearest>);
  m.impl("upsample_nearest1d_backward.grad_input", nearest1d_bwd_out<kNearest>);
  m.impl("_upsample_nearest_exact1d", nearest1d<kExact>);
  m.impl("_upsample_nearest_exact1d.out", nearest1d_out<kExact>);
  m.impl("_upsample_nearest_exact1d_backward", nearest1d_bwd<kExact>);
  m.impl("_upsample_nearest_exact1d_backward.grad_input", nearest1d_bwd_out<kExact>);
  m.impl("upsample_nearest2d", nearest2d<kNearest>);
  m.impl("upsample_nearest2d.out", nearest2d_out<kNearest>);
  m.impl("upsample_nearest2d_backward", nearest2d_bwd<kNearest>);
  m.impl("upsample_nearest2d_backward.grad_input", nearest2d_bwd_out<kNearest>);
  m.impl("_upsample_nearest_exact2d", nearest2d<kExact>);
  m.impl("_upsample_nearest_exact2d.out", nearest2d_out<kExact>);
  m.impl("_upsample_nearest_exact2d_backward", nearest2d_bwd<kExact>);
  m.impl("_upsample_nearest_exact2d_backward.grad_input", nearest2d_bwd_out<kExact>);
  m.impl("upsample_nearest3d", nearest3d<kNearest>);
  m.impl("upsample_nearest3d.out", nearest3d_out<kNearest>);
  m.impl("upsample_nearest3d_backward", nearest3d_bwd<kNearest>);
  m.impl("upsample_nearest3d_backward.grad_input", nearest3d_bwd_out<kNearest>);
  m.impl("_upsample_nearest_exact3d", nearest3d<kExact>);
  m.impl("_upsample_nearest_exact3d.out", nearest3d_out<kExact>);
  m.impl("_upsample_nearest_exact3d_backward", nearest3d_bwd<kExact>);
  m.impl("_upsample_nearest_exact3d_backward.grad_input", nearest3d_bwd_out<kExact>);
  m.impl("upsample_linear1d", linear1d);
  m.impl("upsample_linear1d.out", linear1d_out);
  m.impl("upsample_linear1d_backward", linear1d_bwd);
  m.impl("upsample_linear1d_backward.grad_input", linear1d_bwd_out);
  m.impl("upsample_bilinear2d", interp2d<kLinear>);
  m.impl("upsample_bilinear2d.out", interp2d_out<kLinear>);
  m.impl("upsample_bilinear2d_backward", interp2d_bwd<kLinear>);
  m.impl("upsample_bilinear2d_backward.grad_input", interp2d_bwd_out<kLinear>);
  m.impl("upsample_bicubic2d", interp2d<kCubic>);
  m.impl("upsample_bicubic2d.out", interp2d_out<kCubic>);
  m.impl("upsample_bicubic2d_backward", interp2d_bwd<kCubic>);
  m.impl("upsample_bicubic2d_backward.grad_input", interp2d_bwd_out<kCubic>);
  m.impl("upsample_trilinear3d", trilinear);
  m.impl("upsample_trilinear3d.out", trilinear_out);
  m.impl("upsample_trilinear3d_backward", trilinear_bwd);
  m.impl("upsample_trilinear3d_backward.grad_input", trilinear_bwd_out);
}

#undef AS_REF

}  // namespace torch_vkml::ops_upsample
