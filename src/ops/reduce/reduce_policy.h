// Kernel-choice rules of the reduce family, keyed by device class (DeviceCaps::device_class): how
// many workgroups a reduction or scan splits its work towards when its outputs alone give too
// few. The mechanisms are in reduce.cc and scan.cc.
#pragma once
#include <cstdint>

#include "vkml/device.h"

namespace vkml::ops {

enum class ReduceSplit : uint8_t {
  kVectorColumns,  // column reductions whose threads each load 16 bytes of adjacent outputs
  kGeneral,        // every other reduction layout
  kScan,           // cumulative ops along long lines
};

// The workgroups a split aims at for `kind`.
int64_t reduce_split_target(const DeviceCaps& caps, ReduceSplit kind);

}  // namespace vkml::ops
