// Helpers for the GoogleTest suites: the device under test, host<->device, fixed-seed data.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "vkml/device.h"
#include "vkml/ops.h"
#include "vkml/runtime.h"

namespace vkml::testing {

// Every test runs on vkml:0 and fails if the validation layer said anything during it.
class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GT(device_count(), 0) << "no Vulkan device: " << no_device_reason();
    dev_ = &device(0);
    messages_before_ = validation_message_count();
  }
  void TearDown() override {
    dev_->synchronize();
    EXPECT_EQ(validation_message_count(), messages_before_) << "validation layer messages";
  }
  Device& dev() { return *dev_; }

 private:
  Device* dev_ = nullptr;
  uint64_t messages_before_ = 0;
};

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Sets a stream's per-submission time budget for a scope (Stream::set_submit_budget_ms).
struct SubmitBudgetScope {
  Stream& stream;
  double saved;
  SubmitBudgetScope(Stream& s, double ms) : stream(s), saved(s.submit_budget_ms()) {
    s.set_submit_budget_ms(ms);
  }
  ~SubmitBudgetScope() { stream.set_submit_budget_ms(saved); }
  SubmitBudgetScope(const SubmitBudgetScope&) = delete;
};

// Owns one device allocation for the duration of a test.
struct DeviceBuffer {
  Device& dev;
  uint64_t address;
  uint64_t bytes;
  DeviceBuffer(Device& d, uint64_t n) : dev(d), address(d.allocate(n)), bytes(n) {}
  ~DeviceBuffer() { dev.free(address); }
  DeviceBuffer(const DeviceBuffer&) = delete;
};

template <typename T>
std::vector<T> download(Device& dev, uint64_t address, size_t count) {
  std::vector<T> out(count);
  dev.stream().download(address, out.data(), count * sizeof(T));
  return out;
}

inline TensorDesc desc(uint64_t address, DType t, std::vector<int64_t> sizes,
                       std::vector<int64_t> strides = {}) {
  TensorDesc d;
  d.address = address;
  d.dtype = t;
  d.sizes = sizes;
  if (strides.empty()) {
    strides.resize(sizes.size());
    int64_t s = 1;
    for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
      strides[i] = s;
      s *= sizes[i];
    }
  }
  d.strides = strides;
  return d;
}

}  // namespace vkml::testing
