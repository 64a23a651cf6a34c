// vkml kernels in torch.profiler: a Kineto activity profiler registered for PrivateUse1.
// Kineto calls pushCorrelationId/popCorrelationId around every op it records, on the op's
// thread; each op brackets its work on the device's stream with two GPU timestamps. Ops that
// recorded dispatches or copies to or from pinned host memory, and whose children recorded
// none, become device events (the kernel activity type, which torch maps to the PrivateUse1
// device) linked to the CPU op, so key_averages() gives them device time and the Chrome trace
// draws them beside it.
// Torch releases without the PrivateUse1 profiler registry build without it.
#if __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>)
#ifndef USE_KINETO
#define USE_KINETO 1  // torch's wheels are built with Kineto; its headers hide behind the macro
#define VKML_DEFINED_USE_KINETO
#endif
#include <libkineto.h>
#include <torch/csrc/profiler/orchestration/observer.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <mutex>

#include "common/bridge.h"
#include "vkml/host_memory.h"

namespace torch_vkml::device_kineto_profiler {

int64_t host_now_ns() {
  // Kineto's CPU events use the Unix epoch (system clock) in nanoseconds.
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Span {
  uint64_t correlation = 0;
  c10::DeviceIndex device = 0;
  uint32_t query[2] = {0, 0};
  double gpu_ns[2] = {-1, -1};
  int64_t host_start_ns = 0;
  uint64_t dispatches = 0;   // the stream's dispatch count at the start
  uint64_t pinned_copies = 0;  // and the device's count of copies to or from pinned memory
  bool open = true;
  bool launched = false;     // the op recorded dispatches or pinned copies
  bool child_launched = false;
};

// The spans of one profiling run. Timestamps live in a small ring of queries on each stream,
// so they are read back (after a synchronize) before the ring can wrap.
class Tracker {
 public:
  static Tracker& get() {
    static Tracker t;
    return t;
  }

  void begin() {
    std::lock_guard<std::mutex> lock(mu_);
    spans_.clear();
    unread_.clear();
    offsets_.clear();
    ++generation_;
    active_ = true;
    decided_ = false;
    wanted_ = false;
  }

  void end() {
    std::lock_guard<std::mutex> lock(mu_);
    if (active_ && wanted_) read_all();
    active_ = false;
  }

  void push(uint64_t correlation) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!active_) return;
    if (!decided_) {
      // Kineto also starts this run for CUDA-only traces (they share the kernel activity
      // type): record only when torch profiles the PrivateUse1 device, and leave vkml alone
      // otherwise.
      decided_ = true;
      namespace prof = torch::profiler::impl;
      wanted_ = device_count() > 0 && prof::profilerEnabled() &&
                prof::getProfilerConfig().state == prof::ProfilerState::KINETO_PRIVATEUSE1;
      for (int i = 0; wanted_ && i < device_count(); ++i) {
        offsets_.push_back(calibrate(static_cast<c10::DeviceIndex>(i)));
      }
    }
    if (!wanted_) return;
    auto& stack = thread_stack();
    c10::DeviceIndex d = current_device();
    vkml::Stream& s = core_device(d).stream();
    Span span;
    span.correlation = correlation;
    span.device = d;
    span.host_start_ns = host_now_ns();
    span.dispatches = s.dispatches_recorded();
    span.pinned_copies = vkml::host_memory_stats(core_device(d)).copies_recorded;
    span.query[0] = s.write_timestamp();
    spans_.push_back(span);
    unread_.push_back({spans_.size() - 1, 0});
    stack.push_back(spans_.size() - 1);
    if (unread_.size() >= kReadAfter) read_all();
  }

  void pop() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!active_ || !wanted_) return;
    auto& stack = thread_stack();
    if (stack.empty()) return;
    size_t i = stack.back();
    stack.pop_back();
    Span& span = spans_[i];
    vkml::Stream& s = core_device(span.device).stream();
    span.launched = s.dispatches_recorded() != span.dispatches ||
                    vkml::host_memory_stats(core_device(span.device)).copies_recorded !=
                        span.pinned_copies;
    span.query[1] = s.write_timestamp();
    span.open = false;
    unread_.push_back({i, 1});
    if (span.launched && !stack.empty()) spans_[stack.back()].child_launched = true;
    if (unread_.size() >= kReadAfter) read_all();
  }

  // Closed spans that launched work and whose children launched none, on the host clock.
  struct Event {
    uint64_t correlation;
    c10::DeviceIndex device;
    int64_t start_ns, end_ns;
  };
  std::vector<Event> events() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Event> out;
    for (const Span& s : spans_) {
      if (s.open || !s.launched || s.child_launched || s.gpu_ns[0] < 0 || s.gpu_ns[1] < 0) continue;
      double offset = offsets_[s.device];
      // A kernel cannot start before its op was called on the host; the calibration is only
      // as good as one submit's latency.
      int64_t start =
          std::max<int64_t>(static_cast<int64_t>(s.gpu_ns[0] + offset), s.host_start_ns);
      int64_t end = std::max<int64_t>(static_cast<int64_t>(s.gpu_ns[1] + offset), start + 1);
      out.push_back({s.correlation, s.device, start, end});
    }
    return out;
  }

 private:
  static constexpr size_t kReadAfter = 96;  // well under the stream's ring of timestamp queries

  // Host time minus GPU time for device d: a timestamp on an idle stream, bracketed by host reads.
  double calibrate(c10::DeviceIndex d) {
    vkml::Stream& s = core_device(d).stream();
    s.synchronize();
    int64_t before = host_now_ns();
    uint32_t q = s.write_timestamp();
    double gpu = s.read_timestamp_ns(q);
    int64_t after = host_now_ns();
    return static_cast<double>(before + after) / 2 - gpu;
  }

  void read_all() {
    for (auto [i, which] : unread_) {
      Span& s = spans_[i];
      s.gpu_ns[which] = core_device(s.device).stream().read_timestamp_ns(s.query[which]);
    }
    unread_.clear();
  }

  std::vector<size_t>& thread_stack() {
    thread_local std::vector<size_t> stack;
    thread_local uint64_t generation = 0;
    if (generation != generation_) {
      stack.clear();
      generation = generation_;
    }
    return stack;
  }

  std::mutex mu_;
  bool active_ = false;
  bool decided_ = false;  // wanted_ is settled at the run's first op
  bool wanted_ = false;
  uint64_t generation_ = 0;
  std::vector<Span> spans_;
  std::vector<std::pair<size_t, int>> unread_;
  std::vector<double> offsets_;
};

class ProfileRun final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    Tracker::get().begin();
    status_ = libkineto::TraceStatus::RECORDING;
  }
  void stop() override {
    Tracker::get().end();
    status_ = libkineto::TraceStatus::PROCESSING;
  }
  std::vector<std::string> errors() override { return {}; }
  void pushCorrelationId(uint64_t id) override { Tracker::get().push(id); }
  void popCorrelationId() override { Tracker::get().pop(); }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, nullptr, 0, 0);
  }
  void processTrace(libkineto::ActivityLogger& logger,
                    libkineto::getLinkedActivityCallback linked, int64_t, int64_t) override {
    // The logger keeps pointers: the activities live in the buffer handed to Kineto afterwards.
    if (!buffer_) buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    for (const Tracker::Event& e : Tracker::get().events()) {
      auto a = std::make_unique<libkineto::GenericTraceActivity>();
      const libkineto::ITraceActivity* op =
          linked ? linked(static_cast<int32_t>(e.correlation)) : nullptr;
      a->activityType = libkineto::ActivityType::CONCURRENT_KERNEL;
      a->activityName = "vkml " + (op ? op->name() : std::string("kernels"));
      if (op) {
        std::string dims = op->getMetadataValue("Input Dims");
        if (!dims.empty()) a->activityName += " " + dims;
      }
      a->startTime = e.start_ns;
      a->endTime = e.end_ns;
      a->id = static_cast<int32_t>(e.correlation);
      a->device = e.device;
      a->resource = 0;
      a->linked = op;
      a->flow.id = static_cast<uint32_t>(e.correlation);
      a->flow.type = libkineto::kLinkAsyncCpuGpu;
      a->flow.start = false;
      a->log(logger);
      buffer_->activities.push_back(std::move(a));
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    return std::make_unique<libkineto::DeviceInfo>(libkineto::DeviceInfo{
        0, 0, "vkml", "vkml " + std::to_string(current_device())});
  }
  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    return {libkineto::ResourceInfo{0, 0, 0, "vkml stream"}};
  }
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::move(buffer_);
  }

 private:
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
};

class VkmlActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<libkineto::ActivityType>& availableActivities() const override {
    return activities_;
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>& types, const libkineto::Config&) override {
    if (!types.count(libkineto::ActivityType::CONCURRENT_KERNEL)) return nullptr;
    return std::make_unique<ProfileRun>();  // records nothing where there is no vkml device
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t, int64_t, const std::set<libkineto::ActivityType>& types,
      const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_{"vkml"};
  std::set<libkineto::ActivityType> activities_{libkineto::ActivityType::CONCURRENT_KERNEL};
};

REGISTER_PRIVATEUSE1_PROFILER(VkmlActivityProfiler);

}  // namespace torch_vkml::device_kineto_profiler

#ifdef VKML_DEFINED_USE_KINETO
#undef USE_KINETO
#undef VKML_DEFINED_USE_KINETO
#endif
#endif  // __has_include(privateuse1_profiler.h)
