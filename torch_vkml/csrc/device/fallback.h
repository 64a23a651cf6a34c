#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <map>
#include <string>

namespace torch_vkml {
// Runs `op` on the CPU as the boxed fallback does: counted and warned about once, or refused
// under VKML_FALLBACK=error. For kernels that find they have no path for their inputs.
void run_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// Op name -> number of calls that ran on the CPU because vkml has no kernel for them.
std::map<std::string, int64_t> fallback_stats();
void reset_fallback_stats();
}  // namespace torch_vkml
