#pragma once
#include <map>
#include <string>

namespace torch_vkml {
// Op name -> number of calls that ran on the CPU because vkml has no kernel for them.
std::map<std::string, int64_t> fallback_stats();
void reset_fallback_stats();
}  // namespace torch_vkml
