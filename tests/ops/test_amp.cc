// Amp family (GradScaler's kernels): unscale-and-check over lists of strided tensors of every
// floating dtype, and the scale update state machine, against host references.
#include <cmath>
#include <limits>
#include <memory>

#include "float_buffers.h"
#include "test_util.h"
#include "vkml/amp.h"
#include "vkml/errors.h"

namespace vkml::testing {

namespace {

// A device tensor of `n` elements with host contents; desc() views it with any sizes/strides.
struct Buffer {
  HostFloats host;
  DeviceBuffer mem;
  Buffer(Device& dev, DType t, size_t n, uint32_t seed) : host(t, n), mem(dev, n * dtype_size(t)) {
    host.randomize(seed);
    for (size_t i = 0; i < n; ++i) host.set(i, host.get(i) * 1000.0);  // grads scaled up
    host.upload(dev, mem.address);
  }
};

float read_f32(Device& dev, uint64_t address) { return download<float>(dev, address, 1)[0]; }
void write_f32(Device& dev, uint64_t address, float v) { dev.stream().upload(&v, address, 4); }

// What PyTorch stores: the value times inv_scale in the op math type, rounded to the dtype.
double unscaled(DType t, double v, float inv_scale) {
  HostFloats r(t, 1);
  if (t == DType::kF64) {
    r.set(0, v * static_cast<double>(inv_scale));
  } else {
    r.set(0, static_cast<float>(v) * inv_scale);
  }
  return r.get(0);
}

}  // namespace

class AmpTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    flags_ = std::make_unique<DeviceBuffer>(dev(), 8);
    found_inf_ = desc(flags_->address, DType::kF32, {});
    inv_scale_ = desc(flags_->address + 4, DType::kF32, {1});
    write_f32(dev(), found_inf_.address, 0.0f);
  }
  void TearDown() override {
    flags_.reset();
    DeviceTest::TearDown();
  }
  void set_inv_scale(float v) { write_f32(dev(), inv_scale_.address, v); }
  float found_inf() { return read_f32(dev(), found_inf_.address); }

  std::unique_ptr<DeviceBuffer> flags_;
  TensorDesc found_inf_, inv_scale_;
};

TEST_F(AmpTest, UnscalesMixedDtypesStridesAndLongLists) {
  const float inv = 1.0f / 3.0f;  // not a power of two: products round
  set_inv_scale(inv);
  // f16 transposed 13x17 view, bf16 every other element, f32 contiguous, an empty tensor, and 60
  // small f32 tensors so that the f32 list needs two dispatches.
  Buffer h(dev(), DType::kF16, 13 * 17, 1), b(dev(), DType::kBF16, 2 * 33, 2);
  Buffer f(dev(), DType::kF32, 1001, 3), many(dev(), DType::kF32, 60 * 7, 4);
  std::vector<TensorDesc> list{desc(h.mem.address, DType::kF16, {17, 13}, {1, 17}),
                               desc(b.mem.address, DType::kBF16, {33}, {2}),
                               desc(f.mem.address, DType::kF32, {7, 11, 13}),
                               desc(f.mem.address, DType::kF32, {0, 5})};
  for (int i = 0; i < 60; ++i) {
    list.push_back(desc(many.mem.address + i * 7 * 4, DType::kF32, {7}));
  }
  ops::amp_unscale_check(dev(), list, found_inf_, inv_scale_);
  EXPECT_EQ(found_inf(), 0.0f);
  for (Buffer* buf : {&h, &b, &f, &many}) {
    HostFloats got(buf->host.dtype, buf->host.size());
    got.download(dev(), buf->mem.address);
    for (size_t i = 0; i < got.size(); ++i) {
      bool touched = buf != &b || i % 2 == 0;  // the bf16 view skips odd elements
      double want = touched ? unscaled(got.dtype, buf->host.get(i), inv) : buf->host.get(i);
      ASSERT_EQ(got.get(i), want) << dtype_name(got.dtype) << " element " << i;
    }
  }
}

TEST_F(AmpTest, FindsInfAndNanAnywhere) {
  set_inv_scale(0.5f);
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (double bad : {INFINITY, -INFINITY, NAN}) {
      write_f32(dev(), found_inf_.address, 0.0f);
      Buffer clean(dev(), t, 300, 5), dirty(dev(), t, 5000, 6);
      dirty.host.set(4999, bad);  // the very last element of the last tensor
      dirty.host.upload(dev(), dirty.mem.address);
      std::vector<TensorDesc> list{desc(clean.mem.address, t, {300}),
                                   desc(dirty.mem.address, t, {50, 100})};
      ops::amp_unscale_check(dev(), list, found_inf_, inv_scale_);
      EXPECT_EQ(found_inf(), 1.0f) << dtype_name(t) << " " << bad;
      HostFloats got(t, 5000);
      got.download(dev(), dirty.mem.address);
      EXPECT_EQ(got.get(10), unscaled(t, dirty.host.get(10), 0.5f));
      EXPECT_EQ(std::isnan(got.get(4999)), std::isnan(bad));
    }
  }
}

TEST_F(AmpTest, FoundInfIsOnlyEverSetAndInvScaleOneLeavesValues) {
  set_inv_scale(1.0f);
  write_f32(dev(), found_inf_.address, 1.0f);  // an earlier group already overflowed
  Buffer f(dev(), DType::kF32, 257, 7);
  f.host.set(3, NAN);
  f.host.upload(dev(), f.mem.address);
  TensorDesc one = desc(f.mem.address, DType::kF32, {257});
  ops::amp_unscale_check(dev(), {&one, 1}, found_inf_, inv_scale_);
  EXPECT_EQ(found_inf(), 1.0f);
  HostFloats got(DType::kF32, 257);
  got.download(dev(), f.mem.address);
  EXPECT_TRUE(std::isnan(got.get(3)));
  for (size_t i = 4; i < 257; ++i) ASSERT_EQ(got.get(i), f.host.get(i));
}

TEST_F(AmpTest, UnscalesDoubleWhereSupported) {
  if (!dev().caps().supports_dtype(DType::kF64)) {
    Buffer d(dev(), DType::kF32, 1, 8);  // no f64 here: asking for it must say so
    TensorDesc t = desc(d.mem.address, DType::kF64, {0});
    EXPECT_THROW(ops::amp_unscale_check(dev(), {&t, 1}, found_inf_, inv_scale_), NotSupported);
    return;
  }
  const float inv = 1.0f / 3.0f;
  set_inv_scale(inv);
  Buffer d(dev(), DType::kF64, 99, 9);
  TensorDesc t = desc(d.mem.address, DType::kF64, {9, 11});
  ops::amp_unscale_check(dev(), {&t, 1}, found_inf_, inv_scale_);
  HostFloats got(DType::kF64, 99);
  got.download(dev(), d.mem.address);
  for (size_t i = 0; i < 99; ++i) ASSERT_EQ(got.get(i), d.host.get(i) * double(inv));
  EXPECT_EQ(found_inf(), 0.0f);
}

TEST_F(AmpTest, UpdateScaleFollowsGradScalerRules) {
  DeviceBuffer state(dev(), 8);
  TensorDesc scale = desc(state.address, DType::kF32, {});
  TensorDesc tracker = desc(state.address + 4, DType::kI32, {1});
  write_f32(dev(), scale.address, 1024.0f);
  int32_t zero = 0;
  dev().stream().upload(&zero, tracker.address, 4);
  auto step = [&](float inf) {
    write_f32(dev(), found_inf_.address, inf);
    ops::amp_update_scale(dev(), scale, tracker, found_inf_, 2.0, 0.5, 3);
    return std::make_pair(read_f32(dev(), scale.address),
                          download<int32_t>(dev(), tracker.address, 1)[0]);
  };
  EXPECT_EQ(step(0.0f), std::make_pair(1024.0f, 1));
  EXPECT_EQ(step(0.0f), std::make_pair(1024.0f, 2));
  EXPECT_EQ(step(0.0f), std::make_pair(2048.0f, 0));  // third clean step in a row: grow
  EXPECT_EQ(step(0.0f), std::make_pair(2048.0f, 1));
  EXPECT_EQ(step(1.0f), std::make_pair(1024.0f, 0));  // overflow: back off, restart the count
  EXPECT_EQ(step(0.0f), std::make_pair(1024.0f, 1));
  // A grown scale that overflows float32 is not taken.
  const float big = std::numeric_limits<float>::max() / 1.5f;
  write_f32(dev(), scale.address, big);
  EXPECT_EQ(step(0.0f), std::make_pair(big, 2));
  EXPECT_EQ(step(0.0f), std::make_pair(big, 0));
}

TEST_F(AmpTest, UpdateScaleRoundsLikePyTorch) {
  DeviceBuffer state(dev(), 8);
  TensorDesc scale = desc(state.address, DType::kF32, {});
  TensorDesc tracker = desc(state.address + 4, DType::kI32, {});
  const float start = 65536.0f * 1.37f;
  write_f32(dev(), scale.address, start);
  write_f32(dev(), found_inf_.address, 1.0f);
  ops::amp_update_scale(dev(), scale, tracker, found_inf_, 2.0, 0.3, 100);
  // PyTorch multiplies in double and rounds once; without fp64 the factor is rounded first.
  float want = dev().caps().fp64_math ? static_cast<float>(double(start) * 0.3)
                                      : start * static_cast<float>(0.3);
  EXPECT_EQ(read_f32(dev(), scale.address), want);
}

TEST_F(AmpTest, RejectsBadArguments) {
  DeviceBuffer mem(dev(), 64);
  TensorDesc ints = desc(mem.address, DType::kI32, {4});
  EXPECT_THROW(ops::amp_unscale_check(dev(), {&ints, 1}, found_inf_, inv_scale_), InvalidArgument);
  TensorDesc two = desc(mem.address, DType::kF32, {2});
  TensorDesc grad = desc(mem.address + 16, DType::kF32, {4});
  EXPECT_THROW(ops::amp_unscale_check(dev(), {&grad, 1}, two, inv_scale_), InvalidArgument);
  TensorDesc half_scale = desc(mem.address, DType::kF16, {1});
  EXPECT_THROW(ops::amp_unscale_check(dev(), {&grad, 1}, found_inf_, half_scale), InvalidArgument);
  TensorDesc f32_tracker = desc(mem.address + 32, DType::kF32, {1});
  EXPECT_THROW(ops::amp_update_scale(dev(), inv_scale_, f32_tracker, found_inf_, 2.0, 0.5, 10),
               InvalidArgument);
}

}  // namespace vkml::testing
