// Winograd F(m x m, 3x3), m = 2 or 4 (conv_wino<m>_*): the input tiles and the kernel
// transformed (_input, _weight), (m + 2)^2 GEMMs on the SIMT fp32 kernel (one batched call), the
// products transformed back (_output). The weight gradient transforms the input and the output
// gradient's tiles (_input, _dy), sums their products over the tiles in (m + 2)^2 GEMMs
// (accumulating over the batch's chunks) and transforms the sums into the 3x3 kernels (_wgrad).
// The transformed buffers are fp32 and dense, chunked over the batch.
#include "ops/conv/conv_winograd.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "ops/conv/conv_igemm.h"
#include "ops/conv/conv_params.h"
#include "ops/conv/conv_policy.h"
#include "ops/conv/conv_util.h"
#include "ops/launch.h"
#include "ops/nn_util.h"
#include "vkml/config.h"
#include "vkml/gemm.h"

namespace vkml::ops {

using nn::range_of;

namespace {

// Bytes of transformed source and products per chunk of the batch, within scratch_budget.
constexpr uint64_t kWinoWorkspace = 512ull << 20;
constexpr int64_t kMaxItems = (1ll << 31) - 1;

// VKML_CONV_WINOGRAD: 0 off; 1 wherever it applies; a comma-separated subset of forward, data,
// weight: those passes wherever they apply, the others off; auto: conv_winograd_by_default.
bool wanted(Device& dev, const ConvDesc& c, ConvPass pass) {
  const std::string& mode = config().conv_winograd;
  if (mode == "auto") return conv_winograd_by_default(dev.caps(), c, pass);
  if (mode == "0" || mode == "1") return mode == "1";
  const std::string_view name = conv_pass_name(pass);
  size_t start = 0;
  while (start <= mode.size()) {
    const size_t end = std::min(mode.find(',', start), mode.size());
    if (std::string_view(mode).substr(start, end - start) == name) return true;
    start = end + 1;
  }
  return false;
}

// Output tile edge m from VKML_CONV_WINOGRAD_TILE: 4 (4x fewer multiplies than direct against
// 2.25x, for 36 transformed values per 16 outputs against 16 per 4) or 2 (rounding closer to
// direct summation). Measurements: docs/design/conv.md#winograd-tile
int tile_edge() { return config().conv_winograd_tile == "2" ? 2 : 4; }

// The shaders of c's dtype: fp32 tensors, or fp16/bf16 ones widened to fp32 on load.
std::string stage_shader(const ConvDesc& c, int m, const std::string& stage) {
  return "conv_wino" + std::to_string(m) + "_" + stage + "_" + std::string(dtype_name(c.dtype));
}

bool geometry_fits(const ConvDesc& c, bool data_grad) {
  const bool dtype_ok = c.dtype == DType::kF32 || c.dtype == DType::kF16 || c.dtype == DType::kBF16;
  if (c.spatial != 2 || c.groups != 1 || !dtype_ok) return false;
  for (int i = 0; i < 2; ++i) {
    if (c.kernel[i] != 3 || c.stride[i] != 1 || c.dilation[i] != 1) return false;
    // The input gradient is a convolution of the output gradient padded by 2 - padding.
    if (data_grad && c.padding[i] > 2) return false;
  }
  return true;
}

void run_stage(Device& dev, const ConvDesc& c, int m, const std::string& stage,
               const ConvParams& p, std::initializer_list<MemRange> reads,
               std::initializer_list<MemRange> writes) {
  if (p.work == 0) return;
  launch_elementwise(dev, stage_shader(c, m, stage), p, p.work, {reads.begin(), reads.size()},
                     {writes.begin(), writes.size()});
}

// The sizes of one Winograd call: output tiles of m x m over a dst_size plane, (m + 2)^2
// transformed values per tile, and the samples per chunk whose transformed source (C channels)
// and products (K) fit the budget. nb_max = 0: it does not fit (or its shaders are missing).
struct WinoPlan {
  int m = 4;
  int64_t xi = 0, tiles = 0, nb_max = 0;
};

WinoPlan plan_for(Device& dev, const ConvDesc& c, int64_t C, int64_t K, const int64_t* dst_size) {
  WinoPlan w;
  w.m = tile_edge();
  w.xi = int64_t{w.m + 2} * (w.m + 2);
  w.tiles = ((dst_size[0] + w.m - 1) / w.m) * ((dst_size[1] + w.m - 1) / w.m);
  for (const char* stage : {"input", "weight", "output", "dy", "wgrad"}) {
    if (!has_shader(stage_shader(c, w.m, stage))) return w;
  }
  const uint64_t budget = scratch_budget(dev.caps(), kWinoWorkspace);
  const uint64_t per_sample = static_cast<uint64_t>(w.xi * (C + K) * w.tiles) * 4;
  const int64_t per_sample_items = std::max(C, K) * w.tiles;
  const uint64_t kernels = static_cast<uint64_t>(w.xi * K * C) * 4;  // U or dU
  if (per_sample_items > kMaxItems || per_sample > budget || kernels > budget) return w;
  const uint64_t limit = c.workspace_limit ? c.workspace_limit : budget;  // tests chunk
  const int64_t fit = std::min<int64_t>(
      {c.batch, static_cast<int64_t>(limit / per_sample), kMaxItems / per_sample_items});
  w.nb_max = std::max<int64_t>(1, fit);
  return w;
}

// xi GEMMs in one call: C[i] = A[i] (m x k) * B[i] (k x n), fp32, batch strides as given.
void batched_gemm(Device& dev, int64_t xi, int64_t m, int64_t n, int64_t k, MatrixView a,
                  MatrixView b, MatrixView c, bool accumulate) {
  GemmDesc g;
  g.m = m, g.n = n, g.k = k;
  g.batch[0] = xi, g.batch[1] = 1;
  g.in_dtype = g.out_dtype = DType::kF32;
  g.a = a, g.b = b, g.c = c;
  if (accumulate) g.c_in = g.c, g.beta = 1.0;
  gemm(dev, g);
}

// The shaders' geometry: a convolution src (C channels, src_size) -> dst (K, dst_size), 3x3,
// tiles offset by pad.
ConvParams wino_params(int64_t C, int64_t K, const int64_t* src_size, const int64_t* dst_size,
                       const int64_t* pad) {
  ConvParams p{};
  p.in_size[0] = p.out_size[0] = 1;
  for (int i = 0; i < 2; ++i) {
    p.in_size[1 + i] = static_cast<int32_t>(src_size[i]);
    p.out_size[1 + i] = static_cast<int32_t>(dst_size[i]);
    p.pad[1 + i] = static_cast<int32_t>(pad[i]);
  }
  p.in_channels = static_cast<int32_t>(C);
  p.out_channels = static_cast<int32_t>(K);
  return p;
}

// A stage over the tiles of one tensor sliced to the chunk: the source (x, C channels: the input
// stage) or the destination (y, K channels: output, dy), col its transformed buffer, T tiles.
ConvParams over_tiles(const ConvParams& base, const TensorDesc& t, bool source, uint64_t col,
                      int64_t T) {
  ConvParams p = base;
  (source ? p.x : p.y) = t.address;
  set_strides(source ? p.x_strides : p.y_strides, t, 2);
  p.col = col;
  p.batch = static_cast<int32_t>(t.sizes[0]);
  p.work = static_cast<uint32_t>((source ? base.in_channels : base.out_channels) * T);
  return p;
}

}  // namespace

bool winograd_conv(Device& dev, const ConvDesc& c, const TensorDesc& src, const TensorDesc& w,
                   const TensorDesc* bias, const TensorDesc& dst, bool data_grad) {
  if (!geometry_fits(c, data_grad) ||
      !wanted(dev, c, data_grad ? ConvPass::kData : ConvPass::kForward)) {
    return false;
  }
  // As a convolution src (C channels) -> dst (K channels) with a 3x3 kernel and padding pad.
  const int64_t C = data_grad ? c.out_channels : c.in_channels;
  const int64_t K = data_grad ? c.in_channels : c.out_channels;
  const int64_t* src_size = data_grad ? c.out_size : c.in_size;
  const int64_t* dst_size = data_grad ? c.in_size : c.out_size;
  const WinoPlan wp = plan_for(dev, c, C, K, dst_size);
  if (wp.nb_max == 0) return false;
  const int m = wp.m;
  const int64_t xi = wp.xi, tiles = wp.tiles, nb_max = wp.nb_max;
  const uint64_t u_bytes = static_cast<uint64_t>(xi * K * C) * 4;
  int64_t pad[2];
  for (int i = 0; i < 2; ++i) pad[i] = data_grad ? 2 - c.padding[i] : c.padding[i];
  const ConvParams base = wino_params(C, K, src_size, dst_size, pad);

  // U = G g G^T for every (k, c), once.
  Scratch u(dev, u_bytes);
  {
    ConvParams p = base;
    p.w = w.address;
    set_strides(p.w_strides, w, 2);
    p.col = u.address;
    p.flags = data_grad ? VKML_CONV_WINO_FLIP : 0u;
    p.work = static_cast<uint32_t>(K * C);
    run_stage(dev, c, m, "weight", p, {range_of(w)}, {{u.address, u_bytes}});
  }
  const uint64_t v_bytes = static_cast<uint64_t>(xi * C * tiles * nb_max) * 4;
  const uint64_t p_bytes = static_cast<uint64_t>(xi * K * tiles * nb_max) * 4;
  Scratch v(dev, v_bytes), prod(dev, p_bytes);
  for (int64_t n0 = 0; n0 < c.batch; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, c.batch - n0), T = nb * tiles;
    const TensorDesc s = batch_slice(src, n0, nb), d = batch_slice(dst, n0, nb);
    run_stage(dev, c, m, "input", over_tiles(base, s, true, v.address, T), {range_of(s)},
              {{v.address, v_bytes}});

    batched_gemm(dev, xi, K, T, C, {u.address, C, 1, {K * C, 0}}, {v.address, T, 1, {C * T, 0}},
                 {prod.address, T, 1, {K * T, 0}}, false);

    ConvParams pout = over_tiles(base, d, false, prod.address, T);
    if (bias) {
      pout.bias = bias->address, pout.bias_stride = bias->strides[0];
      pout.flags = VKML_CONV_HAS_BIAS;
    }
    const MemRange b = bias ? range_of(*bias) : MemRange{};
    run_stage(dev, c, m, "output", pout, {{prod.address, p_bytes}, b}, {range_of(d)});
  }
  return true;
}

bool winograd_weight_grad(Device& dev, const ConvDesc& c, const TensorDesc& x,
                          const TensorDesc& gy, const TensorDesc& gw) {
  if (!geometry_fits(c, false) || !wanted(dev, c, ConvPass::kWeight)) return false;
  const int64_t C = c.in_channels, K = c.out_channels;
  const WinoPlan wp = plan_for(dev, c, C, K, c.out_size);
  if (wp.nb_max == 0) return false;
  const int m = wp.m;
  const int64_t xi = wp.xi, tiles = wp.tiles, nb_max = wp.nb_max;
  const uint64_t du_bytes = static_cast<uint64_t>(xi * K * C) * 4;
  const ConvParams base = wino_params(C, K, c.in_size, c.out_size, c.padding);
  const uint64_t v_bytes = static_cast<uint64_t>(xi * C * tiles * nb_max) * 4;
  const uint64_t y_bytes = static_cast<uint64_t>(xi * K * tiles * nb_max) * 4;
  Scratch v(dev, v_bytes), yt(dev, y_bytes), du(dev, du_bytes);
  for (int64_t n0 = 0; n0 < c.batch; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, c.batch - n0), T = nb * tiles;
    const TensorDesc xs = batch_slice(x, n0, nb), gys = batch_slice(gy, n0, nb);
    run_stage(dev, c, m, "input", over_tiles(base, xs, true, v.address, T), {range_of(xs)},
              {{v.address, v_bytes}});
    run_stage(dev, c, m, "dy", over_tiles(base, gys, false, yt.address, T), {range_of(gys)},
              {{yt.address, y_bytes}});

    // dU[xi] (K x C) (+)= Y'[xi] (K x T) * V[xi]^T (T x C), summed over the chunks.
    batched_gemm(dev, xi, K, C, T, {yt.address, T, 1, {K * T, 0}}, {v.address, 1, T, {C * T, 0}},
                 {du.address, C, 1, {K * C, 0}}, n0 > 0);
  }
  ConvParams p = base;
  p.w = gw.address;
  set_strides(p.w_strides, gw, 2);
  p.col = du.address;
  p.work = static_cast<uint32_t>(K * C);
  run_stage(dev, c, m, "wgrad", p, {{du.address, du_bytes}}, {range_of(gw)});
  return true;
}

}  // namespace vkml::ops
