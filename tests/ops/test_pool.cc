// Pool family: max (indices, dilation, ceil_mode, NaN), average (count_include_pad,
// divisor_override) and adaptive pools in 2-D and 3-D, forward and backward, against a
// double-precision CPU reference written in PyTorch's scatter form.
#include <cmath>

#include "nn_test_util.h"
#include "vkml/pool.h"

namespace vkml::testing {

namespace {

using ops::PoolKind;
using ops::PoolWindow;

struct RefPool {
  PoolKind kind;
  PoolWindow w;
  int64_t planes;
  std::array<int64_t, 3> in, out;  // spatial sizes, depth 1 for 2-D

  // Window of output o along dim k: [start, end) with step, and the padded size for averages.
  void window(int k, int64_t o, int64_t& s, int64_t& e, int64_t& step, int64_t& padded) const {
    step = 1;
    padded = 0;
    if (kind == PoolKind::kAdaptiveAvg || kind == PoolKind::kAdaptiveMax) {
      s = o * in[k] / out[k];
      e = ((o + 1) * in[k] + out[k] - 1) / out[k];
    } else if (kind == PoolKind::kMax) {
      step = w.dilation[k];
      s = o * w.stride[k] - w.pad[k];
      e = std::min(s + (w.kernel[k] - 1) * step + 1, in[k]);
      while (s < 0) s += step;
    } else {
      s = o * w.stride[k] - w.pad[k];
      e = std::min(s + w.kernel[k], in[k] + w.pad[k]);
      padded = e - s;
      s = std::max<int64_t>(s, 0);
      e = std::min(e, in[k]);
    }
  }

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }

  // Calls f(plane, output flat, window starts/ends/steps, padded size).
  template <typename F>
  void each_output(F f) const {
    for (int64_t pl = 0; pl < planes; ++pl) {
      for (int64_t od = 0; od < out[0]; ++od) {
        for (int64_t oh = 0; oh < out[1]; ++oh) {
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            int64_t o[3] = {od, oh, ow}, s[3], e[3], st[3], pd[3];
            for (int k = 0; k < 3; ++k) window(k, o[k], s[k], e[k], st[k], pd[k]);
            f(pl, (od * out[1] + oh) * out[2] + ow, s, e, st, pd);
          }
        }
      }
    }
  }

  double divisor(const int64_t* s, const int64_t* e, const int64_t* pd) const {
    if (kind == PoolKind::kAvg && w.divisor_override) return w.divisor_override;
    double count = 1, padded = 1;
    for (int k = 0; k < 3; ++k) {
      count *= e[k] - s[k];
      padded *= pd[k];
    }
    return kind == PoolKind::kAvg && w.count_include_pad ? padded : count;
  }

  void forward(const std::vector<double>& x, std::vector<double>& y,
               std::vector<double>& idx) const {
    y.assign(planes * out_plane(), 0);
    idx.assign(planes * out_plane(), 0);
    bool mx = kind == PoolKind::kMax || kind == PoolKind::kAdaptiveMax;
    each_output([&](int64_t pl, int64_t of, int64_t* s, int64_t* e, int64_t* st, int64_t* pd) {
      double best = -INFINITY, sum = 0;
      int64_t bi = (s[0] * in[1] + s[1]) * in[2] + s[2];
      bool empty = false;
      for (int k = 0; k < 3; ++k) empty = empty || s[k] >= e[k];
      for (int64_t d = s[0]; d < e[0]; d += st[0]) {
        for (int64_t h = s[1]; h < e[1]; h += st[1]) {
          for (int64_t ww = s[2]; ww < e[2]; ww += st[2]) {
            int64_t f = (d * in[1] + h) * in[2] + ww;
            double v = x[pl * in_plane() + f];
            sum += v;
            if (v > best || std::isnan(v)) {
              best = v;
              bi = f;
            }
          }
        }
      }
      y[pl * out_plane() + of] = mx ? best : (empty ? 0.0 : sum / divisor(s, e, pd));
      idx[pl * out_plane() + of] = static_cast<double>(bi);
    });
  }

  std::vector<double> backward(const std::vector<double>& g, const std::vector<double>& idx) const {
    std::vector<double> gi(planes * in_plane(), 0);
    bool mx = kind == PoolKind::kMax || kind == PoolKind::kAdaptiveMax;
    each_output([&](int64_t pl, int64_t of, int64_t* s, int64_t* e, int64_t* st, int64_t* pd) {
      double go = g[pl * out_plane() + of];
      if (mx) {
        gi[pl * in_plane() + static_cast<int64_t>(idx[pl * out_plane() + of])] += go;
        return;
      }
      double dv = divisor(s, e, pd);
      for (int64_t d = s[0]; d < e[0]; ++d) {
        for (int64_t h = s[1]; h < e[1]; ++h) {
          for (int64_t ww = s[2]; ww < e[2]; ++ww) {
            gi[pl * in_plane() + (d * in[1] + h) * in[2] + ww] += go / dv;
          }
        }
      }
    });
    return gi;
  }
};

// Runs a pool on [N=2, C=3, spatial...] with a channels-last input, checks forward (and the
// indices of max pools) and backward.
void check_pool(Device& dev, PoolKind kind, DType dt, std::vector<int64_t> in_sp,
                std::vector<int64_t> out_sp, const PoolWindow& w, uint32_t seed,
                bool with_nan = false) {
  int sd = static_cast<int>(in_sp.size());
  RefPool ref{kind, w, 6, {1, 1, 1}, {1, 1, 1}};
  for (int k = 0; k < sd; ++k) {
    ref.in[3 - sd + k] = in_sp[k];
    ref.out[3 - sd + k] = out_sp[k];
  }
  std::vector<int64_t> in_sizes = {2, 3}, out_sizes = {2, 3};
  in_sizes.insert(in_sizes.end(), in_sp.begin(), in_sp.end());
  out_sizes.insert(out_sizes.end(), out_sp.begin(), out_sp.end());
  // channels-last strides for the input
  std::vector<int64_t> cl(in_sizes.size());
  int64_t st = 3;
  for (int k = static_cast<int>(in_sizes.size()) - 1; k >= 2; --k) {
    cl[k] = st;
    st *= in_sizes[k];
  }
  cl[1] = 1;
  cl[0] = st;
  DevTensor x(dev, dt, in_sizes, cl), y(dev, dt, out_sizes), ix(dev, DType::kI64, out_sizes);
  int64_t n_in = ref.planes * ref.in_plane();
  std::vector<double> xv = random_values(n_in, seed, -3, 3);
  if (with_nan) xv[5] = NAN;
  // x.upload takes row-major values over sizes: (plane, spatial) order already.
  auto xs = x.upload(dev, xv);
  std::vector<double> want, want_idx;
  ref.forward(xs, want, want_idx);
  bool mx = kind == PoolKind::kMax || kind == PoolKind::kAdaptiveMax;
  ops::pool(dev, kind, y.d, mx ? &ix.d : nullptr, x.d, sd, w);
  double tol = tol_for(dt);
  expect_close(y.read(dev), want, tol, tol, "pool forward");
  if (mx) expect_close(ix.read(dev), want_idx, 0, 0, "pool indices");

  DevTensor g(dev, dt, out_sizes), gi(dev, dt, in_sizes, cl);
  auto gs = g.upload(dev, random_values(g.d.numel(), seed + 1));
  ops::pool_backward(dev, kind, gi.d, g.d, mx ? &ix.d : nullptr, sd, w);
  expect_close(gi.read(dev), ref.backward(gs, want_idx), tol, tol * 4, "pool backward");
}

PoolWindow win2(std::array<int64_t, 2> k, std::array<int64_t, 2> s, std::array<int64_t, 2> p,
                std::array<int64_t, 2> d = {1, 1}, bool ceil = false) {
  PoolWindow w;
  w.kernel = {1, k[0], k[1]};
  w.stride = {1, s[0], s[1]};
  w.pad = {0, p[0], p[1]};
  w.dilation = {1, d[0], d[1]};
  w.ceil_mode = ceil;
  return w;
}

std::vector<int64_t> pooled(std::vector<int64_t> in, const PoolWindow& w) {
  int sd = static_cast<int>(in.size());
  for (int k = 0; k < sd; ++k) {
    int j = 3 - sd + k;
    in[k] = ops::pool_output_size(in[k], w.kernel[j], w.pad[j], w.stride[j], w.dilation[j],
                                  w.ceil_mode);
  }
  return in;
}

}  // namespace

using PoolTest = DeviceTest;

TEST_F(PoolTest, OutputSizeRules) {
  EXPECT_EQ(ops::pool_output_size(7, 2, 0, 2, 1, false), 3);
  EXPECT_EQ(ops::pool_output_size(7, 2, 0, 2, 1, true), 4);
  EXPECT_EQ(ops::pool_output_size(6, 2, 1, 2, 1, true), 4);  // last window must start inside
  EXPECT_EQ(ops::pool_output_size(5, 3, 1, 2, 2, false), 2);
}

TEST_F(PoolTest, MaxPool2d) {
  for (bool ceil : {false, true}) {
    PoolWindow w = win2({3, 2}, {2, 1}, {1, 1}, {1, 2}, ceil);
    check_pool(dev(), PoolKind::kMax, DType::kF32, {7, 8}, pooled({7, 8}, w), w, 1 + ceil);
  }
  PoolWindow overlap = win2({3, 3}, {1, 1}, {1, 1});
  check_pool(dev(), PoolKind::kMax, DType::kF32, {5, 6}, pooled({5, 6}, overlap), overlap, 3, true);
  check_pool(dev(), PoolKind::kMax, DType::kBF16, {6, 6}, pooled({6, 6}, overlap), overlap, 4);
}

TEST_F(PoolTest, MaxPool3d) {
  PoolWindow w;
  w.kernel = {2, 3, 2};
  w.stride = {2, 2, 1};
  w.pad = {1, 1, 0};
  check_pool(dev(), PoolKind::kMax, DType::kF32, {5, 6, 4}, pooled({5, 6, 4}, w), w, 5);
  w.ceil_mode = true;
  w.dilation = {1, 2, 1};
  check_pool(dev(), PoolKind::kMax, DType::kF16, {5, 7, 4}, pooled({5, 7, 4}, w), w, 6);
}

TEST_F(PoolTest, AvgPool2dAnd3d) {
  for (bool include_pad : {true, false}) {
    PoolWindow w = win2({3, 2}, {2, 2}, {1, 1}, {1, 1}, true);
    w.count_include_pad = include_pad;
    check_pool(dev(), PoolKind::kAvg, DType::kF32, {7, 9}, pooled({7, 9}, w), w, 7 + include_pad);
  }
  PoolWindow d = win2({2, 2}, {1, 1}, {0, 1});
  d.divisor_override = 3;
  check_pool(dev(), PoolKind::kAvg, DType::kF32, {4, 5}, pooled({4, 5}, d), d, 9);
  PoolWindow w3;
  w3.kernel = {2, 2, 3};
  w3.stride = {1, 2, 2};
  w3.pad = {1, 0, 1};
  check_pool(dev(), PoolKind::kAvg, DType::kF32, {4, 5, 6}, pooled({4, 5, 6}, w3), w3, 10);
  if (dev().caps().supports_dtype(DType::kF64)) {
    check_pool(dev(), PoolKind::kAvg, DType::kF64, {4, 5, 6}, pooled({4, 5, 6}, w3), w3, 11);
  }
}

TEST_F(PoolTest, AdaptivePools) {
  PoolWindow none;
  check_pool(dev(), PoolKind::kAdaptiveAvg, DType::kF32, {7, 9}, {3, 4}, none, 12);
  check_pool(dev(), PoolKind::kAdaptiveAvg, DType::kF32, {5, 4}, {7, 6}, none, 13);  // upsampling
  check_pool(dev(), PoolKind::kAdaptiveMax, DType::kF32, {7, 9}, {5, 4}, none, 14);
  check_pool(dev(), PoolKind::kAdaptiveMax, DType::kBF16, {6, 5}, {4, 5}, none, 15);
}

TEST_F(PoolTest, IntegerMaxAndInt64Average) {
  std::vector<int64_t> in_sizes = {2, 3, 6, 5};
  PoolWindow w = win2({3, 2}, {2, 1}, {1, 1});
  auto out_sp = pooled({6, 5}, w);
  std::vector<int64_t> out_sizes = {2, 3, out_sp[0], out_sp[1]};
  for (DType dt : {DType::kI8, DType::kU8, DType::kI16, DType::kI32, DType::kI64}) {
    for (PoolKind kind : {PoolKind::kMax, PoolKind::kAvg}) {
      if (kind == PoolKind::kAvg && dt != DType::kI64) continue;
      RefPool ref{kind, w, 6, {1, 6, 5}, {1, out_sp[0], out_sp[1]}};
      DevTensor x(dev(), dt, in_sizes), y(dev(), dt, out_sizes), ix(dev(), DType::kI64, out_sizes);
      std::vector<double> xv = random_values(2 * 3 * 6 * 5, 40, dt == DType::kU8 ? 0 : -100, 100);
      for (double& v : xv) v = std::floor(v);
      auto xs = x.upload(dev(), xv);
      std::vector<double> want, want_idx;
      ref.forward(xs, want, want_idx);
      bool mx = kind == PoolKind::kMax;
      ops::pool(dev(), kind, y.d, mx ? &ix.d : nullptr, x.d, 2, w);
      if (!mx) {
        for (double& v : want) v = std::trunc(v);  // int64 division truncates, as in C++
      }
      expect_close(y.read(dev()), want, 0, 0, "integer pool");
      if (mx) expect_close(ix.read(dev()), want_idx, 0, 0, "integer pool indices");
    }
  }
  DevTensor xi(dev(), DType::kI32, in_sizes), yi(dev(), DType::kI32, out_sizes);
  EXPECT_THROW(ops::pool(dev(), PoolKind::kAvg, yi.d, nullptr, xi.d, 2, w), InvalidArgument);
}

TEST_F(PoolTest, RejectsBadInput) {
  DevTensor x(dev(), DType::kF32, {1, 2, 6, 6}), y(dev(), DType::kF32, {1, 2, 2, 2});
  DevTensor ix(dev(), DType::kI32, {1, 2, 3, 3}), xi(dev(), DType::kI64, {1, 2, 6, 6});
  PoolWindow w = win2({2, 2}, {2, 2}, {0, 0});
  EXPECT_THROW(ops::pool(dev(), PoolKind::kMax, y.d, nullptr, x.d, 2, w), InvalidArgument);
  DevTensor y3(dev(), DType::kF32, {1, 2, 3, 3});
  EXPECT_THROW(ops::pool(dev(), PoolKind::kMax, y3.d, &ix.d, x.d, 2, w), InvalidArgument);
  EXPECT_THROW(ops::pool(dev(), PoolKind::kMax, y3.d, nullptr, xi.d, 2, w), InvalidArgument);
  EXPECT_THROW(ops::pool_backward(dev(), PoolKind::kMax, x.d, y3.d, nullptr, 2, w),
               InvalidArgument);
}

}  // namespace vkml::testing
