// fp32 products on fp16 tensor cores: each operand line (a row of A, a column of B) is scaled by
// a power of two and split into fp16 hi and lo parts (gemm_split_f16.comp), then
//   C = A_hi B_hi + 2^-11 [A_hi | A_lo] [B_lo ; B_hi]
// (the correction's hi copies hold 0 where an element is not finite, so inf * 0 makes no NaN)
// as two cooperative-matrix GEMMs with fp32 accumulation (the second of depth 2K, adding the
// first through beta), and the scales are undone (gemm_split_scale.comp). Three fp16 products per
// fp32 one pay where the fp16 tensor cores run several times faster than fp32 arithmetic.
// The tensor cores' fp32 accumulation loses more than fp32 arithmetic over long chains, so the
// main product runs in K slices (each added to C in fp32 by the epilogue) unless the caller
// relaxed fp32 precision (torch's "high"/"medium", CUDA's TF32 switch). Where it is taken by
// default is gemm_policy.cc's rule. VKML_GEMM_F32_SPLIT=0|1 turns it off or on for any size on
// GPUs; =force on any device (tests on CPU devices).
// Thresholds and measurements: docs/design/gemm.md#f32-split
#include <algorithm>
#include <string>

#include "ops/gemm/gemm_f32_split.h"
#include "ops/gemm/gemm_policy.h"
#include "ops/launch.h"
#include "vkml/config.h"
#include "vkml/gemm.h"

namespace vkml::ops {

namespace {

struct SplitPush {
  uint64_t src, dst, exponents, amax_bits;
  int64_t lines, length, line_stride, elem_stride, ld, hi_off, hi2_off, lo_off, padded;
};

struct ScalePush {
  uint64_t c, ea, eb, c_in, bias;
  int64_t m, n, row_stride, col_stride, c_in_row, c_in_col, bias_row, bias_col;
  float alpha, beta;
  uint32_t flags;  // 1: beta * C_in, 2: bias
};

// Workgroups along x for `wanted`; the shaders loop (grid stride) over the rest.
uint32_t groups(int64_t wanted) {
  return static_cast<uint32_t>(std::clamp<int64_t>(wanted, 1, kMaxGroupsX));
}

// Splits the `lines` rows of `src` (fp32, `length` elements each; a column of B is a row of its
// transposed view) into dst (fp16, line o at o * 3 * padded, its three parts at the offsets,
// each `padded` long: the elements, then zeros).
void split_lines(Device& dev, const MatrixView& src, int64_t lines, int64_t length, int64_t padded,
                 uint64_t dst, int64_t hi_off, int64_t hi2_off, int64_t lo_off,
                 uint64_t exponents) {
  const int64_t line_stride = src.row_stride, elem_stride = src.col_stride;
  // Neighbouring lines adjacent in memory (a row-major B's columns): 32 lines per workgroup.
  const uint32_t outer = (line_stride == 1 && elem_stride != 1) ? 32u : 1u;
  const int64_t line_groups = (lines + outer - 1) / outer;
  // Under 128 such workgroups (a B of fewer than 4,096 columns) most of a GPU would idle: the
  // largest magnitudes in chunks over many workgroups, then blocks of 32 lines x 64 elements on
  // their own workgroups (gemm_split_f16 MODE 1 and 2). Above it the one-pass kernel.
  const int64_t chunks = (length + 255) / 256;  // gemm_split_f16.comp's CHUNK (MODE 1: amax)
  const bool two_pass = outer == 32 && line_groups < 128 && chunks <= 65535;
  const uint64_t amax_bits = two_pass ? dev.allocate(static_cast<uint64_t>(lines) * 4) : 0;
  SplitPush p{src.address, dst,    exponents, amax_bits, lines,  length, line_stride,
              elem_stride, 3 * padded, hi_off, hi2_off, lo_off, padded};
  const int64_t one[] = {1, 1};
  const MemRange src_range = matrix_range(src, DType::kF32, lines, length, one);
  const MemRange amax_range{amax_bits, static_cast<uint64_t>(lines) * 4};
  const MemRange writes[] = {{dst, static_cast<uint64_t>(lines * 3 * padded * 2)},
                             {exponents, static_cast<uint64_t>(lines * 4)}};
  const uint64_t cost = static_cast<uint64_t>(lines * length);
  if (!two_pass) {
    const uint32_t spec[] = {256, outer, 0};
    dev.stream().dispatch(dev.pipeline("gemm_split_f16", spec),
                          groups(line_groups), 1, 1, &p, sizeof(p), {&src_range, 1},
                          writes, cost);
    return;
  }
  dev.stream().fill(amax_bits, amax_range.bytes, 0);
  const uint32_t amax_spec[] = {256, outer, 1};
  dev.stream().dispatch(dev.pipeline("gemm_split_f16", amax_spec),
                        static_cast<uint32_t>(line_groups), static_cast<uint32_t>(chunks), 1, &p,
                        sizeof(p), {&src_range, 1}, {&amax_range, 1}, cost);
  const uint32_t split_spec[] = {256, outer, 2};
  const MemRange reads[] = {src_range, amax_range};
  dev.stream().dispatch(dev.pipeline("gemm_split_f16", split_spec),
                        groups(line_groups * ((padded + 63) / 64)), 1, 1, &p, sizeof(p),
                        reads, writes, cost);
  dev.free(amax_bits);
}

// Main-product K slice under fp32's full precision: short enough that the sliced error stays
// at or below the fp32 kernels' at a modest cost in speed.
// Errors and costs per slice: docs/design/gemm.md#f32-split-slices
constexpr int64_t kFullPrecisionSlice = 1024;

// Output blocks of 128x128, the tensor-core kernel's tile.
int64_t output_blocks(const GemmDesc& d) { return ((d.m + 127) / 128) * ((d.n + 127) / 128); }

// Below this many output blocks the products run as split-K GEMMs (slices bounded for precision
// and sized for about split_k_target() workgroups) instead of one GEMM per slice, whose few
// workgroups would leave most of the GPU idle. VKML_GEMM_F32_SPLIT_FEW_BLOCKS=N sets both to N.
// Measurements: docs/design/gemm.md#f32-split-few-blocks
int64_t few_blocks_or(int64_t fallback) {
  const int64_t v = config().gemm_f32_split_few_blocks;
  return v == kConfigAuto ? fallback : v;
}
int64_t few_blocks() { return few_blocks_or(512); }
int64_t split_k_target() { return few_blocks_or(1024); }

// Depth of the split-K slices that give a product of `blocks` output blocks about split_k_target()
// workgroups (each at least 1024 deep), and no deeper than `bound` (0: none); 0 if one is enough.
int64_t slice_for_parallelism(int64_t blocks, int64_t k, int64_t bound) {
  const int64_t splits = (split_k_target() + blocks - 1) / std::max<int64_t>(blocks, 1);
  int64_t depth = std::max<int64_t>((k + splits - 1) / splits, 1024);
  if (bound > 0) depth = std::min(depth, bound);
  return depth >= k ? 0 : depth;
}

// GemmDesc::max_k_slice for a product of `blocks` output blocks (slice_for_parallelism), or 0
// where one slice is enough or the planner would not take the bound (not every kernel splits K)
// within its split-K scratch (split_k_scratch_bytes).
int64_t split_k_slice(Device& dev, GemmDesc d, int64_t blocks, int64_t bound) {
  d.max_k_slice = slice_for_parallelism(blocks, d.k, bound);
  if (d.max_k_slice == 0) return 0;
  const GemmPlan plan = choose_gemm_plan(d, dev.caps());
  const int64_t depth = plan.split_k > 1 ? plan.k_chunk : d.k;
  const bool fits =
      depth <= d.max_k_slice && plan.split_k * d.m * d.n * 4 <= split_k_scratch_bytes();
  return fits ? d.max_k_slice : 0;
}

// VKML_GEMM_F32_SPLIT_KCHUNK, or where it is auto: none under relaxed fp32 precision, else
// kFullPrecisionSlice.
int64_t main_slice(const GemmDesc& d) {
  const int64_t v = config().gemm_f32_split_kchunk;
  if (v != kConfigAuto) return v;
  return d.fp32_relaxed ? 0 : kFullPrecisionSlice;
}

}  // namespace

bool gemm_f32_split_wanted(const GemmDesc& d, const DeviceCaps& caps) {
  const std::string& setting = config().gemm_f32_split;
  const bool forced = setting == "force";  // any device: tests on CPU devices
  if (setting == "0") return false;
  if (d.in_dtype != DType::kF32 || d.out_dtype != DType::kF32) return false;
  if (d.batch[0] * d.batch[1] != 1) return false;
  // The final pass reads C_in and bias after the products have written C: no in-place addmm_
  // (validate_gemm leaves exact aliasing, at C's own address, or none).
  if ((d.beta != 0.0 && d.c_in.address == d.c.address) || d.bias.address == d.c.address) {
    return false;
  }
  if (forced) return true;
  if (!gemm_f32_split_supported(caps)) return false;
  return setting == "1" || gemm_f32_split_by_default(caps, d);
}

void gemm_f32_split(Device& dev, const GemmDesc& d) {
  const int64_t m = d.m, n = d.n;
  // K padded with zeros to whole 16-byte units of halves, so that the GEMMs below read aligned
  // rows of whole vectors (an odd K, such as GPT-2's vocabulary of 50257, runs far slower).
  const int64_t k = (d.k + 7) / 8 * 8;
  // Operands as lines of 3K halves: A by rows [hi | hi2 | lo], B by columns [hi | lo | hi2]
  // (k contiguous), so that the correction [A_hi2 | A_lo] x [B_lo ; B_hi2] pairs hi with lo.
  const uint64_t a_cat = dev.allocate(static_cast<uint64_t>(m * 3 * k * 2));
  const uint64_t b_cat = dev.allocate(static_cast<uint64_t>(n * 3 * k * 2));
  const uint64_t ea = dev.allocate(static_cast<uint64_t>(m * 4));
  const uint64_t eb = dev.allocate(static_cast<uint64_t>(n * 4));
  split_lines(dev, d.a, m, d.k, k, a_cat, 0, k, 2 * k, ea);
  split_lines(dev, d.b.transposed(), n, d.k, k, b_cat, 0, 2 * k, k, eb);

  GemmDesc main = d;  // C = A_hi B_hi (the caller's alpha, beta and bias come in the last pass)
  main.alpha = 1.0;
  main.beta = 0.0;
  main.c_in = main.bias = MatrixView{};
  main.in_dtype = DType::kF16;
  main.k = k;
  main.a = MatrixView{a_cat, 3 * k, 1, {0, 0}};
  main.b = MatrixView{b_cat, 1, 3 * k, {0, 0}};
  // The main product in K slices (main_slice; 0: all of K at once; VKML_GEMM_F32_SPLIT_KCHUNK=N
  // overrides) summed in fp32: one GEMM per slice, each added to C by the epilogue, or (below
  // few_blocks() output blocks) split-K GEMMs whose slices also fill the GPU, over ranges of K
  // whose slices' partials fit the split-K scratch (one range unless K is very long).
  const int64_t slice = main_slice(d);
  const int64_t blocks = output_blocks(d);
  const bool few = blocks < few_blocks();
  int64_t range = slice > 0 ? slice : k;  // K per GEMM
  if (few) {
    GemmDesc whole = main;
    const int64_t fitting_slices = std::max<int64_t>(split_k_scratch_bytes() / (m * n * 4), 1);
    whole.k = slice > 0 ? std::min(k, fitting_slices * slice) : k;
    main.max_k_slice = split_k_slice(dev, whole, blocks, slice);
    if (main.max_k_slice > 0) range = whole.k;
  }
  for (int64_t k0 = 0; k0 < k; k0 += range) {
    GemmDesc part = main;
    part.k = std::min(k - k0, range);
    part.a.address += static_cast<uint64_t>(k0) * 2;
    part.b.address += static_cast<uint64_t>(k0) * 2;
    if (k0 > 0) {
      part.beta = 1.0;
      part.c_in = d.c;
    }
    gemm(dev, part);
  }
  GemmDesc corr = main;  // C += 2^-11 [A_hi2 | A_lo] [B_lo ; B_hi2]
  corr.k = 2 * k;
  corr.a = MatrixView{a_cat + static_cast<uint64_t>(k) * 2, 3 * k, 1, {0, 0}};
  corr.b = MatrixView{b_cat + static_cast<uint64_t>(k) * 2, 1, 3 * k, {0, 0}};
  corr.alpha = 1.0 / 2048.0;
  corr.beta = 1.0;
  corr.c_in = d.c;
  // Its accumulation needs no bound (2^-11 below C): slices for parallelism only.
  corr.max_k_slice = few ? split_k_slice(dev, corr, blocks, 0) : 0;
  gemm(dev, corr);

  const uint32_t spec[] = {256};
  const Pipeline& scale = dev.pipeline("gemm_split_scale", spec);
  const bool use_c_in = d.beta != 0.0, use_bias = d.bias.address != 0;
  const ScalePush p{.c = d.c.address,
                    .ea = ea,
                    .eb = eb,
                    .c_in = use_c_in ? d.c_in.address : 0,
                    .bias = d.bias.address,
                    .m = m,
                    .n = n,
                    .row_stride = d.c.row_stride,
                    .col_stride = d.c.col_stride,
                    .c_in_row = d.c_in.row_stride,
                    .c_in_col = d.c_in.col_stride,
                    .bias_row = d.bias.row_stride,
                    .bias_col = d.bias.col_stride,
                    .alpha = static_cast<float>(d.alpha),
                    .beta = static_cast<float>(d.beta),
                    .flags = (use_c_in ? 1u : 0u) | (use_bias ? 2u : 0u)};
  const MemRange c_range = matrix_range(d.c, DType::kF32, m, n, d.batch);
  MemRange reads[5] = {c_range, {ea, static_cast<uint64_t>(m * 4)},
                       {eb, static_cast<uint64_t>(n * 4)}};
  size_t nreads = 3;
  if (use_c_in) reads[nreads++] = matrix_range(d.c_in, DType::kF32, m, n, d.batch);
  if (use_bias) reads[nreads++] = matrix_range(d.bias, DType::kF32, m, n, d.batch);
  const uint32_t rows = static_cast<uint32_t>(std::min<int64_t>(m, 65535));
  dev.stream().dispatch(scale, groups((n + 255) / 256), rows, 1, &p, sizeof(p),
                        {reads, nreads}, {&c_range, 1}, static_cast<uint64_t>(m * n));
  for (uint64_t buffer : {a_cat, b_cat, ea, eb}) dev.free(buffer);  // reuse waits (hazards)
}

}  // namespace vkml::ops
