// Winograd F(m x m, 3x3), m = 2 or 4 (conv_wino<m>_*): the input tiles and the kernel
// transformed (_input, _weight), (m + 2)^2 GEMMs on the SIMT fp32 kernel (one batched call), the
// products transformed back (_output). The weight gradient transforms the input and the output
// gradient's tiles (_input, _dy), sums their products over the tiles in (m + 2)^2 GEMMs
// (accumulating over the batch's chunks) and transforms the sums into the 3x3 kernels (_wgrad).
// The transformed buffers are fp32 and dense, chunked over the batch.
#include "ops/conv/conv_winograd.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ops/conv/conv_igemm.h"
#include "ops/conv/conv_params.h"
#include "vkml/errors.h"
#include "vkml/gemm.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWinoThreads = 256;
// The transforms' memory traffic per multiply saved grows as channels shrink: a 3-channel stem
// lost (H200, 2026-12-03), every ResNet layer from 64 channels won with F(4x4, 3x3) (64->64 at
// 56x56, batch 32, forward + both gradients: 0.77 against 1.20 ms implicit).
constexpr int64_t kWinogradMinChannels = 64;
// Bytes of transformed source and products per chunk of the batch, at most (workspace()).
constexpr uint64_t kWinoWorkspace = 512ull << 20;
constexpr int64_t kMaxItems = (1ll << 31) - 1;

// VKML_CONV_WINOGRAD: 0 off; 1 wherever it applies; a comma-separated subset of forward, data,
// weight: those passes wherever they apply, the others off; unset: the default rule.
bool wanted(Device& dev, const ConvDesc& c, const char* pass) {
  const char* env = std::getenv("VKML_CONV_WINOGRAD");
  const std::string mode = env ? env : "";
  if (mode.empty()) {  // fp16/bf16 (fp32 transforms and GEMMs) only on request: not yet timed
    return c.dtype == DType::kF32 && dev.caps().kind != DeviceKind::kCpu &&
           std::min(c.in_channels, c.out_channels) >= kWinogradMinChannels;
  }
  if (mode == "0" || mode == "1") return mode == "1";
  bool listed = false;
  size_t start = 0;
  while (start <= mode.size()) {
    const size_t end = std::min(mode.find(',', start), mode.size());
    const std::string item = mode.substr(start, end - start);
    if (item != "forward" && item != "data" && item != "weight") {
      throw InvalidArgument("vkml: VKML_CONV_WINOGRAD=" + mode +
                            " is not one of: 0, 1, or a comma-separated list of forward, data, "
                            "weight");
    }
    listed |= item == pass;
    start = end + 1;
  }
  return listed;
}

// Output tile edge m from VKML_CONV_WINOGRAD_TILE (2 or 4; default 4: 4x fewer multiplies than
// direct against 2.25x, and 36 transformed values per 16 outputs against 16 per 4; H200
// ResNet-18 training 23.6 ms against 29.6 with 2, one run each in one call).
int tile_edge() {
  const char* env = std::getenv("VKML_CONV_WINOGRAD_TILE");
  const std::string v = env ? env : "";
  if (v.empty() || v == "4") return 4;
  if (v == "2") return 2;
  throw InvalidArgument("vkml: VKML_CONV_WINOGRAD_TILE=" + v + " is not one of: 2, 4");
}

// The GEMM batch: transformed values per tile, (m + 2)^2.
int64_t transformed(int m) { return int64_t{m + 2} * (m + 2); }

// Tiles of m x m over a plane of size[0] x size[1].
int64_t plane_tiles(const int64_t* size, int m) {
  return ((size[0] + m - 1) / m) * ((size[1] + m - 1) / m);
}

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
  for (const char* stage : {"input", "weight", "output", "dy", "wgrad"}) {
    for (int m : {2, 4}) {
      if (!has_shader(stage_shader(c, m, stage))) return false;
    }
  }
  return true;
}

MemRange span_of(const TensorDesc& t) { return {t.address, t.span_bytes()}; }

void set_strides4(int64_t out[5], const TensorDesc& t) {
  out[0] = t.strides[0], out[1] = t.strides[1], out[2] = 0;
  out[3] = t.strides[2], out[4] = t.strides[3];
}

void run_stage(Device& dev, const ConvDesc& c, int m, const std::string& stage,
               const ConvParams& p, std::initializer_list<MemRange> reads,
               std::initializer_list<MemRange> writes) {
  if (p.work == 0) return;
  uint32_t spec[] = {kWinoThreads};
  const Pipeline& pipe = dev.pipeline(stage_shader(c, m, stage), spec);
  const uint64_t addr = dev.stream().params(&p, sizeof(p));
  const int64_t groups = (int64_t{p.work} + kWinoThreads - 1) / kWinoThreads;
  const uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, 65535));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), {reads.begin(), reads.size()},
                        {writes.begin(), writes.size()});
}

// Samples per chunk when each takes per_sample bytes of transformed buffers and
// per_sample_items work items per dispatch; 0 where one sample alone is too large.
// The transformed buffers' budget per chunk: kWinoWorkspace, at most an eighth of device-local
// memory (small and integrated GPUs) and one allocation; 64 MiB on CPU devices.
uint64_t workspace(const DeviceCaps& caps) {
  uint64_t budget = kWinoWorkspace;
  for (const MemoryHeap& h : caps.heaps) {
    if (h.device_local && h.size) budget = std::min(budget, h.size / 8);
  }
  for (uint64_t cap : {caps.max_allocation_size, caps.max_buffer_size}) {
    if (cap) budget = std::min(budget, cap);
  }
  if (caps.kind == DeviceKind::kCpu) budget = std::min<uint64_t>(budget, 64ull << 20);
  return budget;
}

int64_t samples_per_chunk(Device& dev, const ConvDesc& c, uint64_t per_sample,
                          int64_t per_sample_items) {
  const uint64_t budget = workspace(dev.caps());
  if (per_sample_items > kMaxItems || per_sample > budget) return 0;
  const uint64_t limit = c.workspace_limit ? c.workspace_limit : budget;  // tests chunk
  return std::max<int64_t>(1, std::min<int64_t>({c.batch, static_cast<int64_t>(limit / per_sample),
                                                 kMaxItems / per_sample_items}));
}

// Sample n0 onwards of t, nb of them.
TensorDesc samples(const TensorDesc& t, int64_t n0, int64_t nb) {
  TensorDesc s = t;
  s.sizes[0] = nb;
  s.address += static_cast<uint64_t>(n0 * t.strides[0]) * dtype_size(t.dtype);
  return s;
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

// V = B^T d B of every tile of src's samples (already sliced to the chunk) into v.
void transform_input(Device& dev, const ConvDesc& c, int m, const ConvParams& base,
                     const TensorDesc& src, int64_t T, uint64_t v, uint64_t v_bytes) {
  ConvParams p = base;
  p.x = src.address;
  set_strides4(p.x_strides, src);
  p.col = v;
  p.batch = static_cast<int32_t>(src.sizes[0]);
  p.work = static_cast<uint32_t>(base.in_channels * T);
  run_stage(dev, c, m, "input", p, {span_of(src)}, {{v, v_bytes}});
}

// A stage over the destination's tiles (output, dy): d sliced to the chunk, col its transformed
// buffer, T tiles.
ConvParams over_dst(const ConvParams& base, const TensorDesc& d, uint64_t col, int64_t T) {
  ConvParams p = base;
  p.y = d.address;
  set_strides4(p.y_strides, d);
  p.col = col;
  p.batch = static_cast<int32_t>(d.sizes[0]);
  p.work = static_cast<uint32_t>(base.out_channels * T);
  return p;
}

}  // namespace

bool winograd_conv(Device& dev, const ConvDesc& c, const TensorDesc& src, const TensorDesc& w,
                   const TensorDesc* bias, const TensorDesc& dst, bool data_grad) {
  if (!geometry_fits(c, data_grad) || !wanted(dev, c, data_grad ? "data" : "forward")) {
    return false;
  }
  // As a convolution src (C channels) -> dst (K channels) with a 3x3 kernel and padding pad.
  const int64_t C = data_grad ? c.out_channels : c.in_channels;
  const int64_t K = data_grad ? c.in_channels : c.out_channels;
  const int64_t* src_size = data_grad ? c.out_size : c.in_size;
  const int64_t* dst_size = data_grad ? c.in_size : c.out_size;
  const int m = tile_edge();
  const int64_t xi = transformed(m), tiles = plane_tiles(dst_size, m);
  const uint64_t per_sample = static_cast<uint64_t>(xi * (C + K) * tiles) * 4;
  const int64_t nb_max = samples_per_chunk(dev, c, per_sample, std::max(C, K) * tiles);
  const uint64_t u_bytes = static_cast<uint64_t>(xi * K * C) * 4;
  if (nb_max == 0 || u_bytes > workspace(dev.caps())) return false;
  int64_t pad[2];
  for (int i = 0; i < 2; ++i) pad[i] = data_grad ? 2 - c.padding[i] : c.padding[i];
  const ConvParams base = wino_params(C, K, src_size, dst_size, pad);

  // U = G g G^T for every (k, c), once.
  Scratch u(dev, u_bytes);
  {
    ConvParams p = base;
    p.w = w.address;
    set_strides4(p.w_strides, w);
    p.col = u.address;
    p.flags = data_grad ? VKML_CONV_WINO_FLIP : 0u;
    p.work = static_cast<uint32_t>(K * C);
    run_stage(dev, c, m, "weight", p, {span_of(w)}, {{u.address, u_bytes}});
  }
  const uint64_t v_bytes = static_cast<uint64_t>(xi * C * tiles * nb_max) * 4;
  const uint64_t p_bytes = static_cast<uint64_t>(xi * K * tiles * nb_max) * 4;
  Scratch v(dev, v_bytes), prod(dev, p_bytes);
  for (int64_t n0 = 0; n0 < c.batch; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, c.batch - n0), T = nb * tiles;
    const TensorDesc s = samples(src, n0, nb), d = samples(dst, n0, nb);
    transform_input(dev, c, m, base, s, T, v.address, v_bytes);

    GemmDesc g;
    g.m = K, g.n = T, g.k = C;
    g.batch[0] = xi, g.batch[1] = 1;
    g.in_dtype = g.out_dtype = DType::kF32;
    g.a = {u.address, C, 1, {K * C, 0}};
    g.b = {v.address, T, 1, {C * T, 0}};
    g.c = {prod.address, T, 1, {K * T, 0}};
    gemm(dev, g);

    ConvParams pout = over_dst(base, d, prod.address, T);
    if (bias) {
      pout.bias = bias->address, pout.bias_stride = bias->strides[0];
      pout.flags = VKML_CONV_HAS_BIAS;
    }
    const MemRange b = bias ? span_of(*bias) : MemRange{};
    run_stage(dev, c, m, "output", pout, {{prod.address, p_bytes}, b}, {span_of(d)});
  }
  return true;
}

bool winograd_weight_grad(Device& dev, const ConvDesc& c, const TensorDesc& x,
                          const TensorDesc& gy, const TensorDesc& gw) {
  if (!geometry_fits(c, false) || !wanted(dev, c, "weight")) return false;
  const int64_t C = c.in_channels, K = c.out_channels;
  const int m = tile_edge();
  const int64_t xi = transformed(m), tiles = plane_tiles(c.out_size, m);
  const uint64_t per_sample = static_cast<uint64_t>(xi * (C + K) * tiles) * 4;
  const int64_t nb_max = samples_per_chunk(dev, c, per_sample, std::max(C, K) * tiles);
  const uint64_t du_bytes = static_cast<uint64_t>(xi * K * C) * 4;
  if (nb_max == 0 || du_bytes > workspace(dev.caps())) return false;
  const ConvParams base = wino_params(C, K, c.in_size, c.out_size, c.padding);
  const uint64_t v_bytes = static_cast<uint64_t>(xi * C * tiles * nb_max) * 4;
  const uint64_t y_bytes = static_cast<uint64_t>(xi * K * tiles * nb_max) * 4;
  Scratch v(dev, v_bytes), yt(dev, y_bytes), du(dev, du_bytes);
  for (int64_t n0 = 0; n0 < c.batch; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, c.batch - n0), T = nb * tiles;
    const TensorDesc xs = samples(x, n0, nb), gys = samples(gy, n0, nb);
    transform_input(dev, c, m, base, xs, T, v.address, v_bytes);
    run_stage(dev, c, m, "dy", over_dst(base, gys, yt.address, T), {span_of(gys)},
              {{yt.address, y_bytes}});

    // dU[xi] (K x C) (+)= Y'[xi] (K x T) * V[xi]^T (T x C).
    GemmDesc g;
    g.m = K, g.n = C, g.k = T;
    g.batch[0] = xi, g.batch[1] = 1;
    g.in_dtype = g.out_dtype = DType::kF32;
    g.a = {yt.address, T, 1, {K * T, 0}};
    g.b = {v.address, 1, T, {C * T, 0}};
    g.c = {du.address, C, 1, {K * C, 0}};
    if (n0 > 0) g.c_in = g.c, g.beta = 1.0;
    gemm(dev, g);
  }
  ConvParams p = base;
  p.w = gw.address;
  set_strides4(p.w_strides, gw);
  p.col = du.address;
  p.work = static_cast<uint32_t>(K * C);
  run_stage(dev, c, m, "wgrad", p, {{du.address, du_bytes}}, {span_of(gw)});
  return true;
}

}  // namespace vkml::ops
