// Decides where barriers go: only where a command touches memory an earlier one wrote,
// or writes memory an earlier one read, since the last barrier.
#pragma once
#include <span>
#include <vector>

#include "vkml/runtime.h"

namespace vkml {

class HazardTracker {
 public:
  // Returns true when a barrier must precede a command with these accesses. Call commit() after.
  bool needs_barrier(std::span<const MemRange> reads, std::span<const MemRange> writes) const {
    if (pending_writes_.size() + pending_reads_.size() > kMaxTracked) return true;
    for (const auto& r : reads) {
      if (overlaps(r, pending_writes_)) return true;  // read after write
    }
    for (const auto& w : writes) {
      if (overlaps(w, pending_writes_) || overlaps(w, pending_reads_)) return true;
    }
    return false;
  }
  // A barrier was recorded: everything before it is ordered.
  void clear() {
    pending_reads_.clear();
    pending_writes_.clear();
  }
  void commit(std::span<const MemRange> reads, std::span<const MemRange> writes) {
    for (const auto& r : reads) {
      if (r.bytes) pending_reads_.push_back(r);
    }
    for (const auto& w : writes) {
      if (w.bytes) pending_writes_.push_back(w);
    }
  }
  bool has_pending_writes() const { return !pending_writes_.empty(); }

 private:
  static constexpr size_t kMaxTracked = 1024;
  static bool overlaps(const MemRange& a, const std::vector<MemRange>& list) {
    if (!a.bytes) return false;
    for (const auto& b : list) {
      if (a.address < b.address + b.bytes && b.address < a.address + a.bytes) return true;
    }
    return false;
  }
  std::vector<MemRange> pending_reads_, pending_writes_;
};

}  // namespace vkml
