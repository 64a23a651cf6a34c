// GEMM planning: which kernel, tile and split each problem gets on synthetic CPU and tensor-core
// GPU devices of several classes (no GPU needed), and when fp32 products take the fp16
// tensor-core split.
#include <string>

#include "gemm_test_util.h"
#include "ops/gemm/gemm_f32_split.h"
#include "test_util.h"
#include "vkml/config.h"

namespace vkml::testing {

TEST(GemmPlanTest, CpuDevicesUseTiledKernelsWithinSharedMemory) {
  DeviceCaps caps = cpu_like();
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
  // GPUs take the SIMT kernel by default, CPU devices the vectorised one.
  EXPECT_EQ(ops::choose_gemm_plan(shape(1024, 1024, 64), tensor_gpu_like(), all_shaders).kernel,
            GemmKernel::kSimt);
  for (const DeviceCaps& caps : {cpu_like()}) {
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
  DeviceCaps caps = cpu_like();
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
  GemmPlan p = ops::choose_gemm_plan(d, cpu_like(), all_shaders);
  EXPECT_TRUE(p.transposed);
  EXPECT_EQ(p.problem.m, 60);
  EXPECT_EQ(p.problem.c.col_stride, 1);
  EXPECT_EQ(p.problem.a.address, 0x2000u);  // B^T
}

TEST(GemmPlanTest, CoopMatOnlyWhenDeviceAndBuildHaveIt) {
  DeviceCaps caps = tensor_gpu_like();
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
  f16.k = 511;  // A's rows not 16-byte aligned: read element by element
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
  // Not in this build (a glslang without cooperative matrices): the tiled kernel.
  EXPECT_EQ(ops::choose_gemm_plan(f16, caps, no_coopmat).kernel, GemmKernel::kTiled);
  // bf16 needs the device's bf16 cooperative matrices.
  GemmDesc bf16 = shape(512, 512, 512, DType::kBF16, DType::kF32);
  EXPECT_EQ(ops::choose_gemm_plan(bf16, caps, all_shaders).kernel, GemmKernel::kCoopMatVec);
  caps.coopmat_bf16 = false;
  EXPECT_EQ(ops::choose_gemm_plan(bf16, caps, all_shaders).kernel, GemmKernel::kTiled);
  // A device without the 16x16x16 fp32-accumulating shape.
  DeviceCaps odd = tensor_gpu_like();
  odd.coopmat_shapes = {{16, 8, 16, DType::kF16, DType::kF16, DType::kF16, DType::kF16}};
  EXPECT_EQ(ops::choose_gemm_plan(f16, odd, all_shaders).kernel, GemmKernel::kTiled);
  // fp32, f64 and tiny problems never use it (fp32 takes the SIMT kernel on GPUs).
  EXPECT_EQ(ops::choose_gemm_plan(shape(512, 512, 512), caps, all_shaders).kernel,
            GemmKernel::kSimt);
  EXPECT_EQ(
      ops::choose_gemm_plan(shape(8, 8, 8, DType::kF16, DType::kF16), caps, all_shaders).kernel,
      GemmKernel::kTiled);
  // No cooperative matrices on the CPU device.
  EXPECT_EQ(ops::choose_gemm_plan(f16, cpu_like(), all_shaders).kernel, GemmKernel::kTiled);
}

TEST(GemmPlanTest, NarrowSidesTakeSixtyFourWideBlocks) {
  const DeviceCaps caps = tensor_gpu_like();
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
  GemmPlan p = ops::choose_gemm_plan(shape(64, 576, 200704), tensor_gpu_like(), all_shaders);
  EXPECT_GT(p.split_k, 1u);
  EXPECT_EQ(p.k_chunk % 32, 0);
  EXPECT_GE(p.split_k * p.k_chunk, 200704);
  EXPECT_LT((p.split_k - 1) * p.k_chunk, 200704);  // no empty slice
  GemmPlan coop = ops::choose_gemm_plan(shape(64, 576, 200704, DType::kF16, DType::kF16),
                                        tensor_gpu_like(), all_shaders);
  EXPECT_EQ(coop.kernel, GemmKernel::kCoopMatVec);
  EXPECT_GT(coop.split_k, 1u);
  // Enough blocks already, or a short K: no split.
  EXPECT_EQ(ops::choose_gemm_plan(shape(4096, 4096, 4096), tensor_gpu_like(), all_shaders).split_k, 1u);
  EXPECT_EQ(ops::choose_gemm_plan(shape(64, 64, 512), tensor_gpu_like(), all_shaders).split_k, 1u);
  EXPECT_EQ(ops::choose_gemm_plan(shape(64, 1, 100000), tensor_gpu_like(), all_shaders).split_k, 1u);
  EXPECT_GT(ops::choose_gemm_plan(shape(32, 30, 4099), cpu_like(), all_shaders).split_k, 1u);
}

// The SIMT kernel's few-block products (weight gradients over many tokens) split K towards 1024
// blocks in the NVIDIA class, 256 in the others; the sweep settings override the target and the
// least slice depth.
TEST(GemmPlanTest, SimtSplitKTargetFollowsDeviceClass) {
  const DeviceCaps nvidia = nvidia_like(), other = amd_like();
  const GemmDesc wgrad = shape(768, 768, 12608), dgrad = shape(4096, 768, 3072);
  GemmPlan p = ops::choose_gemm_plan(wgrad, nvidia, all_shaders);
  ASSERT_EQ(p.kernel, GemmKernel::kSimt);
  EXPECT_EQ(p.split_k, 7u);  // 144 blocks of 64x64: 1024 / 144
  EXPECT_GE(p.split_k * p.k_chunk, 12608);
  EXPECT_LT((p.split_k - 1) * p.k_chunk, 12608);
  EXPECT_EQ(ops::choose_gemm_plan(dgrad, nvidia, all_shaders).split_k, 2u);  // 384 blocks
  EXPECT_EQ(ops::choose_gemm_plan(wgrad, other, all_shaders).split_k, 1u);
  EXPECT_EQ(ops::choose_gemm_plan(dgrad, other, all_shaders).split_k, 1u);
  EXPECT_EQ(ops::choose_gemm_plan(wgrad, tensor_gpu_like(), all_shaders).split_k, 1u);  // generic
  EXPECT_EQ(ops::choose_gemm_plan(shape(4096, 768, 768), nvidia, all_shaders).split_k, 1u);
  const GemmDesc r50_1x1 = shape(512, 3136, 2048);  // 196 blocks of 128x64
  EXPECT_EQ(ops::choose_gemm_plan(r50_1x1, nvidia, all_shaders).split_k, 4u);  // slices of 512
  {
    ConfigOverride deep("VKML_GEMM_SIMT_SPLITK_MIN_SLICE", "1024");
    EXPECT_EQ(ops::choose_gemm_plan(r50_1x1, nvidia, all_shaders).split_k, 2u);
    EXPECT_EQ(ops::choose_gemm_plan(wgrad, nvidia, all_shaders).split_k, 7u);
    EXPECT_EQ(ops::choose_gemm_plan(shape(768, 768, 4096), nvidia, all_shaders).split_k, 4u);
  }
  ConfigOverride sweep("VKML_GEMM_SIMT_SPLITK_BLOCKS", "512");
  EXPECT_EQ(ops::choose_gemm_plan(wgrad, other, all_shaders).split_k, 3u);
  EXPECT_EQ(ops::choose_gemm_plan(dgrad, nvidia, all_shaders).split_k, 1u);
}

// A read in 4x4 blocks leaves its shared rows unpadded, so a 128x64 block with a K step of 32
// fits in 48 KiB (padded it needs 51 KiB); an A the blocks cannot read keeps the pads, and the
// override is refused there.
TEST(GemmPlanTest, SimtDeepKStepFitsWithUnpaddedA) {
  ConfigOverride tile("VKML_GEMM_SIMT_TILE", "128x64x32x32x64x8x8");
  GemmPlan p = ops::choose_gemm_plan(shape(4096, 4096, 4096), tensor_gpu_like(), all_shaders);
  ASSERT_EQ(p.kernel, GemmKernel::kSimt);
  EXPECT_EQ(p.spec[3], 32u);
  ASSERT_EQ(p.spec.size(), 14u);
  EXPECT_EQ(p.spec[13], 2u);  // blocks, A's rows unpadded
  EXPECT_EQ(p.shared_bytes, 2u * 32 * (32 + 16) * 16);
  // x @ W^T: B k-contiguous too; with A unpadded the tile still needs 50 KiB, so B goes in blocks
  // with unpadded rows as well (spec 14 = 2).
  GemmDesc nt = shape(4096, 4096, 4096);
  nt.b = {0x2000, 1, 4096};
  GemmPlan q = ops::choose_gemm_plan(nt, tensor_gpu_like(), all_shaders);
  ASSERT_EQ(q.kernel, GemmKernel::kSimt);
  EXPECT_EQ(q.spec[3], 32u);
  ASSERT_EQ(q.spec.size(), 15u);
  EXPECT_EQ(q.spec[13], 2u);
  EXPECT_EQ(q.spec[14], 2u);
  EXPECT_EQ(q.shared_bytes, 2u * 32 * (32 + 16) * 16);
  GemmPlan odd = ops::choose_gemm_plan(shape(4096, 4096, 4095), tensor_gpu_like(), all_shaders);
  ASSERT_EQ(odd.kernel, GemmKernel::kSimt);
  EXPECT_EQ(odd.spec[3], 16u);  // the default tile
  EXPECT_LE(odd.shared_bytes, tensor_gpu_like().max_shared_memory);
}

// Over M = 64 the 128-row block would spend half its multiplies past the last row: the planner
// takes the 64x128 block (its transpose) when that computes 10% fewer padded outputs, and keeps
// 128x64 where M fills it.
TEST(GemmPlanTest, SimtTileFollowsNarrowM) {
  GemmDesc narrow = shape(64, 3136, 256);  // ResNet-50's 256->64 1x1 convolution, one sample
  narrow.batch[1] = 64;
  narrow.a.batch_stride[1] = 0;
  narrow.b.batch_stride[1] = 256 * 3136;
  narrow.c.batch_stride[1] = 64 * 3136;
  GemmPlan p = ops::choose_gemm_plan(narrow, tensor_gpu_like(), all_shaders);
  ASSERT_EQ(p.kernel, GemmKernel::kSimt);
  EXPECT_EQ(p.tile_m, 64u);
  EXPECT_EQ(p.tile_n, 128u);
  GemmPlan wide = ops::choose_gemm_plan(shape(4096, 768, 768), tensor_gpu_like(), all_shaders);
  EXPECT_EQ(wide.tile_m, 128u);
  EXPECT_EQ(wide.tile_n, 64u);
  GemmPlan tall = ops::choose_gemm_plan(shape(12544, 64, 256), tensor_gpu_like(), all_shaders);
  EXPECT_EQ(tall.tile_m, 128u);  // N = 64 already fills the 128x64 block's columns
  // 200 rows: 256 padded either way, so the first tile stays.
  EXPECT_EQ(ops::choose_gemm_plan(shape(200, 4096, 256), tensor_gpu_like(), all_shaders).tile_m, 128u);
}

TEST(GemmPlanTest, SimtKernelOnRequestForEveryLayout) {
  // The GPU default (named accumulators, 128x64 blocks of 8x8 thread tiles); CPU devices keep
  // theirs without VKML_GEMM_F32_KERNEL; without the shader, the tiled kernel.
  GemmPlan gpu = ops::choose_gemm_plan(shape(4096, 4096, 4096), tensor_gpu_like(), all_shaders);
  ASSERT_EQ(gpu.kernel, GemmKernel::kSimt);
  EXPECT_EQ(gpu.shader, "gemm_simtn_f32_f32");
  EXPECT_EQ(gpu.tile_m, 128u);
  EXPECT_EQ(gpu.tile_n, 64u);
  EXPECT_EQ(gpu.spec[6], 8u);  // TM
  EXPECT_EQ(gpu.spec[7], 8u);  // TN
  EXPECT_NE(ops::choose_gemm_plan(shape(4096, 4096, 4096), cpu_like(), all_shaders).kernel,
            GemmKernel::kSimt);
  const auto no_simt = [](const std::string& s) { return s != "gemm_simtn_f32_f32"; };
  EXPECT_EQ(ops::choose_gemm_plan(shape(4096, 4096, 4096), tensor_gpu_like(), no_simt).kernel,
            GemmKernel::kTiled);
  EXPECT_EQ(ops::choose_gemm_plan(shape(4096, 4096, 4096, DType::kF16, DType::kF32),
                                  tensor_gpu_like(), no_coopmat)
                .kernel,
            GemmKernel::kTiled);
  {
    // Thread tiles of 4 or 8 only: others fall back to the tiled kernel.
    ConfigOverride tile("VKML_GEMM_SIMT_TILE", "32x32x8x16x16x4x4");
    EXPECT_EQ(ops::choose_gemm_plan(shape(64, 64, 64), tensor_gpu_like(), all_shaders).shader,
              "gemm_simtn_f32_f32");
    ConfigOverride bad("VKML_GEMM_SIMT_TILE", "32x48x8x16x48x4x12");
    EXPECT_EQ(ops::choose_gemm_plan(shape(64, 96, 64), tensor_gpu_like(), all_shaders).kernel,
              GemmKernel::kTiled);
  }
  ConfigOverride kernel("VKML_GEMM_F32_KERNEL", "simtn");
  for (const DeviceCaps& caps : {cpu_like(), tensor_gpu_like()}) {
    GemmPlan p = ops::choose_gemm_plan(shape(4096, 4096, 4096), caps, all_shaders);
    ASSERT_EQ(p.kernel, GemmKernel::kSimt);
    EXPECT_EQ(p.shader, "gemm_simtn_f32_f32");
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
    EXPECT_NE(ops::choose_gemm_plan(shape(64, 64, 64), caps, no_simt).kernel, GemmKernel::kSimt);
  }
  {
    ConfigOverride tile("VKML_GEMM_SIMT_TILE", "64x128x16x64x32x8x4");
    GemmPlan p = ops::choose_gemm_plan(shape(4096, 4096, 4096), tensor_gpu_like(), all_shaders);
    EXPECT_EQ(p.tile_m, 64u);
    EXPECT_EQ(p.tile_n, 128u);
    EXPECT_EQ(p.spec[0], 256u);
    EXPECT_EQ(p.spec[3], 16u);
  }
  {
    ConfigOverride bad("VKML_GEMM_SIMT_TILE", "128x128x8x48x64x8x8");  // 48 does not divide 128
    EXPECT_EQ(
        ops::choose_gemm_plan(shape(4096, 4096, 4096), tensor_gpu_like(), all_shaders).spec[4],
        32u);
  }
  ConfigOverride tiled("VKML_GEMM_F32_KERNEL", "tiled");
  EXPECT_EQ(ops::choose_gemm_plan(shape(1024, 1024, 64), cpu_like(), all_shaders).kernel,
            GemmKernel::kTiled);
}

TEST(GemmPlanTest, LargeSharedMemoryAllowsDeeperTiles) {
  GemmPlan p = ops::choose_gemm_plan(shape(4096, 4096, 4096), tensor_gpu_like(), scalar_tiled);
  EXPECT_EQ(p.tile_m, 128u);
  EXPECT_EQ(p.spec[3], 16u);  // BK
  GemmPlan q = ops::choose_gemm_plan(shape(4096, 4096, 4096), cpu_like(), scalar_tiled);
  EXPECT_EQ(q.spec[3], 8u);
}

TEST(GemmF32SplitTest, DefaultsFollowDeviceClassAndSize) {
  const DeviceCaps nvidia = nvidia_like(), other = amd_like();
  GemmDesc big = shape(8192, 8192, 8192), narrow = shape(4096, 3072, 768);
  EXPECT_TRUE(ops::gemm_f32_split_wanted(big, nvidia));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(big, other));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(big, tensor_gpu_like()));  // generic class
  EXPECT_FALSE(ops::gemm_f32_split_wanted(big, cpu_like()));
  EXPECT_TRUE(ops::gemm_f32_split_wanted(narrow, nvidia));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(8192, 8192, 512), nvidia));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(512, 8192, 8192), nvidia));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(2304, 768, 4096), nvidia));  // 108 blocks
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(1024, 1024, 1024), nvidia));
  EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(4096, 3072, 768), nvidia));   // 768 blocks
  // Weight gradients over K >= 8192 tokens from 96 blocks on (with split-K inside the split).
  EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(768, 3072, 12608), nvidia));  // 144 blocks
  EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(2304, 768, 12608), nvidia));  // 108 blocks
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(768, 768, 12608), nvidia));  // 36 blocks
  // GPT-2's LM-head input gradient: its 50 slices' partials exceed 256 MiB, so split-K GEMMs
  // over K ranges of 21 slices.
  EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(4096, 768, 50257), nvidia));
  EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(768, 3072, 12608), other));
  {
    ConfigOverride min_blocks("VKML_GEMM_F32_SPLIT_MIN_BLOCKS", "0");
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
    ConfigOverride off("VKML_GEMM_F32_SPLIT", "0");
    EXPECT_FALSE(ops::gemm_f32_split_wanted(big, nvidia));
  }
  {
    ConfigOverride on("VKML_GEMM_F32_SPLIT", "1");
    EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(64, 64, 64), other));
    EXPECT_FALSE(ops::gemm_f32_split_wanted(shape(64, 64, 64), cpu_like()));
  }
  ConfigOverride forced("VKML_GEMM_F32_SPLIT", "force");
  EXPECT_TRUE(ops::gemm_f32_split_wanted(shape(64, 64, 64), cpu_like()));
}

// GemmDesc::max_k_slice cuts K however many blocks the output has, in whole K tiles of 32.
TEST(GemmF32SplitTest, SliceBoundIsHonoured) {
  const DeviceCaps caps = tensor_gpu_like();
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
}

}  // namespace vkml::testing
