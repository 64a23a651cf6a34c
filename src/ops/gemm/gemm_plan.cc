// Variant choice for the gemm family: a function of the descriptor, DeviceCaps, the settings and
// the set of shaders compiled into this build (tested without a GPU in test_gemm_plan.cc). The
// rules that differ per device class are in gemm_policy.cc.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "ops/gemm/gemm_policy.h"
#include "vkml/config.h"
#include "vkml/gemm.h"

namespace vkml::ops {

namespace {

// The same product with the roles of rows and columns swapped: C^T = B^T A^T.
GemmDesc transpose_problem(const GemmDesc& d) {
  GemmDesc t = d;
  t.m = d.n;
  t.n = d.m;
  t.a = d.b.transposed();
  t.b = d.a.transposed();
  t.c = d.c.transposed();
  t.c_in = d.c_in.transposed();
  t.bias = d.bias.transposed();
  return t;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct TileConfig {
  uint32_t bm, bn, bk, tm, tn;
  uint32_t threads() const { return (bm / tm) * (bn / tn); }
  // Two buffers of the A and B tiles, each with one padding column (the shader's worst case).
  uint32_t shared_bytes(size_t acc_size) const {
    return static_cast<uint32_t>(2 * bk * ((bm + 1) + (bn + 1)) * acc_size);
  }
};

// Largest first. The 16-deep 128x128 tile needs more than 32 KiB of shared memory.
constexpr TileConfig kTiles[] = {
    {128, 128, 16, 8, 8}, {128, 128, 8, 8, 8},
    {64, 64, 16, 4, 4},   {64, 64, 8, 4, 4},  // f64 within 32 KiB
    {32, 32, 16, 2, 2},
};

std::string dtype_pair(const GemmDesc& d) {
  return std::string(dtype_name(d.in_dtype)) + "_" + std::string(dtype_name(d.out_dtype));
}

uint32_t pow2_floor(int64_t v) {
  uint32_t p = 1;
  while (static_cast<int64_t>(p) * 2 <= v && p < (1u << 30)) p *= 2;
  return p;
}

GemmPlan gemv_plan(const GemmDesc& d) {
  GemmPlan plan;
  plan.kernel = GemmKernel::kGemv;
  plan.shader = "gemm_gemv_" + dtype_pair(d);
  plan.problem = d;
  const uint32_t threads = 256;
  // Column-major A with many rows: consecutive threads take consecutive rows (coalesced).
  bool row_fast = d.a.row_stride == 1 && d.a.col_stride != 1 && d.m >= 64;
  uint32_t lanes;
  if (row_fast) {
    lanes = 4;
  } else {
    // Enough lanes to keep every thread busy for ~16 steps of k; rows fill the rest.
    lanes = std::clamp<uint32_t>(pow2_floor(std::max<int64_t>(d.k / 16, 1)), 8, threads);
    // With few rows, the spare threads go to k.
    int64_t rows = std::clamp<int64_t>(d.m, 1, threads);
    uint32_t rows_pow2 = pow2_floor(rows) < rows ? pow2_floor(rows) * 2 : pow2_floor(rows);
    lanes = std::max(lanes, threads / rows_pow2);
  }
  plan.spec = {threads, lanes, row_fast ? 1u : 0u};
  plan.tile_m = threads / lanes;
  plan.tile_n = 1;
  plan.shared_bytes = threads * static_cast<uint32_t>(d.out_dtype == DType::kF64 ? 8 : 4);
  return plan;
}

// Cuts K into slices when the output alone has too few blocks to occupy the device, or when the
// caller bounds the slices' depth (GemmDesc::max_k_slice, whole K tiles of 32; always honoured).
void maybe_split_k(GemmPlan& plan, const DeviceCaps& caps) {
  const GemmDesc& d = plan.problem;
  const int64_t batches = d.batch[0] * d.batch[1];
  const int64_t blocks = ceil_div(d.m, plan.tile_m) * ceil_div(d.n, plan.tile_n) * batches;
  const int64_t target = gemm_split_k_target(caps, plan.kernel);
  const int64_t min_slice = gemm_split_k_min_slice(caps, plan.kernel);
  const int64_t max_slice = d.max_k_slice > 0 ? std::max<int64_t>(d.max_k_slice / 32 * 32, 32) : 0;
  const int64_t needed = max_slice > 0 ? ceil_div(d.k, max_slice) : 1;
  if (needed > 1) {
    plan.split_k = static_cast<uint32_t>(needed);
    plan.k_chunk = ceil_div(ceil_div(d.k, needed), 32) * 32;  // at most max_slice
    return;
  }
  if (blocks >= target || d.k < 1024) return;
  int64_t splits = std::min<int64_t>({target / blocks, d.k / min_slice, 32});
  const int64_t acc_size = d.out_dtype == DType::kF64 ? 8 : 4;
  const int64_t scratch = split_k_scratch_bytes();
  while (splits > 1 && splits * batches * d.m * d.n * acc_size > scratch) splits /= 2;
  if (splits < 2) return;
  plan.k_chunk = ceil_div(ceil_div(d.k, splits), 32) * 32;  // whole K tiles of every kernel
  plan.split_k = static_cast<uint32_t>(ceil_div(d.k, plan.k_chunk));
  if (plan.split_k < 2) plan.split_k = 1, plan.k_chunk = 0;
}

// 16-byte vectors of `per` elements along the contiguous dimension of an operand: that stride is
// 1, every other stride, the extent along it and the base address are multiples of `per`.
bool vec_operand(const MatrixView& v, int64_t rows, int64_t cols, int64_t per, bool* row_major) {
  auto mult8 = [per](int64_t x) { return x % per == 0; };
  if (v.address % 16 != 0 || !mult8(v.batch_stride[0]) || !mult8(v.batch_stride[1])) return false;
  if (v.col_stride == 1 && (rows == 1 || mult8(v.row_stride)) && mult8(cols)) {
    *row_major = true;
    return true;
  }
  if (v.row_stride == 1 && (cols == 1 || mult8(v.col_stride)) && mult8(rows)) {
    *row_major = false;
    return true;
  }
  return false;
}

// VKML_GEMM_PROBE=1|2|3 (diagnostic builds only; wrong results): the coopmat and SIMT kernels
// skip parts of their K loop (spec constant 12) to show which part bounds their rate.
uint32_t gemm_probe() {
#if VKML_DIAGNOSTICS
  return static_cast<uint32_t>(config().gemm_probe);
#else
  return 0;
#endif
}
void append_probe(std::vector<uint32_t>* spec) {
  if (gemm_probe()) spec->push_back(gemm_probe());
}

// VKML_GEMM_SIMT_KVEC: 0 keeps every k-contiguous operand on scalar loads; a (the default) reads
// A in 4x4 blocks and B only where a tile fits with them alone; ab reads B so wherever it applies.
enum class BlockSetting { kOff, kA, kAB };
BlockSetting block_setting() {
  const std::string& v = config().gemm_simt_kvec;
  return v == "0" ? BlockSetting::kOff : v == "ab" ? BlockSetting::kAB : BlockSetting::kA;
}

// A k-contiguous, 16-byte aligned operand (K % 4 == 0), in a tile giving each thread whole blocks.
bool blocks_fit(bool aligned_k_contiguous, uint32_t units_per_thread) {
  return aligned_k_contiguous && units_per_thread % 4 == 0;
}

}  // namespace

bool simt_a_blocks_ok(const MatrixView& a, int64_t m, int64_t k, uint32_t a_units_per_thread) {
  bool row_major = false;
  return block_setting() != BlockSetting::kOff &&
         blocks_fit(vec_operand(a, m, k, 4, &row_major) && row_major, a_units_per_thread);
}

int64_t split_k_scratch_bytes() { return config().gemm_splitk_scratch; }

std::vector<uint32_t> simt_extra_spec(uint32_t a_blocks, uint32_t b_blocks) {
  if (!gemm_probe() && !a_blocks && !b_blocks) return {};
  std::vector<uint32_t> extra = {gemm_probe(), a_blocks};
  if (b_blocks) extra.push_back(b_blocks);
  return extra;
}

namespace {

struct CoopTile {
  uint32_t bm, bn, subgroups, wm, wn, bk;
};

// VKML_GEMM_COOPMAT_TILE=BMxBNxSUBGROUPSxWMxWN[xBK] overrides the tile (for sweeps); one whose
// subgroup grid does not cover it is ignored.
bool coop_tile_override(CoopTile* t) {
  const std::vector<uint32_t>& v = config().gemm_coopmat_tile;
  if (v.empty()) return false;
  CoopTile o{v[0], v[1], v[2], v[3], v[4], v.size() > 5 ? v[5] : 32u};
  if (o.wm == 0 || o.wn == 0 || (o.bk != 16 && o.bk != 32)) return false;
  if (o.bm % (16 * o.wm) || o.bn % (16 * o.wn)) return false;
  if ((o.bm / (16 * o.wm)) * (o.bn / (16 * o.wn)) != o.subgroups) return false;
  *t = o;
  return true;
}

// An operand with unit stride along one dimension, read 8 halves at a time: as one 16-byte
// vector where vec_operand holds, else element by element (`scalar`), for example the 196-wide
// rows of a 1x1 convolution over 14x14 planes.
bool halves_operand(const MatrixView& v, int64_t rows, int64_t cols, bool* row_major,
                    bool* scalar) {
  *scalar = false;
  if (vec_operand(v, rows, cols, 8, row_major)) return true;
  // VKML_GEMM_UNALIGNED_VEC=0 sends such operands to the general kernel (for comparisons).
  if (!config().gemm_unaligned_vec || v.address % 2 != 0) return false;
  *scalar = true;
  *row_major = v.col_stride == 1;
  return v.col_stride == 1 || v.row_stride == 1;
}

// The vectorised cooperative-matrix kernel, when both operands have a unit stride.
bool coopmat_vec_plan(const GemmDesc& d, const DeviceCaps& caps, uint32_t sg, GemmPlan* plan) {
  bool a_k_fast = false, b_n_fast = false, a_scalar = false, b_scalar = false;
  if (!halves_operand(d.a, d.m, d.k, &a_k_fast, &a_scalar) ||
      !halves_operand(d.b, d.k, d.n, &b_n_fast, &b_scalar)) {
    return false;
  }
  const int64_t batches = d.batch[0] * d.batch[1];
  const bool big = ceil_div(d.m, 128) * ceil_div(d.n, 128) * batches >= 64;
  // 64x64 outputs per subgroup: more reuse of each fragment than 64x32.
  // Tiles and measurements: docs/design/gemm.md#coopmat-tiles
  CoopTile t = big ? CoopTile{128, 128, 4, 4, 4, 32} : CoopTile{64, 64, 4, 2, 2, 32};
  // A narrow side fills under half of a 128-wide block (a 1x1 convolution over 7x7 planes has
  // N = 49): 64-wide blocks there, though they run slower per block than 128x128.
  auto fill = [](int64_t x, int64_t b) { return double(x) / double(ceil_div(x, b) * b); };
  if (big && fill(d.n, 64) > 1.4 * fill(d.n, 128)) {
    t = CoopTile{128, 64, 4, 4, 2, 32};
  } else if (big && fill(d.m, 64) > 1.4 * fill(d.m, 128)) {
    t = CoopTile{64, 128, 4, 2, 4, 32};
  }
  coop_tile_override(&t);
  const uint32_t bk = t.bk, threads = t.subgroups * sg;
  const uint32_t a_rows = a_k_fast ? t.bm : bk, a_vecs = (a_k_fast ? bk : t.bm) / 8;
  const uint32_t b_rows = b_n_fast ? bk : t.bn, b_vecs = (b_n_fast ? t.bn : bk) / 8;
  if ((a_rows * a_vecs) % threads || (b_rows * b_vecs) % threads) return false;
  const uint32_t stage = a_rows * (a_vecs + 1) + b_rows * (b_vecs + 1);  // in 16-byte vectors
  if (t.subgroups * 64 > 2 * stage) return false;  // the epilogue scratch reuses the stages
  const uint32_t shared = 2 * stage * 16;
  if (shared > caps.max_shared_memory || threads > caps.max_workgroup_invocations) return false;
  plan->kernel = GemmKernel::kCoopMatVec;
  plan->shader = "gemm_coopmatv_" + dtype_pair(d);
  plan->spec = {threads,           t.bm, t.bn, bk, t.wm, t.wn, t.subgroups, a_k_fast ? 1u : 0u,
                b_n_fast ? 1u : 0u, 8u,   a_scalar ? 1u : 0u, b_scalar ? 1u : 0u};
  append_probe(&plan->spec);
  plan->tile_m = t.bm;
  plan->tile_n = t.bn;
  plan->shared_bytes = shared;
  return true;
}

// The vectorised fp32 kernel (8x8 micro-tiles from 16-byte shared reads) for aligned operands.
// VKML_GEMM_F32_TILE=BMxBN overrides the tile (for sweeps; multiples of 32, else ignored).
bool tiled_vec_plan(const GemmDesc& d, const DeviceCaps& caps, const std::string& shader,
                    GemmPlan* plan) {
  if (d.in_dtype != DType::kF32 || d.out_dtype != DType::kF32) return false;
  bool a_k_fast = false, b_n_fast = false;
  if (!vec_operand(d.a, d.m, d.k, 4, &a_k_fast) || !vec_operand(d.b, d.k, d.n, 4, &b_n_fast)) {
    return false;
  }
  const int64_t batches = d.batch[0] * d.batch[1];
  uint32_t bm = 128, bn = 128, bk = 8;
  if (ceil_div(d.m, 128) * ceil_div(d.n, 128) * batches < gemm_min_blocks(caps)) bm = bn = 64;
  const std::vector<uint32_t>& t = config().gemm_f32_tile;
  if (!t.empty() && t[0] % 32 == 0 && t[1] % 32 == 0) bm = t[0], bn = t[1];
  const uint32_t threads = (bm / 8) * (bn / 8);
  const uint32_t shared = 2 * bk * ((bm + 4) + (bn + 4)) * 4;
  if (threads > caps.max_workgroup_invocations || shared > caps.max_shared_memory) return false;
  if ((bm * bk / 4) % threads || (bk * bn / 4) % threads) return false;
  plan->kernel = GemmKernel::kTiledVec;
  plan->shader = shader;
  plan->spec = {threads, bm, bn, bk, a_k_fast ? 1u : 0u, b_n_fast ? 1u : 0u};
  plan->tile_m = bm;
  plan->tile_n = bn;
  plan->shared_bytes = shared;
  return true;
}

// Tile of the SIMT fp32 kernel (gemm_simt.comp): block BM x BN, K step BK, warp tile WM x WN,
// thread tile TM x TN (multiples of 4).
struct SimtTile {
  uint32_t bm, bn, bk, wm, wn, tm, tn;
  uint32_t threads() const { return (bm / tm) * (bn / tn); }
  uint32_t a_units() const { return bm * bk / 4 / threads(); }  // 4-element units per thread
  uint32_t b_units() const { return bk * bn / 4 / threads(); }
  // Two stages of both tiles; a row filled one k at a time gets one 16-byte vector of padding
  // (gemm_simt.comp's A_LD / B_LD). The defaults are the worst case.
  uint32_t shared_bytes(bool a_pad = true, bool b_pad = true) const {
    return 2 * bk * ((bm / 4 + (a_pad ? 1 : 0)) + (bn / 4 + (b_pad ? 1 : 0))) * 16;
  }
  bool valid(const DeviceCaps& caps, bool a_pad = true, bool b_pad = true) const {
    if (!bm || !bn || !bk || !wm || !wn || !tm || !tn || tm % 4 || tn % 4) return false;
    if (bm % wm || bn % wn || wm % tm || wn % tn || 32 % bk || bk < 4) return false;
    const uint32_t t = threads();
    if ((bm * bk / 4) % t || (bk * bn / 4) % t) return false;
    return t <= caps.max_workgroup_invocations &&
           shared_bytes(a_pad, b_pad) <= caps.max_shared_memory;
  }
};

// Largest first; the first that still gives enough blocks is taken (see simt_plan).
// Sweeps behind the table: docs/design/gemm.md#simt-tiles
constexpr SimtTile kSimtTiles[] = {
    {128, 64, 16, 32, 64, 8, 8},  // 128 threads, warps of 32x64
    {64, 128, 16, 64, 32, 8, 8},  // its transpose, for M <= 64 (see simt_plan)
    {64, 64, 32, 32, 32, 8, 4},   // 128 threads, warps of 32x32: small outputs
    {64, 64, 16, 32, 32, 8, 4},   // the same within 32 KiB of shared memory
};

// Rows x columns a tile computes over an M x N output, its edge blocks included.
int64_t padded_outputs(const SimtTile& t, int64_t m, int64_t n) {
  return ceil_div(m, t.bm) * t.bm * ceil_div(n, t.bn) * t.bn;
}

// How a tile reads the operands: 4x4 blocks for k-contiguous aligned ones (0 none, 1 padded
// shared rows, 2 unpadded: gemm_simt.comp's A_BLOCKS / B_BLOCKS) and whether it fits. A row
// filled one k at a time keeps its padding; blocks keep theirs too (as measured) unless only the
// unpadded tile fits, which is how 128x64x32 fits in 48 KiB.
struct SimtLayout {
  uint32_t a_blocks = 0, b_blocks = 0;
  bool a_pad = false, b_pad = false, fits = false;
};
SimtLayout simt_layout(const SimtTile& t, const DeviceCaps& caps, bool a_k_fast, bool a_k_aligned,
                       bool b_n_fast, bool b_k_aligned) {
  SimtLayout l;
  if (!t.valid(caps, false, false)) return l;
  const BlockSetting setting = block_setting();
  const bool on = setting != BlockSetting::kOff;
  const bool a_kvec = on && blocks_fit(a_k_aligned, t.a_units());
  const bool b_can = on && blocks_fit(b_k_aligned, t.b_units());
  bool b_kvec = b_can && setting == BlockSetting::kAB;
  l.a_pad = a_k_fast;
  l.b_pad = !b_n_fast;
  if (!t.valid(caps, l.a_pad, l.b_pad) && a_kvec) l.a_pad = false;
  if (!t.valid(caps, l.a_pad, l.b_pad) && b_can) {
    b_kvec = true;
    l.b_pad = false;
  }
  l.a_blocks = a_kvec ? (l.a_pad ? 1u : 2u) : 0u;
  l.b_blocks = b_kvec ? (l.b_pad ? 1u : 2u) : 0u;
  l.fits = t.valid(caps, l.a_pad, l.b_pad);
  return l;
}

// VKML_GEMM_SIMT_TILE=BMxBNxBKxWMxWNxTMxTN overrides the tile (for sweeps); one that does not
// fit the device or the operands is ignored.
bool simt_tile_override(SimtTile* t) {
  const std::vector<uint32_t>& v = config().gemm_simt_tile;
  if (v.empty()) return false;
  *t = SimtTile{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
  return true;
}

// The SIMT fp32 kernel (gemm_simtn: named 4x4 accumulator blocks, thread tiles of 4 or 8) takes
// every layout; its K loop uses 32-bit byte offsets, so the strides within one tile must fit in
// 31 bits (else the tiled kernel runs).
bool simt_plan(const GemmDesc& d, const DeviceCaps& caps, GemmPlan* plan) {
  if (d.in_dtype != DType::kF32 || d.out_dtype != DType::kF32) return false;
  // Neighbouring threads walk the unit-stride dimension; 16-byte loads where it is m (A) or n (B)
  // and aligned. A k-contiguous operand is read with coalesced scalar loads, or in 4x4 blocks of
  // 16-byte loads where it is aligned and the tile gives each thread whole blocks.
  const bool a_k_fast = d.a.col_stride == 1 || d.a.row_stride != 1;
  const bool b_n_fast = d.b.col_stride == 1 || d.b.row_stride != 1;
  bool row_major = false;
  const bool a_vec = !a_k_fast && vec_operand(d.a, d.m, d.k, 4, &row_major) && !row_major;
  const bool b_vec = b_n_fast && vec_operand(d.b, d.k, d.n, 4, &row_major) && row_major;
  const bool a_k_aligned = a_k_fast && vec_operand(d.a, d.m, d.k, 4, &row_major) && row_major;
  const bool b_k_aligned = !b_n_fast && vec_operand(d.b, d.k, d.n, 4, &row_major) && !row_major;
  auto layout = [&](const SimtTile& t) {
    return simt_layout(t, caps, a_k_fast, a_k_aligned, b_n_fast, b_k_aligned);
  };
  const int64_t batches = d.batch[0] * d.batch[1];
  const int64_t min_blocks = gemm_min_blocks(caps);
  // The first tile that gives enough blocks, unless a later one computes 10% fewer padded
  // outputs: a 128-row block over M = 64 (ResNet's 64-channel layers, their Winograd products)
  // would spend half its multiplies on rows past the end. Failing that, the smallest.
  const SimtTile* chosen = nullptr;
  const SimtTile* last_valid = nullptr;
  for (const SimtTile& t : kSimtTiles) {
    if (!t.valid(caps)) continue;
    last_valid = &t;
    if (ceil_div(d.m, t.bm) * ceil_div(d.n, t.bn) * batches < min_blocks) continue;
    if (!chosen || 10 * padded_outputs(t, d.m, d.n) < 9 * padded_outputs(*chosen, d.m, d.n)) {
      chosen = &t;
    }
  }
  if (!chosen) chosen = last_valid;
  SimtTile t{}, o{};
  SimtLayout l;
  if (simt_tile_override(&o) && (l = layout(o)).fits) {
    t = o;
  } else if (chosen) {
    t = *chosen;
    l = layout(t);
  } else {
    return false;
  }
  if ((t.tm != 4 && t.tm != 8) || (t.tn != 4 && t.tn != 8)) return false;
  const int64_t limit = int64_t{1} << 31;
  auto span = [](int64_t n1, int64_t s1, int64_t n2, int64_t s2) {
    return (n1 * std::abs(s1) + n2 * std::abs(s2)) * 4;
  };
  if (d.k >= limit || span(t.bm, d.a.row_stride, t.bk, d.a.col_stride) >= limit ||
      span(t.bk, d.b.row_stride, t.bn, d.b.col_stride) >= limit) {
    return false;
  }
  plan->kernel = GemmKernel::kSimt;
  plan->shader = "gemm_simtn_f32_f32";
  plan->spec = {t.threads(), t.bm,         t.bn,         t.bk,        t.wm,       t.wn,
                t.tm,        t.tn,         a_k_fast ? 1u : 0u,        b_n_fast ? 1u : 0u,
                a_vec ? 1u : 0u,           b_vec ? 1u : 0u};
  for (uint32_t x : simt_extra_spec(l.a_blocks, l.b_blocks)) plan->spec.push_back(x);
  plan->tile_m = t.bm;
  plan->tile_n = t.bn;
  plan->shared_bytes = t.shared_bytes(l.a_pad, l.b_pad);
  return true;
}

}  // namespace

bool coopmat_shape_ok(const DeviceCaps& caps, DType in) {
  if (!caps.coopmat) return false;
  if (in == DType::kBF16 && !caps.coopmat_bf16) return false;
  for (const CoopMatShape& s : caps.coopmat_shapes) {
    if (s.m == 16 && s.n == 16 && s.k == 16 && s.a == in && s.b == in && s.c == DType::kF32 &&
        s.result == DType::kF32) {
      return true;
    }
  }
  return false;
}

GemmPlan choose_gemm_plan(const GemmDesc& desc, const DeviceCaps& caps,
                          const std::function<bool(const std::string&)>& shader_exists) {
  GemmDesc d = desc;
  bool transposed = false;
  // Matrix-vector shapes: make N the 1-wide side.
  if (d.n != 1 && d.m == 1) {
    d = transpose_problem(d);
    transposed = true;
  }
  if (d.n == 1) {
    GemmPlan plan = gemv_plan(d);
    plan.transposed = transposed;
    return plan;
  }
  // Column-major C: solve the transposed problem so that C stores coalesce along rows.
  if (d.c.col_stride != 1 && d.c.row_stride == 1) {
    d = transpose_problem(d);
    transposed = true;
  }

  const bool half_in = d.in_dtype == DType::kF16 || d.in_dtype == DType::kBF16;
  const std::string coop_shader = "gemm_coopmat_" + dtype_pair(d);
  const uint32_t sg = caps.subgroup_size;
  if (half_in && coopmat_shape_ok(caps, d.in_dtype) && shader_exists(coop_shader) &&
      (sg == 16 || sg == 32 || sg == 64) && d.m >= 16 && d.n >= 16 && d.k >= 16) {
    // VKML_GEMM_COOPMAT_VEC=0 keeps the general kernel (for comparisons).
    GemmPlan vec;
    if (config().gemm_coopmat_vec && shader_exists("gemm_coopmatv_" + dtype_pair(d)) &&
        coopmat_vec_plan(d, caps, sg, &vec)) {
      vec.problem = d;
      vec.transposed = transposed;
      maybe_split_k(vec, caps);
      return vec;
    }
    // Big tiles: 128x128 over 8 subgroups in a 2x4 grid, each owning 4x2 blocks of 16x16.
    // Small tiles: 64x64 over 4 subgroups in a 2x2 grid, each owning 2x2 blocks.
    const bool big = ceil_div(d.m, 128) * ceil_div(d.n, 128) * d.batch[0] * d.batch[1] >= 64;
    const uint32_t bm = big ? 128 : 64, bn = bm, bk = 32;
    const uint32_t subgroups = big ? 8 : 4, wm = big ? 4 : 2, wn = 2;
    const uint32_t pad = 8;  // halves of padding per shared row: spreads banks, keeps 16B alignment
    uint32_t shared = (bm * (bk + pad) + bk * (bn + pad)) * 2 + subgroups * 16 * 16 * 4;
    if (shared <= caps.max_shared_memory && subgroups * sg <= caps.max_workgroup_invocations) {
      GemmPlan plan;
      plan.kernel = GemmKernel::kCoopMat;
      plan.shader = coop_shader;
      plan.spec = {subgroups * sg, bm, bn, bk, wm, wn, subgroups};
      plan.tile_m = bm;
      plan.tile_n = bn;
      plan.shared_bytes = shared;
      plan.problem = d;
      plan.transposed = transposed;
      maybe_split_k(plan, caps);
      return plan;
    }
  }

  // fp32: VKML_GEMM_F32_KERNEL=tiled|vec|simtn, or auto for the device class's choice
  // (gemm_f32_kernel). The tiled kernel is the fallback where the others do not apply.
  const std::string& setting = config().gemm_f32_kernel;
  F32Kernel f32 = gemm_f32_kernel(caps);
  if (setting == "tiled") f32 = F32Kernel::kTiled;
  if (setting == "vec") f32 = F32Kernel::kVec;
  if (setting == "simtn") f32 = F32Kernel::kSimt;
  GemmPlan simt;
  if (f32 == F32Kernel::kSimt && shader_exists("gemm_simtn_f32_f32") &&
      simt_plan(d, caps, &simt)) {
    simt.problem = d;
    simt.transposed = transposed;
    maybe_split_k(simt, caps);
    return simt;
  }
  GemmPlan tv;
  if (f32 == F32Kernel::kVec && shader_exists("gemm_tiledv_f32_f32") &&
      tiled_vec_plan(d, caps, "gemm_tiledv_f32_f32", &tv)) {
    tv.problem = d;
    tv.transposed = transposed;
    maybe_split_k(tv, caps);
    return tv;
  }
  const size_t acc_size = d.in_dtype == DType::kF64 ? 8 : 4;
  const int64_t batches = d.batch[0] * d.batch[1];
  const int64_t min_blocks = gemm_min_blocks(caps);
  const TileConfig* chosen = nullptr;
  for (const TileConfig& t : kTiles) {
    if (t.shared_bytes(acc_size) > caps.max_shared_memory) continue;
    if (t.threads() > caps.max_workgroup_invocations) continue;
    chosen = &t;  // the smallest fitting one stays as the fallback
    int64_t blocks = ceil_div(d.m, t.bm) * ceil_div(d.n, t.bn) * batches;
    if (blocks >= min_blocks) break;
  }
  if (!chosen) chosen = &kTiles[std::size(kTiles) - 1];
  GemmPlan plan;
  plan.kernel = GemmKernel::kTiled;
  plan.shader = "gemm_tiled_" + dtype_pair(d);
  const uint32_t a_k_fast = d.a.col_stride == 1 || d.a.row_stride != 1 ? 1u : 0u;
  const uint32_t b_n_fast = d.b.col_stride == 1 || d.b.row_stride != 1 ? 1u : 0u;
  plan.spec = {chosen->threads(), chosen->bm, chosen->bn, chosen->bk,
               chosen->tm,        chosen->tn, a_k_fast,   b_n_fast};
  plan.tile_m = chosen->bm;
  plan.tile_n = chosen->bn;
  plan.shared_bytes = chosen->shared_bytes(acc_size);
  plan.problem = d;
  plan.transposed = transposed;
  maybe_split_k(plan, caps);
  return plan;
}

}  // namespace vkml::ops
