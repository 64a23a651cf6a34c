// Resample family: upsampling (nearest, nearest-exact, linear, cubic; align_corners, explicit
// scales), reflection/replication padding and im2col/col2im, forward and backward, against a
// double-precision CPU reference written in PyTorch's scatter form.
#include <cmath>
#include <functional>

#include "nn_test_util.h"
#include "vkml/embedding.h"
#include "vkml/resample.h"

namespace vkml::testing {

namespace {

using ops::ResampleMode;
using ops::ResampleSpec;

// (input index, weight) pairs that output o reads along one dim of size in -> out.
using Taps = std::vector<std::pair<int64_t, double>>;

// Linear and cubic compute in double for f64 data, in float otherwise; nearest always in float.
Taps ref_taps(const ResampleSpec& s, int k, int64_t in, int64_t out, int64_t o, bool f64) {
  double scale = s.scales[k] > 0 ? 1.0 / s.scales[k] : static_cast<double>(in) / out;
  bool linear = s.mode == ResampleMode::kLinear || s.mode == ResampleMode::kCubic;
  if (linear && s.align_corners) scale = out > 1 ? static_cast<double>(in - 1) / (out - 1) : 0.0;
  float fs = static_cast<float>(scale);
  double ls = f64 ? scale : fs;
  switch (s.mode) {
    case ResampleMode::kPadReflect: {
      int64_t j = o - s.pad_before[k];
      j = j < 0 ? -j : j;
      return {{j >= in ? 2 * (in - 1) - j : j, 1.0}};
    }
    case ResampleMode::kPadReplicate:
      return {{std::clamp<int64_t>(o - s.pad_before[k], 0, in - 1), 1.0}};
    case ResampleMode::kNearest:
      if (out == in) return {{o, 1.0}};
      if (out == 2 * in) return {{o / 2, 1.0}};
      return {{std::min<int64_t>(std::floor(o * fs), in - 1), 1.0}};
    case ResampleMode::kNearestExact:
      return {{std::min<int64_t>(std::floor((o + 0.5) * fs), in - 1), 1.0}};
    case ResampleMode::kLinear: {
      if (out == in) return {{o, 1.0}};
      double r = s.align_corners ? ls * o : std::max(ls * (o + 0.5) - 0.5, 0.0);
      int64_t i0 = std::min<int64_t>(std::floor(r), in - 1);
      double l = std::clamp(r - i0, 0.0, 1.0);
      return {{i0, 1 - l}, {std::min(i0 + 1, in - 1), l}};
    }
    default: {
      double r = s.align_corners ? ls * o : ls * (o + 0.5) - 0.5;
      int64_t i0 = std::min<int64_t>(std::floor(r), in - 1);
      double t = std::clamp(r - i0, 0.0, 1.0), A = -0.75;
      auto c1 = [&](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
      auto c2 = [&](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
      double w[4] = {c2(t + 1), c1(t), c1(1 - t), c2(2 - t)};
      Taps taps;
      for (int j = 0; j < 4; ++j) taps.push_back({std::clamp<int64_t>(i0 - 1 + j, 0, in - 1), w[j]});
      return taps;
    }
  }
}

// Runs spec on [2, 3, spatial...] (channels-last input), checks forward and backward.
void check_resample(Device& dev, const ResampleSpec& spec, DType dt, std::vector<int64_t> in_sp,
                    std::vector<int64_t> out_sp, uint32_t seed) {
  int sd = static_cast<int>(in_sp.size());
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1};
  for (int k = 0; k < sd; ++k) {
    in[3 - sd + k] = in_sp[k];
    out[3 - sd + k] = out_sp[k];
  }
  std::vector<int64_t> in_sizes = {2, 3}, out_sizes = {2, 3};
  in_sizes.insert(in_sizes.end(), in_sp.begin(), in_sp.end());
  out_sizes.insert(out_sizes.end(), out_sp.begin(), out_sp.end());
  std::vector<int64_t> cl(in_sizes.size());
  int64_t st = 3;
  for (int k = static_cast<int>(in_sizes.size()) - 1; k >= 2; --k) {
    cl[k] = st;
    st *= in_sizes[k];
  }
  cl[1] = 1;
  cl[0] = st;
  const int64_t planes = 6, in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2];
  DevTensor x(dev, dt, in_sizes, cl), y(dev, dt, out_sizes);
  auto xs = x.upload(dev, random_values(planes * in_plane, seed, -3, 3));
  DevTensor g(dev, dt, out_sizes), gi(dev, dt, in_sizes, cl);
  auto gs = g.upload(dev, random_values(planes * out_plane, seed + 1));
  std::vector<double> want(planes * out_plane, 0), want_gi(planes * in_plane, 0);
  const bool f64 = dt == DType::kF64;
  for (int64_t pl = 0; pl < planes; ++pl) {
    for (int64_t od = 0; od < out[0]; ++od) {
      for (int64_t oh = 0; oh < out[1]; ++oh) {
        for (int64_t ow = 0; ow < out[2]; ++ow) {
          int64_t of = pl * out_plane + (od * out[1] + oh) * out[2] + ow;
          for (auto [d, wd] : ref_taps(spec, 0, in[0], out[0], od, f64)) {
            for (auto [h, wh] : ref_taps(spec, 1, in[1], out[1], oh, f64)) {
              for (auto [w, ww] : ref_taps(spec, 2, in[2], out[2], ow, f64)) {
                int64_t f = pl * in_plane + (d * in[1] + h) * in[2] + w;
                want[of] += wd * wh * ww * xs[f];
                want_gi[f] += wd * wh * ww * gs[of];
              }
            }
          }
        }
      }
    }
  }
  ops::resample(dev, spec, y.d, x.d, sd);
  ops::resample_backward(dev, spec, gi.d, g.d, sd);
  double tol = tol_for(dt);
  expect_close(y.read(dev), want, tol, tol * 4, "resample forward");
  expect_close(gi.read(dev), want_gi, tol, tol * 8, "resample backward");
}

ResampleSpec spec_of(ResampleMode m, bool align = false, std::array<double, 3> scales = {0, 0, 0},
                     std::array<int64_t, 3> pads = {0, 0, 0}) {
  ResampleSpec s;
  s.mode = m;
  s.align_corners = align;
  s.scales = scales;
  s.pad_before = pads;
  return s;
}

}  // namespace

using ResampleTest = DeviceTest;

TEST_F(ResampleTest, Nearest) {
  check_resample(dev(), spec_of(ResampleMode::kNearest), DType::kF32, {7}, {12}, 1);
  check_resample(dev(), spec_of(ResampleMode::kNearest), DType::kF32, {5, 6}, {10, 4}, 2);
  check_resample(dev(), spec_of(ResampleMode::kNearestExact, false, {0, 1.7, 0.6}), DType::kF16,
                 {5, 6}, {8, 3}, 3);
  check_resample(dev(), spec_of(ResampleMode::kNearest), DType::kBF16, {3, 4, 5}, {5, 3, 9}, 4);
}

TEST_F(ResampleTest, LinearAndCubic) {
  for (bool align : {false, true}) {
    check_resample(dev(), spec_of(ResampleMode::kLinear, align), DType::kF32, {7}, {12}, 5);
    check_resample(dev(), spec_of(ResampleMode::kLinear, align), DType::kF32, {5, 6}, {9, 4}, 6);
    check_resample(dev(), spec_of(ResampleMode::kCubic, align), DType::kF32, {5, 6}, {11, 3}, 7);
    check_resample(dev(), spec_of(ResampleMode::kLinear, align), DType::kF16, {3, 4, 5},
                   {5, 6, 2}, 8);
  }
  check_resample(dev(), spec_of(ResampleMode::kCubic, false, {0, 1.5, 2.3}), DType::kF32, {6, 5},
                 {9, 11}, 9);
  check_resample(dev(), spec_of(ResampleMode::kLinear), DType::kF32, {20, 24}, {40, 48}, 10);
  if (dev().caps().supports_dtype(DType::kF64)) {
    check_resample(dev(), spec_of(ResampleMode::kCubic), DType::kF64, {5, 6}, {9, 13}, 11);
  }
}

TEST_F(ResampleTest, Padding) {
  check_resample(dev(), spec_of(ResampleMode::kPadReflect, false, {}, {0, 0, 2}), DType::kF32,
                 {6}, {9}, 12);
  check_resample(dev(), spec_of(ResampleMode::kPadReflect, false, {}, {0, 3, 1}), DType::kF32,
                 {5, 6}, {9, 8}, 13);
  check_resample(dev(), spec_of(ResampleMode::kPadReplicate, false, {}, {1, 2, 0}), DType::kBF16,
                 {3, 4, 5}, {5, 8, 7}, 14);
  check_resample(dev(), spec_of(ResampleMode::kPadReplicate, false, {}, {0, -2, 1}), DType::kF32,
                 {6, 7}, {3, 9}, 15);
}

TEST_F(ResampleTest, Im2ColCol2Im) {
  ops::UnfoldWindow w;
  w.kernel = {3, 2};
  w.dilation = {1, 2};
  w.pad = {1, 0};
  w.stride = {2, 1};
  const int64_t N = 2, C = 3, H = 7, W = 6, oh = (H + 2 - 3) / 2 + 1, ow = W - 2;
  DevTensor img(dev(), DType::kF32, {N, C, H, W}), cols(dev(), DType::kF32, {N, C * 6, oh * ow});
  auto xs = img.upload(dev(), random_values(N * C * H * W, 21));
  ops::im2col(dev(), cols.d, img.d, w);
  std::vector<double> want(N * C * 6 * oh * ow, 0), back(N * C * H * W, 0);
  DevTensor cin(dev(), DType::kF32, {N, C * 6, oh * ow}), iout(dev(), DType::kF32, {N, C, H, W});
  auto cs = cin.upload(dev(), random_values(want.size(), 22));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t r = 0; r < C * 6; ++r) {
      for (int64_t l = 0; l < oh * ow; ++l) {
        int64_t c = r / 6, ki = (r % 6) / 2, kj = r % 2;
        int64_t y = (l / ow) * 2 - 1 + ki, x = (l % ow) + kj * 2;
        int64_t ci = (n * C * 6 + r) * oh * ow + l;
        if (y < 0 || y >= H || x < 0 || x >= W) continue;
        int64_t ii = ((n * C + c) * H + y) * W + x;
        want[ci] = xs[ii];
        back[ii] += cs[ci];
      }
    }
  }
  expect_close(cols.read(dev()), want, 0, 0, "im2col");
  ops::col2im(dev(), iout.d, cin.d, w);
  expect_close(iout.read(dev()), back, 1e-6, 1e-6, "col2im");
}

TEST_F(ResampleTest, MaxUnpoolLastWins) {
  DevTensor self(dev(), DType::kF32, {1, 1, 1, 4}), idx(dev(), DType::kI64, {1, 1, 1, 4});
  DevTensor out(dev(), DType::kF32, {1, 1, 1, 5});
  self.upload(dev(), {1, 2, 3, 4});
  idx.upload(dev(), {0, 2, 0, 3});
  ops::max_unpool(dev(), out.d, self.d, idx.d);
  expect_close(out.read(dev()), {3, 0, 2, 4, 0}, 0, 0, "max_unpool");
}

TEST_F(ResampleTest, EmbeddingBag) {
  // bags {0, 2}, {}, {1, 3, 3} over a 4x2 weight
  DevTensor w(dev(), DType::kF32, {4, 2}), ix(dev(), DType::kI64, {5}), off(dev(), DType::kI64, {3});
  auto wv = w.upload(dev(), {1, -1, 2, 5, -3, 4, 0.5, -2});
  ix.upload(dev(), {0, 2, 1, 3, 3});
  off.upload(dev(), {0, 2, 2});
  DevTensor out(dev(), DType::kF32, {3, 2}), o2b(dev(), DType::kI64, {5}),
      bs(dev(), DType::kI64, {3}), mi(dev(), DType::kI64, {3, 2});
  auto row = [&](int r, int d) { return wv[r * 2 + d]; };
  ops::embedding_bag(dev(), ops::EmbeddingBagMode::kSum, out.d, o2b.d, bs.d, nullptr, w.d, ix.d,
                     off.d, nullptr, -1);
  expect_close(out.read(dev()),
               {row(0, 0) + row(2, 0), row(0, 1) + row(2, 1), 0, 0,
                row(1, 0) + 2 * row(3, 0), row(1, 1) + 2 * row(3, 1)},
               1e-6, 1e-6, "embedding_bag sum");
  expect_close(o2b.read(dev()), {0, 0, 2, 2, 2}, 0, 0, "offset2bag");
  expect_close(bs.read(dev()), {2, 0, 3}, 0, 0, "bag_size");
  ops::embedding_bag(dev(), ops::EmbeddingBagMode::kMax, out.d, o2b.d, bs.d, &mi.d, w.d, ix.d,
                     off.d, nullptr, 3);  // padding_idx 3
  expect_close(out.read(dev()), {1, 4, 0, 0, 2, 5}, 0, 0, "embedding_bag max");
  expect_close(mi.read(dev()), {0, 2, -1, -1, 1, 1}, 0, 0, "max_indices");
  expect_close(bs.read(dev()), {2, 0, 1}, 0, 0, "bag_size with padding");
}

}  // namespace vkml::testing
