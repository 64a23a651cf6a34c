// Norm family: layer, RMS, group and batch norm forward and backward against a double-precision
// CPU reference, with strided layouts, mixed dtypes and running-statistics updates.
#include <cmath>
#include <functional>

#include "nn_test_util.h"
#include "ops/nn_util.h"
#include "vkml/norm.h"

namespace vkml::testing {

namespace {

// A norm in reference form: element e belongs to row row_of[e] (statistics) and uses parameter
// param_of[e] (weight, bias and their grads).
struct RefNorm {
  std::vector<int64_t> row_of, param_of;
  int64_t rows = 0, params = 0;
  bool rms = false;

  struct Fwd {
    std::vector<double> y, mean, rstd, var_sum;
    std::vector<int64_t> count;
  };
  Fwd forward(const std::vector<double>& x, const std::vector<double>* w,
              const std::vector<double>* b, double eps) const {
    Fwd f;
    f.mean.assign(rows, 0);
    f.var_sum.assign(rows, 0);
    f.count.assign(rows, 0);
    f.rstd.assign(rows, 0);
    for (size_t e = 0; e < x.size(); ++e) {
      f.mean[row_of[e]] += x[e];
      f.count[row_of[e]]++;
    }
    for (int64_t r = 0; r < rows; ++r) f.mean[r] = rms ? 0.0 : f.mean[r] / f.count[r];
    for (size_t e = 0; e < x.size(); ++e) {
      double d = x[e] - f.mean[row_of[e]];
      f.var_sum[row_of[e]] += d * d;
    }
    for (int64_t r = 0; r < rows; ++r) f.rstd[r] = 1.0 / std::sqrt(f.var_sum[r] / f.count[r] + eps);
    f.y.resize(x.size());
    for (size_t e = 0; e < x.size(); ++e) {
      double y = (x[e] - f.mean[row_of[e]]) * f.rstd[row_of[e]];
      if (w) y *= (*w)[param_of[e]];
      if (b) y += (*b)[param_of[e]];
      f.y[e] = y;
    }
    return f;
  }

  struct Bwd {
    std::vector<double> dx, gw, gb;
  };
  // fixed: statistics are constants (batch norm eval): dx = w * dy * rstd.
  Bwd backward(const std::vector<double>& dy, const std::vector<double>& x,
               const std::vector<double>& mean, const std::vector<double>& rstd,
               const std::vector<double>* w, bool fixed) const {
    std::vector<double> a(rows, 0), bsum(rows, 0);
    std::vector<int64_t> count(rows, 0);
    Bwd g;
    g.gw.assign(params, 0);
    g.gb.assign(params, 0);
    auto xhat = [&](size_t e) { return (x[e] - mean[row_of[e]]) * rstd[row_of[e]]; };
    for (size_t e = 0; e < x.size(); ++e) {
      double wv = w ? (*w)[param_of[e]] : 1.0;
      a[row_of[e]] += wv * dy[e];
      bsum[row_of[e]] += wv * dy[e] * xhat(e);
      count[row_of[e]]++;
      g.gw[param_of[e]] += dy[e] * xhat(e);
      g.gb[param_of[e]] += dy[e];
    }
    g.dx.resize(x.size());
    for (size_t e = 0; e < x.size(); ++e) {
      int64_t r = row_of[e];
      double wv = w ? (*w)[param_of[e]] : 1.0;
      g.dx[e] = fixed ? wv * dy[e] * rstd[r]
                      : rstd[r] * (wv * dy[e] - (rms ? 0.0 : a[r] / count[r]) -
                                   xhat(e) * bsum[r] / count[r]);
    }
    return g;
  }
};

// Row-major element e of `sizes` -> its multi-index.
std::vector<int64_t> unravel(int64_t e, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> idx(sizes.size());
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    idx[d] = e % sizes[d];
    e /= sizes[d];
  }
  return idx;
}

int64_t numel_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// Strides of `sizes` laid out in memory with dims ordered by `order` (outermost first).
std::vector<int64_t> permuted_strides(const std::vector<int64_t>& sizes,
                                      const std::vector<int>& order) {
  std::vector<int64_t> st(sizes.size());
  int64_t s = 1;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    st[order[i]] = s;
    s *= sizes[order[i]];
  }
  return st;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace

using NormTest = DeviceTest;

// Layer norm over the last two dims of [6, 5, 7], input stored with dims permuted.
void run_layer_norm(Device& dev, DType dt, DType pdt, bool affine, bool rms, uint32_t seed) {
  std::vector<int64_t> sizes = {6, 5, 7};
  int64_t n = numel_of(sizes), rows = 6, inner = 35;
  RefNorm ref;
  ref.rms = rms;
  ref.rows = rows;
  ref.params = inner;
  for (int64_t e = 0; e < n; ++e) {
    ref.row_of.push_back(e / inner);
    ref.param_of.push_back(e % inner);
  }
  DevTensor x(dev, dt, sizes, permuted_strides(sizes, {2, 0, 1})), y(dev, dt, sizes);
  DevTensor w(dev, pdt, {5, 7}), b(dev, pdt, {5, 7}, {1, 5});
  DevTensor mean(dev, DType::kF32, {6, 1, 1}), rstd(dev, DType::kF32, {6, 1, 1});
  auto xs = x.upload(dev, random_values(n, seed, -3, 3));
  auto ws = w.upload(dev, random_values(inner, seed + 1, 0.5, 1.5));
  auto bs = b.upload(dev, random_values(inner, seed + 2));
  const double eps = 1e-5;
  auto f = ref.forward(xs, affine ? &ws : nullptr, affine && !rms ? &bs : nullptr, eps);
  double tol = std::max(tol_for(dt), tol_for(pdt));
  if (rms) {
    ops::rms_norm(dev, y.d, &rstd.d, x.d, affine ? &w.d : nullptr, 2, eps);
  } else {
    ops::layer_norm(dev, y.d, &mean.d, &rstd.d, x.d, affine ? &w.d : nullptr,
                    affine ? &b.d : nullptr, 2, eps);
    expect_close(mean.read(dev), f.mean, 1e-5, 1e-6, "mean");
  }
  expect_close(y.read(dev), f.y, tol, tol * 4, "layer_norm out");
  expect_close(rstd.read(dev), f.rstd, 1e-5, 1e-6, "rstd");

  DevTensor dy(dev, dt, sizes, permuted_strides(sizes, {1, 2, 0})), dx(dev, dt, sizes);
  DevTensor gw(dev, pdt, {5, 7}), gb(dev, pdt, {5, 7});
  auto dys = dy.upload(dev, random_values(n, seed + 3));
  DevTensor m64(dev, DType::kF32, {6}), r64(dev, DType::kF32, {6});
  auto ms = m64.upload(dev, f.mean);
  auto rs = r64.upload(dev, f.rstd);
  auto g = ref.backward(dys, xs, ms, rs, affine ? &ws : nullptr, false);
  if (rms) {
    ops::rms_norm_backward(dev, &dx.d, affine ? &gw.d : nullptr, dy.d, x.d, r64.d,
                           affine ? &w.d : nullptr, 2);
  } else {
    ops::layer_norm_backward(dev, &dx.d, affine ? &gw.d : nullptr, affine ? &gb.d : nullptr, dy.d,
                             x.d, m64.d, r64.d, affine ? &w.d : nullptr, 2);
  }
  expect_close(dx.read(dev), g.dx, tol, tol * max_abs(g.dx) * 2, "layer_norm dx");
  if (affine) {
    expect_close(gw.read(dev), g.gw, tol, tol * max_abs(g.gw), "layer_norm grad_weight");
    if (!rms) expect_close(gb.read(dev), g.gb, tol, tol * max_abs(g.gb), "layer_norm grad_bias");
  }
}

TEST_F(NormTest, LayerNormF32) { run_layer_norm(dev(), DType::kF32, DType::kF32, true, false, 1); }

TEST_F(NormTest, LayerNormNoAffineAndMixedDtypes) {
  run_layer_norm(dev(), DType::kF32, DType::kF32, false, false, 2);
  run_layer_norm(dev(), DType::kBF16, DType::kF32, true, false, 3);
  run_layer_norm(dev(), DType::kF16, DType::kF16, true, false, 4);
}

TEST_F(NormTest, RmsNorm) {
  run_layer_norm(dev(), DType::kF32, DType::kF32, true, true, 5);
  run_layer_norm(dev(), DType::kF16, DType::kF32, false, true, 6);
}

TEST_F(NormTest, SharedMemoryReductionsAndDouble) {
  ops::nn::force_tree_reductions(true);
  run_layer_norm(dev(), DType::kF32, DType::kF32, true, false, 7);
  ops::nn::force_tree_reductions(false);
  if (dev().caps().supports_dtype(DType::kF64)) {
    run_layer_norm(dev(), DType::kF64, DType::kF64, true, false, 8);
  }
}

void run_group_norm(Device& dev, DType dt, uint32_t seed) {
  std::vector<int64_t> sizes = {3, 6, 4, 5};
  const int64_t groups = 3, n = numel_of(sizes), C = 6, HW = 20;
  RefNorm ref;
  ref.rows = 3 * groups;
  ref.params = C;
  for (int64_t e = 0; e < n; ++e) {
    auto idx = unravel(e, sizes);
    ref.row_of.push_back(idx[0] * groups + idx[1] / (C / groups));
    ref.param_of.push_back(idx[1]);
  }
  // Channels-last input.
  DevTensor x(dev, dt, sizes, permuted_strides(sizes, {0, 2, 3, 1})), y(dev, dt, sizes);
  DevTensor w(dev, dt, {C}), b(dev, dt, {C});
  DevTensor mean(dev, dt, {3, groups}), rstd(dev, dt, {3, groups});
  auto xs = x.upload(dev, random_values(n, seed, -2, 3));
  auto ws = w.upload(dev, random_values(C, seed + 1, 0.5, 1.5));
  auto bs = b.upload(dev, random_values(C, seed + 2));
  auto f = ref.forward(xs, &ws, &bs, 1e-5);
  double tol = tol_for(dt);
  ops::group_norm(dev, y.d, &mean.d, &rstd.d, x.d, &w.d, &b.d, groups, 1e-5);
  expect_close(y.read(dev), f.y, tol, tol * 4, "group_norm out");
  expect_close(mean.read(dev), f.mean, tol, tol, "group_norm mean");
  expect_close(rstd.read(dev), f.rstd, tol, tol, "group_norm rstd");

  DevTensor dy(dev, dt, sizes), dx(dev, dt, sizes), gw(dev, dt, {C}), gb(dev, dt, {C});
  auto dys = dy.upload(dev, random_values(n, seed + 3));
  auto ms = mean.read(dev), rs = rstd.read(dev);
  auto g = ref.backward(dys, xs, ms, rs, &ws, false);
  ops::group_norm_backward(dev, &dx.d, &gw.d, &gb.d, dy.d, x.d, mean.d, rstd.d, &w.d, groups);
  expect_close(dx.read(dev), g.dx, tol, tol * max_abs(g.dx) * 2, "group_norm dx");
  expect_close(gw.read(dev), g.gw, tol, tol * max_abs(g.gw), "group_norm grad_weight");
  expect_close(gb.read(dev), g.gb, tol, tol * max_abs(g.gb), "group_norm grad_bias");
  (void)HW;
}

TEST_F(NormTest, GroupNorm) {
  run_group_norm(dev(), DType::kF32, 11);
  run_group_norm(dev(), DType::kBF16, 12);
  if (dev().caps().supports_dtype(DType::kF64)) run_group_norm(dev(), DType::kF64, 13);
}

void run_batch_norm(Device& dev, DType dt, DType pdt, bool training, uint32_t seed,
                    std::vector<int64_t> sizes = {4, 3, 5, 2}) {
  const int64_t n = numel_of(sizes), C = 3;
  RefNorm ref;
  ref.rows = C;
  ref.params = C;
  for (int64_t e = 0; e < n; ++e) {
    ref.row_of.push_back(unravel(e, sizes)[1]);
    ref.param_of.push_back(unravel(e, sizes)[1]);
  }
  DevTensor x(dev, dt, sizes, permuted_strides(sizes, {1, 0, 3, 2})), y(dev, dt, sizes);
  DevTensor w(dev, pdt, {C}), b(dev, pdt, {C}), rm(dev, pdt, {C}), rv(dev, pdt, {C});
  DevTensor sm(dev, DType::kF32, {C}), si(dev, DType::kF32, {C});
  auto xs = x.upload(dev, random_values(n, seed, -2, 4));
  auto ws = w.upload(dev, random_values(C, seed + 1, 0.5, 1.5));
  auto bs = b.upload(dev, random_values(C, seed + 2));
  auto rms0 = rm.upload(dev, random_values(C, seed + 3));
  auto rvs0 = rv.upload(dev, random_values(C, seed + 4, 0.5, 2));
  const double eps = 1e-5, momentum = 0.1;
  double tol = std::max(tol_for(dt), tol_for(pdt));
  ops::batch_norm(dev, y.d, training ? &sm.d : nullptr, training ? &si.d : nullptr, x.d, &w.d, &b.d,
                  &rm.d, &rv.d, training, momentum, eps);
  std::vector<double> mean(C), rstd(C);
  if (training) {
    auto f = ref.forward(xs, &ws, &bs, eps);
    mean = f.mean;
    rstd = f.rstd;
    expect_close(y.read(dev), f.y, tol, tol * 4, "batch_norm train out");
    expect_close(sm.read(dev), f.mean, 1e-6, 1e-6, "save_mean");
    expect_close(si.read(dev), f.rstd, 1e-5, 1e-6, "save_invstd");
    std::vector<double> want_rm(C), want_rv(C);
    for (int64_t c = 0; c < C; ++c) {
      want_rm[c] = momentum * f.mean[c] + (1 - momentum) * rms0[c];
      want_rv[c] = momentum * f.var_sum[c] / (f.count[c] - 1) + (1 - momentum) * rvs0[c];
    }
    double rt = pdt == DType::kF32 ? 1e-6 : tol_for(pdt);
    expect_close(rm.read(dev), want_rm, rt, rt, "running_mean");
    expect_close(rv.read(dev), want_rv, rt, rt, "running_var");
  } else {
    std::vector<double> want(n);
    for (int64_t c = 0; c < C; ++c) {
      mean[c] = rms0[c];
      rstd[c] = 1.0 / std::sqrt(rvs0[c] + eps);
    }
    for (int64_t e = 0; e < n; ++e) {
      int64_t c = ref.row_of[e];
      want[e] = (xs[e] - mean[c]) * rstd[c] * ws[c] + bs[c];
    }
    expect_close(y.read(dev), want, tol, tol * 4, "batch_norm eval out");
    expect_close(rm.read(dev), rms0, 0, 0, "running_mean untouched");
  }

  DevTensor dy(dev, dt, sizes), dx(dev, dt, sizes), gw(dev, pdt, {C}), gb(dev, pdt, {C});
  auto dys = dy.upload(dev, random_values(n, seed + 5));
  DevTensor rm0(dev, pdt, {C}), rv0(dev, pdt, {C});
  rm0.upload(dev, rms0);
  rv0.upload(dev, rvs0);
  if (training) {
    // Backward from the statistics the forward saved.
    mean = sm.read(dev);
    rstd = si.read(dev);
  }
  auto g = ref.backward(dys, xs, mean, rstd, &ws, !training);
  ops::batch_norm_backward(dev, &dx.d, &gw.d, &gb.d, dy.d, x.d, &w.d, &rm0.d, &rv0.d, &sm.d, &si.d,
                           training, eps);
  expect_close(dx.read(dev), g.dx, tol, tol * max_abs(g.dx) * 2, "batch_norm dx");
  expect_close(gw.read(dev), g.gw, tol, tol * max_abs(g.gw), "batch_norm grad_weight");
  expect_close(gb.read(dev), g.gb, tol, tol * max_abs(g.gb), "batch_norm grad_bias");
}

TEST_F(NormTest, BatchNormTrainAndEval) {
  for (bool training : {true, false}) {
    run_batch_norm(dev(), DType::kF32, DType::kF32, training, 21);
    run_batch_norm(dev(), DType::kF16, DType::kF32, training, 22);
  }
}

TEST_F(NormTest, SplitPathMatches) {
  ops::nn::force_split_rows(true);
  run_layer_norm(dev(), DType::kF32, DType::kF32, true, false, 31);
  run_layer_norm(dev(), DType::kF16, DType::kF32, true, true, 32);
  run_group_norm(dev(), DType::kF32, 33);
  for (bool training : {true, false}) {
    run_batch_norm(dev(), DType::kF32, DType::kF32, training, 34);
    run_batch_norm(dev(), DType::kBF16, DType::kF32, training, 35);
  }
  ops::nn::force_split_rows(false);
}

TEST_F(NormTest, BatchNormLongRowsSplitNaturally) {
  // 3 channels of 2 * 70 * 40 = 5600 elements: past the split threshold.
  for (bool training : {true, false}) {
    run_batch_norm(dev(), DType::kF32, DType::kF32, training, 36, {2, 3, 70, 40});
  }
  if (dev().caps().supports_dtype(DType::kF64)) {
    run_batch_norm(dev(), DType::kF64, DType::kF64, true, 37, {2, 3, 70, 40});
  }
}

TEST_F(NormTest, RejectsBadInput) {
  DevTensor x(dev(), DType::kF32, {4, 6}), y(dev(), DType::kF32, {4, 6});
  DevTensor w(dev(), DType::kF32, {5}), xi(dev(), DType::kI32, {4, 6});
  EXPECT_THROW(ops::layer_norm(dev(), y.d, nullptr, nullptr, x.d, &w.d, nullptr, 1, 1e-5),
               InvalidArgument);
  EXPECT_THROW(ops::layer_norm(dev(), y.d, nullptr, nullptr, x.d, nullptr, nullptr, 3, 1e-5),
               InvalidArgument);
  EXPECT_THROW(ops::layer_norm(dev(), y.d, nullptr, nullptr, xi.d, nullptr, nullptr, 1, 1e-5),
               InvalidArgument);
  EXPECT_THROW(ops::group_norm(dev(), y.d, nullptr, nullptr, x.d, nullptr, nullptr, 4, 1e-5),
               InvalidArgument);
  EXPECT_THROW(ops::batch_norm(dev(), y.d, nullptr, nullptr, x.d, nullptr, nullptr, nullptr,
                               nullptr, false, 0.1, 1e-5),
               InvalidArgument);
}

}  // namespace vkml::testing
