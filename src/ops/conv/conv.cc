// The conv family's host side: validation, algorithm choice and recording. im2col buffers live
// in device memory and are sized per chunk of the batch (workspace_limit), then freed; the
// stream's hazard tracking orders their reuse.
#include "vkml/conv.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <memory>
#include <optional>
#include <string>

#include "ops/conv/conv_igemm.h"
#include "ops/conv/conv_params.h"
#include "ops/conv/conv_util.h"
#include "ops/conv/conv_winograd.h"
#include "ops/launch.h"
#include "ops/nn_util.h"
#include "vkml/config.h"
#include "vkml/errors.h"
#include "vkml/gemm.h"
#include "vkml/ops.h"
#include "vkml/profiling.h"

namespace vkml::ops {

using nn::range_of;

namespace {

constexpr uint32_t kThreads = 256;
constexpr uint64_t kDefaultWorkspace = 256ull << 20;
constexpr int64_t kMaxWork = (1ll << 31) - 1;

int64_t volume(const int64_t* s, int n) {
  int64_t v = 1;
  for (int i = 0; i < n; ++i) v *= s[i];
  return v;
}

std::string dt(DType t) { return std::string(dtype_name(t)); }

// "conv fwd 64x3x224x224 -> 64 k7x7 s2 f32", for VKML_PROFILE=2.
std::optional<ProfileTag> conv_tag(const char* pass, const ConvDesc& c) {
  if (!profiling_shapes()) return std::nullopt;
  std::string t = std::string("conv ") + pass + " " + std::to_string(c.batch) + "x" +
                  std::to_string(c.in_channels);
  for (int i = 0; i < c.spatial; ++i) t += "x" + std::to_string(c.in_size[i]);
  t += " -> " + std::to_string(c.out_channels) + " k";
  for (int i = 0; i < c.spatial; ++i) t += (i ? "x" : "") + std::to_string(c.kernel[i]);
  t += " s" + std::to_string(c.stride[0]) + (c.groups > 1 ? " g" + std::to_string(c.groups) : "");
  return std::optional<ProfileTag>(std::in_place, t + " " + dt(c.dtype));
}

// The accumulating dtype of GEMM outputs that col2im gathers: fp32, or f64 for f64.
DType acc_dtype(DType t) { return t == DType::kF64 ? DType::kF64 : DType::kF32; }

// The stride that walks dims [first, end) of t as one flat dim, or -1 when they do not merge.
int64_t flat_stride(const TensorDesc& t, int first) {
  std::vector<int64_t> sizes(t.sizes.begin() + first, t.sizes.end());
  std::vector<int64_t> strides(t.strides.begin() + first, t.strides.end());
  std::vector<int64_t> merged = coalesce_dims(sizes, {&strides});
  if (merged.empty()) return 1;
  return merged.size() == 1 ? strides[0] : -1;
}

TensorDesc dense(uint64_t address, DType t, std::vector<int64_t> sizes) {
  TensorDesc d;
  d.address = address;
  d.dtype = t;
  d.sizes = sizes;
  d.strides.resize(sizes.size());
  int64_t s = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    d.strides[i] = s;
    s *= sizes[i];
  }
  return d;
}

// Geometry and strides as the shaders see them (three spatial dims, leading ones of size 1).
ConvParams base_params(const ConvDesc& c) {
  ConvParams p{};
  const int lead = 3 - c.spatial;
  for (int i = 0; i < 3; ++i) {
    p.in_size[i] = p.out_size[i] = p.kernel[i] = p.stride[i] = p.dilation[i] = 1;
    p.pad[i] = 0;
  }
  for (int i = 0; i < c.spatial; ++i) {
    p.in_size[lead + i] = static_cast<int32_t>(c.in_size[i]);
    p.out_size[lead + i] = static_cast<int32_t>(c.out_size[i]);
    p.kernel[lead + i] = static_cast<int32_t>(c.kernel[i]);
    p.stride[lead + i] = static_cast<int32_t>(c.stride[i]);
    p.pad[lead + i] = static_cast<int32_t>(c.padding[i]);
    p.dilation[lead + i] = static_cast<int32_t>(c.dilation[i]);
  }
  p.in_channels = static_cast<int32_t>(c.in_channels);
  p.out_channels = static_cast<int32_t>(c.out_channels);
  p.multiplier = static_cast<int32_t>(c.out_channels / c.groups);
  return p;
}

// Dispatches one of the conv shaders: one thread per work item, or one workgroup per item.
// `rows` > 0: a 2-D grid, gy covering rows (the shader loops past 65535), gx covering p.work
// items spread over the rows four per invocation (conv_im2col_rows).
void launch(Device& dev, const std::string& shader, const ConvParams& p, bool group_per_item,
            std::initializer_list<MemRange> reads, std::initializer_list<MemRange> writes,
            int64_t rows = 0) {
  if (p.work == 0) return;
  uint32_t spec[] = {kThreads};
  const Pipeline& pipe = dev.pipeline(shader, spec);
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  int64_t groups = group_per_item ? p.work : (int64_t{p.work} + kThreads - 1) / kThreads;
  if (rows > 0) groups = (int64_t{p.work} / rows + kThreads * 4 - 1) / (kThreads * 4);
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, 65535));
  uint32_t gy = static_cast<uint32_t>(std::clamp<int64_t>(rows, 1, 65535));
  dev.stream().dispatch(pipe, gx, gy, 1, &addr, sizeof(addr), {reads.begin(), reads.size()},
                        {writes.begin(), writes.size()});
}

// Samples per chunk so that `per_sample` bytes of workspace each stay within the limit (and
// the shaders' 32-bit work counts hold).
int64_t chunk_size(const ConvDesc& c, uint64_t per_sample_bytes, int64_t per_sample_items) {
  uint64_t limit = c.workspace_limit ? c.workspace_limit : kDefaultWorkspace;
  int64_t n = per_sample_bytes ? static_cast<int64_t>(limit / per_sample_bytes) : c.batch;
  n = std::min<int64_t>(n, kMaxWork / std::max<int64_t>(per_sample_items, 1));
  if (per_sample_items > kMaxWork) {
    throw NotSupported("vkml: convolution too large for one sample's im2col buffer");
  }
  return std::clamp<int64_t>(n, 1, std::max<int64_t>(c.batch, 1));
}

// x is a weight-like tensor (dim 0, then dims to flatten): a dense copy when dims 1.. do not
// merge into one stride. Returns the (possibly new) descriptor; `keep` owns the copy.
TensorDesc flattenable(Device& dev, const TensorDesc& t, int first,
                       std::unique_ptr<Scratch>& keep) {
  if (flat_stride(t, first) >= 0) return t;
  keep = std::make_unique<Scratch>(dev, static_cast<uint64_t>(t.numel()) * dtype_size(t.dtype));
  TensorDesc d = dense(keep->address, t.dtype, t.sizes);
  copy(dev, d, t);
  return d;
}

GemmDesc gemm_base(DType in, DType out, int64_t m, int64_t n, int64_t k, int64_t b0, int64_t b1) {
  GemmDesc g;
  g.m = m, g.n = n, g.k = k;
  g.batch[0] = b0, g.batch[1] = b1;
  g.in_dtype = in, g.out_dtype = out;
  return g;
}

MatrixView mview(uint64_t address, int64_t row, int64_t col, int64_t b0 = 0, int64_t b1 = 0) {
  MatrixView v;
  v.address = address;
  v.row_stride = row, v.col_stride = col;
  v.batch_stride[0] = b0, v.batch_stride[1] = b1;
  return v;
}

void im2col(Device& dev, const ConvDesc& c, const TensorDesc& x_chunk, uint64_t col, int64_t nb) {
  ConvParams p = base_params(c);
  set_strides(p.x_strides, x_chunk, c.spatial);
  p.x = x_chunk.address;
  p.col = col;
  p.batch = static_cast<int32_t>(nb);
  const int64_t items =
      c.in_channels * volume(c.kernel, c.spatial) * nb * volume(c.out_size, c.spatial);
  p.work = static_cast<uint32_t>(items);
  const uint64_t bytes = static_cast<uint64_t>(items) * dtype_size(c.dtype);
  const std::string bits = std::to_string(dtype_size(c.dtype) * 8);
  // The row-wise kernel keeps spatial offsets in 32 bits: used when they fit (almost always).
  int64_t spatial_span = 0;
  for (int d = 2; d < 5; ++d) {
    spatial_span += std::abs(p.x_strides[d]) * std::max<int64_t>(p.in_size[d - 2], 1);
  }
  if (spatial_span < (int64_t{1} << 31) && has_shader("conv_im2col_rows_u" + bits)) {
    launch(dev, "conv_im2col_rows_u" + bits, p, false, {range_of(x_chunk)}, {{col, bytes}},
           c.in_channels * volume(c.kernel, c.spatial));
    return;
  }
  launch(dev, "conv_im2col_u" + bits, p, false, {range_of(x_chunk)}, {{col, bytes}});
}

bool is_pointwise(const ConvDesc& c) {
  for (int i = 0; i < c.spatial; ++i) {
    if (c.kernel[i] != 1 || c.stride[i] != 1 || c.padding[i] != 0) return false;
  }
  return true;
}

void check_tensor(const TensorDesc& t, const ConvDesc& c, const char* what,
                  std::initializer_list<int64_t> lead, const int64_t* spatial_sizes) {
  bool ok = t.ndim() == c.spatial + 2 && t.dtype == c.dtype;
  auto it = lead.begin();
  for (int i = 0; ok && i < 2; ++i, ++it) ok = t.sizes[i] == *it;
  for (int i = 0; ok && i < c.spatial; ++i) ok = t.sizes[2 + i] == spatial_sizes[i];
  if (!ok) {
    throw InvalidArgument(std::string("vkml: convolution ") + what + " does not match the " +
                          "geometry: " + t.describe());
  }
}

// The forward pass as one implicit GEMM (VKML_CONV=implicit); false where it does not apply.
bool implicit_forward(Device& dev, const ConvDesc& c, const TensorDesc& x, const TensorDesc& w,
                      const TensorDesc* bias, const TensorDesc& y) {
  const int64_t cig = c.in_channels / c.groups, cog = c.out_channels / c.groups;
  IgemmPass pass;
  pass.src = &x, pass.dst = &y, pass.bias = bias;
  pass.m = cog, pass.src_group_channels = cig;
  pass.src_size = c.in_size, pass.pos_size = c.out_size;
  for (int i = 0; i < c.spatial; ++i) {
    pass.mul[i] = c.stride[i], pass.kmul[i] = c.dilation[i], pass.add[i] = -c.padding[i];
  }
  const int64_t w_k = flat_stride(w, 1);  // a dense copy (unit stride) where dims 1.. do not merge
  pass.a = mview(w.address, w.strides[0], w_k >= 0 ? w_k : 1, cog * w.strides[0], 0);
  if (!igemm_fits(dev, c, pass)) return false;
  std::unique_ptr<Scratch> w_copy;
  TensorDesc wf = flattenable(dev, w, 1, w_copy);
  pass.a = mview(wf.address, wf.strides[0], flat_stride(wf, 1), cog * wf.strides[0], 0);
  igemm_run(dev, c, pass);
  return true;
}

// A 1x1 kernel without padding, at any stride, over short planes as one GEMM over the whole
// batch (VKML_CONV_FOLD=0 turns it off). Per sample the output positions are the GEMM's columns,
// and a 7x7 plane fills 49 of a 128-wide block; gathered channel-major into [C_in][N][positions],
// every column block is full, for two copies at memory speed.
// Measurements: docs/design/conv.md#fold
bool fold_applies(const ConvDesc& c, int64_t positions) {
  if (!config().conv_fold || c.groups != 1) return false;
  for (int i = 0; i < c.spatial; ++i) {
    if (c.kernel[i] != 1 || c.padding[i] != 0) return false;
  }
  // Planes of 1,024 positions or more already fill 128-wide blocks to 94% or better.
  const uint64_t bytes = static_cast<uint64_t>((c.in_channels + c.out_channels) * c.batch *
                                               positions) * dtype_size(c.dtype);
  return positions < 1024 && bytes <= 2 * kDefaultWorkspace;
}

// t ([N][C][spatial]) seen as [C][N][out positions] at the positions a 1x1 kernel with the
// convolution's stride reads (`strided`), or at every position.
TensorDesc channel_major(const TensorDesc& t, const ConvDesc& c, bool strided) {
  TensorDesc v = t;
  v.sizes = {t.sizes[1], t.sizes[0]};
  v.strides = {t.strides[1], t.strides[0]};
  for (int i = 0; i < c.spatial; ++i) {
    v.sizes.push_back(c.out_size[i]);
    v.strides.push_back(t.strides[2 + i] * (strided ? c.stride[i] : 1));
  }
  return v;
}

bool folded_forward(Device& dev, const ConvDesc& c, const TensorDesc& x, const TensorDesc& w,
                    const TensorDesc* bias, const TensorDesc& y) {
  const int64_t positions = volume(c.out_size, c.spatial), columns = c.batch * positions;
  if (!fold_applies(c, positions)) return false;
  const TensorDesc x_view = channel_major(x, c, true), y_view = channel_major(y, c, false);
  const uint64_t es = dtype_size(c.dtype);
  Scratch xb(dev, static_cast<uint64_t>(c.in_channels * columns) * es);
  Scratch yb(dev, static_cast<uint64_t>(c.out_channels * columns) * es);
  const TensorDesc x_dense = dense(xb.address, c.dtype, x_view.sizes);
  const TensorDesc y_dense = dense(yb.address, c.dtype, y_view.sizes);
  copy(dev, x_dense, x_view);
  std::unique_ptr<Scratch> w_copy;
  const TensorDesc wf = flattenable(dev, w, 1, w_copy);
  GemmDesc g = gemm_base(c.dtype, c.dtype, c.out_channels, columns, c.in_channels, 1, 1);
  g.a = mview(wf.address, wf.strides[0], flat_stride(wf, 1));
  g.b = mview(xb.address, columns, 1);
  g.c = mview(yb.address, columns, 1);
  if (bias) g.bias = mview(bias->address, bias->strides[0], 0);
  gemm(dev, g);
  copy(dev, y_view, y_dense);
  return true;
}

// One phase of an implicit input gradient: the input positions r + s*t (per dim) and the taps
// kk0 + q*step that reach them, at unit stride over the output gradient.
struct DataPhase {
  ConvDesc c;     // the convolution with the phase's taps as its kernel
  TensorDesc gx;  // the phase's positions of the input gradient
  int64_t pos[3] = {1, 1, 1}, kk0[3] = {0, 0, 0}, step[3] = {1, 1, 1};
  IgemmPass pass;
};

// The input gradient as implicit GEMMs over the output gradient, with the weight re-laid as
// [group][C_in/g][C_out/g][taps]. A stride s splits the input positions into s^d phases (i mod s
// per dim), each met by a fixed subset of taps at unit stride, so no multiply is wasted (one
// gather testing divisibility would waste all but 1 in s^d). False where it does not apply.
bool implicit_backward_data(Device& dev, const ConvDesc& c, const TensorDesc& gy,
                            const TensorDesc& w, const TensorDesc* bias, const TensorDesc& gx) {
  const int64_t cig = c.in_channels / c.groups, cog = c.out_channels / c.groups;
  const int64_t es = static_cast<int64_t>(dtype_size(c.dtype));
  int64_t phases = 1;
  for (int i = 0; i < c.spatial; ++i) phases *= std::min(c.stride[i], c.in_size[i]);
  std::vector<DataPhase> plan(static_cast<size_t>(phases));
  for (int64_t ph = 0; ph < phases; ++ph) {
    DataPhase& f = plan[static_cast<size_t>(ph)];
    f.c = c;
    f.gx = gx;
    int64_t rest = ph;
    for (int i = c.spatial - 1; i >= 0; --i) {
      const int64_t s = c.stride[i], d = c.dilation[i], k = c.kernel[i];
      const int64_t r = rest % std::min(s, c.in_size[i]);
      rest /= std::min(s, c.in_size[i]);
      f.step[i] = s / std::gcd(s, d);
      // The first tap whose offset s divides; taps repeat every `step`, and none may exist.
      int64_t first = -1;
      for (int64_t kk = 0; kk < f.step[i] && first < 0; ++kk) {
        if ((r + c.padding[i] - kk * d) % s == 0) first = kk;
      }
      f.kk0[i] = std::max<int64_t>(first, 0);
      f.c.kernel[i] = first >= 0 && first < k ? (k - first + f.step[i] - 1) / f.step[i] : 0;
      f.pos[i] = (c.in_size[i] - r + s - 1) / s;
      f.gx.address += static_cast<uint64_t>(r * gx.strides[2 + i] * es);
      f.gx.strides[2 + i] *= s;
      f.gx.sizes[2 + i] = f.pos[i];
      f.pass.mul[i] = 1;
      f.pass.kmul[i] = -d / std::gcd(s, d);
      f.pass.add[i] = first >= 0 ? (r + c.padding[i] - first * d) / s : 0;  // exact
    }
    const int64_t taps = volume(f.c.kernel, c.spatial);
    f.pass.src = &gy, f.pass.dst = &f.gx, f.pass.bias = bias;
    f.pass.m = cig, f.pass.src_group_channels = cog;
    f.pass.src_size = c.out_size, f.pass.pos_size = f.pos;
    f.pass.a = mview(0, cog * taps, 1, cig * cog * taps, 0);
    if (!igemm_fits(dev, f.c, f.pass)) return false;
  }
  // Each tap belongs to one phase per dim, so the phases' weights together are w's size.
  Scratch wt(dev, static_cast<uint64_t>(w.numel() * es));
  int64_t used = 0;
  for (DataPhase& f : plan) {
    const int64_t taps = volume(f.c.kernel, c.spatial);
    if (taps > 0) {
      TensorDesc view = w;  // [group][C_in/g][C_out/g][the phase's taps] of w
      view.sizes = {c.groups, cig, cog};
      view.strides = {cog * w.strides[0], w.strides[1], w.strides[0]};
      for (int i = 0; i < c.spatial; ++i) {
        view.sizes.push_back(f.c.kernel[i]);
        view.strides.push_back(w.strides[2 + i] * f.step[i]);
        view.address += static_cast<uint64_t>(f.kk0[i] * w.strides[2 + i] * es);
      }
      f.pass.a.address = wt.address + static_cast<uint64_t>(used * es);
      copy(dev, dense(f.pass.a.address, w.dtype, view.sizes), view);
      used += view.numel();
    }
    igemm_run(dev, f.c, f.pass);  // no taps: the bias alone (or zeros)
  }
  return true;
}

// The weight gradient as one implicit GEMM over (sample, position); false where it does not apply.
bool implicit_backward_weight(Device& dev, const ConvDesc& c, const TensorDesc& x,
                              const TensorDesc& gy, const TensorDesc& gw) {
  IgemmPass pass;
  pass.src = &x, pass.dst = &gy;
  pass.m = c.out_channels / c.groups, pass.src_group_channels = c.in_channels / c.groups;
  pass.src_size = c.in_size, pass.pos_size = c.out_size;
  for (int i = 0; i < c.spatial; ++i) {
    pass.mul[i] = c.stride[i], pass.kmul[i] = c.dilation[i], pass.add[i] = -c.padding[i];
  }
  if (!igemm_wgrad_fits(dev, c, pass)) return false;
  std::unique_ptr<Scratch> gw_tmp;
  TensorDesc target = gw;
  if (flat_stride(gw, 1) < 0) {
    gw_tmp = std::make_unique<Scratch>(dev, static_cast<uint64_t>(gw.numel()) * dtype_size(gw.dtype));
    target = dense(gw_tmp->address, gw.dtype, gw.sizes);
  }
  igemm_wgrad_run(dev, c, pass, target, flat_stride(target, 1));
  if (gw_tmp) copy(dev, gw, target);
  return true;
}

}  // namespace

ConvAlgo choose_conv_algo(const ConvDesc& c) {
  if (c.groups > 1 && c.in_channels == c.groups) return ConvAlgo::kDepthwise;
  if (is_pointwise(c)) return ConvAlgo::kPointwise;
  return ConvAlgo::kIm2colGemm;
}

void validate_conv(const ConvDesc& c, const DeviceCaps& caps) {
  if (c.spatial < 1 || c.spatial > 3)
    throw NotSupported("vkml: only 1-D, 2-D and 3-D convolutions");
  if (!(c.dtype == DType::kF32 || c.dtype == DType::kF16 || c.dtype == DType::kBF16 ||
        c.dtype == DType::kF64)) {
    throw NotSupported("vkml: convolution of " + dt(c.dtype) + " tensors is not supported");
  }
  if (!caps.supports_dtype(c.dtype)) {
    throw NotSupported("vkml: " + caps.name + " does not support " + dt(c.dtype) + " tensors");
  }
  if (c.groups < 1 || c.in_channels % c.groups || c.out_channels % c.groups) {
    throw InvalidArgument("vkml: channels must be divisible by groups");
  }
  for (int i = 0; i < c.spatial; ++i) {
    if (c.stride[i] < 1 || c.dilation[i] < 1 || c.padding[i] < 0 || c.kernel[i] < 1) {
      throw InvalidArgument("vkml: convolution needs stride, dilation, kernel >= 1, padding >= 0");
    }
    const int64_t span = c.in_size[i] + 2 * c.padding[i] - c.dilation[i] * (c.kernel[i] - 1) - 1;
    const int64_t expect = span < 0 ? 0 : span / c.stride[i] + 1;
    // Fewer outputs than the geometry allows is a prefix of them: the regular convolution behind
    // a transposed one whose output_padding reaches past its stride (it is < dilation then).
    if (c.out_size[i] < 0 || c.out_size[i] > expect) {
      throw InvalidArgument("vkml: convolution output size " + std::to_string(c.out_size[i]) +
                            " does not follow from the geometry (at most " +
                            std::to_string(expect) + ")");
    }
    if (c.in_size[i] > (1 << 30) || c.kernel[i] > (1 << 20)) {
      throw NotSupported("vkml: convolution sizes beyond 32-bit indexing");
    }
  }
}

// The convolution in one piece; conv_forward below slices it for the time budget.
static void conv_forward_whole(Device& dev, const ConvDesc& c, const TensorDesc& x,
                               const TensorDesc& w, const TensorDesc* bias, const TensorDesc& y) {
  const auto tag = conv_tag("fwd", c);
  validate_conv(c, dev.caps());
  const int64_t cig = c.in_channels / c.groups, cog = c.out_channels / c.groups;
  check_tensor(x, c, "input", {c.batch, c.in_channels}, c.in_size);
  check_tensor(w, c, "weight", {c.out_channels, cig}, c.kernel);
  check_tensor(y, c, "output", {c.batch, c.out_channels}, c.out_size);
  if (y.numel() == 0) return;
  const int64_t P = volume(c.out_size, c.spatial), kv = volume(c.kernel, c.spatial);
  const ConvAlgo algo = choose_conv_algo(c);

  if (algo == ConvAlgo::kDepthwise) {
    const int64_t per_sample = c.out_channels * P;
    const int64_t nb_max = chunk_size(c, 0, per_sample);
    for (int64_t n0 = 0; n0 < c.batch; n0 += nb_max) {
      const int64_t nb = std::min(nb_max, c.batch - n0);
      TensorDesc xs = batch_slice(x, n0, nb), ys = batch_slice(y, n0, nb);
      ConvParams p = base_params(c);
      set_strides(p.x_strides, xs, c.spatial);
      set_strides(p.y_strides, ys, c.spatial);
      set_strides(p.w_strides, w, c.spatial);
      p.x = xs.address, p.y = ys.address, p.w = w.address;
      if (bias)
        p.bias = bias->address, p.bias_stride = bias->strides[0], p.flags = VKML_CONV_HAS_BIAS;
      p.batch = static_cast<int32_t>(nb);
      p.work = static_cast<uint32_t>(nb * per_sample);
      MemRange b = bias ? range_of(*bias) : MemRange{};
      launch(dev, "conv_dw_forward_" + dt(c.dtype), p, false,
             {range_of(xs), range_of(w), b}, {range_of(ys)});
    }
    return;
  }

  if (winograd_conv(dev, c, x, w, bias, y, /*data_grad=*/false)) return;
  if (folded_forward(dev, c, x, w, bias, y)) return;
  if (algo == ConvAlgo::kIm2colGemm && conv_implicit_requested(dev, c, ConvPass::kForward) &&
      implicit_forward(dev, c, x, w, bias, y)) {
    return;
  }
  std::unique_ptr<Scratch> w_copy, y_tmp;
  TensorDesc wf = flattenable(dev, w, 1, w_copy);
  const int64_t w_k = flat_stride(wf, 1);
  TensorDesc yt = y;  // y's spatial dims must merge for the GEMM; otherwise a dense temporary
  if (flat_stride(y, 2) < 0) {
    y_tmp = std::make_unique<Scratch>(dev, static_cast<uint64_t>(y.numel()) * dtype_size(y.dtype));
    yt = dense(y_tmp->address, y.dtype, y.sizes);
  }
  const int64_t y_p = flat_stride(yt, 2);
  MatrixView bias_view;
  if (bias) {
    bias_view = mview(bias->address, bias->strides[0], 0, cog * bias->strides[0], 0);
  }

  const int64_t x_p = flat_stride(x, 2);
  if (algo == ConvAlgo::kPointwise && x_p >= 0) {
    GemmDesc g = gemm_base(c.dtype, c.dtype, cog, P, cig, c.groups, c.batch);
    g.a = mview(wf.address, wf.strides[0], w_k, cog * wf.strides[0], 0);
    g.b = mview(x.address, x.strides[1], x_p, cig * x.strides[1], x.strides[0]);
    g.c = mview(yt.address, yt.strides[1], y_p, cog * yt.strides[1], yt.strides[0]);
    g.bias = bias_view;
    gemm(dev, g);
  } else {
    const int64_t kc = cig * kv;
    const uint64_t per_sample = static_cast<uint64_t>(c.in_channels * kv * P) * dtype_size(c.dtype);
    const int64_t nb_max = chunk_size(c, per_sample, c.in_channels * kv * P);
    Scratch col(dev, per_sample * static_cast<uint64_t>(nb_max));
    for (int64_t n0 = 0; n0 < c.batch; n0 += nb_max) {
      const int64_t nb = std::min(nb_max, c.batch - n0);
      im2col(dev, c, batch_slice(x, n0, nb), col.address, nb);
      TensorDesc ys = batch_slice(yt, n0, nb);
      GemmDesc g = gemm_base(c.dtype, c.dtype, cog, P, kc, c.groups, nb);
      g.a = mview(wf.address, wf.strides[0], w_k, cog * wf.strides[0], 0);
      g.b = mview(col.address, nb * P, 1, kc * nb * P, P);
      g.c = mview(ys.address, ys.strides[1], y_p, cog * ys.strides[1], ys.strides[0]);
      g.bias = bias_view;
      gemm(dev, g);
    }
  }
  if (y_tmp) copy(dev, y, yt);
}

static void conv_backward_data_whole(Device& dev, const ConvDesc& c, const TensorDesc& gy,
                                     const TensorDesc& w, const TensorDesc* bias,
                                     const TensorDesc& gx) {
  const auto tag = conv_tag("dgrad", c);
  validate_conv(c, dev.caps());
  const int64_t cig = c.in_channels / c.groups, cog = c.out_channels / c.groups;
  check_tensor(gy, c, "output gradient", {c.batch, c.out_channels}, c.out_size);
  check_tensor(w, c, "weight", {c.out_channels, cig}, c.kernel);
  check_tensor(gx, c, "input gradient", {c.batch, c.in_channels}, c.in_size);
  if (gx.numel() == 0) return;
  const int64_t P = volume(c.out_size, c.spatial), V = volume(c.in_size, c.spatial);
  const int64_t kv = volume(c.kernel, c.spatial);
  const ConvAlgo algo = choose_conv_algo(c);
  MemRange bias_range = bias ? range_of(*bias) : MemRange{};

  if (algo == ConvAlgo::kDepthwise) {
    const int64_t per_sample = c.in_channels * V;
    const int64_t nb_max = chunk_size(c, 0, per_sample);
    for (int64_t n0 = 0; n0 < c.batch; n0 += nb_max) {
      const int64_t nb = std::min(nb_max, c.batch - n0);
      TensorDesc ys = batch_slice(gy, n0, nb), xs = batch_slice(gx, n0, nb);
      ConvParams p = base_params(c);
      set_strides(p.x_strides, xs, c.spatial);
      set_strides(p.y_strides, ys, c.spatial);
      set_strides(p.w_strides, w, c.spatial);
      p.x = xs.address, p.y = ys.address, p.w = w.address;
      p.batch = static_cast<int32_t>(nb);
      p.work = static_cast<uint32_t>(nb * per_sample);
      launch(dev, "conv_dw_backward_data_" + dt(c.dtype), p, false, {range_of(ys), range_of(w)},
             {range_of(xs)});
    }
    // A depthwise transposed convolution's bias: one more pass through a 1x1 identity is not
    // worth a shader; add it with a k = 0 GEMM (C = C_in + bias) per sample.
    if (bias) {
      const int64_t gx_p = flat_stride(gx, 2);
      if (gx_p < 0)
        throw NotSupported(
            "vkml: depthwise transposed convolution with bias needs "
            "an output whose spatial dims merge");
      GemmDesc g = gemm_base(c.dtype, c.dtype, c.in_channels, V, 0, c.batch, 1);
      g.c = mview(gx.address, gx.strides[1], gx_p, gx.strides[0], 0);
      g.c_in = g.c;
      g.beta = 1.0;
      g.bias = mview(bias->address, bias->strides[0], 0);
      gemm(dev, g);
    }
    return;
  }

  if (winograd_conv(dev, c, gy, w, bias, gx, /*data_grad=*/true)) return;
  if (algo == ConvAlgo::kIm2colGemm && conv_implicit_requested(dev, c, ConvPass::kData) &&
      implicit_backward_data(dev, c, gy, w, bias, gx)) {
    return;
  }
  std::unique_ptr<Scratch> w_copy, gy_copy, gx_tmp;
  TensorDesc wf = flattenable(dev, w, 1, w_copy);
  const int64_t w_k = flat_stride(wf, 1);
  TensorDesc g_y = flattenable(dev, gy, 2, gy_copy);  // B operand: spatial must merge
  const int64_t gy_p = flat_stride(g_y, 2);

  if (algo == ConvAlgo::kPointwise && flat_stride(gx, 2) >= 0) {
    const int64_t gx_p = flat_stride(gx, 2);
    GemmDesc g = gemm_base(c.dtype, c.dtype, cig, P, cog, c.groups, c.batch);
    g.a = mview(wf.address, w_k, wf.strides[0], cog * wf.strides[0], 0);  // W_g^T
    g.b = mview(g_y.address, g_y.strides[1], gy_p, cog * g_y.strides[1], g_y.strides[0]);
    g.c = mview(gx.address, gx.strides[1], gx_p, cig * gx.strides[1], gx.strides[0]);
    if (bias) g.bias = mview(bias->address, bias->strides[0], 0, cig * bias->strides[0], 0);
    gemm(dev, g);
    return;
  }

  const DType acc = acc_dtype(c.dtype);
  const int64_t kc = cig * kv;
  const uint64_t per_sample = static_cast<uint64_t>(c.in_channels * kv * P) * dtype_size(acc);
  const int64_t items = std::max(c.in_channels * kv * P, c.in_channels * V);
  const int64_t nb_max = chunk_size(c, per_sample, items);
  Scratch col(dev, per_sample * static_cast<uint64_t>(nb_max));
  for (int64_t n0 = 0; n0 < c.batch; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, c.batch - n0);
    TensorDesc ys = batch_slice(g_y, n0, nb), xs = batch_slice(gx, n0, nb);
    GemmDesc g = gemm_base(c.dtype, acc, kc, P, cog, c.groups, nb);
    g.a = mview(wf.address, w_k, wf.strides[0], cog * wf.strides[0], 0);  // W_g^T
    g.b = mview(ys.address, ys.strides[1], gy_p, cog * ys.strides[1], ys.strides[0]);
    g.c = mview(col.address, nb * P, 1, kc * nb * P, P);
    gemm(dev, g);
    ConvParams p = base_params(c);
    set_strides(p.x_strides, xs, c.spatial);
    p.x = xs.address, p.col = col.address;
    if (bias)
      p.bias = bias->address, p.bias_stride = bias->strides[0], p.flags = VKML_CONV_HAS_BIAS;
    p.batch = static_cast<int32_t>(nb);
    p.work = static_cast<uint32_t>(nb * c.in_channels * V);
    const uint64_t col_bytes = static_cast<uint64_t>(c.in_channels * kv * nb * P) * dtype_size(acc);
    launch(dev, "conv_col2im_" + dt(c.dtype), p, false, {{col.address, col_bytes}, bias_range},
           {range_of(xs)});
  }
}

static void conv_backward_weight_whole(Device& dev, const ConvDesc& c, const TensorDesc& x,
                                       const TensorDesc& gy, const TensorDesc& gw) {
  const auto tag = conv_tag("wgrad", c);
  validate_conv(c, dev.caps());
  const int64_t cig = c.in_channels / c.groups, cog = c.out_channels / c.groups;
  check_tensor(x, c, "input", {c.batch, c.in_channels}, c.in_size);
  check_tensor(gy, c, "output gradient", {c.batch, c.out_channels}, c.out_size);
  check_tensor(gw, c, "weight gradient", {c.out_channels, cig}, c.kernel);
  if (gw.numel() == 0) return;
  const int64_t P = volume(c.out_size, c.spatial), kv = volume(c.kernel, c.spatial);
  if (c.batch == 0 || P == 0) {
    fill(dev, gw, Scalar::from_double(0.0));
    return;
  }

  if (choose_conv_algo(c) == ConvAlgo::kDepthwise) {
    ConvParams p = base_params(c);
    set_strides(p.x_strides, x, c.spatial);
    set_strides(p.y_strides, gy, c.spatial);
    set_strides(p.w_strides, gw, c.spatial);
    p.x = x.address, p.y = gy.address, p.w = gw.address;
    p.batch = static_cast<int32_t>(c.batch);
    p.work = static_cast<uint32_t>(c.out_channels * kv);
    launch(dev, "conv_dw_backward_weight_" + dt(c.dtype), p, true, {range_of(x), range_of(gy)},
           {range_of(gw)});
    return;
  }

  if (winograd_weight_grad(dev, c, x, gy, gw)) return;
  if (conv_implicit_requested(dev, c, ConvPass::kWeight) &&
      implicit_backward_weight(dev, c, x, gy, gw)) {
    return;
  }
  const int64_t kc = cig * kv;
  const uint64_t es = dtype_size(c.dtype);
  // Per sample: the im2col columns plus gy re-laid as [C_out][batch][P] (the GEMM's K).
  const uint64_t per_sample = static_cast<uint64_t>((c.in_channels * kv + c.out_channels) * P) * es;
  const int64_t nb_max =
      chunk_size(c, per_sample, std::max(c.in_channels * kv, c.out_channels) * P);
  const int64_t chunks = (c.batch + nb_max - 1) / nb_max;
  Scratch col(dev, static_cast<uint64_t>(c.in_channels * kv * P * nb_max) * es);
  Scratch gyt(dev, static_cast<uint64_t>(c.out_channels * P * nb_max) * es);
  // Several chunks of half-precision partial sums accumulate in fp32, rounded once at the end.
  const bool widen = chunks > 1 && acc_dtype(c.dtype) != c.dtype;
  std::unique_ptr<Scratch> acc_buf, gw_tmp;
  TensorDesc target = gw;
  if (widen) {
    acc_buf = std::make_unique<Scratch>(dev, static_cast<uint64_t>(gw.numel()) * 4);
    target = dense(acc_buf->address, DType::kF32, gw.sizes);
  } else if (flat_stride(gw, 1) < 0) {
    gw_tmp = std::make_unique<Scratch>(dev, static_cast<uint64_t>(gw.numel()) * es);
    target = dense(gw_tmp->address, gw.dtype, gw.sizes);
  }
  const int64_t t_k = flat_stride(target, 1);
  for (int64_t n0 = 0; n0 < c.batch; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, c.batch - n0);
    im2col(dev, c, batch_slice(x, n0, nb), col.address, nb);
    // gyt[oc][n][p] = gy[n0 + n, oc, p]
    TensorDesc src = batch_slice(gy, n0, nb);
    TensorDesc dst = dense(gyt.address, c.dtype, src.sizes);
    dst.strides[0] = P;
    dst.strides[1] = nb * P;
    copy(dev, dst, src);
    GemmDesc g = gemm_base(c.dtype, target.dtype, cog, kc, nb * P, c.groups, 1);
    g.a = mview(gyt.address, nb * P, 1, cog * nb * P, 0);
    g.b = mview(col.address, 1, nb * P, kc * nb * P, 0);  // col^T
    g.c = mview(target.address, target.strides[0], t_k, cog * target.strides[0], 0);
    if (n0 > 0) {
      g.c_in = g.c;
      g.beta = 1.0;
    }
    gemm(dev, g);
  }
  if (widen || gw_tmp) copy(dev, gw, target);
}

void conv_backward_bias(Device& dev, const TensorDesc& gy, const TensorDesc& gb) {
  const int spatial = gy.ndim() - 2;
  if (spatial < 0 || spatial > 3) throw NotSupported("vkml: bias gradient of 2-5 dim tensors only");
  if (gb.ndim() != 1 || gb.sizes[0] != gy.sizes[1] || gb.dtype != gy.dtype) {
    throw InvalidArgument("vkml: bias gradient shape " + gb.describe() + " for " + gy.describe());
  }
  ConvDesc c;
  c.spatial = std::max(spatial, 1);
  c.dtype = gy.dtype;
  if (!dev.caps().supports_dtype(c.dtype) || !dtype_is_float(c.dtype)) {
    throw NotSupported("vkml: bias gradient of " + dt(c.dtype) + " tensors is not supported");
  }
  if (gb.numel() == 0) return;
  for (int i = 0; i < spatial; ++i) c.out_size[i] = gy.sizes[2 + i];
  ConvParams p = base_params(c);
  TensorDesc g = gy;
  if (spatial == 0) g.sizes.push_back(1), g.strides.push_back(0);
  set_strides(p.y_strides, g, c.spatial);
  p.y = gy.address;
  p.bias = gb.address;
  p.bias_stride = gb.strides[0];
  if (gy.sizes[0] > kMaxWork) throw NotSupported("vkml: bias gradient batch too large");
  p.batch = static_cast<int32_t>(gy.sizes[0]);
  p.work = static_cast<uint32_t>(gy.sizes[1]);
  if (gy.numel() == 0) {
    fill(dev, gb, Scalar::from_double(0.0));
    return;
  }
  launch(dev, "conv_bias_grad_" + dt(c.dtype), p, true, {range_of(gy)}, {range_of(gb)});
}

namespace {

// Multiply-adds of one pass (all three passes of a convolution do the same number).
double conv_work(const ConvDesc& c) {
  return static_cast<double>(c.batch) * static_cast<double>(c.out_channels) *
         static_cast<double>(volume(c.out_size, c.spatial)) *
         static_cast<double>(c.in_channels / std::max<int64_t>(c.groups, 1)) *
         static_cast<double>(volume(c.kernel, c.spatial));
}

// Slice length along a dimension of `extent` so that each slice of the convolution stays within
// the stream's time budget; `extent` when the whole fits.
int64_t slice_step(Device& dev, const ConvDesc& c, int64_t extent) {
  const int64_t slices = std::min(budget_slices(dev, conv_work(c)), std::max<int64_t>(extent, 1));
  return (extent + slices - 1) / slices;
}

// t restricted to [i0, i0 + count) along `dim`.
TensorDesc dim_slice(const TensorDesc& t, int dim, int64_t i0, int64_t count) {
  TensorDesc s = t;
  s.sizes[dim] = count;
  s.address += static_cast<uint64_t>(i0 * t.strides[dim]) * dtype_size(t.dtype);
  return s;
}

// The forward pass and the data gradient are independent per sample, so a convolution too long
// for one submission runs in batch slices, each submitted on its own; the weight gradient sums
// over the batch, so it is cut along output channels instead (groups == 1). Tensors whose batch
// does not match the descriptor go whole, to be reported by validation.
template <typename Pass>
void in_batch_slices(Device& dev, const ConvDesc& c, const TensorDesc& a, const TensorDesc& b,
                     Pass pass) {
  const int64_t step = slice_step(dev, c, c.batch);
  if (step >= c.batch || a.ndim() < 2 || a.sizes[0] != c.batch || b.ndim() < 2 ||
      b.sizes[0] != c.batch) {
    pass(c, a, b);
    return;
  }
  for (int64_t n0 = 0; n0 < c.batch; n0 += step) {
    ConvDesc part = c;
    part.batch = std::min(step, c.batch - n0);
    pass(part, dim_slice(a, 0, n0, part.batch), dim_slice(b, 0, n0, part.batch));
    if (n0 + step < c.batch) dev.stream().flush();
  }
}

}  // namespace

void conv_forward(Device& dev, const ConvDesc& c, const TensorDesc& x, const TensorDesc& w,
                  const TensorDesc* bias, const TensorDesc& y) {
  in_batch_slices(dev, c, x, y, [&](const ConvDesc& part, const TensorDesc& xs,
                                    const TensorDesc& ys) {
    conv_forward_whole(dev, part, xs, w, bias, ys);
  });
}

void conv_backward_data(Device& dev, const ConvDesc& c, const TensorDesc& gy, const TensorDesc& w,
                        const TensorDesc* bias, const TensorDesc& gx) {
  in_batch_slices(dev, c, gy, gx, [&](const ConvDesc& part, const TensorDesc& gys,
                                      const TensorDesc& gxs) {
    conv_backward_data_whole(dev, part, gys, w, bias, gxs);
  });
}

void conv_backward_weight(Device& dev, const ConvDesc& c, const TensorDesc& x, const TensorDesc& gy,
                          const TensorDesc& gw) {
  const int64_t step = slice_step(dev, c, c.out_channels);
  if (step >= c.out_channels || c.groups != 1 || gy.ndim() < 2 ||
      gy.sizes[1] != c.out_channels || gw.ndim() < 1 || gw.sizes[0] != c.out_channels) {
    conv_backward_weight_whole(dev, c, x, gy, gw);
    return;
  }
  for (int64_t o0 = 0; o0 < c.out_channels; o0 += step) {
    ConvDesc part = c;
    part.out_channels = std::min(step, c.out_channels - o0);
    conv_backward_weight_whole(dev, part, x, dim_slice(gy, 1, o0, part.out_channels),
                               dim_slice(gw, 0, o0, part.out_channels));
    if (o0 + step < c.out_channels) dev.stream().flush();
  }
}

}  // namespace vkml::ops
