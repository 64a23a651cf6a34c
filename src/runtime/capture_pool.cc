// Memory of graph captures: see capture_pool.h and vkml/graph.h.
#include "capture_pool.h"

namespace vkml {

CapturePool::~CapturePool() {
  try {
    for (auto& [size, address] : free_) dev_.free(address);
    for (uint64_t address : deferred_) dev_.free(address);
  } catch (...) {
    // Freeing during interpreter shutdown must never throw.
  }
}

uint64_t CapturePool::reuse(uint64_t bytes) {
  const uint64_t size = rounded(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = free_.lower_bound(size);
  if (it == free_.end() || it->first > 2 * size) return 0;
  const uint64_t address = it->second;
  free_.erase(it);
  return address;
}

void CapturePool::adopt(uint64_t address, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  sizes_[address] = rounded(bytes);
}

bool CapturePool::take_back(uint64_t address) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sizes_.find(address);
  if (it == sizes_.end()) return false;
  free_.emplace(it->second, address);
  return true;
}

void CapturePool::defer_free(uint64_t address) {
  std::lock_guard<std::mutex> lock(mu_);
  deferred_.push_back(address);
}

}  // namespace vkml
