// A lost device (VK_ERROR_DEVICE_LOST): the wait that sees it raises DeviceLostError, and every
// later call on the device raises the same error at once. The loss is injected by the test hook
// (the GPU's work still completes), and the device is recovered afterwards for the next tests.
#include <chrono>
#include <functional>
#include <string>

#include "test_util.h"
#include "vkml/ops.h"

namespace vkml::testing {

namespace {

class DeviceLostTest : public DeviceTest {
 protected:
  void TearDown() override {
    dev().recover_injected_loss();
    DeviceTest::TearDown();
  }
};

// Runs `fn` and returns the DeviceLostError's message, failing when it raises anything else.
template <typename Fn>
std::string lost_message(Fn&& fn) {
  try {
    fn();
  } catch (const DeviceLostError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no DeviceLostError";
  return "";
}

}  // namespace

TEST_F(DeviceLostTest, TheWaitReportsTheLossThenEveryCallRaisesAtOnce) {
  const uint64_t n = 4096;
  DeviceBuffer a(dev(), n), b(dev(), n);
  std::vector<uint8_t> host(n, 7);
  dev().stream().upload(host.data(), a.address, n);
  dev().inject_device_loss();
  EXPECT_FALSE(dev().lost());  // reported by the next wait, not before
  const std::string first = lost_message([&] { dev().synchronize(); });
  EXPECT_TRUE(dev().lost());
  EXPECT_NE(first.find("VK_ERROR_DEVICE_LOST"), std::string::npos) << first;
  EXPECT_NE(first.find("restart the process"), std::string::npos) << first;

  const auto t0 = std::chrono::steady_clock::now();
  auto& s = dev().stream();
  TensorDesc d = desc(b.address, DType::kI32, {int64_t(n / 4)});
  const std::vector<std::function<void()>> calls = {
      [&] { s.upload(host.data(), b.address, n); },
      [&] { s.download(a.address, host.data(), n); },
      [&] { s.copy(a.address, b.address, n); },
      [&] { s.fill(b.address, n, 0); },
      [&] { ops::fill(dev(), d, Scalar::from_int(3)); },
      [&] { s.flush(); },
      [&] { s.completed_value(); },
      [&] { dev().synchronize(); },
      [&] { dev().allocate(256); },
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(lost_message(calls[i]), first) << "call " << i;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_TRUE(dev().lost());
}

TEST_F(DeviceLostTest, ADownloadSeesTheLossAndNothingIsRecordedAfterIt) {
  const uint64_t n = 1024;
  DeviceBuffer a(dev(), n);
  std::vector<int32_t> host(n / 4, 5);
  dev().stream().upload(host.data(), a.address, n);
  const uint64_t dispatches = dev().stream().dispatches_recorded();
  dev().inject_device_loss();
  std::vector<int32_t> out(n / 4, 0);
  EXPECT_THROW(dev().stream().download(a.address, out.data(), n), DeviceLostError);
  EXPECT_THROW(ops::fill(dev(), desc(a.address, DType::kI32, {int64_t(n / 4)}),
                         Scalar::from_int(1)),
               DeviceLostError);
  EXPECT_EQ(dev().stream().dispatches_recorded(), dispatches);
}

TEST_F(DeviceLostTest, AnInjectedLossCanBeRecoveredFromInTests) {
  const int64_t n = 256;
  DeviceBuffer a(dev(), n * 4);
  dev().inject_device_loss();
  EXPECT_THROW(dev().synchronize(), DeviceLostError);
  dev().recover_injected_loss();
  EXPECT_FALSE(dev().lost());
  ops::fill(dev(), desc(a.address, DType::kI32, {n}), Scalar::from_int(9));
  EXPECT_EQ(download<int32_t>(dev(), a.address, n), std::vector<int32_t>(n, 9));
}

}  // namespace vkml::testing
