// Graph capture and replay on a device's stream (vkml/graph.h).
#include <cstring>

#include "capture_pool.h"
#include "stream_impl.h"

namespace vkml {

struct Graph::State {
  Stream* stream = nullptr;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  std::vector<RawBuffer> params;  // parameter blocks of the captured dispatches
  uint64_t params_offset = 0;
  std::shared_ptr<CapturePool> pool;
  uint64_t commands = 0;
  uint64_t last_value = 0;  // the timeline value of the latest replay
};

namespace {

// Parameter memory per chunk of a graph (a graph keeps its blocks for every replay).
constexpr uint64_t kGraphParamsChunk = 64ull << 10;

}  // namespace

Graph::Graph(std::unique_ptr<State> state) : state_(std::move(state)) {}

Graph::~Graph() {
  StreamAccess::release(*this);
}

uint64_t Graph::replay() { return StreamAccess::replay(*this); }
uint64_t Graph::commands() const { return state_->commands; }
const std::shared_ptr<CapturePool>& Graph::pool() const { return state_->pool; }

void StreamAccess::release(Graph& g) {
  auto& s = *g.state_;
  auto& im = *s.stream->impl_;
  {
    std::lock_guard<std::mutex> lock(s.stream->mu_);
    try {
      if (s.last_value) im.wait_for(s.last_value);
    } catch (...) {
      // A lost device: nothing runs any more.
    }
    vk::vkFreeCommandBuffers(im.vk.device, im.pool, 1, &s.cb);
    for (auto& p : s.params) im.vk.destroy_buffer(p);
  }
  s.pool.reset();  // outside the stream's lock: the pool frees memory through the device
}

void StreamAccess::begin_capture(Stream& stream, std::shared_ptr<CapturePool> pool) {
  std::lock_guard<std::mutex> lock(stream.mu_);
  auto& im = *stream.impl_;
  im.vk.check_alive();
  if (im.capture) throw CaptureError("vkml: the stream is already capturing a graph");
  if (im.profiler.enabled()) {
    throw NotSupported("vkml: graphs cannot be captured while kernels are profiled");
  }
  im.submit(false);  // the commands before the capture go in their own submission
  auto state = std::make_unique<Graph::State>();
  state->stream = &stream;
  state->pool = std::move(pool);
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = im.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VKML_VK_CHECK(vk::vkAllocateCommandBuffers(im.vk.device, &ai, &state->cb));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;  // a replay may follow one in flight
  VKML_VK_CHECK(vk::vkBeginCommandBuffer(state->cb, &bi));
  // Ordered after everything submitted before it, whatever the tracker saw.
  Stream::Impl::full_barrier_now(state->cb);
  im.hazards.clear();
  im.current = state->cb;
  im.commands_in_current = 0;
  im.cost_in_current = 0;
  im.declared_in_current = 0;
  im.capture = state.release();
}

std::unique_ptr<Graph> StreamAccess::end_capture(Stream& stream) {
  std::lock_guard<std::mutex> lock(stream.mu_);
  auto& im = *stream.impl_;
  if (!im.capture) throw CaptureError("vkml: the stream is not capturing a graph");
  std::unique_ptr<Graph::State> state(im.capture);
  Graph::State& s = *state;
  struct Leave {  // capture mode ends even when recording the held commands throws
    Stream::Impl& im;
    ~Leave() {
      im.capture = nullptr;
      im.current = VK_NULL_HANDLE;
      im.commands_in_current = 0;
      im.cost_in_current = 0;
      im.declared_in_current = 0;
      im.hazards.clear();
    }
  } leave{im};
  if (!im.held.empty()) im.record_held();  // into the graph, waiting for their pipelines
  s.commands = im.commands_in_current;
  Stream::Impl::full_barrier_now(s.cb);  // later commands need no tracking of its accesses
  VKML_VK_CHECK(vk::vkEndCommandBuffer(s.cb));
  return std::make_unique<Graph>(std::move(state));
}

bool StreamAccess::capturing(Stream& stream) {
  std::lock_guard<std::mutex> lock(stream.mu_);
  return stream.impl_->capture != nullptr;
}

uint64_t StreamAccess::replay(Graph& g) {
  auto& s = *g.state_;
  Stream& stream = *s.stream;
  std::lock_guard<std::mutex> lock(stream.mu_);
  auto& im = *stream.impl_;
  im.vk.check_alive();
  im.refuse_in_capture("replaying a graph");
  const uint64_t value = im.submit(true, s.cb);
  im.hazards.clear();  // the graph ends with a full barrier
  s.last_value = value;
  stream.submits_++;
  return value;
}

// A parameter block in the graph's own memory: replays read it again, so it is never recycled.
uint64_t Stream::Impl::capture_params(const void* data, uint64_t data_bytes, uint64_t bytes) {
  auto& s = *capture;
  if (s.params.empty() || s.params_offset + bytes > s.params.back().size) {
    RawBuffer raw = vk.create_buffer(std::max(bytes, kGraphParamsChunk), vk.params_type, true);
    if (!raw) throw OutOfMemoryError("vkml: out of memory for a graph's parameters", bytes, 0, 0, 0);
    s.params.push_back(raw);
    s.params_offset = 0;
  }
  RawBuffer& chunk = s.params.back();
  std::memcpy(static_cast<uint8_t*>(chunk.mapped) + s.params_offset, data, data_bytes);
  const uint64_t address = chunk.address + s.params_offset;
  s.params_offset += bytes;
  return address;
}

std::shared_ptr<CapturePool> create_capture_pool(Device& dev) {
  auto& vk = dev.vk();
  auto pool = std::make_shared<CapturePool>(dev);
  std::lock_guard<std::mutex> lock(vk.pools_mutex);
  std::erase_if(vk.pools, [](const std::weak_ptr<CapturePool>& w) { return w.expired(); });
  vk.pools.push_back(pool);
  vk.pool_count.store(vk.pools.size(), std::memory_order_release);
  return pool;
}

void begin_capture(Device& dev, std::shared_ptr<CapturePool> pool) {
  if (!pool) pool = create_capture_pool(dev);
  StreamAccess::begin_capture(dev.stream(), pool);
  std::lock_guard<std::mutex> lock(dev.vk().pools_mutex);
  dev.vk().capture_pool = std::move(pool);
}

std::unique_ptr<Graph> end_capture(Device& dev) {
  struct Detach {  // allocations leave the pool even when ending the capture throws
    Device& dev;
    ~Detach() {
      std::lock_guard<std::mutex> lock(dev.vk().pools_mutex);
      dev.vk().capture_pool.reset();
    }
  } detach{dev};
  return StreamAccess::end_capture(dev.stream());
}

bool capturing(Device& dev) { return StreamAccess::capturing(dev.stream()); }

}  // namespace vkml
