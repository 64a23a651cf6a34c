#include <filesystem>

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
  EXPECT_NE(p1.handle, p3.handle);
  EXPECT_EQ(p3.local_size_x, 128u);
  EXPECT_EQ(dev().pipelines_created(), before + 2);
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
