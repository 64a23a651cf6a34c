// Per-kernel GPU times of a stream, to find where a model's step goes (VKML_PROFILE=1 turns it on
// at start). Profiling serialises the stream and waits after each submit: use it to find hot
// kernels, not to time a model.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace vkml {

class Stream;

struct KernelTime {
  uint64_t count = 0;
  double total_ns = 0;
};

void set_profiling(Stream& stream, bool on);
std::map<std::string, KernelTime> kernel_times(Stream& stream, bool reset);

}  // namespace vkml
