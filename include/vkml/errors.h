// Typed errors: every failure the runtime reports is one of these, never a raw VkResult.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace vkml {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// No usable Vulkan driver or device, or a device index that does not exist.
class NoDeviceError : public Error {
 public:
  using Error::Error;
};

// An input or request the runtime cannot satisfy (bad size, unsupported dtype, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A feature this device or this build lacks (e.g. fp64 on a GPU without it).
class NotSupported : public Error {
 public:
  using Error::Error;
};

class OutOfMemoryError : public Error {
 public:
  OutOfMemoryError(const std::string& what, uint64_t requested, uint64_t allocated,
                   uint64_t reserved, uint64_t device_free)
      : Error(what),
        requested(requested),
        allocated(allocated),
        reserved(reserved),
        device_free(device_free) {}
  uint64_t requested, allocated, reserved, device_free;
};

// The driver reported VK_ERROR_DEVICE_LOST: the GPU was reset; the device cannot be used again.
class DeviceLostError : public Error {
 public:
  using Error::Error;
};

// Any other Vulkan failure, with the result's name in the message.
class VulkanError : public Error {
 public:
  VulkanError(const std::string& what, int32_t result) : Error(what), result(result) {}
  int32_t result;
};

}  // namespace vkml
