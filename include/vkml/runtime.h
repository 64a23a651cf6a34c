// The per-device runtime: allocator, stream, pipelines. Ops and the torch bridge use only this.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "vkml/device.h"
#include "vkml/errors.h"
#include "vkml/memory.h"

namespace vkml {

class Allocator;
class Stream;
class PipelineCache;
struct VulkanDevice;

// A half-open byte range of device memory, used for hazard tracking.
struct MemRange {
  uint64_t address = 0;
  uint64_t bytes = 0;
};

// A compute pipeline created from an embedded shader and its specialization constants. Its
// VkPipeline may still be building on a worker thread (Device::pipeline returns at once, so that
// a cold first call compiles the pipelines of consecutive ops in parallel): handle() waits.
struct Pipeline {
  uint32_t local_size_x = 0;
  std::string name;
  std::shared_future<uint64_t> built;  // the VkPipeline; rethrows its build's error

  uint64_t handle() const {
    uint64_t h = handle_.load(std::memory_order_acquire);
    if (h == 0) handle_.store(h = built.get(), std::memory_order_release);
    return h;
  }
  bool ready() const {
    return handle_.load(std::memory_order_acquire) != 0 ||
           built.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

 private:
  mutable std::atomic<uint64_t> handle_{0};
};

// Pipeline build threads without VKML_PIPELINE_THREADS: 2-8 on GPUs (the host's threads), none
// on a CPU device.
unsigned default_build_threads(DeviceKind kind, unsigned hardware_threads);

class Device {
 public:
  Device(int index, const DeviceCaps& caps, void* physical_device, void* instance);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int index() const { return index_; }
  const DeviceCaps& caps() const { return caps_; }

  // Memory. allocate() returns a device address aligned to 256 bytes; 0 for 0 bytes.
  uint64_t allocate(uint64_t bytes);
  void free(uint64_t address);
  MemoryStats memory_stats() const;
  void reset_peak_memory_stats();
  void empty_cache();
  // Refreshes heap budgets; returns (free, total) of the device-local heap.
  std::pair<uint64_t, uint64_t> mem_get_info();
  // Caps the bytes the allocator may reserve (0 = no cap); VKML_MEMORY_LIMIT sets the start value.
  void set_memory_limit(uint64_t bytes);
  uint64_t memory_limit() const;
  BufferSlice resolve(uint64_t address) const;
  // True when address lies in memory this device's allocator handed out.
  bool owns(uint64_t address) const;

  Stream& stream() { return *stream_; }
  // Finishes all recorded work and waits for it.
  void synchronize();

  // Pipelines are created on first use and cached (in memory and on disk).
  const Pipeline& pipeline(const std::string& shader_name,
                           std::span<const uint32_t> spec_constants = {});
  void save_pipeline_cache();
  std::string pipeline_cache_path() const;
  uint64_t pipelines_created() const;
  uint64_t pipeline_build_ns() const;  // time spent creating them: a cold first call's cost
  // Threads that build new pipelines while recording goes on (VKML_PIPELINE_THREADS; by default
  // 2-8 on GPUs and none on a CPU device; 0: each is built on the thread that first asks).
  void set_pipeline_build_threads(unsigned n);

  // True once the driver reported VK_ERROR_DEVICE_LOST (the GPU was reset): every later call
  // that would use the device raises DeviceLostError at once.
  bool lost() const;
  // Test hooks: the next host wait on this device reports VK_ERROR_DEVICE_LOST, as after a GPU
  // reset (its work still completes first). recover_injected_loss() makes the device usable
  // again after an injected loss; a real loss stays.
  void inject_device_loss();
  void recover_injected_loss();

  VulkanDevice& vk() { return *vk_; }

 private:
  int index_;
  DeviceCaps caps_;
  std::unique_ptr<VulkanDevice> vk_;
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<PipelineCache> pipelines_;
};

// GPU time of the submissions a stream has seen complete (needs timestamps; see Stream).
struct SubmissionTimes {
  uint64_t count = 0;     // submissions timed
  double max_ms = 0;      // the longest one's busy time
  double total_ms = 0;
  double ops_per_ns = 0;  // throughput learned from them (0 until learned)
};

// Records work for one device and submits it in batches on a timeline semaphore.
// Barriers come from hazard tracking: a dispatch waits only for earlier writes it touches.
// A batch is submitted after 64 commands (VKML_BATCH_SIZE) or once its estimated cost passes
// the submit budget (VKML_SUBMIT_COST, in scalar operations), so no submission runs for long.
// On GPUs the batches after a host wait that left the GPU idle hold 1, 2, 4, ... commands
// (VKML_SUBMIT_RAMP=0 turns that off), so the GPU starts while the host records the rest.
class Stream {
 public:
  explicit Stream(Device& device);
  ~Stream();

  // Records a compute dispatch. `push` is at most 128 bytes of push constants. `cost` estimates
  // its work in scalar operations (a GEMM passes m*n*k); 0 means one per invocation.
  void dispatch(const Pipeline& p, uint32_t gx, uint32_t gy, uint32_t gz, const void* push,
                uint32_t push_bytes, std::span<const MemRange> reads,
                std::span<const MemRange> writes, uint64_t cost = 0);
  // Device-to-device byte copy on this device.
  void copy(uint64_t src, uint64_t dst, uint64_t bytes);
  // Fills bytes (multiple of 4, 4-aligned address) with a 32-bit pattern.
  void fill(uint64_t dst, uint64_t bytes, uint32_t pattern);
  // Host-to-device copy through staging; returns at once (the host buffer may be reused).
  void upload(const void* host, uint64_t dst, uint64_t bytes);
  // Device-to-host copy; waits for the data.
  void download(uint64_t src, void* host, uint64_t bytes);
  // Copies `bytes` of parameters into per-submission host-visible memory; returns its address.
  // Each block must be followed, on the same thread, by the dispatch() that reads it: its memory
  // is recycled only after every block handed out has its dispatch recorded.
  uint64_t params(const void* data, uint64_t bytes);

  // Submits what is recorded; returns the timeline value that marks its completion.
  uint64_t flush();
  void wait(uint64_t value);
  void synchronize() { wait(flush()); }
  uint64_t completed_value();
  // Value the next flush() will signal (an event recorded now completes at this value).
  uint64_t pending_value();
  bool query(uint64_t value) { return completed_value() >= value; }

  // The cost budget per submission (0: no cost rule, only the command count).
  void set_submit_cost_limit(uint64_t cost);
  uint64_t submit_cost_limit();
  // The time budget per submission in milliseconds (VKML_SUBMIT_BUDGET_MS; 0: none). With a
  // budget, each submission is timed, and the device's throughput learned from the timings
  // gives slice_cost(): the most work one dispatch should carry. GEMMs and convolutions above
  // it run in slices, each in its own submission.
  void set_submit_budget_ms(double ms);
  double submit_budget_ms();
  // Estimated scalar operations one dispatch may carry within the budget (0: no limit).
  uint64_t slice_cost() const { return slice_cost_.load(std::memory_order_relaxed); }
  // GPU time of the submissions completed since the last reset (all zero without a budget).
  SubmissionTimes submission_times(bool reset = false);
  // Whether batches ramp up from one command after a host wait that left the GPU idle.
  void set_submit_ramp(bool on);
  bool submit_ramp();

  // Statistics for tests and benchmarks (readable from any thread). submits() counts flushes
  // that submitted; submissions() every queue submission; cost_submissions() those the cost
  // budget triggered; ramp_submissions() those of the ramp after a host wait.
  uint64_t barriers_recorded() const { return barriers_.load(std::memory_order_relaxed); }
  uint64_t dispatches_recorded() const { return dispatches_.load(std::memory_order_relaxed); }
  uint64_t submits() const { return submits_.load(std::memory_order_relaxed); }
  uint64_t submissions() const { return submissions_.load(std::memory_order_relaxed); }
  uint64_t cost_submissions() const { return cost_submissions_.load(std::memory_order_relaxed); }
  uint64_t ramp_submissions() const { return ramp_submissions_.load(std::memory_order_relaxed); }
  // Time recording waited for pipelines still building (held dispatches; see Device::pipeline).
  uint64_t pipeline_wait_ns() const { return pipeline_wait_ns_.load(std::memory_order_relaxed); }

  // GPU timestamps (ns) around recorded work, for benchmarks. Returns a query id.
  uint32_t write_timestamp();
  // Waits and reads timestamp `id` in nanoseconds.
  double read_timestamp_ns(uint32_t id);

  std::mutex& mutex() { return mu_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
  std::atomic<uint64_t> barriers_{0}, dispatches_{0}, submits_{0}, submissions_{0},
      cost_submissions_{0}, ramp_submissions_{0}, pipeline_wait_ns_{0};
  std::atomic<uint64_t> slice_cost_{0};
  friend struct StreamAccess;
};

// Names of all shader variants compiled into this build, and those skipped at configure time.
std::vector<std::string> shader_variants();
std::vector<std::string> skipped_shader_variants();
bool has_shader(const std::string& name);
// Adds a SPIR-V compute module under `name` (kernels compiled at run time); Device::pipeline then
// finds it like an embedded variant. A name already present keeps its first module.
void register_shader_module(const std::string& name, std::vector<uint32_t> spirv);

}  // namespace vkml
