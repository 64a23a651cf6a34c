// Compute pipelines, created lazily per (shader, specialization constants) and cached in memory
// and on disk in a VkPipelineCache keyed by device UUID and driver version.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <span>
#include <string>
#include <vector>

#include "vkml/runtime.h"
#include "vulkan_device.h"

namespace vkml {

class PipelineCache {
 public:
  PipelineCache(VulkanDevice& vk, const DeviceCaps& caps);
  ~PipelineCache();
  // Specialization constant i gets constant_id i; constant 0 is the workgroup size (default 64).
  // A new pipeline is built on a worker thread where there are any (VKML_PIPELINE_THREADS; by
  // default default_build_threads); the returned Pipeline's handle() waits for it.
  const Pipeline& get(const std::string& shader, std::span<const uint32_t> spec);
  void save();
  std::string path() const { return path_; }
  uint64_t created() const { return created_; }
  uint64_t build_ns() const { return build_ns_; }  // summed over builds, on any thread
  void set_build_threads(unsigned n);

 private:
  void print_statistics(VkPipeline handle, const std::string& shader,
                        const std::vector<uint32_t>& spec);
  uint64_t build(VkShaderModule module, const std::string& shader,
                 const std::vector<uint32_t>& spec);
  void worker_loop();
  void wait_for_builds();
  VulkanDevice& vk_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string path_;
  std::mutex mu_;
  std::map<std::pair<std::string, std::vector<uint32_t>>, std::unique_ptr<Pipeline>> pipelines_;
  std::map<std::string, VkShaderModule> modules_;
  std::atomic<uint64_t> created_{0}, build_ns_{0};
  bool log_builds_ = false;
  std::atomic<bool> dirty_{false};
  // Build workers, started on the first build; jobs in FIFO order.
  unsigned max_workers_ = 0;
  std::vector<std::thread> workers_;
  std::deque<std::function<void()>> jobs_;
  std::condition_variable jobs_cv_, idle_cv_;
  unsigned busy_ = 0;
  bool stopping_ = false;
};

}  // namespace vkml
