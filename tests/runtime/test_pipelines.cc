#include <filesystem>

#include "ops/copy/copy_params.h"
#include "ops/launch.h"
#include "test_util.h"

namespace vkml::testing {

using PipelineTest = DeviceTest;

TEST_F(PipelineTest, CreatedLazilyOncePerSpecialization) {
  uint64_t before = dev().pipelines_created();
  uint32_t spec64[] = {64}, spec128[] = {128};
  const Pipeline& p1 = dev().pipeline("copy_raw_u16", spec64);
  const Pipeline& p2 = dev().pipeline("copy_raw_u16", spec64);
  EXPECT_EQ(&p1, &p2);
  EXPECT_EQ(dev().pipelines_created(), before + 1);
  const Pipeline& p3 = dev().pipeline("copy_raw_u16", spec128);
  EXPECT_NE(p1.handle(), p3.handle());
  EXPECT_EQ(p3.local_size_x, 128u);
  EXPECT_EQ(dev().pipelines_created(), before + 2);
}

// Sets the odd ones of a's n int32 elements to `size` with fill_u32 built for workgroups of
// `size` threads (a size no op uses makes a new pipeline, built on a worker where there are any).
void dispatch_fill_odd(Device& dev, uint64_t a, int64_t n, uint32_t size) {
  ops::StridedParams p{};
  ops::fill_strided_params(&p, {n / 2}, {2}, {2}, n / 2);
  p.dst = p.src = a + 4;
  p.value = size;
  uint32_t spec[] = {size};
  const Pipeline& pipe = dev.pipeline("fill_u32", spec);
  const uint64_t params = dev.stream().params(&p, sizeof p);
  MemRange writes[] = {{a, static_cast<uint64_t>(n * 4)}};
  dev.stream().dispatch(pipe, static_cast<uint32_t>((n / 2 + size - 1) / size), 1, 1, &params,
                        sizeof params, {}, writes);
}

TEST_F(PipelineTest, DispatchesWaitingForABuildKeepTheirOrder) {
  // Workgroup sizes no op uses: each pipeline is new, so its build runs on a worker thread and
  // its dispatch may be held (recording goes on); the commands after it must still see its
  // writes: a fill of the odd elements, then a transfer copy of the whole buffer.
  const int64_t n = 4096;
  DeviceBuffer a(dev(), n * 4), b(dev(), n * 4);
  dev().set_pipeline_build_threads(2);
  const uint64_t waited = dev().stream().pipeline_wait_ns();
  for (uint32_t size : {96u, 160u, 224u}) {
    dev().stream().fill(a.address, n * 4, 7);
    dispatch_fill_odd(dev(), a.address, n, size);
    dev().stream().copy(a.address, b.address, n * 4);
    auto out = download<int32_t>(dev(), b.address, n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], i % 2 ? int32_t(size) : 7) << i;
  }
  // Each build takes milliseconds and its dispatch comes at once: it is held and waited for.
  EXPECT_GT(dev().stream().pipeline_wait_ns(), waited);
  dev().set_pipeline_build_threads(0);
}

TEST_F(PipelineTest, CopiesFillsAndUploadsWaitBehindHeldDispatchesInOrder) {
  // Recording goes on past a dispatch whose pipeline is building: the fills, uploads and copies
  // that follow are held behind it (not a wait for the build), and every one must still see the
  // writes before it. Three rounds, each into its own third of `b`, read back once at the end.
  const int64_t n = 2048;
  DeviceBuffer a(dev(), n * 4), b(dev(), 3 * n * 4);
  dev().set_pipeline_build_threads(2);
  const uint32_t sizes[] = {288u, 352u, 416u};  // workgroup sizes no op uses: new pipelines
  std::vector<int32_t> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = int32_t(1000 + i);
  for (int round = 0; round < 3; ++round) {
    if (round == 1) {
      dev().stream().upload(host.data(), a.address, n * 4);
    } else {
      dev().stream().fill(a.address, n * 4, 7 + round);
    }
    dispatch_fill_odd(dev(), a.address, n, sizes[round]);
    dev().stream().copy(a.address, b.address + round * n * 4, n * 4);
  }
  auto out = download<int32_t>(dev(), b.address, 3 * n);
  for (int round = 0; round < 3; ++round) {
    for (int64_t i = 0; i < n; ++i) {
      const int32_t even = round == 1 ? int32_t(1000 + i) : 7 + round;
      ASSERT_EQ(out[round * n + i], i % 2 ? int32_t(sizes[round]) : even) << round << " " << i;
    }
  }
  dev().set_pipeline_build_threads(0);
}

TEST(PipelineBuildThreads, DefaultOnGpusOnly) {
  // GPUs build on 2-8 threads (docs/design/submission.md#pipeline-threads); a CPU device builds
  // inline, since its kernels run on the same cores.
  EXPECT_EQ(default_build_threads(DeviceKind::kCpu, 16), 0u);
  EXPECT_EQ(default_build_threads(DeviceKind::kDiscrete, 16), 8u);
  EXPECT_EQ(default_build_threads(DeviceKind::kIntegrated, 4), 4u);
  EXPECT_EQ(default_build_threads(DeviceKind::kOther, 1), 2u);
  EXPECT_EQ(default_build_threads(DeviceKind::kVirtual, 0), 2u);  // count unknown
}

TEST_F(PipelineTest, UnknownVariantIsNotSupported) {
  EXPECT_THROW(dev().pipeline("copy_cast_f32_nonsense"), NotSupported);
}

TEST_F(PipelineTest, CacheIsSavedToDisk) {
  uint32_t spec[] = {96};
  dev().pipeline("fill_u8", spec);
  dev().save_pipeline_cache();
  std::string path = dev().pipeline_cache_path();
  ASSERT_FALSE(path.empty());
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_GT(std::filesystem::file_size(path), 0u);
  // The key names the device UUID and driver version, so another GPU never reads it.
  EXPECT_NE(path.find(std::to_string(dev().caps().driver_version)), std::string::npos);
}

}  // namespace vkml::testing
