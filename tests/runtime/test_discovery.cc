#include <cstdlib>

#include "test_util.h"
#include "vkml/config.h"

namespace vkml::testing {

TEST(Discovery, FindsADeviceWithCapabilities) {
  ASSERT_GT(device_count(), 0) << no_device_reason();
  auto all = probe_all_devices();
  ASSERT_FALSE(all.empty());
  const DeviceCaps& c = device(0).caps();
  EXPECT_FALSE(c.name.empty());
  EXPECT_TRUE(c.usable()) << c.unusable_reason;
  EXPECT_TRUE(c.buffer_device_address);
  EXPECT_TRUE(c.timeline_semaphore);
  EXPECT_GT(c.subgroup_size, 0u);
  EXPECT_GE(c.max_shared_memory, 16u * 1024);
  EXPECT_GE(c.max_push_constants, 128u);
  ASSERT_FALSE(c.heaps.empty());
  EXPECT_GT(c.heaps[0].size, 0u);
  EXPECT_TRUE(c.supports_dtype(DType::kF32));
  EXPECT_EQ(c.supports_dtype(DType::kF64), c.fp64_math && c.int64_math);
}

TEST(Discovery, OrdersDiscreteBeforeIntegratedBeforeCpu) {
  if (!config().device_order.empty()) GTEST_SKIP() << "order overridden by VKML_DEVICE_ORDER";
  auto rank = [](DeviceKind k) {
    switch (k) {
      case DeviceKind::kDiscrete: return 0;
      case DeviceKind::kIntegrated: return 1;
      case DeviceKind::kVirtual: return 2;
      case DeviceKind::kCpu: return 3;
      default: return 4;
    }
  };
  for (int i = 1; i < device_count(); ++i) {
    EXPECT_LE(rank(device(i - 1).caps().kind), rank(device(i).caps().kind));
  }
}

TEST(Discovery, BadIndexIsAClearError) {
  int n = device_count();
  try {
    device(n);
    FAIL() << "expected NoDeviceError";
  } catch (const NoDeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
  EXPECT_THROW(device(-1), NoDeviceError);
}

TEST(Discovery, ListsShaderVariants) {
  auto v = shader_variants();
  EXPECT_TRUE(has_shader("copy_raw_u32"));
  EXPECT_TRUE(has_shader("copy_cast_f32_f16"));
  EXPECT_FALSE(has_shader("no_such_shader"));
  EXPECT_GT(v.size(), 90u);
  for (const auto& s : skipped_shader_variants()) EXPECT_FALSE(has_shader(s.substr(0, s.find(':'))));
}

}  // namespace vkml::testing
