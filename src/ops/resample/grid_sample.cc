// grid_sampler_2d/3d forward and backward (grid_sample.comp).
#include <string>

#include "ops/nn_util.h"
#include "ops/resample/grid_sample_params.h"
#include "vkml/errors.h"
#include "vkml/ops.h"
#include "vkml/resample.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t s = 1;
  for (int k = static_cast<int>(sizes.size()) - 1; k >= 0; --k) {
    st[k] = s;
    s *= sizes[k];
  }
  return st;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("vkml: grid_sample: " + what);
}

// Strides of a (N, C, spatial...) tensor as N, C, D, H, W (depth stride 0 for 2-D).
void five_strides(const TensorDesc& t, int64_t* out) {
  int dims = t.ndim() - 2;
  out[0] = t.strides[0];
  out[1] = t.strides[1];
  out[2] = dims == 3 ? t.strides[2] : 0;
  out[3] = t.strides[t.ndim() - 2];
  out[4] = t.strides[t.ndim() - 1];
}

GridSampleParams make_params(const GridSampleSpec& spec, const TensorDesc& input,
                             const TensorDesc& grid, const TensorDesc& result) {
  int dims = input.ndim() - 2;
  require(dims == 2 || dims == 3, "input must be 4-D or 5-D");
  require(grid.ndim() == dims + 2 && grid.sizes.back() == dims && grid.sizes[0] == input.sizes[0],
          "grid " + grid.describe() + " does not match input " + input.describe());
  require(result.ndim() == input.ndim() && result.sizes[0] == input.sizes[0] &&
              result.sizes[1] == input.sizes[1],
          "output does not match input");
  for (int k = 0; k < dims; ++k) {
    require(result.sizes[2 + k] == grid.sizes[1 + k], "output does not match grid");
  }
  require(!(dims == 3 && spec.interpolation == GridInterpolation::kBicubic),
          "bicubic interpolation is 2-D only");
  GridSampleParams p{};
  p.dims = static_cast<uint32_t>(dims);
  p.interpolation = static_cast<uint32_t>(spec.interpolation);
  p.padding = static_cast<uint32_t>(spec.padding);
  p.align_corners = spec.align_corners ? 1 : 0;
  p.batch = input.sizes[0];
  p.channels = input.sizes[1];
  for (int k = 0; k < 3; ++k) {
    int d = k - (3 - dims);
    p.in_size[k] = d >= 0 ? input.sizes[2 + d] : 1;
    p.out_size[k] = d >= 0 ? grid.sizes[1 + d] : 1;
  }
  five_strides(input, p.input_strides);
  five_strides(result, p.out_strides);
  p.grid_strides[0] = grid.strides[0];
  p.grid_strides[1] = dims == 3 ? grid.strides[1] : 0;
  p.grid_strides[2] = grid.strides[grid.ndim() - 3];
  p.grid_strides[3] = grid.strides[grid.ndim() - 2];
  p.grid_strides[4] = grid.strides[grid.ndim() - 1];
  p.input_dtype = nn::float_code(input, "grid_sample input");
  p.grid_dtype = nn::float_code(grid, "grid_sample grid");
  p.out_dtype = nn::float_code(result, "grid_sample output");
  p.source = input.address;
  p.grid = grid.address;
  p.result = result.address;
  return p;
}

}  // namespace

void grid_sample(Device& dev, const GridSampleSpec& spec, const TensorDesc& output,
                 const TensorDesc& input, const TensorDesc& grid) {
  GridSampleParams p = make_params(spec, input, grid, output);
  bool fp64 = nn::needs_fp64(dev, {&input, &grid, &output});
  p.numel = output.numel();
  if (p.numel == 0) return;
  MemRange reads[] = {nn::range_of(input), nn::range_of(grid)};
  MemRange writes[] = {nn::range_of(output)};
  nn::dispatch_groups(dev, nn::variant(dev, "grid_sample_fwd", fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

void grid_sample_backward(Device& dev, const GridSampleSpec& spec, const TensorDesc* grad_input,
                          const TensorDesc* grad_grid, const TensorDesc& grad_output,
                          const TensorDesc& input, const TensorDesc& grid) {
  GridSampleParams p = make_params(spec, input, grid, grad_output);
  bool fp64 = nn::needs_fp64(dev, {&input, &grid, &grad_output, grad_input, grad_grid});
  if (grad_input) {
    require(grad_input->sizes == input.sizes, "grad_input must have input's shape");
    p.gi_dtype = nn::float_code(*grad_input, "grid_sample grad_input");
    five_strides(*grad_input, p.gi_strides);
  }
  if (grad_grid) {
    require(grad_grid->sizes == grid.sizes && grad_grid->dtype == grid.dtype,
            "grad_grid must match grid");
    int nd = grad_grid->ndim();
    p.gg_strides[0] = grad_grid->strides[0];
    p.gg_strides[1] = p.dims == 3 ? grad_grid->strides[1] : 0;
    p.gg_strides[2] = grad_grid->strides[nd - 3];
    p.gg_strides[3] = grad_grid->strides[nd - 2];
    p.gg_strides[4] = grad_grid->strides[nd - 1];
    p.grad_grid = grad_grid->address;
  }
  bool gather = grad_input && fp64;  // no portable float64 atomics: gather instead
  int64_t points = p.batch * p.out_size[0] * p.out_size[1] * p.out_size[2];
  if (grad_input && (points == 0 || p.channels == 0)) {
    if (grad_input->numel() > 0) fill(dev, *grad_input, Scalar::from_double(0.0));
  }
  std::vector<MemRange> reads = {nn::range_of(input), nn::range_of(grid),
                                 nn::range_of(grad_output)};
  if (gather && grad_input->numel() > 0 && points > 0) {
    GridSampleParams g = p;
    g.grad_input = grad_input->address;
    g.grad_grid = 0;
    g.numel = grad_input->numel();
    MemRange writes[] = {nn::range_of(*grad_input)};
    nn::dispatch_groups(dev, nn::variant(dev, "grid_sample_gather", fp64, false), kWorkgroup,
                        nn::groups_for(g.numel, kWorkgroup), &g, sizeof(g), reads, writes);
  }
  bool atomic = grad_input && !gather && grad_input->numel() > 0 && points > 0;
  if (!atomic && !grad_grid) return;
  if (points == 0) return;
  uint64_t scratch_bytes = atomic ? static_cast<uint64_t>(grad_input->numel()) * 4 : 0;
  nn::Scratch scratch(dev, scratch_bytes);
  TensorDesc acc{scratch.address(), DType::kF32, input.sizes, row_major_strides(input.sizes)};
  if (atomic) {
    fill(dev, acc, Scalar::from_double(0.0));
    p.grad_input = scratch.address();
  }
  p.numel = points;
  std::vector<MemRange> writes;
  if (atomic) writes.push_back(nn::range_of(acc));
  if (grad_grid) writes.push_back(nn::range_of(*grad_grid));
  nn::dispatch_groups(dev, nn::variant(dev, "grid_sample_bwd", fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
  if (atomic) copy(dev, *grad_input, acc);
}

}  // namespace vkml::ops
