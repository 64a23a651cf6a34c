// Gemm family: the variant chooser (no GPU needed) and products against a float64 CPU reference
// over dtypes, odd sizes, transposed / general strides, batch broadcast, alpha/beta, bias.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>

#include "float_buffers.h"
#include "ops/gemm/gemm_f32_split.h"
#include "vkml/errors.h"
#include "vkml/gemm.h"

namespace vkml::testing {

namespace {

using ops::GemmDesc;
using ops::GemmKernel;
using ops::GemmPlan;
using ops::MatrixView;

DeviceCaps lavapipe_like() {
  DeviceCaps c;
  c.kind = DeviceKind::kCpu;
  c.subgroup_size = 8;
  c.max_shared_memory = 32768;
  c.max_workgroup_invocations = 1024;
  c.storage_16bit = c.fp64_math = c.int64_math = true;
  return c;
}

DeviceCaps h200_like() {
  DeviceCaps c = lavapipe_like();
  c.kind = DeviceKind::kDiscrete;
  c.subgroup_size = 32;
  c.max_shared_memory = 49152;
  c.coopmat = c.coopmat_bf16 = true;
  c.coopmat_shapes = {{16, 16, 16, DType::kF16, DType::kF16, DType::kF32, DType::kF32},
                      {16, 8, 16, DType::kF16, DType::kF16, DType::kF16, DType::kF16},
                      {16, 16, 16, DType::kBF16, DType::kBF16, DType::kF32, DType::kF32}};
  return c;
}

// Row-major m x n x k problem descriptor (addresses are irrelevant to the chooser).
GemmDesc shape(int64_t m, int64_t n, int64_t k, DType in = DType::kF32, DType out = DType::kF32) {
  GemmDesc d;
  d.m = m, d.n = n, d.k = k;
  d.in_dtype = in, d.out_dtype = out;
  d.a = {0x1000, k, 1};
  d.b = {0x2000, n, 1};
  d.c = {0x3000, n, 1};
  return d;
}

bool all_shaders(const std::string&) { return true; }

// Sets an environment variable for one scope (the planner reads its switches on every call).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};
bool no_coopmat(const std::string& s) { return s.find("coopmat") == std::string::npos; }
// Neither the vectorised nor the SIMT fp32 kernel: the scalar tiled one.
bool scalar_tiled(const std::string& s) {
  return s.find("tiledv") == std::string::npos && s.find("simt") == std::string::npos;
}

}  // namespace

TEST(GemmPlanTest, LavapipeUsesTiledKernelsWithinSharedMemory) {
  DeviceCaps caps = lavapipe_like();
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    for (int64_t s : {2, 17, 64, 200, 1000}) {
      GemmPlan p = ops::choose_gemm_plan(shape(s, s, s, t, t), caps, scalar_tiled);
      EXPECT_EQ(p.kernel, GemmKernel::kTiled) << s;
      EXPECT_LE(p.shared_bytes, caps.max_shared_memory);
      EXPECT_EQ(p.spec[0], (p.spec[1] / p.spec[4]) * (p.spec[2] / p.spec[5]));
      EXPECT_EQ(p.shader,
                "gemm_tiled_" + std::string(dtype_name(t)) + "_" + std::string(dtype_name(t)));
    }
  }
  // Big problems get the big tile, small ones a small tile.
  EXPECT_EQ(ops::choose_gemm_plan(shape(1024, 1024, 64), caps, scalar_tiled).tile_m, 128u);
  EXPECT_EQ(ops::choose_gemm_plan(shape(40, 40, 64), caps, scalar_tiled).tile_m, 32u);
}

TEST(GemmPlanTest, AlignedFp32UsesTheVectorisedKernelOnCpuDevices) {
  // Discrete GPUs take the SIMT kernel by default (the vector one was slower on the H200).
  EXPECT_EQ(ops::choose_gemm_plan(shape(1024, 1024, 64), h200_like(), all_shaders).kernel,
            GemmKernel::kSimt);
  for (const DeviceCaps& caps : {lavapipe_like()}) {
    GemmPlan p = ops::choose_gemm_plan(shape(1024, 1024, 64), caps, all_shaders);
    EXPECT_EQ(p.kernel, GemmKernel::kTiledVec);
    EXPECT_EQ(p.shader, "gemm_tiledv_f32_f32");
    EXPECT_EQ(p.spec[0], (p.spec[1] / 8) * (p.spec[2] / 8));
    EXPECT_LE(p.shared_bytes, caps.max_shared_memory);
    EXPECT_EQ(p.spec[4], 1u);  // A contiguous along k
    EXPECT_EQ(p.spec[5], 1u);  // B contiguous along n
    GemmDesc wt = shape(1024, 1024, 64);  // x @ W^T
    wt.b = {0x2000, 1, 64};
    EXPECT_EQ(ops::choose_gemm_plan(wt, caps, all_shaders).spec[5], 0u);
    // K not a multiple of 4 (rows not 16-byte aligned), or a general stride: the scalar kernel.
    EXPECT_EQ(ops::choose_gemm_plan(shape(64, 64, 63), caps, all_shaders).kernel,
              GemmKernel::kTiled);
    GemmDesc strided = shape(64, 64, 64);
    strided.a.col_stride = 2;
    EXPECT_EQ(ops::choose_gemm_plan(strided, caps, all_shaders).kernel, GemmKernel::kTiled);
  }
}

TEST(GemmPlanTest, VectorShapesUseGemv) {
  DeviceCaps caps = lavapipe_like();
  GemmPlan mv = ops::choose_gemm_plan(shape(300, 1, 77), caps, all_shaders);
  EXPECT_EQ(mv.kernel, GemmKernel::kGemv);
  EXPECT_FALSE(mv.transposed);
  GemmDesc row_times_wt = shape(1, 300, 77);
  row_times_wt.b = {0x2000, 1, 77};  // B = W^T with W row-major (300 x 77)
  GemmPlan vm = ops::choose_gemm_plan(row_times_wt, caps, all_shaders);
  EXPECT_EQ(vm.kernel, GemmKernel::kGemv);
  EXPECT_TRUE(vm.transposed);
  EXPECT_EQ(vm.problem.m, 300);
  EXPECT_EQ(vm.problem.n, 1);
  // x @ W^T for one row: the transposed problem reads W row-major (k contiguous).
  EXPECT_EQ(vm.problem.a.col_stride, 1);
  GemmPlan dot = ops::choose_gemm_plan(shape(1, 1, 5000), caps, all_shaders);
  EXPECT_EQ(dot.kernel, GemmKernel::kGemv);
  EXPECT_EQ(dot.spec[1], 256u);  // all lanes on k
  EXPECT_EQ(dot.spec[2], 0u);
  // Column-major A with many rows: threads along m.
  GemmDesc col = shape(512, 1, 64);
  col.a = {0x1000, 1, 512};
  EXPECT_EQ(ops::choose_gemm_plan(col, caps, all_shaders).spec[2], 1u);
}

TEST(GemmPlanTest, ColumnMajorOutputIsSolvedTransposed) {
  GemmDesc d = shape(100, 60, 30);
  d.c = {0x3000, 1, 100};
  GemmPlan p = ops::choose_gemm_plan(d, lavapipe_like(), all_shaders);
  EXPECT_TRUE(p.transposed);
  EXPECT_EQ(p.problem.m, 60);
  EXPECT_EQ(p.problem.c.col_stride, 1);
  EXPECT_EQ(p.problem.a.address, 0x2000u);  // B^T
}

TEST(GemmPlanTest, CoopMatOnlyWhenDeviceAndBuildHaveIt) {
  DeviceCaps caps = h200_like();
  GemmDesc f16 = shape(512, 512, 520, DType::kF16, DType::kF16);
  // Operands with a unit stride take the vectorised kernel, with 16-byte loads where aligned.
  GemmPlan v = ops::choose_gemm_plan(f16, caps, all_shaders);
  EXPECT_EQ(v.kernel, GemmKernel::kCoopMatVec);
  EXPECT_EQ(v.shader, "gemm_coopmatv_f16_f16");
  EXPECT_LE(v.shared_bytes, caps.max_shared_memory);
  EXPECT_EQ(v.spec[7], 1u);  // A contiguous along k
  EXPECT_EQ(v.spec[8], 1u);  // B contiguous along n
  GemmDesc wt = f16;         // x @ W^T: B contiguous along k
  wt.b = {0x2000, 1, 520};
  EXPECT_EQ(ops::choose_gemm_plan(wt, caps, all_shaders).spec[8], 0u);
  EXPECT_EQ(v.spec[10], 0u);  // A and B in 16-byte loads
  EXPECT_EQ(v.spec[11], 0u);
  f16.k = 511;  // A's rows no longer 16-byte aligned: read element by element
  f16.a.row_stride = 511;
  GemmPlan odd_k = ops::choose_gemm_plan(f16, caps, all_shaders);
  EXPECT_EQ(odd_k.kernel, GemmKernel::kCoopMatVec);
  EXPECT_EQ(odd_k.spec[10], 1u);
  EXPECT_EQ(odd_k.spec[11], 0u);
  f16.a = {0x1000, 2, 1024};  // no unit stride at all: the general kernel
  GemmPlan p = ops::choose_gemm_plan(f16, caps, all_shaders);
  EXPECT_EQ(p.kernel, GemmKernel::kCoopMat);
  EXPECT_EQ(p.shader, "gemm_coopmat_f16_f16");
  EXPECT_LE(p.shared_bytes, caps.max_shared_memory);
  EXPECT_EQ(p.spec[0] % caps.subgroup_size, 0u);
  // Big problems: 128x128 tiles; the subgroup grid covers the tile exactly.
  for (int64_t size : {512, 4096}) {
    GemmPlan q = ops::choose_gemm_plan(shape(size, size, size + 1, DType::kF16, DType::kF16), caps,
                                       all_shaders);
    const auto& s = q.spec;  // {threads, BM, BN, BK, WM, WN, subgroups}
    EXPECT_EQ(s[0], s[6] * caps.subgroup_size);
    EXPECT_EQ((s[1] / (16 * s[4])) * (s[2] / (16 * s[5])), s[6]);
    EXPECT_EQ(s[1], size == 4096 ? 128u : 64u);
    EXPECT_EQ((s[1] * s[3]) % s[0], 0u);  // whole A tile loads per thread
  }
  // Not in this build (Debian 12's glslang): the tiled kernel.
  EXPECT_EQ(ops::choose_gemm_plan(f16, caps, no_coopmat).kernel, GemmKernel::kTiled);
  // bf16 needs the device's bf16 cooperative matrices.
  GemmDesc bf16 = shape(512, 512, 512, DType::kBF16, DType::kF32);
  EXPECT_EQ(ops::choose_gemm_plan(bf16, caps, all_shaders).kernel, GemmKernel::kCoopMatVec);
  caps.coopmat_bf16 = false;
  EXPECT_EQ(ops::choose_gemm_plan(bf16, caps, all_shaders).kernel, GemmKernel::kTiled);
  // A device without the 16x16x16 fp32-accumulating shape.
  DeviceCaps odd = h200_like();
  odd.coopmat_shapes = {{16, 8, 16, DType::kF16, DType::kF16, DType::kF16, DType::kF16}};
  EXPECT_EQ(ops::choose_gemm_plan(f16, odd, all_shaders).kernel, GemmKernel::kTiled);
  // fp32, f64 and tiny problems never use it (fp32 takes the SIMT kernel on GPUs).
  EXPECT_EQ(ops::choose_gemm_plan(shape(512, 512, 512), caps, all_shaders).kernel,
            GemmKernel::kSimt);
  EXPECT_EQ(
      ops::choose_gemm_plan(shape(8, 8, 8, DType::kF16, DType::kF16), caps, all_shaders).kernel,
      GemmKernel::kTiled);
  // No coopmat on lavapipe.
  EXPECT_EQ(ops::choose_gemm_plan(f16, lavapipe_like(), all_shaders).kernel, GemmKernel::kTiled);
}

TEST(GemmPlanTest, NarrowSidesTakeSixtyFourWideBlocks) {
  const DeviceCaps caps = h200_like();
  auto spec = [&](int64_t m, int64_t n, int64_t batch) {
    GemmDesc d = shape(m, n, 512, DType::kF16, DType::kF16);
    d.b = {0x2000, n, 1};
    d.batch[0] = batch;
    d.a.batch_stride[0] = m * 512, d.b.batch_stride[0] = 0, d.c.batch_stride[0] = m * n;
    const GemmPlan p = ops::choose_gemm_plan(d, caps, all_shaders);
    EXPECT_EQ(p.kernel, GemmKernel::kCoopMatVec);
    const auto& s = p.spec;  // {threads, BM, BN, BK, WM, WN, subgroups}
    EXPECT_EQ((s[1] / (16 * s[4])) * (s[2] / (16 * s[5])), s[6]);
    return std::pair<uint32_t, uint32_t>{s[1], s[2]};
  };
  // A 1x1 convolution over 7x7 planes, per sample: N = 49 fills 38% of a 128-wide block.
  EXPECT_EQ(spec(2048, 49, 64), (std::pair<uint32_t, uint32_t>{128, 64}));
  EXPECT_EQ(spec(40, 4096, 8), (std::pair<uint32_t, uint32_t>{64, 128}));
  // 196 fills 77% of two 128-wide blocks and of four 64-wide ones: the larger block stays.
  EXPECT_EQ(spec(2048, 196, 64), (std::pair<uint32_t, uint32_t>{128, 128}));
  EXPECT_EQ(spec(4096, 4096, 1), (std::pair<uint32_t, uint32_t>{128, 128}));
}

TEST(GemmPlanTest, SplitsLongKWhenTheOutputIsSmall) {
  // A convolution's weight gradient: few output blocks, very long K.
  GemmPlan p = ops::choose_gemm_plan(shape(64, 576, 200704), h200_like(), all_shaders);
  EXPECT_GT(p.split_k, 1u);
  EXPECT_EQ(p.k_chunk % 32, 0);
  EXPECT_GE(p.split_k * p.k_chunk, 200704);
  EXPECT_LT((p.split_k - 1) * p.k_chunk, 200704);  // no empty slice
  GemmPlan coop = ops::choose_gemm_plan(shape(64, 576, 200704, DType::kF16, DType::kF16),
                                        h200_like(), all_shaders);
  EXPECT_EQ(coop.kernel, GemmKernel::kCoopMatVec);
  EXPECT_GT(coop.split_k, 1u);
  // Enough blocks already, or a short K: no split.
  EXPECT_EQ(ops::choose_gemm_plan(shape(4096, 4096, 4096), h200_like(), all_shaders).split_k, 1u);
  EXPECT_EQ(ops::choose_gemm_plan(shape(64, 64, 512), h200_like(), all_shaders).split_k, 1u);
  EXPECT_EQ(ops::choose_gemm_plan(shape(64, 1, 100000), h200_like(), all_shaders).split_k, 1u);
  EXPECT_GT(ops::choose_gemm_plan(shape(32, 30, 4099), lavapipe_like(), all_shaders).split_k, 1u);
}

// The SIMT kernel's few-block products (weight gradients over many tokens) split K towards 1024
// blocks on NVIDIA (H200 sweep), 256 elsewhere; the sweep variable overrides both.
TEST(GemmPlanTest, SimtSplitKTargetFollowsVendor) {
  unsetenv("VKML_GEMM_SIMT_SPLITK_BLOCKS");
  DeviceCaps nvidia = h200_like();
  nvidia.vendor_id = 0x10DE;
  DeviceCaps other = nvidia;
  other.vendor_id = 0x1002;
  const GemmDesc wgrad = shape(768, 768, 12608), dgrad = shape(4096, 768, 3072);
  GemmPlan p = ops::choose_gemm_plan(wgrad, nvidia, all_shaders);
  ASSERT_EQ(p.kernel, GemmKernel::kSimt);
  EXPECT_EQ(p.split_k, 7u);  // 144 blocks of 64x64: 1024 / 144
  EXPECT_GE(p.split_k * p.k_chunk, 12608);
  EXPECT_LT((p.split_k - 1) * p.k_chunk, 12608);
  EXPECT_EQ(ops::choose_gemm_plan(dgrad, nvidia, all_shaders).split_k, 2u);  // 384 blocks
  EXPECT_EQ(ops::choose_gemm_plan(wgrad, other, all_shaders).split_k, 1u);
  EXPECT_EQ(ops::choose_gemm_plan(dgrad, other, all_shaders).split_k, 1u);
  EXPECT_EQ(ops::choose_gemm_plan(shape(4096, 768, 768), nvidia, all_shaders).split_k, 1u);
  ScopedEnv sweep("VKML_GEMM_SIMT_SPLITK_BLOCKS", "512");
  EXPECT_EQ(ops::choose_gemm_plan(wgrad, other, all_shaders).split_k, 3u);
  EXPECT_EQ(ops::choose_gemm_plan(dgrad, nvidia, all_shaders).split_k, 1u);
}

// A read in 4x4 blocks leaves its shared rows unpadded, so a 128x64 block with a K step of 32
// fits in the H200's 48 KiB (padded it needs 51 KiB); an A the blocks cannot read keeps the pads,
// and the override is refused there.
TEST(GemmPlanTest, SimtDeepKStepFitsWithUnpaddedA) {
  ScopedEnv tile("VKML_GEMM_SIMT_TILE", "128x64x32x32x64x8x8");
  GemmPlan p = ops::choose_gemm_plan(shape(4096, 4096, 4096), h200_like(), all_shaders);
  ASSERT_EQ(p.kernel, GemmKernel::kSimt);
  EXPECT_EQ(p.spec[3], 32u);
  ASSERT_EQ(p.spec.size(), 14u);
  EXPECT_EQ(p.spec[13], 2u);  // blocks, A's rows unpadded
  EXPECT_EQ(p.shared_bytes, 2u * 32 * (32 + 16) * 16);
  // x @ W^T: B k-contiguous too; with A unpadded the tile still needs 50 KiB, so B goes in blocks
  // with unpadded rows as well (spec 14 = 2).
  GemmDesc nt = shape(4096, 4096, 4096);
  nt.b = {0x2000, 1, 4096};
  GemmPlan q = ops::choose_gemm_plan(nt, h200_like(), all_shaders);
  ASSERT_EQ(q.kernel, GemmKernel::kSimt);
  EXPECT_EQ(q.spec[3], 32u);
  ASSERT_EQ(q.spec.size(), 15u);
  EXPECT_EQ(q.spec[13], 2u);
  EXPECT_EQ(q.spec[14], 2u);
  EXPECT_EQ(q.shared_bytes, 2u * 32 * (32 + 16) * 16);
  GemmPlan odd = ops::choose_gemm_plan(shape(4096, 4096, 4095), h200_like(), all_shaders);
  ASSERT_EQ(odd.kernel, GemmKernel::kSimt);
  EXPECT_EQ(odd.spec[3], 16u);  // the default tile
  EXPECT_LE(odd.shared_bytes, h200_like().max_shared_memory);
}

TEST(GemmPlanTest, SimtKernelOnRequestForEveryLayout) {
  // The GPU default (named accumulators, 128x64 blocks of 8x8 thread tiles); CPU devices keep
  // theirs without VKML_GEMM_F32_KERNEL; without the shader, the tiled kernel.
  GemmPlan gpu = ops::choose_gemm_plan(shape(4096, 4096, 4096), h200_like(), all_shaders);
  ASSERT_EQ(gpu.kernel, GemmKernel::kSimt);
  EXPECT_EQ(gpu.shader, "gemm_simtn_f32_f32");
  EXPECT_EQ(gpu.tile_m, 128u);
  EXPECT_EQ(gpu.tile_n, 64u);
  EXPECT_EQ(gpu.spec[6], 8u);  // TM
  EXPECT_EQ(gpu.spec[7], 8u);  // TN
  EXPECT_NE(ops::choose_gemm_plan(shape(4096, 4096, 4096), lavapipe_like(), all_shaders).kernel,
            GemmKernel::kSimt);
  EXPECT_EQ(ops::choose_gemm_plan(shape(4096, 4096, 4096), h200_like(),
                                  [](const std::string& s) { return s != "gemm_simtn_f32_f32"; })
                .kernel,
            GemmKernel::kTiled);
  EXPECT_EQ(ops::choose_gemm_plan(shape(4096, 4096, 4096, DType::kF16, DType::kF32), h200_like(),
                                  no_coopmat)
                .kernel,
            GemmKernel::kTiled);
  {
    // The named-accumulator variant: same plan, its own shader, thread tiles of 4 or 8 only.
    ScopedEnv named("VKML_GEMM_F32_KERNEL", "simtn");
    GemmPlan n = ops::choose_gemm_plan(shape(4096, 4096, 4096), h200_like(), all_shaders);
    ASSERT_EQ(n.kernel, GemmKernel::kSimt);
    EXPECT_EQ(n.shader, "gemm_simtn_f32_f32");
    ScopedEnv tile("VKML_GEMM_SIMT_TILE", "32x32x8x16x16x4x4");
    EXPECT_EQ(ops::choose_gemm_plan(shape(64, 64, 64), h200_like(), all_shaders).shader,
              "gemm_simtn_f32_f32");
    ScopedEnv bad("VKML_GEMM_SIMT_TILE", "32x48x8x16x48x4x12");
    EXPECT_EQ(ops::choose_gemm_plan(shape(64, 96, 64), h200_like(), all_shaders).kernel,
              GemmKernel::kTiled);
  }
  ScopedEnv kernel("VKML_GEMM_F32_KERNEL", "simt");
  for (const DeviceCaps& caps : {lavapipe_like(), h200_like()}) {
    GemmPlan p = ops::choose_gemm_plan(shape(4096, 4096, 4096), caps, all_shaders);
    ASSERT_EQ(p.kernel, GemmKernel::kSimt);
    EXPECT_EQ(p.shader, "gemm_simt_f32_f32");
    ASSERT_EQ(p.spec.size(), 14u);
    EXPECT_EQ(p.spec[0], (p.spec[1] / p.spec[6]) * (p.spec[2] / p.spec[7]));
    EXPECT_EQ(p.spec[12], 0u);  // no diagnostic probe
    EXPECT_EQ(p.spec[13], 1u);  // k-contiguous aligned A: 4x4 blocks, rows padded (the tile fits)
    EXPECT_EQ(p.tile_m, 128u);
    EXPECT_LE(p.shared_bytes, caps.max_shared_memory);
    EXPECT_EQ(p.spec[8], 1u);   // A walked along k
    EXPECT_EQ(p.spec[9], 1u);   // B walked along n
    EXPECT_EQ(p.spec[10], 0u);  // (k-contiguous A: no 16-byte loads along m)
    EXPECT_EQ(p.spec[11], 1u);  // 16-byte loads of B
    // A^T @ B^T (both transposed views): 16-byte loads of A along m, scalar loads of B along k.
    GemmDesc t = shape(4096, 4096, 4096);
    t.a = {0x1000, 1, 4096};
    t.b = {0x2000, 1, 4096};
    GemmPlan q = ops::choose_gemm_plan(t, caps, all_shaders);
    ASSERT_EQ(q.kernel, GemmKernel::kSimt);
    EXPECT_EQ(q.spec[8], 0u);
    EXPECT_EQ(q.spec[9], 0u);
    EXPECT_EQ(q.spec[10], 1u);
    EXPECT_EQ(q.spec[11], 0u);
    // Odd sizes and general strides stay on it (scalar loads), small problems get a small tile.
    GemmPlan odd = ops::choose_gemm_plan(shape(33, 65, 17), caps, all_shaders);
    EXPECT_EQ(odd.kernel, GemmKernel::kSimt);
    EXPECT_EQ(odd.spec[11], 0u);
    EXPECT_EQ(odd.spec.size(), 12u);  // K = 65: no 4x4 blocks of A
    EXPECT_EQ(ops::choose_gemm_plan(shape(40, 40, 64), caps, all_shaders).tile_m, 64u);
    // A stride too long for the 32-bit offsets of the K loop: the tiled kernel.
    GemmDesc huge = shape(64, 64, 64);
    huge.a.row_stride = int64_t{1} << 26;
    EXPECT_EQ(ops::choose_gemm_plan(huge, caps, all_shaders).kernel, GemmKernel::kTiled);
    // Other dtypes are unaffected; a build without the shader falls back.
    EXPECT_NE(ops::choose_gemm_plan(shape(64, 64, 64, DType::kF64, DType::kF64), caps, all_shaders)
                  .kernel,
              GemmKernel::kSimt);
    EXPECT_NE(ops::choose_gemm_plan(shape(64, 64, 64), caps,
                                    [](const std::string& s) { return s != "gemm_simt_f32_f32"; })
                  .kernel,
              GemmKernel::kSimt);
  }
  {
    ScopedEnv tile("VKML_GEMM_SIMT_TILE", "64x128x16x64x32x8x4");
    GemmPlan p = ops::choose_gemm_plan(shape(4096, 4096, 4096), h200_like(), all_shaders);
    EXPECT_EQ(p.tile_m, 64u);
    EXPECT_EQ(p.tile_n, 128u);
    EXPECT_EQ(p.spec[0], 256u);
    EXPECT_EQ(p.spec[3], 16u);
  }
  {
    ScopedEnv bad("VKML_GEMM_SIMT_TILE", "128x128x8x48x64x8x8");  // 48 does not divide 128
    EXPECT_EQ(ops::choose_gemm_plan(shape(4096, 4096, 4096), h200_like(), all_shaders).spec[4],
              32u);
  }
  ScopedEnv tiled("VKML_GEMM_F32_KERNEL", "tiled");
  EXPECT_EQ(ops::choose_gemm_plan(shape(1024, 1024, 64), lavapipe_like(), all_shaders).kernel,
            GemmKernel::kTiled);
}

TEST(GemmPlanTest, LargeSharedMemoryAllowsDeeperTiles) {
  GemmPlan p = ops::choose_gemm_plan(shape(4096, 4096, 4096), h200_like(), scalar_tiled);
  EXPECT_EQ(p.tile_m, 128u);
  EXPECT_EQ(p.spec[3], 16u);  // BK
  GemmPlan q = ops::choose_gemm_plan(shape(4096, 4096, 4096), lavapipe_like(), scalar_tiled);
  EXPECT_EQ(q.spec[3], 8u);
}

// ---- device tests -------------------------------------------------------------------------------

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

// The SIMT fp32 kernel on a small tile (cheap to compile on lavapipe): odd sizes, every layout
// (16-byte and scalar loads), batches with broadcast, the epilogue and split-K; also its
// named-accumulator variant with 8x8 thread tiles (all four accumulator blocks).
TEST_F(GemmTest, SimtKernelLayoutsEpilogueSplitK) {
  for (auto [name, tile_spec] : {std::pair{"simt", "32x32x8x16x16x4x4"},
                                 std::pair{"simtn", "32x32x8x16x16x8x8"}}) {
    SCOPED_TRACE(name);
    ScopedEnv kernel("VKML_GEMM_F32_KERNEL", name);
    ScopedEnv tile("VKML_GEMM_SIMT_TILE", tile_spec);
    const GemmPlan plan = ops::choose_gemm_plan(shape(200, 136, 72), dev().caps());
    ASSERT_EQ(plan.kernel, GemmKernel::kSimt);
    ASSERT_EQ(plan.shader, std::string("gemm_") + name + "_f32_f32");
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

// The SIMT kernel's other tiles (GPU-sized, slow to compile on lavapipe): the common layouts,
// partial edge tiles and the epilogue.
TEST_F(GemmTest, SimtKernelTiles) {
  ScopedEnv kernel("VKML_GEMM_F32_KERNEL", "simt");
  for (const char* tile : {"", "64x32x32x32x16x8x4"}) {
    ScopedEnv override("VKML_GEMM_SIMT_TILE", tile);  // "" = the planner's own choice
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

// Where fp32 products take the split into fp16 tensor-core GEMMs without VKML_GEMM_F32_SPLIT:
// NVIDIA GPUs and products of at least 512 output blocks of 128x128.
TEST(GemmF32SplitTest, DefaultsFollowVendorAndSize) {
  unsetenv("VKML_GEMM_F32_SPLIT");
  DeviceCaps nvidia = h200_like();
  nvidia.vendor_id = 0x10DE;
  DeviceCaps other = nvidia;
  other.vendor_id = 0x1002;
  GemmDesc big = shape(8192, 8192, 8192), narrow = shape(4096, 3072, 768);
  EXPECT_TRUE(ops::gemm_f32_split_wanted(big, nvidia));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(big, other));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(big, lavapipe_like()));
  EXPECT_TRUE(ops::gemm_f32_split_wanted(narrow, nvidia));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(8192, 8192, 512), nvidia));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(512, 8192, 8192), nvidia));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(2304, 768, 4096), nvidia));  // 108 blocks
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(1024, 1024, 1024), nvidia));
  EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(4096, 3072, 768), nvidia));   // 768 blocks
  {
    ScopedEnv min_blocks("VKML_GEMM_F32_SPLIT_MIN_BLOCKS", "0");
    EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(2304, 768, 4096), nvidia));
    EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(1024, 1024, 1024), nvidia));
  }
  EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(4096, 50257, 768), nvidia));
  GemmDesc half = shape(8192, 8192, 8192, DType::kF16, DType::kF32);
  EXPECT_FALSE(ops::gemm_f32_split_wanted(half, nvidia));
  GemmDesc batched = big;
  batched.batch[0] = 2;
  EXPECT_FALSE(ops::gemm_f32_split_wanted(batched, nvidia));
  GemmDesc in_place = big;  // addmm_: C_in is C, which the products overwrite first
  in_place.beta = 1.0;
  in_place.c_in = in_place.c;
  EXPECT_FALSE(ops::gemm_f32_split_wanted(in_place, nvidia));
  {
    ScopedEnv off("VKML_GEMM_F32_SPLIT", "0");
    EXPECT_FALSE(ops::gemm_f32_split_wanted(big, nvidia));
  }
  {
    ScopedEnv on("VKML_GEMM_F32_SPLIT", "1");
    EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(64, 64, 64), other));
    EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(64, 64, 64), lavapipe_like()));
  }
  ScopedEnv forced("VKML_GEMM_F32_SPLIT", "force");
  EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(64, 64, 64), lavapipe_like()));
}

// GemmDesc::max_k_slice cuts K however many blocks the output has, in whole K tiles of 32, and
// keeps the product off the coopmat2 kernel (no split-K there).
TEST(GemmF32SplitTest, SliceBoundIsHonoured) {
  const DeviceCaps caps = h200_like();
  GemmDesc big = shape(8192, 8192, 8192, DType::kF16, DType::kF32);
  EXPECT_EQ(ops::choose_gemm_plan(big, caps, all_shaders).split_k, 1u);
  big.max_k_slice = 1024;
  GemmPlan plan = ops::choose_gemm_plan(big, caps, all_shaders);
  EXPECT_EQ(plan.split_k, 8u);
  EXPECT_EQ(plan.k_chunk, 1024);
  GemmDesc odd = shape(100, 100, 1000, DType::kF16, DType::kF32);
  odd.max_k_slice = 300;  // 288 in whole tiles: 4 slices of 256
  plan = ops::choose_gemm_plan(odd, caps, all_shaders);
  EXPECT_EQ(plan.split_k, 4u);
  EXPECT_EQ(plan.k_chunk, 256);
  odd.max_k_slice = 1000;  // 992 in whole tiles: 2 slices
  EXPECT_EQ(ops::choose_gemm_plan(odd, caps, all_shaders).split_k, 2u);
  odd.max_k_slice = 1024;  // K fits one slice: the planner's own choice
  EXPECT_EQ(ops::choose_gemm_plan(odd, caps, all_shaders).split_k, 1u);
  DeviceCaps cm2 = caps;
  cm2.coopmat2_tensor = true;
  big.max_k_slice = 0;
  ASSERT_EQ(ops::choose_gemm_plan(big, cm2, all_shaders).kernel, GemmKernel::kCoopMat2);
  big.max_k_slice = 1024;
  plan = ops::choose_gemm_plan(big, cm2, all_shaders);
  EXPECT_NE(plan.kernel, GemmKernel::kCoopMat2);
  EXPECT_EQ(plan.k_chunk, 1024);
}

}  // namespace vkml::testing
