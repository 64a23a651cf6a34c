// Device discovery, capabilities and the per-device runtime objects.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vkml/dtype.h"

namespace vkml {

enum class DeviceKind : uint8_t { kDiscrete, kIntegrated, kVirtual, kCpu, kOther };
std::string_view device_kind_name(DeviceKind k);

struct MemoryHeap {
  uint64_t size = 0;
  uint64_t budget = 0;  // from VK_EXT_memory_budget, else size
  uint64_t usage = 0;   // from VK_EXT_memory_budget, else 0
  bool device_local = false;
};

struct CoopMatShape {
  uint32_t m = 0, n = 0, k = 0;
  DType a = DType::kF16, b = DType::kF16, c = DType::kF32, result = DType::kF32;
};

// PCI vendor ids (DeviceCaps::vendor_id).
constexpr uint32_t kVendorNvidia = 0x10DE;
constexpr uint32_t kVendorAmd = 0x1002;
constexpr uint32_t kVendorIntel = 0x8086;
constexpr uint32_t kVendorArm = 0x13B5;
constexpr uint32_t kVendorQualcomm = 0x5143;
constexpr uint32_t kVendorApple = 0x106B;

// The families that kernel-choice policies (src/ops/<family>/<family>_policy.cc) are keyed by.
// kMobile covers ARM Mali and Qualcomm Adreno; kApple is Apple silicon through MoltenVK; kCpu is any
// CPU implementation (lavapipe, SwiftShader); kGeneric is every other vendor.
enum class DeviceClass : uint8_t { kNvidia, kAmd, kIntel, kMobile, kApple, kCpu, kGeneric };
std::string_view device_class_name(DeviceClass c);

// Everything ops may ask of a device. Probed once; ops read nothing else.
struct DeviceCaps {
  std::string name, driver_name, driver_info;
  uint32_t vendor_id = 0, device_id = 0, driver_version = 0, driver_id = 0, api_version = 0;
  DeviceKind kind = DeviceKind::kOther;
  DeviceClass device_class = DeviceClass::kGeneric;
  std::array<uint8_t, 16> device_uuid{}, pipeline_cache_uuid{};

  bool fp16_math = false, bf16_math = false, int8_math = false, int16_math = false;
  bool int64_math = false, fp64_math = false;
  bool storage_16bit = false, storage_8bit = false;
  // fp32 float controls (Vulkan 1.2): whether a shader may ask to keep subnormals, or to keep
  // NaN, infinities and the sign of zero through every operation. Without asking, drivers may
  // flush and fold; NVIDIA's driver does (relu(-0) gives +0 unless the sign is tested first).
  bool denorm_preserve_f32 = false, signed_zero_inf_nan_f32 = false;

  uint32_t subgroup_size = 0, min_subgroup_size = 0, max_subgroup_size = 0;
  uint32_t subgroup_ops = 0;  // VkSubgroupFeatureFlags
  bool subgroup_size_control = false;

  bool coopmat = false;  // VK_KHR_cooperative_matrix, subgroup scope
  bool coopmat_bf16 = false;
  std::vector<CoopMatShape> coopmat_shapes;

  uint32_t max_shared_memory = 0, max_push_constants = 0, max_workgroup_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_count{};
  uint64_t max_storage_buffer_range = 0, max_allocation_size = 0, max_buffer_size = 0;
  bool buffer_device_address = false, timeline_semaphore = false, memory_budget = false;
  bool timestamps = false;
  float timestamp_period_ns = 1.0f;
  bool unified_memory = false;  // device-local memory is also host-visible (iGPU, lavapipe)
  std::vector<MemoryHeap> heaps;

  // Why vkml cannot use this device; empty when it can.
  std::string unusable_reason;
  bool usable() const { return unusable_reason.empty(); }
  bool supports_dtype(DType t) const;
};

std::string format_driver_version(const DeviceCaps& caps);

// Treats the features VKML_CAPS_MASK names as absent and lowers the limits VKML_CAPS_SHARED_MEMORY
// and VKML_CAPS_WORKGROUP_COUNT give, so that vkml runs as it would on a weaker GPU. Applied to
// every device when it is probed.
void apply_caps_mask(DeviceCaps& caps);

class Device;

// Loads Vulkan and lists devices in vkml's order: discrete, integrated, virtual, CPU.
// VKML_DEVICE_ORDER="2,0" (indices into the driver's order) overrides it.
// Returns 0 (never throws) when there is no Vulkan loader or no usable device.
int device_count() noexcept;

// The reason device_count() is 0, for error messages ("no Vulkan loader found", ...).
std::string no_device_reason();

// Capabilities of every device the loader sees, usable or not (for vkml-info).
std::vector<DeviceCaps> probe_all_devices();

// The runtime object of usable device `index`; created on first use. Throws NoDeviceError.
Device& device(int index);

// Validation layer messages seen so far (VKML_VALIDATION=1 turns the layer on).
uint64_t validation_message_count();
bool validation_enabled();

}  // namespace vkml

// Version fields of a packed Vulkan API version (no Vulkan header needed).
#define VK_API_VERSION_MAJOR_(v) (((uint32_t)(v) >> 22) & 0x7FU)
#define VK_API_VERSION_MINOR_(v) (((uint32_t)(v) >> 12) & 0x3FFU)
#define VK_API_VERSION_PATCH_(v) ((uint32_t)(v) & 0xFFFU)
