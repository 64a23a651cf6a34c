// Compute pipelines, created lazily per (shader, specialization constants) and cached in memory
// and on disk in a VkPipelineCache keyed by device UUID and driver version.
#pragma once
#include <map>
#include <memory>
#include <mutex>
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
  const Pipeline& get(const std::string& shader, std::span<const uint32_t> spec);
  void save();
  std::string path() const { return path_; }
  uint64_t created() const { return created_; }
  uint64_t build_ns() const { return build_ns_; }  // in shader module and pipeline creation

 private:
  void print_statistics(VkPipeline handle, const std::string& shader,
                        const std::vector<uint32_t>& spec);
  VulkanDevice& vk_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string path_;
  std::mutex mu_;
  std::map<std::pair<std::string, std::vector<uint32_t>>, std::unique_ptr<Pipeline>> pipelines_;
  std::map<std::string, VkShaderModule> modules_;
  uint64_t created_ = 0;
  uint64_t build_ns_ = 0;
  bool log_builds_ = false;
  bool dirty_ = false;
};

}  // namespace vkml
