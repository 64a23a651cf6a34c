// vkml-info: lists every Vulkan device, its capabilities, and whether vkml can use it.
//   vkml-info               devices
//   vkml-info --shaders     devices and the shader variants of this build
//   vkml-info --config      every VKML_* setting, its value and where the value came from
//   vkml-info --config-doc  the settings as Markdown (docs/configuration.md)
#include <cstdio>
#include <cstring>
#include <string>

#include "vkml/config.h"
#include "vkml/device.h"
#include "vkml/errors.h"
#include "vkml/runtime.h"

using namespace vkml;

static std::string gib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / (1ull << 30));
  return buf;
}

static const char* yes(bool b) { return b ? "yes" : "no"; }

int main(int argc, char** argv) {
  const std::string arg = argc > 1 ? argv[1] : "";
  if (arg != "" && arg != "--shaders" && arg != "--config" && arg != "--config-doc") {
    std::fprintf(stderr, "usage: vkml-info [--shaders | --config | --config-doc]\n");
    return 2;
  }
  try {
    if (arg == "--config") {
      std::fputs(config_table().c_str(), stdout);
      return 0;
    }
    if (arg == "--config-doc") {
      std::fputs(config_markdown().c_str(), stdout);
      return 0;
    }
    config();
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  bool list_shaders = arg == "--shaders";
  auto all = probe_all_devices();
  if (all.empty()) {
    std::printf("No Vulkan device: %s\n", no_device_reason().c_str());
    return 1;
  }
  int usable_index = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const DeviceCaps& c = all[i];
    std::printf("Device %zu: %s\n", i, c.name.c_str());
    std::printf("  type            %s, vendor 0x%04x, device 0x%04x, class %s\n",
                std::string(device_kind_name(c.kind)).c_str(), c.vendor_id, c.device_id,
                std::string(device_class_name(c.device_class)).c_str());
    std::printf("  driver          %s %s (%s), Vulkan %u.%u.%u\n", c.driver_name.c_str(),
                format_driver_version(c).c_str(), c.driver_info.c_str(),
                VK_API_VERSION_MAJOR_(c.api_version), VK_API_VERSION_MINOR_(c.api_version),
                VK_API_VERSION_PATCH_(c.api_version));
    for (size_t h = 0; h < c.heaps.size(); ++h) {
      std::printf("  memory heap %zu   %s%s, budget %s, in use %s\n", h, gib(c.heaps[h].size).c_str(),
                  c.heaps[h].device_local ? " device-local" : " host", gib(c.heaps[h].budget).c_str(),
                  gib(c.heaps[h].usage).c_str());
    }
    std::printf("  arithmetic      fp16 %s, bf16 %s, int8 %s, int16 %s, int64 %s, fp64 %s\n",
                yes(c.fp16_math), yes(c.bf16_math), yes(c.int8_math), yes(c.int16_math),
                yes(c.int64_math), yes(c.fp64_math));
    std::printf("  storage         16-bit %s, 8-bit %s, buffer device address %s\n",
                yes(c.storage_16bit), yes(c.storage_8bit), yes(c.buffer_device_address));
    std::printf("  fp32 controls   keep subnormals %s, keep NaN/inf/signed zero %s (on request)\n",
                yes(c.denorm_preserve_f32), yes(c.signed_zero_inf_nan_f32));
    std::printf("  subgroups       size %u (min %u, max %u), ops 0x%x, size control %s\n",
                c.subgroup_size, c.min_subgroup_size, c.max_subgroup_size, c.subgroup_ops,
                yes(c.subgroup_size_control));
    std::printf("  limits          shared memory %u KiB, storage buffer range %s, max allocation %s, "
                "push constants %u B\n",
                c.max_shared_memory / 1024, gib(c.max_storage_buffer_range).c_str(),
                gib(c.max_allocation_size).c_str(), c.max_push_constants);
    std::printf("  memory          %s, budget extension %s, timestamps %s\n",
                c.unified_memory ? "unified (host-visible device memory)" : "dedicated",
                yes(c.memory_budget), yes(c.timestamps));
    std::printf("  coopmat         %s\n", c.coopmat ? "VK_KHR_cooperative_matrix" : "none");
    for (const auto& s : c.coopmat_shapes) {
      std::printf("                  %ux%ux%u  %s x %s + %s -> %s\n", s.m, s.n, s.k,
                  std::string(dtype_name(s.a)).c_str(), std::string(dtype_name(s.b)).c_str(),
                  std::string(dtype_name(s.c)).c_str(), std::string(dtype_name(s.result)).c_str());
    }
    if (c.usable()) {
      std::printf("  usable by vkml: yes (vkml:%d)\n", usable_index++);
    } else {
      std::printf("  usable by vkml: no (%s)\n", c.unusable_reason.c_str());
    }
  }
  auto variants = shader_variants();
  auto skipped = skipped_shader_variants();
  std::printf("Shader variants in this build: %zu compiled, %zu skipped\n", variants.size(),
              skipped.size());
  for (const auto& s : skipped) std::printf("  skipped: %s\n", s.c_str());
  if (list_shaders) {
    for (const auto& s : variants) std::printf("  %s\n", s.c_str());
  }
  std::printf("Validation layer: %s\n", validation_enabled() ? "on (VKML_VALIDATION=1)" : "off");
  return usable_index > 0 ? 0 : 1;
}
