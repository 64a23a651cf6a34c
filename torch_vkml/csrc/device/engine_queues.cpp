// Autograd's device threads for a late import. The engine sizes its per-device ready queues once,
// at the first backward pass of the process, from the device guards registered then. When
// torch_vkml loads after a CPU backward has run (a notebook, TORCH_DEVICE_BACKEND_AUTOLOAD=0), the
// engine has no queue for vkml devices and asserts on the first vkml backward. This adds the
// missing queues and their worker threads, as the engine's own start-up would have made them.
// Installed packages avoid the case: the "torch.backends" entry point loads vkml with torch.
// The engine reads its queue list without a lock: the import must not overlap a backward pass
// running on another thread on a device other than the CPU.
#include <torch/csrc/autograd/engine.h>

#include <mutex>
#include <thread>

#include "common/bridge.h"

namespace torch_vkml::device_engine_queues {

using torch::autograd::Engine;
using torch::autograd::ReadyQueue;

// Reads the engine's protected state through a pointer-to-member taken in a derived class.
struct EngineAccess : Engine {
  static std::vector<std::shared_ptr<ReadyQueue>>& queues(Engine& e) {
    return e.*(&EngineAccess::device_ready_queues_);
  }
  static bool started(Engine& e) {
    // The engine's start-up creates the reentrant thread pool before anything else.
    return (e.*(&EngineAccess::thread_pool_shared_)) != nullptr;
  }
};

}  // namespace torch_vkml::device_engine_queues

namespace torch_vkml {

// Returns the number of device queues added (0 when the engine needs none).
int extend_autograd_device_queues() {
  using namespace device_engine_queues;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  Engine& engine = Engine::get_default_engine();
  // Not started: its start-up sees the vkml guard and sizes the queues itself.
  if (!EngineAccess::started(engine)) return 0;
  auto& queues = EngineAccess::queues(engine);
  size_t want = static_cast<size_t>(device_count());
  if (queues.size() >= want) return 0;
  std::vector<std::shared_ptr<ReadyQueue>> grown(queues);
  size_t first = grown.size();
  for (size_t i = first; i < want; ++i) grown.push_back(std::make_shared<ReadyQueue>());
  queues = std::move(grown);
  for (size_t i = first; i < want; ++i) {
    // thread_init is virtual: the Python engine's override sets up the thread for Python.
    std::thread t([&engine, q = queues[i], i] {
      engine.thread_init(static_cast<int>(i), q, true);
    });
    t.detach();
  }
  return static_cast<int>(want - first);
}

}  // namespace torch_vkml
