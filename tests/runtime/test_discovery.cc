#include <cstdlib>

#include "test_util.h"
#include "vkml/config.h"

namespace vkml::testing {

TEST(CapsMask, TreatsMaskedFeaturesAsAbsentAndLowersLimits) {
  DeviceCaps c = device(0).caps();
  c.coopmat = c.coopmat_bf16 = c.bf16_math = c.fp16_math = c.fp64_math = true;
  c.int8_math = c.int16_math = c.subgroup_size_control = c.timestamps = true;
  c.coopmat_shapes = {CoopMatShape{16, 16, 16}};
  c.subgroup_ops = 0xff;
  c.max_shared_memory = 64 * 1024;
  c.max_workgroup_count = {0x7fffffffu, 65535u, 65535u};
  DeviceCaps unmasked = c;
  apply_caps_mask(unmasked);  // the default masks nothing
  EXPECT_TRUE(unmasked.coopmat && unmasked.fp16_math && unmasked.fp64_math);
  EXPECT_EQ(unmasked.max_shared_memory, 64u * 1024);
  EXPECT_EQ(unmasked.max_workgroup_count[0], 0x7fffffffu);
  {
    ConfigOverride mask("VKML_CAPS_MASK", "no-coopmat,no-fp16,no-fp64,no-subgroup-arithmetic");
    ConfigOverride shared("VKML_CAPS_SHARED_MEMORY", "16K");
    ConfigOverride groups("VKML_CAPS_WORKGROUP_COUNT", "65535");
    DeviceCaps m = c;
    apply_caps_mask(m);
    EXPECT_FALSE(m.coopmat || m.coopmat_bf16 || m.fp16_math || m.fp64_math);
    EXPECT_TRUE(m.coopmat_shapes.empty());
    EXPECT_TRUE(m.bf16_math && m.int8_math && m.int16_math && m.timestamps);  // not masked
    EXPECT_EQ(m.subgroup_ops, 0xffu & ~0x4u);  // VK_SUBGROUP_FEATURE_ARITHMETIC_BIT
    EXPECT_FALSE(m.supports_dtype(DType::kF64));
    EXPECT_EQ(m.usable(), c.usable());  // vkml runs without these
    EXPECT_EQ(m.max_shared_memory, 16u * 1024);
    EXPECT_EQ(m.max_workgroup_count, (std::array<uint32_t, 3>{65535u, 65535u, 65535u}));
  }
  {
    ConfigOverride mask("VKML_CAPS_MASK",
                        "no-bf16,no-int8,no-int16,no-subgroup-size-control,no-timestamps");
    c.unusable_reason.clear();
    ConfigOverride shared("VKML_CAPS_SHARED_MEMORY", "1G");  // above the device's: no change
    DeviceCaps m = c;
    apply_caps_mask(m);
    EXPECT_FALSE(m.bf16_math || m.coopmat_bf16 || m.int8_math || m.int16_math);
    EXPECT_FALSE(m.subgroup_size_control || m.timestamps);
    EXPECT_TRUE(m.coopmat && m.fp16_math);
    EXPECT_EQ(m.min_subgroup_size, m.subgroup_size);
    EXPECT_EQ(m.max_subgroup_size, m.subgroup_size);
    EXPECT_EQ(m.max_shared_memory, 64u * 1024);
    // Most kernels compute on 8- and 16-bit integers: such a device is not usable, and says why.
    EXPECT_EQ(m.unusable_reason, "missing shaderInt8, shaderInt16");
  }
  {
    ConfigOverride mask("VKML_CAPS_MASK", "no-fp16");  // every coopmat kernel computes in fp16
    DeviceCaps m = c;
    apply_caps_mask(m);
    EXPECT_FALSE(m.fp16_math || m.coopmat || m.coopmat_bf16);
  }
  EXPECT_THROW(ConfigOverride("VKML_CAPS_MASK", "no-coopmat,no-gpu"), InvalidArgument);
  EXPECT_THROW(ConfigOverride("VKML_CAPS_SHARED_MEMORY", "lots"), InvalidArgument);
}

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
