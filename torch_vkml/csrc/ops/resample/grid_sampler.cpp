// grid_sampler_2d / grid_sampler_3d on vkml (bilinear, nearest, bicubic in 2-D; zeros, border and
// reflection padding; align_corners) with their backward for input and grid, in functional and
// out= forms. Checks are PyTorch's own (GridSamplerUtils.h), so errors match the CPU.
#include <ATen/native/GridSamplerUtils.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "common/nn_bridge.h"
#include "vkml/resample.h"

namespace torch_vkml::ops_grid_sampler {

using vkml::ops::GridSampleSpec;

GridSampleSpec spec_of(int64_t interpolation, int64_t padding, bool align_corners) {
  TORCH_CHECK(interpolation >= 0 && interpolation <= 2, "grid_sampler(): unknown interpolation mode ",
              interpolation);
  TORCH_CHECK(padding >= 0 && padding <= 2, "grid_sampler(): unknown padding mode ", padding);
  GridSampleSpec s;
  s.interpolation = static_cast<vkml::ops::GridInterpolation>(interpolation);
  s.padding = static_cast<vkml::ops::GridPadding>(padding);
  s.align_corners = align_corners;
  return s;
}

template <int N>
void check(const at::Tensor& input, const at::Tensor& grid, int64_t interpolation) {
  at::native::check_grid_sampler_common(input, grid);
  if (N == 2) {
    at::native::check_grid_sampler_2d(input, grid);
  } else {
    at::native::check_grid_sampler_3d(input, grid, interpolation);
  }
  nn::check_floating(input, N == 2 ? "grid_sampler_2d_cpu" : "grid_sampler_3d_cpu");
}

template <int N>
std::vector<int64_t> out_sizes(const at::Tensor& input, const at::Tensor& grid) {
  std::vector<int64_t> s = {input.size(0), input.size(1)};
  for (int k = 0; k < N; ++k) s.push_back(grid.size(1 + k));
  return s;
}

template <int N>
at::Tensor& sample_out(const at::Tensor& input, const at::Tensor& grid, int64_t interpolation,
                       int64_t padding, bool align_corners, at::Tensor& out) {
  check<N>(input, grid, interpolation);
  auto spec = spec_of(interpolation, padding, align_corners);
  nn::prepare_out(out, out_sizes<N>(input, grid), input.scalar_type(), input);
  if (out.numel() == 0) return out;
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::ops::grid_sample(dev, spec, to_desc(out), to_desc(input), to_desc(grid));
  });
  return out;
}

template <int N>
at::Tensor sample(const at::Tensor& input, const at::Tensor& grid, int64_t interpolation,
                  int64_t padding, bool align_corners) {
  check<N>(input, grid, interpolation);
  at::Tensor out = at::empty(out_sizes<N>(input, grid), input.options());
  return sample_out<N>(input, grid, interpolation, padding, align_corners, out);
}

template <int N>
std::tuple<at::Tensor&, at::Tensor&> backward_out(const at::Tensor& grad_output,
                                                  const at::Tensor& input, const at::Tensor& grid,
                                                  int64_t interpolation, int64_t padding,
                                                  bool align_corners,
                                                  std::array<bool, 2> output_mask,
                                                  at::Tensor& grad_input, at::Tensor& grad_grid) {
  check<N>(input, grid, interpolation);
  auto spec = spec_of(interpolation, padding, align_corners);
  nn::check_on_device(input, grad_output, "grid_sampler backward", "grad_output");
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(out_sizes<N>(input, grid)),
              "grid_sampler backward: grad_output ", grad_output.sizes(),
              " does not match the output shape");
  bool want_input = output_mask[0];
  if (want_input) nn::prepare_out(grad_input, input.sizes(), input.scalar_type(), input);
  nn::prepare_out(grad_grid, grid.sizes(), grid.scalar_type(), grid);
  nn::run_on(input, [&](vkml::Device& dev) {
    vkml::TensorDesc gi = want_input ? to_desc(grad_input) : vkml::TensorDesc{};
    vkml::TensorDesc gg = to_desc(grad_grid);
    vkml::ops::grid_sample_backward(dev, spec, want_input ? &gi : nullptr, &gg,
                                    to_desc(grad_output), to_desc(input), to_desc(grid));
  });
  return {grad_input, grad_grid};
}

template <int N>
std::tuple<at::Tensor, at::Tensor> backward(const at::Tensor& grad_output,
                                            const at::Tensor& input, const at::Tensor& grid,
                                            int64_t interpolation, int64_t padding,
                                            bool align_corners, std::array<bool, 2> output_mask) {
  at::Tensor gi = output_mask[0] ? at::empty(input.sizes(), input.options()) : at::Tensor();
  at::Tensor gg = at::empty(grid.sizes(), grid.options());
  backward_out<N>(grad_output, input, grid, interpolation, padding, align_corners, output_mask, gi,
                  gg);
  return {gi, gg};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("grid_sampler_2d", sample<2>);
  m.impl("grid_sampler_2d.out", sample_out<2>);
  m.impl("grid_sampler_2d_backward", backward<2>);
  m.impl("grid_sampler_2d_backward.out", backward_out<2>);
  m.impl("grid_sampler_3d", sample<3>);
  m.impl("grid_sampler_3d.out", sample_out<3>);
  m.impl("grid_sampler_3d_backward", backward<3>);
  m.impl("grid_sampler_3d_backward.out", backward_out<3>);
}

}  // namespace torch_vkml::ops_grid_sampler
