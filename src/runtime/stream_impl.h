// The state behind a Stream, shared by its recording (stream.cc) and its capture (stream_capture.cc).
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hazard_tracker.h"
#include "vkml/config.h"
#include "vkml/graph.h"
#include "vkml/runtime.h"

#include "kernel_profiler.h"
#include "submit_clock.h"
#include "vkml/profiling.h"
#include "vulkan_device.h"


namespace vkml {

namespace stream_detail {

constexpr uint64_t kStagingChunk = 32ull << 20;   // largest single staging buffer
constexpr uint64_t kStagingCap = 256ull << 20;    // staging memory kept before waiting
constexpr uint64_t kParamsChunk = 256ull << 10;
constexpr uint32_t kTimestampQueries = 256;
// Estimated scalar operations per submission before it is submitted: about a millisecond of
// work on a slow integrated GPU, so a long recorded sequence never runs as one long submission.
constexpr uint64_t kDefaultSubmitCost = 1ull << 28;

// Host-visible buffers whose reuse waits until the GPU has passed `busy_until`.
struct HostBuffer {
  RawBuffer raw;
  uint64_t busy_until = 0;
};

}  // namespace stream_detail

using stream_detail::HostBuffer;

struct Stream::Impl {
  Device& dev;
  VulkanDevice& vk;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkSemaphore timeline = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  uint32_t next_query = 0;
  uint64_t submitted = 0;  // last value signalled by a submit
  uint64_t completed = 0;  // last value seen complete
  VkCommandBuffer current = VK_NULL_HANDLE;
  uint32_t commands_in_current = 0;
  uint32_t batch_limit = 64;
  uint64_t cost_in_current = 0;
  uint64_t cost_limit = stream_detail::kDefaultSubmitCost;
  // After a host wait the GPU idles until a batch is submitted, so the batches after it grow
  // 1, 2, 4, ... commands up to batch_limit: the GPU starts on the first command while the host
  // records the rest. Measurements: docs/design/submission.md#ramp.
  // Only batches of at least kRampMinCost ramp: a loop of small ops and a .item() per step
  // would otherwise pay several submissions per step. Off on CPU devices (lavapipe), whose
  // "GPU" shares the host's cores.
  static constexpr uint64_t kRampMinCost = 1ull << 20;  // a few us of a memory-bound op on a GPU
  bool ramp = false;
  uint32_t ramp_limit = 0;  // the current batch's command limit while ramping (0: batch_limit)
  uint32_t spin_us = 0;  // microseconds of polling before a blocking wait
  std::atomic<uint64_t>* submissions = nullptr;       // Stream's counters
  std::atomic<uint64_t>* cost_submissions = nullptr;
  std::atomic<uint64_t>* ramp_submissions = nullptr;
  struct InFlight {
    VkCommandBuffer cb;
    uint64_t value;
    int clock_slot;  // SubmitClock slot timing it (-1: untimed)
    uint64_t cost, declared;
  };
  std::deque<InFlight> in_flight;
  // The per-submission time budget: timings of submissions, and the part of the current
  // batch's cost that ops declared themselves.
  SubmitClock clock;
  double budget_ms = 0;
  int clock_slot = -1;
  uint64_t declared_in_current = 0;
  std::atomic<uint64_t>* slice_cost = nullptr;  // Stream's
  std::vector<VkCommandBuffer> free_cbs;
  HazardTracker hazards;
  std::vector<HostBuffer> staging;
  std::vector<HostBuffer> params_chunks;
  int params_index = -1;
  uint64_t params_offset = 0;
  KernelProfiler profiler;
  // Threads that took a parameter block and have not recorded its dispatch yet (another thread
  // may submit in between); chunks filled meanwhile wait in `retiring` until none is left.
  std::unordered_map<std::thread::id, uint32_t> params_pending;
  std::vector<int> retiring;
  // Commands held back, in order, from the first dispatch whose pipeline was still building
  // (the host goes on recording while build threads compile): each new command first records
  // the ready ones at the front; all are recorded before a submission, which waits for their
  // pipelines. Copies and fills are held behind them too: a zero fill between two layers would
  // otherwise wait for every build in flight.
  struct Command {
    enum class Kind : uint8_t { kDispatch, kCopy, kFill } kind;
    bool barrier_before = false;  // decided when the command came, in order
    const Pipeline* pipeline = nullptr;  // kDispatch
    uint32_t gx = 0, gy = 0, gz = 0, push_bytes = 0;
    VkBuffer src = VK_NULL_HANDLE, dst = VK_NULL_HANDLE;  // kCopy (src), kCopy and kFill (dst)
    uint64_t src_offset = 0, dst_offset = 0, bytes = 0;
    uint32_t pattern = 0;  // kFill
    bool host_read_after = false;  // kCopy into pinned host memory: make it visible to the host
    std::array<uint8_t, kPushConstantBytes> push;
  };
  std::deque<Command> held;
  // Held commands past which a batch that reached its size or cost limit is submitted anyway
  // (waiting for their builds): enough for one model step's first pipelines to build together.
  static constexpr size_t kHoldLimit = 2048;
  std::atomic<uint64_t>* pipeline_wait_ns = nullptr;  // Stream's counter
  // The graph being captured (null when not capturing): `current` is its command buffer,
  // never submitted, and parameter blocks come from its own memory.
  Graph::State* capture = nullptr;
  // A parameter block while capturing (stream_capture.cc).
  uint64_t capture_params(const void* data, uint64_t data_bytes, uint64_t bytes);

  Impl(Device& d, VulkanDevice& v) : dev(d), vk(v) {}

  uint64_t poll() {
    uint64_t v = 0;
    vk.check(vk::vkGetSemaphoreCounterValue(vk.device, timeline, &v),
             "vkGetSemaphoreCounterValue");
    completed = std::max(completed, v);
    bool timed = false;
    while (!in_flight.empty() && in_flight.front().value <= completed) {
      const InFlight& f = in_flight.front();
      if (f.clock_slot >= 0) {
        clock.collect(vk.device, f.clock_slot, f.cost, f.declared);
        timed = true;
      }
      free_cbs.push_back(f.cb);
      in_flight.pop_front();
    }
    if (timed) update_slice_cost();
    return completed;
  }

  // Records the held commands, waiting for their pipelines.
  void record_held() {
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& c : held) {
      if (c.pipeline) c.pipeline->handle();
    }
    pipeline_wait_ns->fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - t0).count(),
                                std::memory_order_relaxed);
    record_ready_held();
  }

  // Records the held commands at the front whose pipelines are built; returns whether any is
  // still held.
  bool record_ready_held() {
    while (!held.empty() && (!held.front().pipeline || held.front().pipeline->ready())) {
      const Command c = held.front();
      held.pop_front();  // open() and the barrier below see the rest held, not this one
      record_command(open(), c);
    }
    return !held.empty();
  }

  void record_command(VkCommandBuffer cb, const Command& c) {
    if (c.barrier_before) full_barrier_now(cb);
    switch (c.kind) {
      case Command::Kind::kDispatch:
        record_dispatch(cb, *c.pipeline, c.gx, c.gy, c.gz, c.push.data(), c.push_bytes);
        break;
      case Command::Kind::kCopy: {
        const VkBufferCopy region{c.src_offset, c.dst_offset, c.bytes};
        vk::vkCmdCopyBuffer(cb, c.src, c.dst, 1, &region);
        if (c.host_read_after) barrier_now(cb, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
        break;
      }
      case Command::Kind::kFill:
        vk::vkCmdFillBuffer(cb, c.dst, c.dst_offset, c.bytes, c.pattern);
        break;
    }
  }

  // A copy or fill: its barrier is decided now, in order; it is held behind held commands, else
  // recorded. Returns whether it has a barrier.
  bool record_or_hold(Command c, std::span<const MemRange> reads,
                      std::span<const MemRange> writes) {
    const bool holding = record_ready_held();
    VkCommandBuffer cb = holding ? VK_NULL_HANDLE : open();
    c.barrier_before = hazard(reads, writes);
    if (holding) {
      held.push_back(c);
    } else {
      record_command(cb, c);
    }
    return c.barrier_before;
  }

  void record_dispatch(VkCommandBuffer cb, const Pipeline& p, uint32_t gx, uint32_t gy,
                       uint32_t gz, const void* push, uint32_t push_bytes) {
    vk::vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE,
                          reinterpret_cast<VkPipeline>(p.handle()));
    if (push_bytes) {
      vk::vkCmdPushConstants(cb, vk.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
    }
    vk::vkCmdDispatch(cb, gx, gy, gz);
  }

  VkCommandBuffer begin() {
    if (!held.empty()) record_held();
    return open();
  }

  // The batch's command buffer, begun if need be (held commands stay held).
  VkCommandBuffer open() {
    if (current) return current;
    if (free_cbs.empty()) poll();
    if (!free_cbs.empty()) {
      current = free_cbs.back();
      free_cbs.pop_back();
      VKML_VK_CHECK(vk::vkResetCommandBuffer(current, 0));
    } else {
      VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      ai.commandPool = pool;
      ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      ai.commandBufferCount = 1;
      VKML_VK_CHECK(vk::vkAllocateCommandBuffers(vk.device, &ai, &current));
    }
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VKML_VK_CHECK(vk::vkBeginCommandBuffer(current, &bi));
    if (profiler.enabled()) profiler.begin_buffer(current);
    clock_slot = clock.begin(current);
    return current;
  }

  void barrier(VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
    barrier_now(begin(), dst_stage, dst_access);
  }

  static void barrier_now(VkCommandBuffer cb, VkPipelineStageFlags dst_stage,
                          VkAccessFlags dst_access) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = dst_access;
    vk::vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
  }

  static void full_barrier_now(VkCommandBuffer cb) {
    barrier_now(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  }

  void full_barrier() { full_barrier_now(begin()); }

  // Whether the next command needs a barrier before it (the tracker then starts afresh).
  bool hazard(std::span<const MemRange> reads, std::span<const MemRange> writes) {
    bool need = hazards.needs_barrier(reads, writes);
    if (need) hazards.clear();
    hazards.commit(reads, writes);
    return need;
  }

  // Returns true if a barrier was recorded.
  bool order(std::span<const MemRange> reads, std::span<const MemRange> writes) {
    begin();  // first: held dispatches go before this command's barrier
    bool need = hazard(reads, writes);
    if (need) full_barrier();
    return need;
  }

  // Raises when the stream is capturing: `what` needs the host or a submission.
  void refuse_in_capture(const char* what) const {
    if (capture) {
      throw CaptureError(std::string("vkml: ") + what +
                         " is not permitted while the stream is capturing a graph (operation "
                         "not permitted when stream is capturing)");
    }
  }

  // Submits the batch, then `graph` (a captured command buffer) when given, in one submission.
  uint64_t submit(bool force_signal, VkCommandBuffer graph = VK_NULL_HANDLE) {
    refuse_in_capture("a submission (host wait, download or flush)");
    if (!held.empty()) record_held();
    if (!current && !force_signal && !graph) return submitted;
    if (current) {
      clock.end(current, clock_slot);
      VKML_VK_CHECK(vk::vkEndCommandBuffer(current));
    }
    uint64_t value = submitted + 1;
    VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    ts.signalSemaphoreValueCount = 1;
    ts.pSignalSemaphoreValues = &value;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.pNext = &ts;
    VkCommandBuffer buffers[2];
    uint32_t count = 0;
    if (current) buffers[count++] = current;
    if (graph) buffers[count++] = graph;
    si.commandBufferCount = count;
    si.pCommandBuffers = count ? buffers : nullptr;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &timeline;
    {
      std::lock_guard<std::mutex> lock(vk.queue_mutex);
      vk.check(vk::vkQueueSubmit(vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
    }
    if (current) {
      in_flight.push_back({current, value, clock_slot, cost_in_current, declared_in_current});
    }
    clock_slot = -1;
    declared_in_current = 0;
    current = VK_NULL_HANDLE;
    commands_in_current = 0;
    cost_in_current = 0;
    if (ramp_limit) ramp_limit = ramp_limit * 2 >= batch_limit ? 0 : ramp_limit * 2;
    submitted = value;
    if (profiler.enabled()) {  // the query pool is reused by the next buffer: read it now
      wait_for(value);  // (no ramp: kernels are timed alone anyway)
      profiler.collect(vk.device);
    }
    submissions->fetch_add(1, std::memory_order_relaxed);
    return value;
  }

  void wait(uint64_t value) {
    wait_for(value);
    // The GPU has nothing left to run: the next batches ramp up from one command.
    if (ramp && completed >= submitted && !current && batch_limit > 1) ramp_limit = 1;
  }

  void wait_for(uint64_t value) {
    wait_on_device(value);
    // Test hook (Device::inject_device_loss): the work is done; report the loss a reset would.
    if (vk.inject_loss.exchange(false)) vk.lose("vkWaitSemaphores", true);
  }

  void wait_on_device(uint64_t value) {
    if (value > submitted) submit(true);
    if (completed >= value) return;
    if (spin_us > 0) {  // poll first: a blocking wait may wake up late (VKML_SYNC_SPIN_US)
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
      while (poll() < value && std::chrono::steady_clock::now() < until) {
      }
      if (completed >= value) return;
    }
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &timeline;
    wi.pValues = &value;
    for (;;) {  // one-second slices, so a lost device surfaces as an error instead of a hang
      VkResult r = vk::vkWaitSemaphores(vk.device, &wi, 1000000000ull);
      if (r == VK_SUCCESS) break;
      if (r != VK_TIMEOUT) vk.check(r, "vkWaitSemaphores");
    }
    poll();
  }

  // The most work one dispatch may carry: half the budget at the throughput learned so far.
  void update_slice_cost() {
    const double rate = clock.enabled() ? clock.ops_per_ns() : initial_ops_per_ns(dev.caps());
    const double ops = budget_ms > 0 ? budget_ms * 1e6 * rate * 0.5 : 0.0;
    slice_cost->store(budget_ms > 0 ? std::max<uint64_t>(static_cast<uint64_t>(ops), 1) : 0,
                      std::memory_order_relaxed);
  }

  void set_budget(double ms) {
    wait_for(submit(false));  // recorded buffers may use the clock's queries
    if (ms <= 0) clock.disable(vk.device);
    budget_ms = std::max(ms, 0.0);
    if (ms > 0 && dev.caps().timestamps) {
      clock.enable(vk.device, dev.caps().timestamp_period_ns, initial_ops_per_ns(dev.caps()));
    }
    update_slice_cost();
  }

  // Submits when the batch holds batch_limit commands or its estimated cost passes cost_limit
  // (later while commands are held for their pipelines, up to kHoldLimit of them).
  void after_command(uint64_t cost) {
    cost_in_current += cost;
    ++commands_in_current;
    if (capture) return;  // a graph is one submission
    const uint64_t budget_cost = slice_cost->load(std::memory_order_relaxed);  // 0: no budget
    if (!held.empty() && held.size() < kHoldLimit) return;
    if (commands_in_current >= batch_limit) {
      submit(false);
    } else if ((cost_limit && cost_in_current >= cost_limit) ||
               (budget_cost && cost_in_current >= budget_cost)) {
      submit(false);
      cost_submissions->fetch_add(1, std::memory_order_relaxed);
    } else if (ramp_limit && commands_in_current >= ramp_limit &&
               cost_in_current >= kRampMinCost) {
      submit(false);
      ramp_submissions->fetch_add(1, std::memory_order_relaxed);
    }
  }

  // A dispatch is about to be recorded: the parameter blocks its thread took are consumed.
  // Once no block is pending, retired chunks are free after the submission this lands in.
  void consume_params() {
    if (params_pending.empty() || params_pending.erase(std::this_thread::get_id()) == 0) return;
    if (params_pending.empty() && !retiring.empty()) {
      for (int i : retiring) params_chunks[i].busy_until = submitted + 1;
      retiring.clear();
    }
  }

  HostBuffer& acquire_staging(uint64_t bytes) {
    poll();
    uint64_t total = 0;
    HostBuffer* best = nullptr;
    for (auto& s : staging) {
      total += s.raw.size;
      if (s.busy_until <= completed && s.raw.size >= bytes &&
          (!best || s.raw.size < best->raw.size)) {
        best = &s;
      }
    }
    if (best) return *best;
    if (total + bytes > stream_detail::kStagingCap && !staging.empty()) {
      // Too much staging in flight: submit what is recorded (it may still read these buffers),
      // wait for it, and drop idle buffers that are too small.
      wait(submit(false));
      for (auto it = staging.begin(); it != staging.end();) {
        if (it->raw.size < bytes) {
          vk.destroy_buffer(it->raw);
          it = staging.erase(it);
        } else {
          return *it;
        }
      }
    }
    uint64_t size = 64 << 10;
    while (size < bytes) size <<= 1;
    HostBuffer hb;
    hb.raw = vk.create_buffer(size, vk.staging_type, true);
    if (!hb.raw) throw OutOfMemoryError("vkml: out of host memory for a staging buffer", size, 0, 0, 0);
    staging.push_back(hb);
    return staging.back();
  }
};

// Friend of Stream and Graph: what other runtime files do with a stream's state.
struct StreamAccess {
  static void set_profiling(Stream& s, bool on) {
    std::lock_guard<std::mutex> lock(s.mu_);
    auto& im = *s.impl_;
    im.wait(im.submit(false));  // a recorded buffer's queries belong to the old setting
    if (on && !im.dev.caps().timestamps) {
      throw NotSupported("vkml: this device has no compute timestamps to profile with");
    }
    if (on) {
      im.profiler.enable(im.vk.device, im.batch_limit, im.dev.caps().timestamp_period_ns);
    } else {
      im.profiler.disable(im.vk.device);
    }
  }
  static std::map<std::string, KernelTime> kernel_times(Stream& s, bool reset) {
    std::lock_guard<std::mutex> lock(s.mu_);
    auto& im = *s.impl_;
    im.wait(im.submit(false));
    auto r = im.profiler.report();
    if (reset) im.profiler.reset();
    return r;
  }
  // Graph capture (stream_capture.cc).
  static void begin_capture(Stream& s, std::shared_ptr<CapturePool> pool);
  static std::unique_ptr<Graph> end_capture(Stream& s);
  static bool capturing(Stream& s);
  static uint64_t replay(Graph& g);
  static void release(Graph& g);
};

}  // namespace vkml
