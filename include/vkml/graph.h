// Graph capture and replay: a device's commands recorded once into a command buffer of their
// own, then submitted again as a whole, like CUDA graphs.
#pragma once
#include <cstdint>
#include <memory>

#include "vkml/errors.h"

namespace vkml {

class Device;

// An operation the stream cannot record while it captures a graph (a host wait, a download, an
// upload, a flush, a replay), as CUDA's "operation not permitted when stream is capturing".
class CaptureError : public Error {
 public:
  using Error::Error;
};

// Device memory allocated while a graph is captured. Its blocks never return to the device's
// caching allocator while the pool lives, because every replay writes them; a block freed
// meanwhile is reused only by later allocations of captures into the same pool. Memory from
// the caching allocator freed while capturing is freed only when the pool goes, since the
// captured commands may still touch it. A pool lives as long as a graph captured into it or
// a handle to it.
class CapturePool;

// The commands of one capture. replay() submits them in one queue submission, after whatever
// the stream has recorded since its last submission. Every buffer they use keeps its address
// (the addresses are baked into the recorded parameters), so inputs are copied into the buffers
// the capture read, and results are read from those it wrote.
class Graph {
 public:
  ~Graph();  // waits for its last replay to finish
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Returns the timeline value that marks the replay's completion.
  uint64_t replay();
  uint64_t commands() const;  // dispatches, copies and fills recorded
  const std::shared_ptr<CapturePool>& pool() const;

  struct State;
  explicit Graph(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
  friend struct StreamAccess;
};

std::shared_ptr<CapturePool> create_capture_pool(Device& dev);
// From begin_capture() to end_capture(), the device's stream records into a graph (between two
// full barriers, never submitted) and its allocations come from `pool` (a new pool when null).
// Host waits, downloads, uploads, flushes, timestamps and replays raise CaptureError meanwhile.
// end_capture() leaves capture mode even when it throws.
void begin_capture(Device& dev, std::shared_ptr<CapturePool> pool = nullptr);
std::unique_ptr<Graph> end_capture(Device& dev);
bool capturing(Device& dev);

}  // namespace vkml
