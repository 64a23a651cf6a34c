// Kernel-choice rules of the sort family, keyed by device class (DeviceCaps::device_class). The
// mechanisms are in sort.cc.
#pragma once
#include <cstdint>

#include "vkml/device.h"

namespace vkml::ops {

// Line length from which sorts take the radix sort instead of the bitonic network.
int64_t sort_radix_min_length(const DeviceCaps& caps);

// Whether the radix sort counts digits serially per tile (else it ranks tiles in shared memory).
bool sort_radix_serial(const DeviceCaps& caps);

}  // namespace vkml::ops
