#pragma once
#include <c10/core/Allocator.h>

namespace torch_vkml {
// The allocator of pinned host memory for vkml (PrivateUse1's pinned and host allocator).
c10::Allocator* pinned_allocator();
// Whether `ptr` lies in pinned host memory of vkml device `device`.
bool is_pinned_on(const void* ptr, c10::DeviceIndex device);
}  // namespace torch_vkml
