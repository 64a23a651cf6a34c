// Gemm family: products against a float64 CPU reference over dtypes, odd sizes, transposed /
// general strides, batch broadcast, alpha/beta, bias (the planner's own tests: test_gemm_plan.cc).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

#include "float_buffers.h"
#include "gemm_test_util.h"
#include "vkml/config.h"
#include "vkml/errors.h"
#include "vkml/gemm.h"

namespace vkml::testing {

namespace {

enum class Layout { kRowMajor, kColMajor, kStrided, kBroadcastBatch };

struct Operand {
  MatrixView view;
  int64_t elements = 0;  // allocation size
};

// Strides for a rows x cols matrix in batches (b0, b1) with the given layout.
Operand make_operand(Layout l, int64_t rows, int64_t cols, const int64_t* batch) {
  Operand o;
  int64_t mat;
  switch (l) {
    case Layout::kRowMajor:
      o.view.row_stride = cols, o.view.col_stride = 1, mat = rows * cols;
      break;
    case Layout::kColMajor:
      o.view.row_stride = 1, o.view.col_stride = rows, mat = rows * cols;
      break;
    case Layout::kStrided:  // neither stride is 1, with gaps
      o.view.row_stride = 2 * cols + 3, o.view.col_stride = 2, mat = rows * (2 * cols + 3) + 1;
      break;
    case Layout::kBroadcastBatch:
      o.view.row_stride = cols, o.view.col_stride = 1, mat = rows * cols;
      o.elements = std::max<int64_t>(mat, 1);
      return o;  // batch strides stay 0
  }
  o.view.batch_stride[1] = mat;
  o.view.batch_stride[0] = mat * batch[1];
  o.elements = std::max<int64_t>(mat * batch[0] * batch[1], 1);
  return o;
}

int64_t offset(const MatrixView& v, int64_t b0, int64_t b1, int64_t r, int64_t c) {
  return b0 * v.batch_stride[0] + b1 * v.batch_stride[1] + r * v.row_stride + c * v.col_stride;
}

enum class Bias { kNone, kPerRow, kPerCol };

struct GemmCase {
  int64_t m, n, k;
  DType in = DType::kF32, out = DType::kF32;
  Layout a = Layout::kRowMajor, b = Layout::kRowMajor, c = Layout::kRowMajor;
  int64_t batch0 = 1, batch1 = 1;
  double alpha = 1.0, beta = 0.0;
  Bias bias = Bias::kNone;
  bool in_place = false;  // C_in is C
};

class GemmTest : public DeviceTest {
 protected:
  // Runs one case and returns the worst error relative to the result's magnitude.
  double run(const GemmCase& g, uint32_t seed = 1) {
    int64_t batch[2] = {g.batch0, g.batch1};
    Operand a = make_operand(g.a, g.m, g.k, batch), b = make_operand(g.b, g.k, g.n, batch);
    Operand c = make_operand(g.c, g.m, g.n, batch);
    Operand cin = make_operand(Layout::kStrided, g.m, g.n, batch);
    Operand bias;
    bias.elements = g.bias == Bias::kPerRow ? g.m : g.n;
    if (g.bias == Bias::kPerRow) bias.view = {0, 1, 0};
    if (g.bias == Bias::kPerCol) bias.view = {0, 0, 1};
    bias.elements = std::max<int64_t>(bias.elements, 1);

    HostFloats ha(g.in, a.elements), hb(g.in, b.elements), hc(g.out, c.elements);
    HostFloats hcin(g.out, cin.elements), hbias(g.out, bias.elements);
    ha.randomize(seed), hb.randomize(seed + 1), hc.randomize(seed + 2);
    hcin.randomize(seed + 3), hbias.randomize(seed + 4);
    DeviceBuffer da(dev(), ha.bytes.size()), db(dev(), hb.bytes.size());
    DeviceBuffer dc(dev(), hc.bytes.size()), dcin(dev(), hcin.bytes.size());
    DeviceBuffer dbias(dev(), hbias.bytes.size());
    ha.upload(dev(), da.address), hb.upload(dev(), db.address), hc.upload(dev(), dc.address);
    hcin.upload(dev(), dcin.address), hbias.upload(dev(), dbias.address);

    GemmDesc d;
    d.m = g.m, d.n = g.n, d.k = g.k;
    d.batch[0] = g.batch0, d.batch[1] = g.batch1;
    d.in_dtype = g.in, d.out_dtype = g.out;
    d.a = a.view, d.a.address = da.address;
    d.b = b.view, d.b.address = db.address;
    d.c = c.view, d.c.address = dc.address;
    d.alpha = g.alpha, d.beta = g.beta;
    if (g.beta != 0.0) {
      d.c_in = g.in_place ? d.c : cin.view;
      if (!g.in_place) d.c_in.address = dcin.address;
    }
    if (g.bias != Bias::kNone) d.bias = bias.view, d.bias.address = dbias.address;
    ops::gemm(dev(), d);
    HostFloats got(g.out, c.elements);
    got.download(dev(), dc.address);

    const HostFloats& cin_src = g.in_place ? hc : hcin;
    const MatrixView& cin_view = g.in_place ? c.view : cin.view;
    double worst = 0, scale = 1e-30;
    std::vector<double> ref(static_cast<size_t>(g.m * g.n));
    for (int64_t b0 = 0; b0 < g.batch0; ++b0) {
      for (int64_t b1 = 0; b1 < g.batch1; ++b1) {
        for (int64_t i = 0; i < g.m; ++i) {
          for (int64_t j = 0; j < g.n; ++j) {
            double s = 0;
            for (int64_t l = 0; l < g.k; ++l) {
              s += ha.get(offset(a.view, b0, b1, i, l)) * hb.get(offset(b.view, b0, b1, l, j));
            }
            double r = g.alpha * s;
            if (g.beta != 0.0) r += g.beta * cin_src.get(offset(cin_view, b0, b1, i, j));
            if (g.bias != Bias::kNone) r += hbias.get(offset(bias.view, 0, 0, i, j));
            ref[i * g.n + j] = r;
            scale = std::max(scale, std::abs(r));
          }
        }
        for (int64_t i = 0; i < g.m; ++i) {
          for (int64_t j = 0; j < g.n; ++j) {
            double v = got.get(offset(c.view, b0, b1, i, j));
            worst = std::max(worst, std::abs(v - ref[i * g.n + j]));
            if (std::isnan(v)) worst = INFINITY;
          }
        }
      }
    }
    return worst / scale;
  }

  void check(const GemmCase& g, const char* what) {
    EXPECT_LE(run(g), rel_tolerance(g.out)) << what << " m=" << g.m << " n=" << g.n << " k=" << g.k
                                            << " " << dtype_name(g.in) << "->" << dtype_name(g.out);
  }
};

}  // namespace

TEST_F(GemmTest, OddSizesEveryDtype) {
  const std::pair<DType, DType> pairs[] = {
      {DType::kF32, DType::kF32},   {DType::kF16, DType::kF16},  {DType::kF16, DType::kF32},
      {DType::kBF16, DType::kBF16}, {DType::kBF16, DType::kF32}, {DType::kF64, DType::kF64}};
  for (auto [in, out] : pairs) {
    if (!dev().caps().supports_dtype(in)) continue;
    for (auto [m, n, k] : {std::tuple{1, 1, 1}, {7, 5, 3}, {33, 65, 17}, {130, 67, 41}}) {
      check({m, n, k, in, out}, "odd sizes");
    }
  }
}

TEST_F(GemmTest, TransposedAndGeneralStrides) {
  const Layout layouts[] = {Layout::kRowMajor, Layout::kColMajor, Layout::kStrided};
  for (Layout la : layouts) {
    for (Layout lb : layouts) {
      for (Layout lc : layouts) check({37, 45, 29, DType::kF32, DType::kF32, la, lb, lc}, "layout");
    }
  }
  check({70, 66, 35, DType::kF16, DType::kF32, Layout::kColMajor, Layout::kStrided}, "f16 layout");
}

// 16-byte aligned operands take the vectorised kernels (fp32 everywhere, fp16/bf16 on devices with
// cooperative matrices): every row-/column-major combination, partial tiles, batches, the general
// epilogue and split-K.
TEST_F(GemmTest, AlignedOperandsEveryLayout) {
  const Layout layouts[] = {Layout::kRowMajor, Layout::kColMajor};
  for (DType in : {DType::kF32, DType::kF16, DType::kBF16}) {
    if (!dev().caps().supports_dtype(in)) continue;
    for (DType out : {in, DType::kF32}) {
      if (in == DType::kF32 && out != in) continue;
      for (Layout la : layouts) {
        for (Layout lb : layouts) {
          check({200, 136, 72, in, out, la, lb}, "aligned layout");
          check({40, 24, 48, in, out, la, lb, Layout::kColMajor}, "aligned, column-major C");
        }
      }
      GemmCase batched{256, 256, 16, in, out, Layout::kRowMajor, Layout::kColMajor};
      batched.batch0 = 4, batched.batch1 = 4;  // 64 output tiles of 128: the big tile
      check(batched, "aligned batched");
      GemmCase epi{136, 72, 56, in, out};
      epi.alpha = 0.5, epi.beta = 0.25, epi.bias = Bias::kPerCol;
      check(epi, "aligned epilogue");
      check({64, 64, 2048, in, out, Layout::kColMajor, Layout::kRowMajor}, "aligned split-K");
      // Many output tiles, partial ones at both edges.
      check({264, 520, 40, in, out, Layout::kRowMajor, Layout::kRowMajor}, "aligned, many tiles");
      check({264, 520, 40, in, out, Layout::kColMajor, Layout::kColMajor}, "aligned, many tiles");
    }
  }
}

// Half-precision operands with a unit stride whose rows are not 16-byte aligned (odd extents, as
// in a 1x1 convolution over 14x14 or 7x7 planes): the vectorised kernel reads them element by
// element on devices with cooperative matrices; every layout, batches, partial tiles, split-K.
TEST_F(GemmTest, UnalignedHalvesEveryLayout) {
  const Layout layouts[] = {Layout::kRowMajor, Layout::kColMajor};
  for (DType in : {DType::kF16, DType::kBF16}) {
    if (!dev().caps().supports_dtype(in)) continue;
    for (Layout la : layouts) {
      for (Layout lb : layouts) {
        check({150, 196, 72, in, in, la, lb}, "unaligned N");
        check({49, 70, 37, in, DType::kF32, la, lb}, "unaligned M, N and K");
      }
    }
    GemmCase batched{64, 49, 104, in, in, Layout::kRowMajor, Layout::kRowMajor};
    batched.batch0 = 3;  // a 1x1 convolution over 7x7 planes, three samples
    check(batched, "unaligned batched");
    check({40, 49, 1029, in, DType::kF32, Layout::kRowMajor, Layout::kColMajor}, "unaligned split-K");
  }
}

// Batches big enough for 128x128 blocks with one side under half of one: 128x64 and 64x128
// blocks on devices with cooperative matrices (the plan test checks the choice).
TEST_F(GemmTest, NarrowSidesOnSixtyFourWideBlocks) {
  for (DType in : {DType::kF16, DType::kBF16}) {
    if (!dev().caps().supports_dtype(in)) continue;
    GemmCase narrow_n{300, 49, 64, in, in, Layout::kRowMajor, Layout::kRowMajor};
    narrow_n.batch0 = 30;  // a 1x1 convolution over 7x7 planes
    check(narrow_n, "narrow N");
    GemmCase narrow_m{40, 520, 64, in, DType::kF32, Layout::kRowMajor, Layout::kColMajor};
    narrow_m.batch0 = 20;
    check(narrow_m, "narrow M");
  }
}

// The SIMT fp32 kernel on small tiles (cheap to compile on CPU devices): odd sizes, every layout
// (16-byte and scalar loads), batches with broadcast, the epilogue and split-K, with 4x4 thread
// tiles (one accumulator block) and 8x8 ones (all four).
TEST_F(GemmTest, SimtKernelLayoutsEpilogueSplitK) {
  ConfigOverride kernel("VKML_GEMM_F32_KERNEL", "simtn");
  for (const char* tile_spec : {"32x32x8x16x16x4x4", "32x32x8x16x16x8x8"}) {
    SCOPED_TRACE(tile_spec);
    ConfigOverride tile("VKML_GEMM_SIMT_TILE", tile_spec);
    const GemmPlan plan = ops::choose_gemm_plan(shape(200, 136, 72), dev().caps());
    ASSERT_EQ(plan.kernel, GemmKernel::kSimt);
    ASSERT_EQ(plan.shader, "gemm_simtn_f32_f32");
    ASSERT_EQ(plan.tile_m, 32u);
    for (auto [m, n, k] : {std::tuple{1, 1, 1}, {7, 5, 3}, {33, 65, 17}, {130, 67, 41}}) {
      check({m, n, k}, "simt odd sizes");
    }
    const Layout layouts[] = {Layout::kRowMajor, Layout::kColMajor, Layout::kStrided};
    for (Layout la : layouts) {
      for (Layout lb : layouts) {
        check({37, 45, 29, DType::kF32, DType::kF32, la, lb}, "simt layout");
        check({72, 136, 40, DType::kF32, DType::kF32, la, lb}, "simt aligned layout");
      }
    }
    check({40, 24, 48, DType::kF32, DType::kF32, Layout::kColMajor, Layout::kRowMajor,
           Layout::kColMajor},
          "simt column-major C");
    GemmCase batched{67, 72, 20, DType::kF32, DType::kF32, Layout::kColMajor,
                     Layout::kBroadcastBatch};
    batched.batch0 = 3, batched.batch1 = 2;
    check(batched, "simt batched, broadcast B");
    for (Bias bias : {Bias::kPerRow, Bias::kPerCol}) {
      GemmCase epi{36, 72, 56};
      epi.alpha = 0.5, epi.beta = -1.25, epi.bias = bias;
      check(epi, "simt epilogue");
      epi.in_place = true;
      check(epi, "simt epilogue in place");
    }
    GemmCase split{32, 30, 4099};
    split.alpha = 0.5, split.beta = 0.25, split.bias = Bias::kPerCol;
    ASSERT_GT(ops::choose_gemm_plan(shape(32, 30, 4099), dev().caps()).split_k, 1u);
    check(split, "simt split-K");
    check({64, 64, 2048, DType::kF32, DType::kF32, Layout::kColMajor, Layout::kRowMajor},
          "simt aligned split-K");
    GemmCase k0{9, 11, 0};
    k0.beta = 0.5, k0.bias = Bias::kPerCol;
    check(k0, "simt k=0");
  }
}

// The SIMT kernel on the 64x128 block the planner takes over M <= 64: partial column blocks,
// every operand layout, a batch with broadcast A, the epilogue, split-K.
TEST_F(GemmTest, SimtNarrowMTile) {
  ConfigOverride kernel("VKML_GEMM_F32_KERNEL", "simtn");
  GemmDesc desc = shape(64, 520, 40);  // 100 blocks of 64x128: enough for GPUs too
  desc.batch[0] = 20;
  desc.a.batch_stride[0] = 0, desc.b.batch_stride[0] = 520 * 40, desc.c.batch_stride[0] = 64 * 520;
  const GemmPlan plan = ops::choose_gemm_plan(desc, dev().caps());
  ASSERT_EQ(plan.kernel, GemmKernel::kSimt);
  ASSERT_EQ(plan.tile_m, 64u);
  ASSERT_EQ(plan.tile_n, 128u);
  GemmCase batched{64, 520, 40, DType::kF32, DType::kF32, Layout::kBroadcastBatch,
                   Layout::kRowMajor};
  batched.batch0 = 20;
  check(batched, "batched, broadcast A");
  check({64, 520, 40}, "narrow M");  // one product: the 64x128 block on CPU devices
  check({61, 517, 37, DType::kF32, DType::kF32, Layout::kColMajor, Layout::kColMajor}, "odd");
  check({48, 300, 72, DType::kF32, DType::kF32, Layout::kStrided, Layout::kStrided}, "strided");
  GemmCase epi{40, 390, 56};
  epi.alpha = 0.5, epi.beta = -1.25, epi.bias = Bias::kPerRow;
  check(epi, "epilogue");
  check({64, 520, 3000}, "split-K");
}

// The SIMT kernel's other tiles (GPU-sized, slow to compile on CPU devices): the common layouts,
// partial edge tiles and the epilogue.
TEST_F(GemmTest, SimtKernelTiles) {
  ConfigOverride kernel("VKML_GEMM_F32_KERNEL", "simtn");
  for (const char* tile : {"", "64x32x32x32x16x8x4"}) {
    ConfigOverride override("VKML_GEMM_SIMT_TILE", tile);  // "" = the planner's own choice
    GemmPlan plan = ops::choose_gemm_plan(shape(200, 136, 72), dev().caps());
    ASSERT_EQ(plan.kernel, GemmKernel::kSimt) << tile;
    const std::string ts(tile);
    if (!ts.empty()) {
      EXPECT_EQ(std::to_string(plan.tile_m) + "x" + std::to_string(plan.tile_n),
                ts.substr(0, ts.find('x', ts.find('x') + 1)));
    }
    check({200, 136, 72}, tile);  // 16-byte loads of B, scalar k-walk of A
    check({200, 136, 72, DType::kF32, DType::kF32, Layout::kColMajor, Layout::kColMajor}, tile);
    GemmCase epi{130, 67, 41};
    epi.alpha = 0.5, epi.beta = -1.25, epi.bias = Bias::kPerCol;
    check(epi, tile);
  }
}

TEST_F(GemmTest, KZeroGivesBetaCPlusBias) {
  GemmCase g{9, 11, 0};
  g.beta = 0.5, g.bias = Bias::kPerCol;
  check(g, "k=0");
  check({9, 11, 0}, "k=0 plain");
}

TEST_F(GemmTest, LargeKStaysWithinFp32Tolerance) {
  check({40, 48, 1000}, "k=1000");
  check({3, 1, 1500}, "gemv k=1500");
  check({1, 1, 4099}, "dot");
}

TEST_F(GemmTest, SplitKSumsSlicesBeforeTheEpilogue) {
  GemmCase g{32, 30, 4099};
  g.alpha = 0.5, g.beta = -1.0, g.bias = Bias::kPerCol;
  ASSERT_GT(ops::choose_gemm_plan(shape(g.m, g.n, g.k), dev().caps()).split_k, 1u);
  check(g, "split-K f32");
  g.in = DType::kF16, g.out = DType::kF16, g.in_place = true;
  check(g, "split-K f16 in place");
  GemmCase t{30, 20, 3000, DType::kBF16, DType::kF32, Layout::kColMajor, Layout::kStrided};
  t.batch0 = 2, t.c = Layout::kColMajor;
  check(t, "split-K batched, transposed output");
  if (dev().caps().supports_dtype(DType::kF64)) check({16, 16, 2048, DType::kF64, DType::kF64}, "f64");
}

TEST_F(GemmTest, VectorShapes) {
  for (Layout la : {Layout::kRowMajor, Layout::kColMajor, Layout::kStrided}) {
    check({200, 1, 70, DType::kF32, DType::kF32, la}, "mv");
    check({1, 150, 70, DType::kF32, DType::kF32, Layout::kRowMajor, la}, "vm");
  }
  check({64, 1, 33, DType::kBF16, DType::kBF16, Layout::kColMajor}, "bf16 mv");
  GemmCase g{90, 1, 20};
  g.beta = -1.5, g.alpha = 0.25, g.bias = Bias::kPerRow;
  check(g, "addmv");
}

TEST_F(GemmTest, BatchesBroadcastAndTwoBatchDims) {
  GemmCase g{19, 23, 13};
  g.batch0 = 3;
  check(g, "batched");
  g.a = Layout::kBroadcastBatch;
  check(g, "broadcast A");
  g.a = Layout::kColMajor, g.b = Layout::kBroadcastBatch, g.batch1 = 2;
  check(g, "two batch dims, broadcast B");
  GemmCase v{1, 1, 50};
  v.batch0 = 5;
  check(v, "batched dot");
}

TEST_F(GemmTest, AlphaBetaBiasAndInPlace) {
  for (Bias bias : {Bias::kNone, Bias::kPerRow, Bias::kPerCol}) {
    GemmCase g{31, 29, 27};
    g.alpha = -0.75, g.beta = 1.25, g.bias = bias;
    check(g, "alpha beta bias");
    g.in_place = true;
    check(g, "in place");
    g.in = g.out = DType::kBF16;
    check(g, "bf16 in place");
  }
}

TEST_F(GemmTest, BetaZeroIgnoresNanInput) {
  const int64_t m = 5, n = 6, k = 4;
  HostFloats a(DType::kF32, m * k), b(DType::kF32, k * n), c(DType::kF32, m * n);
  a.randomize(3), b.randomize(4);
  for (size_t i = 0; i < c.size(); ++i) c.set(i, NAN);
  DeviceBuffer da(dev(), a.bytes.size()), db(dev(), b.bytes.size()), dc(dev(), c.bytes.size());
  a.upload(dev(), da.address), b.upload(dev(), db.address), c.upload(dev(), dc.address);
  GemmDesc d = shape(m, n, k);
  d.a.address = da.address, d.b.address = db.address, d.c.address = dc.address;
  d.c_in = d.c;  // present but beta == 0
  ops::gemm(dev(), d);
  c.download(dev(), dc.address);
  for (size_t i = 0; i < c.size(); ++i) EXPECT_FALSE(std::isnan(c.get(i))) << i;
}

TEST_F(GemmTest, RejectsBadDescriptors) {
  DeviceBuffer buf(dev(), 4096);
  GemmDesc d = shape(4, 4, 4);
  d.a.address = buf.address, d.b.address = buf.address + 64, d.c.address = buf.address + 128;
  GemmDesc overlap = d;
  overlap.c.address = buf.address + 32;
  EXPECT_THROW(ops::gemm(dev(), overlap), InvalidArgument);
  GemmDesc need_cin = d;
  need_cin.beta = 1.0;
  EXPECT_THROW(ops::gemm(dev(), need_cin), InvalidArgument);
  GemmDesc ints = d;
  ints.in_dtype = ints.out_dtype = DType::kI32;
  EXPECT_THROW(ops::gemm(dev(), ints), NotSupported);
  GemmDesc mixed = d;
  mixed.out_dtype = DType::kF16;
  EXPECT_THROW(ops::gemm(dev(), mixed), NotSupported);
  GemmDesc bcast_out = d;
  bcast_out.c.row_stride = 0;
  EXPECT_THROW(ops::gemm(dev(), bcast_out), InvalidArgument);
  GemmDesc empty = d;
  empty.m = 0;
  EXPECT_NO_THROW(ops::gemm(dev(), empty));
}

// A budget far too small for one product: the GEMM runs one slice per output row (m >= n) or
// column (m < n), each submitted on its own, through every operand layout, C_in and bias.
TEST_F(GemmTest, SlicedForTheSubmitBudget) {
  SubmitBudgetScope budget(dev().stream(), 1e-9);
  const uint64_t before = dev().stream().submissions();
  check({37, 11, 19, DType::kF32, DType::kF32, Layout::kStrided, Layout::kColMajor,
         Layout::kRowMajor, 1, 2, 1.5, 0.5, Bias::kPerRow},
        "rows");
  check({9, 40, 23, DType::kF32, DType::kF32, Layout::kColMajor, Layout::kStrided,
         Layout::kStrided, 2, 1, 1.0, 1.0, Bias::kPerCol, /*in_place=*/true},
        "columns");
  if (dev().caps().supports_dtype(DType::kF16)) {
    check({33, 17, 64, DType::kF16, DType::kF32, Layout::kRowMajor, Layout::kRowMajor,
           Layout::kRowMajor},
          "fp16 rows");
  }
  EXPECT_GE(dev().stream().submissions() - before, 37u + 40u);
}

// With timestamps, every submission of a product several budgets long stays within the budget
// once the stream has learned the device's throughput (100 ms; the product is sized from the
// learned throughput, up to 16384^3). On CPU devices (50 ms) the product still runs in slices
// with an exact result, and the longest submission is reported.
TEST_F(GemmTest, SubmissionsStayWithinTheBudget) {
  if (!dev().caps().timestamps) GTEST_SKIP() << "no compute timestamps on this device";
  const bool cpu = dev().caps().kind == DeviceKind::kCpu;
  const double budget_ms = cpu ? 50.0 : 100.0;
  SubmitBudgetScope budget(dev().stream(), budget_ms);
  // An n^3 product of constant matrices (2^-7 everywhere: every sum is exact); returns the
  // worst relative error of the first and last rows' first entries.
  auto square = [&](int64_t n) {
    const uint64_t bytes = static_cast<uint64_t>(n * n) * 4;
    DeviceBuffer da(dev(), bytes), db(dev(), bytes), dc(dev(), bytes);
    dev().stream().fill(da.address, bytes, 0x3c000000u);
    dev().stream().fill(db.address, bytes, 0x3c000000u);
    GemmDesc d;
    d.m = d.n = d.k = n;
    d.a = {da.address, n, 1}, d.b = {db.address, n, 1}, d.c = {dc.address, n, 1};
    ops::gemm(dev(), d);
    std::vector<float> got = download<float>(dev(), dc.address, 4);
    for (float v : download<float>(dev(), dc.address + bytes - 16, 4)) got.push_back(v);
    const double want = static_cast<double>(n) / (128.0 * 128.0);
    double worst = 0;
    for (float v : got) worst = std::max(worst, std::abs(v - want) / want);
    return worst;
  };
  for (int i = 0; i < 3; ++i) square(cpu ? 384 : 4096);  // learn the throughput
  // On CPU devices a loaded host may leave no submission long enough to learn from; the stream
  // then keeps its starting estimate, which the sizing below follows as well.
  double rate = dev().stream().submission_times().ops_per_ns;
  if (!cpu) ASSERT_GT(rate, 0.0) << "no submission was long enough to learn the throughput from";
  if (rate == 0) rate = 1.0;
  const double work = 6.0 * budget_ms * 1e6 * rate;  // about a dozen slices
  const int64_t n = std::min<int64_t>(16384, static_cast<int64_t>(std::cbrt(work)) / 16 * 16);
  dev().stream().submission_times(/*reset=*/true);
  EXPECT_EQ(square(n), 0.0) << "n=" << n;
  const SubmissionTimes t = dev().stream().submission_times();
  EXPECT_GE(t.count, 4u) << "n=" << n;
  // Other processes on a CPU device's cores change a slice's speed after it was sized: there
  // the budget is reported, not asserted.
  if (!cpu) EXPECT_LE(t.max_ms, budget_ms)
      << "n=" << n << " submissions=" << t.count << " learned ops/ns=" << rate;
  std::printf("[ budget ] %lldx%lldx%lld fp32 GEMM: %llu submissions, longest %.2f ms of %.0f\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
              static_cast<unsigned long long>(t.count), t.max_ms, budget_ms);
}

}  // namespace vkml::testing
