#include "pipeline_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "shader_registry.h"
#include "vkml/errors.h"
#include "vkml/config.h"

namespace vkml {

const EmbeddedShader* find_embedded_shader(const char* name) {
  for (size_t i = 0; i < kEmbeddedShaderCount; ++i) {
    if (std::strcmp(kEmbeddedShaders[i].name, name) == 0) return &kEmbeddedShaders[i];
  }
  return nullptr;
}

std::vector<std::string> shader_variants() {
  std::vector<std::string> out;
  for (size_t i = 0; i < kEmbeddedShaderCount; ++i) out.emplace_back(kEmbeddedShaders[i].name);
  return out;
}

std::vector<std::string> skipped_shader_variants() {
  return std::vector<std::string>(kSkippedShaders, kSkippedShaders + kSkippedShaderCount);
}

bool has_shader(const std::string& name) { return find_embedded_shader(name.c_str()) != nullptr; }


static std::string spec_text(const std::vector<uint32_t>& spec) {
  std::string s;
  for (size_t i = 0; i < spec.size(); ++i) s += (i ? "," : "") + std::to_string(spec[i]);
  return s;
}

// GPU drivers compile pipelines in parallel, so a model's cold first call builds on 2-8 threads
// (docs/design/submission.md#pipeline-threads). A CPU device runs its kernels on the same cores:
// builds stay inline there.
unsigned default_build_threads(DeviceKind kind, unsigned hardware_threads) {
  if (kind == DeviceKind::kCpu) return 0;
  return std::clamp(hardware_threads, 2u, 8u);
}

PipelineCache::PipelineCache(VulkanDevice& vk, const DeviceCaps& caps) : vk_(vk) {
  log_builds_ = config().pipeline_log;
  max_workers_ = config().pipeline_threads == kConfigAuto
                     ? default_build_threads(caps.kind, std::thread::hardware_concurrency())
                     : static_cast<unsigned>(config().pipeline_threads);
  std::string dir = config().cache_dir;
  std::vector<char> data;
  if (!dir.empty()) {
    std::ostringstream name;
    name << dir << "/pipelines-";
    for (uint8_t b : caps.device_uuid) {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02x", b);
      name << hex;
    }
    name << "-" << std::hex << caps.vendor_id << "-" << std::dec << caps.driver_version << ".bin";
    path_ = name.str();
    std::ifstream in(path_, std::ios::binary);
    if (in) data.assign(std::istreambuf_iterator<char>(in), {});
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  // The driver validates the header (vendor, device, cache UUID) and ignores stale data.
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  if (vk::vkCreatePipelineCache(vk_.device, &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    VKML_VK_CHECK(vk::vkCreatePipelineCache(vk_.device, &ci, nullptr, &cache_));
  }
}

PipelineCache::~PipelineCache() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  jobs_cv_.notify_all();
  for (auto& w : workers_) w.join();  // they finish the queued builds first
  try {
    save();
  } catch (...) {
  }
  for (auto& [key, p] : pipelines_) {
    try {
      vk::vkDestroyPipeline(vk_.device, reinterpret_cast<VkPipeline>(p->handle()), nullptr);
    } catch (...) {  // its build failed: nothing to destroy
    }
  }
  for (auto& [name, m] : modules_) vk::vkDestroyShaderModule(vk_.device, m, nullptr);
  vk::vkDestroyPipelineCache(vk_.device, cache_, nullptr);
}

const Pipeline& PipelineCache::get(const std::string& shader, std::span<const uint32_t> spec_in) {
  std::vector<uint32_t> spec(spec_in.begin(), spec_in.end());
  if (spec.empty()) spec.push_back(64);
  std::unique_lock<std::mutex> lock(mu_);
  auto key = std::make_pair(shader, spec);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return *it->second;

  VkShaderModule& module = modules_[shader];
  if (!module) {
    const EmbeddedShader* s = find_embedded_shader(shader.c_str());
    if (!s) {
      modules_.erase(shader);
      throw NotSupported("vkml: shader variant '" + shader + "' is not in this build");
    }
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = s->bytes;
    mi.pCode = s->code;
    VKML_VK_CHECK(vk::vkCreateShaderModule(vk_.device, &mi, nullptr, &module));
  }
  auto p = std::make_unique<Pipeline>();
  p->local_size_x = spec[0];
  p->name = shader;
  auto task = std::make_shared<std::packaged_task<uint64_t()>>(
      [this, m = module, shader, spec] { return build(m, shader, spec); });
  p->built = task->get_future().share();
  const Pipeline& out = *(pipelines_[key] = std::move(p));
  created_++;
  if (max_workers_ == 0) {
    lock.unlock();
    (*task)();
    return out;
  }
  if (workers_.size() < max_workers_ && busy_ + jobs_.size() >= workers_.size()) {
    workers_.emplace_back([this] { worker_loop(); });
  }
  jobs_.emplace_back([task] { (*task)(); });
  jobs_cv_.notify_one();
  return out;
}

uint64_t PipelineCache::build(VkShaderModule module, const std::string& shader,
                              const std::vector<uint32_t>& spec) {
  static const auto epoch = std::chrono::steady_clock::now();  // the first build's start
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, i * 4u, 4u};
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), spec.size() * 4,
                          spec.data()};
  VkComputePipelineCreateInfo pi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pi.stage.module = module;
  pi.stage.pName = "main";
  pi.stage.pSpecializationInfo = &si;
  pi.layout = vk_.layout;
  if (vk_.pipeline_stats) pi.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkPipeline handle = VK_NULL_HANDLE;
  // The cache is internally synchronized (no EXTERNALLY_SYNCHRONIZED flag): workers share it.
  VKML_VK_CHECK(vk::vkCreateComputePipelines(vk_.device, cache_, 1, &pi, nullptr, &handle));
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - t0).count();
  build_ns_ += ns;
  dirty_ = true;
  if (log_builds_) {  // VKML_PIPELINE_LOG=1: which pipelines a cold first call waits for
    // The start (ms since the process's first build) shows whether builds on threads overlap.
    const double start_ms =
        std::chrono::duration_cast<std::chrono::microseconds>(t0 - epoch).count() / 1e3;
    std::fprintf(stderr, "vkml pipeline build: %s [%s] %.1f ms (from %.1f ms)\n", shader.c_str(),
                 spec_text(spec).c_str(), ns / 1e6, start_ms);
  }
  if (vk_.pipeline_stats) print_statistics(handle, shader, spec);
  return reinterpret_cast<uint64_t>(handle);
}

void PipelineCache::worker_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    jobs_cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, every job done
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    ++busy_;
    lock.unlock();
    job();  // a packaged_task: its error goes to the Pipeline's future
    lock.lock();
    if (--busy_ == 0 && jobs_.empty()) idle_cv_.notify_all();
  }
}

void PipelineCache::set_build_threads(unsigned n) {
  std::lock_guard<std::mutex> lock(mu_);
  max_workers_ = n;  // started workers stay, idle, until the cache goes
}

void PipelineCache::wait_for_builds() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return busy_ == 0 && jobs_.empty(); });
}

// One line per executable on stderr: the shader, its specialization constants, then each
// statistic the driver reports (register count, shared memory, spills on NVIDIA).
void PipelineCache::print_statistics(VkPipeline handle, const std::string& shader,
                                     const std::vector<uint32_t>& spec) {
  auto get_props = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vk::vkGetDeviceProcAddr(vk_.device, "vkGetPipelineExecutablePropertiesKHR"));
  auto get_stats = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vk::vkGetDeviceProcAddr(vk_.device, "vkGetPipelineExecutableStatisticsKHR"));
  if (!get_props || !get_stats) return;
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = handle;
  uint32_t n = 0;
  if (get_props(vk_.device, &info, &n, nullptr) != VK_SUCCESS) return;
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = handle;
    ei.executableIndex = e;
    uint32_t ns = 0;
    if (get_stats(vk_.device, &ei, &ns, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> st(ns, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (get_stats(vk_.device, &ei, &ns, st.data()) != VK_SUCCESS) continue;
    std::ostringstream line;
    line << "vkml pipeline stats: " << shader << " [" << spec_text(spec) << "]";
    for (const auto& x : st) {
      line << "; " << x.name << "=";
      switch (x.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: line << x.value.b32; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: line << x.value.i64; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: line << x.value.u64; break;
        default: line << x.value.f64; break;
      }
    }
    std::fprintf(stderr, "%s\n", line.str().c_str());
  }
}

void PipelineCache::save() {
  wait_for_builds();  // so that what they built is in the data
  std::lock_guard<std::mutex> lock(mu_);
  if (!dirty_ || path_.empty()) return;
  size_t size = 0;
  if (vk::vkGetPipelineCacheData(vk_.device, cache_, &size, nullptr) != VK_SUCCESS) return;
  std::vector<char> data(size);
  if (vk::vkGetPipelineCacheData(vk_.device, cache_, &size, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  std::string tmp = path_ + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return;
    out.write(data.data(), static_cast<std::streamsize>(size));
  }
  std::filesystem::rename(tmp, path_, ec);  // atomic: concurrent processes never see half a file
  dirty_ = false;
}

}  // namespace vkml
