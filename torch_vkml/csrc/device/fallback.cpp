// Any aten op without a vkml kernel runs on the CPU and copies back (in-place and out= kept),
// counted per op and warned about once. VKML_FALLBACK=warn|silent|error chooses the policy;
// tests run with error, so a missing kernel can never hide behind the CPU.
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "device/fallback.h"
#include "vkml/config.h"

namespace torch_vkml {

namespace device_fallback {

enum class Policy { kWarn, kSilent, kError };

Policy policy() {
  const std::string& v = vkml::config().fallback;
  return v == "error" ? Policy::kError : v == "silent" ? Policy::kSilent : Policy::kWarn;
}

std::mutex g_mu;
std::map<std::string, int64_t> g_counts;
std::set<std::string> g_warned;

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  std::string name = schema.name();
  if (!schema.overload_name().empty()) name += "." + schema.overload_name();
  Policy p = policy();
  TORCH_CHECK_NOT_IMPLEMENTED(
      p != Policy::kError, "vkml: the operator '", name,
      "' has no vkml kernel and VKML_FALLBACK=error forbids running it on the CPU. "
      "Set VKML_FALLBACK=warn to run it on the CPU, and please report the missing op.");
  bool warn = false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_counts[name]++;
    warn = p == Policy::kWarn && g_warned.insert(name).second;
  }
  if (warn) {
    TORCH_WARN("vkml: the operator '", name, "' has no vkml kernel yet; it runs on the CPU and "
               "copies back (slow). torch_vkml.fallback_stats() counts these calls.");
  }
  at::native::cpu_fallback(op, stack);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

}  // namespace device_fallback

void run_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  device_fallback::cpu_fallback(op, stack);
}

std::map<std::string, int64_t> fallback_stats() {
  std::lock_guard<std::mutex> lock(device_fallback::g_mu);
  return device_fallback::g_counts;
}

void reset_fallback_stats() {
  std::lock_guard<std::mutex> lock(device_fallback::g_mu);
  device_fallback::g_counts.clear();
  device_fallback::g_warned.clear();
}

}  // namespace torch_vkml
