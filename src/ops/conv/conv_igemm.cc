// Implicit-GEMM convolution: gemm_simt.comp's SIMT tiles (or conv_igemm_coopmat.comp's
// cooperative-matrix ones for fp16/bf16) with B gathered straight from the source tensor and C
// stored into the destination, so no im2col matrix is written or read, and every sample's
// positions form one GEMM (so that a 4x4 output does not fill a 64-wide tile alone).
#include "ops/conv/conv_igemm.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ops/conv/conv_igemm_params.h"
#include "ops/conv/conv_params.h"
#include "ops/conv/conv_policy.h"
#include "ops/gemm/gemm_policy.h"
#include "vkml/config.h"
#include "vkml/errors.h"
#include "vkml/gemm.h"
#include "vkml/ops.h"

namespace vkml::ops {

namespace {

constexpr int64_t kOffsetLimit = int64_t{1} << 31;
constexpr int64_t kTapLimit = int64_t{1} << 29;  // conv_igemm.glsl's CONV_NOWHERE margin

// Block BM x BN x BK, warp tile WM x WN, thread tile TM x TN (named accumulators: 4 or 8).
struct IgemmTile {
  uint32_t bm, bn, bk, wm, wn, tm, tn;
  uint32_t threads() const { return (bm / tm) * (bn / tn); }
  uint32_t shared_bytes() const { return 2 * bk * ((bm / 4 + 1) + bn / 4) * 16; }
};
// gemm_plan's SIMT tiles: the large one while it still gives enough blocks, else the small one.
constexpr IgemmTile kLarge{128, 64, 16, 32, 64, 8, 8};
constexpr IgemmTile kSmall{64, 64, 16, 32, 32, 8, 4};

bool tile_ok(const IgemmTile& t, const DeviceCaps& caps) {
  return t.threads() <= caps.max_workgroup_invocations && t.shared_bytes() <= caps.max_shared_memory;
}

// The spatial strides of t as three dims (leading ones 0), as the shader sees them.
void spatial_strides(const TensorDesc& t, int spatial, int64_t out[3]) {
  for (int i = 0; i < 3; ++i) out[i] = 0;
  for (int i = 0; i < spatial; ++i) out[3 - spatial + i] = t.strides[2 + i];
}

// The kernels of a dtype: f32, f16, bf16 (fp32 accumulation).
std::string shader(const ConvDesc& c) { return "conv_igemm_" + std::string(dtype_name(c.dtype)); }
std::string wgrad_shader(const ConvDesc& c) {
  return "conv_igemm_wgrad_" + std::string(dtype_name(c.dtype));
}

bool fits_i32(int64_t v) { return v >= 0 && v < kOffsetLimit; }

// The large tile while it still gives enough blocks to fill the device and m fills more than
// the small one's rows (a 3-channel input gradient would leave 125 of 128 rows idle), else the
// small one.
IgemmTile choose_tile(const DeviceCaps& caps, int64_t m, int64_t n, int64_t groups) {
  const int64_t min_blocks = gemm_min_blocks(caps);
  const int64_t large = ((m + kLarge.bm - 1) / kLarge.bm) * ((n + kLarge.bn - 1) / kLarge.bn);
  if (!tile_ok(kSmall, caps)) return kLarge;  // igemm_fits checked that one of them fits
  const bool use_large =
      tile_ok(kLarge, caps) && m > kSmall.bm && large * groups >= min_blocks;
  return use_large ? kLarge : kSmall;
}

uint32_t grid(int64_t n, uint32_t limit) {
  return static_cast<uint32_t>(std::clamp<int64_t>(n, 1, limit));
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Product of the first `spatial` sizes: the pass's positions, or the kernel's taps.
int64_t volume(const int64_t* sizes, int spatial) {
  int64_t v = 1;
  for (int i = 0; i < spatial; ++i) v *= sizes[i];
  return v;
}

// Cooperative-matrix tiles (conv_igemmc_*): BM x BN over SUBGROUPS subgroups in a grid, each
// owning WM x WN blocks of 16x16.
struct CoopTile {
  uint32_t bm, bn, subgroups, wm, wn;
  uint32_t bk = 0;  // 0: coop_bk's default for the dtype
};
constexpr CoopTile kCoopLarge{128, 128, 8, 4, 2};
constexpr CoopTile kCoopSmall{64, 64, 4, 2, 2};

std::string coop_shader(const ConvDesc& c, bool wgrad) {
  return std::string(wgrad ? "conv_igemmc_wgrad_" : "conv_igemmc_") +
         std::string(dtype_name(c.dtype));
}

uint32_t tile_bk(const CoopTile& t) { return t.bk ? t.bk : 32; }

// Whether a pass runs on cooperative matrices: fp16/bf16 wherever the device has 16x16x16 ones
// (VKML_CONV_COOPMAT=0 keeps the SIMT kernels).
bool coop_ok(Device& dev, const ConvDesc& c, bool wgrad) {
  if (!config().conv_coopmat) return false;
  if (c.dtype != DType::kF16 && c.dtype != DType::kBF16) return false;
  const DeviceCaps& caps = dev.caps();
  const uint32_t sg = caps.subgroup_size;
  if (sg != 16 && sg != 32 && sg != 64) return false;
  return coopmat_shape_ok(caps, c.dtype) && has_shader(coop_shader(c, wgrad));
}

// How the cooperative-matrix forward-style passes gather B (VKML_CONV_COOPMAT_B):
//   octets: channel octets of a channels-innermost source (B_CHANNEL_OCTETS), where the group's
//           channels are a multiple of 8; auto's choice there;
//   kn:     [k][n] staging, per-k address work shared by 8 columns (B_KROWS); auto's choice
//           elsewhere. Measurements: docs/design/conv.md#coopmat-gather
enum class CoopGather : uint8_t { kOctets, kRows };

CoopGather coop_gather(int64_t group_channels) {
  const std::string& mode = config().conv_coopmat_b;
  return mode == "kn" || group_channels % 8 != 0 ? CoopGather::kRows : CoopGather::kOctets;
}

// K cut into up to `want` slices of whole K steps: returns the slices (1: none) and sets
// *k_chunk, each slice's length.
int64_t k_slices(int64_t k, int64_t want, uint32_t tile_k, int64_t* k_chunk) {
  *k_chunk = k;
  if (want <= 1 || k <= tile_k) return 1;
  *k_chunk = ceil_div(ceil_div(k, want), tile_k) * tile_k;
  return ceil_div(k, *k_chunk);
}

// Whether t's channels are innermost with every octet of 8 channels 16-byte aligned.
bool channels_innermost(const TensorDesc& t) {
  if (t.strides[1] != 1 || t.address % 16 != 0) return false;
  for (size_t i = 0; i < t.strides.size(); ++i) {
    if (i != 1 && t.strides[i] % 8 != 0) return false;
  }
  return true;
}

// Channel octets: the source with its channels innermost (transposed into `keep` unless it is
// already), and A[g][m][(channel, tap)] re-laid as [g][m][tap][channel] into `a_keep`.
void to_channel_octets(Device& dev, const ConvDesc& c, IgemmPass& pass, TensorDesc& src,
                       std::unique_ptr<Scratch>& keep, std::unique_ptr<Scratch>& a_keep) {
  const size_t es = dtype_size(c.dtype);
  src = *pass.src;
  if (!channels_innermost(src)) {
    TensorDesc t = *pass.src;
    keep = std::make_unique<Scratch>(dev, static_cast<uint64_t>(t.numel()) * es);
    t.address = keep->address;
    int64_t s = t.sizes[1];
    t.strides[1] = 1;
    for (int i = static_cast<int>(t.sizes.size()) - 1; i >= 2; --i) {
      t.strides[i] = s;
      s *= t.sizes[i];
    }
    t.strides[0] = s;
    copy(dev, t, *pass.src);
    src = t;
  }
  pass.src = &src;
  const int64_t kv = volume(c.kernel, c.spatial), ch = pass.src_group_channels;
  TensorDesc a;  // A's elements in the new order: [group][m][tap][channel]
  a.address = pass.a.address;
  a.dtype = c.dtype;
  a.sizes = {c.groups, pass.m, kv, ch};
  a.strides = {pass.a.batch_stride[0], pass.a.row_stride, pass.a.col_stride,
               kv * pass.a.col_stride};
  a_keep = std::make_unique<Scratch>(dev, static_cast<uint64_t>(a.numel()) * es);
  TensorDesc relaid = a;
  relaid.address = a_keep->address;
  relaid.strides = {pass.m * kv * ch, kv * ch, ch, 1};
  copy(dev, relaid, a);
  pass.a.address = a_keep->address;
  pass.a.row_stride = kv * ch, pass.a.col_stride = 1, pass.a.batch_stride[0] = pass.m * kv * ch;
}

bool coop_tile_fits(const CoopTile& t, const DeviceCaps& caps, bool krows) {
  const uint32_t threads = t.subgroups * caps.subgroup_size, bk = tile_bk(t), octets = bk / 8;
  if (threads > caps.max_workgroup_invocations) return false;
  if ((t.bm * octets) % threads != 0 || (t.bn * octets) % threads != 0) return false;
  if (krows && threads % (t.bn / 8) != 0) return false;
  const uint32_t b_tile = krows ? bk * (t.bn / 8 + 1) : t.bn * (octets + 1);
  const uint32_t stage = t.bm * (octets + 1) + b_tile;  // 16-byte vectors, padded rows
  if (t.subgroups * 64 > 2 * stage) return false;  // the epilogue's scratch reuses the stages
  return 2 * stage * 16 <= caps.max_shared_memory;
}

// VKML_CONV_COOP_TILE=BMxBNxSUBGROUPSxWMxWN[xBK], for tile sweeps: the tile every
// cooperative-matrix pass takes where it fits; false when unset.
bool coop_tile_override(CoopTile* out) {
  const std::vector<uint32_t>& v = config().conv_coop_tile;
  if (v.empty()) return false;
  const CoopTile t{v[0], v[1], v[2], v[3], v[4], v.size() > 5 ? v[5] : 0u};
  // Whole 16-deep k blocks; subgroups form a grid of (BN / (16 WN)) columns, each owning
  // WM x WN blocks of 16x16.
  const bool grid_ok = t.bk % 16 == 0 && t.wn && t.bn % (16 * t.wn) == 0 && t.subgroups &&
                       t.subgroups % (t.bn / (16 * t.wn)) == 0 &&
                       t.bm == t.subgroups / (t.bn / (16 * t.wn)) * t.wm * 16;
  if (!grid_ok) {
    std::string text;
    for (uint32_t x : v) text += (text.empty() ? "" : "x") + std::to_string(x);
    throw InvalidArgument("vkml: VKML_CONV_COOP_TILE=" + text +
                          " is not a consistent BMxBNxSUBGROUPSxWMxWN[xBK] tile");
  }
  *out = t;
  return true;
}

// The large tile while it gives enough blocks to fill the device, else the small one; false
// when neither fits (the SIMT kernels take the pass).
bool choose_coop_tile(const DeviceCaps& caps, int64_t m, int64_t n, int64_t batches, bool krows,
                      CoopTile* out) {
  CoopTile forced{};
  if (coop_tile_override(&forced) && coop_tile_fits(forced, caps, krows)) {
    *out = forced;
    return true;
  }
  const int64_t large = ((m + 127) / 128) * ((n + 127) / 128) * batches;
  const bool large_ok = coop_tile_fits(kCoopLarge, caps, krows);
  if (large_ok && m > 64 && large >= 128) {
    *out = kCoopLarge;
    return true;
  }
  if (coop_tile_fits(kCoopSmall, caps, krows)) {
    *out = kCoopSmall;
    return true;
  }
  if (!large_ok) return false;
  *out = kCoopLarge;
  return true;
}

}  // namespace

bool conv_implicit_requested(Device& dev, const ConvDesc& c, ConvPass pass) {
  const std::string& mode = config().conv;
  if (mode == "implicit") return true;
  if (mode == "im2col") return false;
  return conv_implicit_by_default(dev.caps(), c, pass, coop_ok(dev, c, pass == ConvPass::kWeight));
}

bool igemm_fits(Device& dev, const ConvDesc& c, const IgemmPass& pass) {
  const DeviceCaps& caps = dev.caps();
  const bool dtype_ok = c.dtype == DType::kF32 || c.dtype == DType::kF16 || c.dtype == DType::kBF16;
  if (!dtype_ok || !has_shader(shader(c))) return false;
  if (!tile_ok(kLarge, caps) && !tile_ok(kSmall, caps)) return false;
  const TensorDesc &src = *pass.src, &dst = *pass.dst;
  for (const TensorDesc* t : {&src, &dst}) {
    for (int64_t s : t->strides) {
      if (s < 0) return false;
    }
  }
  // Offsets within one sample's group of channels are 32-bit in the gather.
  int64_t span = (pass.src_group_channels - 1) * src.strides[1];
  for (int i = 0; i < c.spatial; ++i) span += (pass.src_size[i] - 1) * src.strides[2 + i];
  if (!fits_i32(span) || !fits_i32(src.strides[1])) return false;
  for (int i = 0; i < c.spatial; ++i) {
    if (!fits_i32(src.strides[2 + i]) || !fits_i32(dst.strides[2 + i])) return false;
    if (std::abs(pass.kmul[i]) * (c.kernel[i] - 1) >= kTapLimit) return false;
    if (std::abs(pass.add[i]) + (pass.pos_size[i] - 1) * pass.mul[i] >= kTapLimit) return false;
  }
  const int64_t positions = volume(pass.pos_size, c.spatial), kv = volume(c.kernel, c.spatial);
  if (positions >= kOffsetLimit || pass.src_group_channels * kv >= kOffsetLimit) return false;
  // gemm_simt's K loop keeps A's offsets within a tile in 32 bits.
  const int64_t a_span =
      (kLarge.bm * std::abs(pass.a.row_stride) + kLarge.bk * std::abs(pass.a.col_stride)) *
      static_cast<int64_t>(dtype_size(c.dtype));
  return a_span < kOffsetLimit;
}

namespace {

// The pass's geometry as the shader reads it.
ConvGemmParams conv_gemm_params(const ConvDesc& c, const IgemmPass& pass) {
  const TensorDesc &src = *pass.src, &dst = *pass.dst;
  ConvGemmParams p{};
  p.a = {pass.a.address, pass.a.row_stride, pass.a.col_stride, pass.a.batch_stride[0], 0};
  p.src = src.address;
  p.dst = dst.address;
  const int64_t positions = volume(pass.pos_size, c.spatial), kv = volume(c.kernel, c.spatial);
  p.m = pass.m;
  p.n = c.batch * positions;
  p.k = pass.src_group_channels * kv;
  p.src_n = src.strides[0];
  p.dst_n = dst.strides[0];
  p.dst_c = dst.strides[1];
  p.src_c = static_cast<int32_t>(src.strides[1]);
  int64_t src_sp[3], dst_sp[3];
  spatial_strides(src, c.spatial, src_sp);
  spatial_strides(dst, c.spatial, dst_sp);
  const int lead = 3 - c.spatial;
  for (int i = 0; i < 3; ++i) {
    const int d = i - lead;  // the convolution's dim, or < 0 for a leading unit dim
    p.src_sp[i] = static_cast<int32_t>(src_sp[i]);
    p.dst_sp[i] = static_cast<int32_t>(dst_sp[i]);
    p.src_size[i] = d < 0 ? 1 : static_cast<int32_t>(pass.src_size[d]);
    p.pos_size[i] = d < 0 ? 1 : static_cast<int32_t>(pass.pos_size[d]);
    p.kernel[i] = d < 0 ? 1 : static_cast<int32_t>(c.kernel[d]);
    p.mul[i] = d < 0 ? 1 : static_cast<int32_t>(pass.mul[d]);
    p.kmul[i] = d < 0 ? 1 : static_cast<int32_t>(pass.kmul[d]);
    p.add[i] = d < 0 ? 0 : static_cast<int32_t>(pass.add[d]);
  }
  p.groups = static_cast<int32_t>(c.groups);
  p.src_group_channels = static_cast<int32_t>(pass.src_group_channels);
  if (pass.bias) {
    p.bias = pass.bias->address;
    p.bias_stride = pass.bias->strides[0];
    p.flags = VKML_CONV_HAS_BIAS;
  }
  return p;
}

}  // namespace

void igemm_run(Device& dev, const ConvDesc& c, const IgemmPass& given) {
  IgemmPass pass = given;
  TensorDesc octet_src;
  std::unique_ptr<Scratch> src_keep, a_keep;
  const DeviceCaps& caps = dev.caps();
  // Channel octets where asked for and the pass is not empty (the channels-innermost copy's
  // offsets within a sample stay 32-bit like the source's); else [k][n] staging.
  const int64_t sample_elems = pass.src->sizes[1] * volume(pass.src_size, c.spatial);
  const bool octets_wanted = coop_gather(pass.src_group_channels) == CoopGather::kOctets &&
                             pass.m > 0 && c.batch > 0 && volume(c.kernel, c.spatial) > 0 &&
                             volume(pass.pos_size, c.spatial) > 0 && fits_i32(sample_elems);
  CoopTile ct{};
  const bool coop = coop_ok(dev, c, false) &&
                    choose_coop_tile(caps, pass.m, c.batch * volume(pass.pos_size, c.spatial),
                                     c.groups, !octets_wanted, &ct);
  const bool octets = coop && octets_wanted, krows = coop && !octets_wanted;
  if (octets) to_channel_octets(dev, c, pass, octet_src, src_keep, a_keep);
  const TensorDesc &src = *pass.src, &dst = *pass.dst;
  ConvGemmParams p = conv_gemm_params(c, pass);
  uint32_t tile_m = 0, tile_n = 0;
  const Pipeline* pipe = nullptr;
  if (coop) {
    // 16-byte weight loads when k is contiguous and every octet starts 16-byte aligned.
    const MatrixView& a = pass.a;
    const bool a_vec = a.col_stride == 1 && a.row_stride % 8 == 0 && a.batch_stride[0] % 8 == 0 &&
                       a.address % 16 == 0;
    const uint32_t spec[] = {ct.subgroups * caps.subgroup_size, ct.bm, ct.bn, tile_bk(ct), ct.wm,
                             ct.wn, ct.subgroups, a_vec ? 1u : 0u, krows ? 1u : 0u,
                             octets ? 1u : 0u};
    pipe = &dev.pipeline(coop_shader(c, false), spec);
    tile_m = ct.bm, tile_n = ct.bn;
  } else {
    const IgemmTile t = choose_tile(caps, p.m, p.n, c.groups);
    // A walked along k by neighbouring threads when k is its contiguous dim (gemm_plan's rule).
    const bool a_k_fast = pass.a.col_stride == 1 || pass.a.row_stride != 1;
    std::vector<uint32_t> spec = {t.threads(), t.bm, t.bn, t.bk, t.wm, t.wn, t.tm, t.tn,
                                  a_k_fast ? 1u : 0u, 1u, 0u, 0u};
    // fp32 weights contiguous along k and 16-byte aligned: read in 4x4 blocks (gemm_simt.comp).
    const bool a_blocks = c.dtype == DType::kF32 &&
                          simt_a_blocks_ok(pass.a, p.m, p.k, t.bm * t.bk / 4 / t.threads());
    for (uint32_t x : simt_extra_spec(a_blocks ? 1u : 0u)) spec.push_back(x);
    pipe = &dev.pipeline(shader(c), spec);
    tile_m = t.bm, tile_n = t.bn;
  }
  const uint64_t addr = dev.stream().params(&p, sizeof(p));
  const auto& maxg = caps.max_workgroup_count;
  const int64_t per_group[] = {c.groups, 1};
  MemRange reads[3] = {{src.address, src.span_bytes()}};
  size_t nreads = 1;
  if (p.k > 0) reads[nreads++] = matrix_range(pass.a, c.dtype, p.m, p.k, per_group);
  if (pass.bias) reads[nreads++] = {pass.bias->address, pass.bias->span_bytes()};
  const MemRange out = {dst.address, dst.span_bytes()};
  const uint64_t cost = static_cast<uint64_t>(c.groups * p.m * p.n * std::max<int64_t>(p.k, 1));
  dev.stream().dispatch(*pipe, grid(ceil_div(p.n, tile_n), maxg[0]),
                        grid(ceil_div(p.m, tile_m), maxg[1]), grid(c.groups, maxg[2]), &addr,
                        sizeof(addr), {reads, nreads}, {&out, 1}, cost);
}

bool igemm_wgrad_fits(Device& dev, const ConvDesc& c, const IgemmPass& pass) {
  if (!igemm_fits(dev, c, pass) || !has_shader(wgrad_shader(c))) return false;
  const int64_t positions = volume(pass.pos_size, c.spatial);
  int64_t dy_span = 0;
  for (int i = 0; i < c.spatial; ++i) dy_span += (pass.pos_size[i] - 1) * pass.dst->strides[2 + i];
  // k = (sample, position) and the output gradient's spatial offsets are 32-bit in the shader.
  return c.batch * positions < kOffsetLimit && fits_i32(dy_span);
}

void igemm_wgrad_run(Device& dev, const ConvDesc& c, const IgemmPass& pass, const TensorDesc& gw,
                     int64_t gw_k) {
  const DeviceCaps& caps = dev.caps();
  const ConvGemmParams q = conv_gemm_params(c, pass);
  const int64_t kv = volume(c.kernel, c.spatial);
  GemmParams g{};
  g.c = {gw.address, gw.strides[0], gw_k, pass.m * gw.strides[0], 0};
  g.m = pass.m;
  g.n = pass.src_group_channels * kv;
  g.k = q.n;  // (sample, position) pairs
  g.batch0 = c.groups;
  g.batch1 = 1;
  g.alpha = 1.0f, g.alpha_f64 = 1.0;
  const IgemmTile t = choose_tile(caps, g.m, g.n, c.groups);
  CoopTile ct{};
  const bool coop = coop_ok(dev, c, true) && choose_coop_tile(caps, g.m, g.n, c.groups, false, &ct);
  const uint32_t tile_m = coop ? ct.bm : t.bm, tile_n = coop ? ct.bn : t.bn;
  const uint32_t tile_k = coop ? tile_bk(ct) : t.bk;
  // K is batch x positions, long beside a weight-sized output: split it as gemm_plan does.
  const int64_t blocks = ceil_div(g.m, tile_m) * ceil_div(g.n, tile_n) * c.groups;
  const int64_t target = conv_wgrad_split_target(caps);
  int64_t splits = 1;
  if (blocks < target && g.k >= 1024) {
    // Up to 128 slices: a 7x7 stem's gradient has 3 blocks of output beside a K of 400k.
    splits = std::min<int64_t>({target / blocks, g.k / 512, 128});
    while (splits > 1 && splits * c.groups * g.m * g.n * 4 > (256ll << 20)) splits /= 2;  // fp32
  }
  splits = k_slices(g.k, splits, tile_k, &g.k_chunk);
  g.splits = static_cast<uint32_t>(splits);
  const uint64_t partial_bytes =
      splits > 1 ? static_cast<uint64_t>(splits * c.groups * g.m * g.n) * 4 : 0;
  g.partial = partial_bytes ? dev.allocate(partial_bytes) : 0;

  // Neighbouring threads walk k in both tiles (the shader's single decode per step needs it).
  const uint32_t simt_spec[] = {t.threads(), t.bm, t.bn, t.bk, t.wm, t.wn, t.tm, t.tn,
                                1u, 0u, 0u, 0u};
  const uint32_t coop_spec[] = {ct.subgroups * caps.subgroup_size, ct.bm, ct.bn, tile_k, ct.wm,
                                ct.wn, ct.subgroups, 0u, 0u, 0u};
  const Pipeline& pipe = coop ? dev.pipeline(coop_shader(c, true), coop_spec)
                              : dev.pipeline(wgrad_shader(c), simt_spec);
  const uint64_t push[2] = {dev.stream().params(&g, sizeof(g)), dev.stream().params(&q, sizeof(q))};
  const MemRange reads[] = {{pass.src->address, pass.src->span_bytes()},
                            {pass.dst->address, pass.dst->span_bytes()}};
  const MemRange out = partial_bytes ? MemRange{g.partial, partial_bytes}
                                     : MemRange{gw.address, gw.span_bytes()};
  const auto& maxg = caps.max_workgroup_count;
  const uint64_t cost = static_cast<uint64_t>(c.groups * g.m * g.n * g.k);
  dev.stream().dispatch(pipe, grid(ceil_div(g.n, tile_n), maxg[0]),
                        grid(ceil_div(g.m, tile_m), maxg[1]),
                        grid(c.groups * splits, maxg[2]), push, sizeof(push), reads, {&out, 1},
                        cost);
  if (!partial_bytes) return;
  // The split-K slices summed in a fixed order by the gemm family's second pass.
  const uint64_t addr = dev.stream().params(&g, sizeof(g));
  const MemRange written = {gw.address, gw.span_bytes()};
  record_splitk_reduce(dev, c.dtype, addr, g.m, g.n, c.groups, {&out, 1}, written);
  dev.free(g.partial);  // later reuse is ordered after these dispatches by hazard tracking
}

}  // namespace vkml::ops
