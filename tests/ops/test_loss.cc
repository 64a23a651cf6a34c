// Loss family: pointwise losses and nll_loss, every reduction, forward and backward, against a
// double-precision CPU reference; broadcast operands, strided layouts, many-workgroup sums.
#include <cmath>
#include <functional>

#include "nn_test_util.h"
#include "ops/nn_util.h"
#include "vkml/loss.h"

namespace vkml::testing {

namespace {

using ops::PointwiseLoss;
using ops::Reduction;

double ref_loss(PointwiseLoss k, double x, double y, double pw, double param) {
  double d = x - y, z = std::fabs(d);
  switch (k) {
    case PointwiseLoss::kMse:
      return d * d;
    case PointwiseLoss::kSmoothL1:
      return z < param ? 0.5 * z * z / param : z - 0.5 * param;
    case PointwiseLoss::kHuber:
      return z < param ? 0.5 * z * z : param * (z - 0.5 * param);
    case PointwiseLoss::kBce:
      return (y - 1) * std::max(std::log1p(-x), -100.0) - y * std::max(std::log(x), -100.0);
    case PointwiseLoss::kBceWithLogits: {
      double log_sigmoid = -(std::max(-x, 0.0) + std::log1p(std::exp(-std::fabs(x))));
      return (1 - y) * x - ((pw - 1) * y + 1) * log_sigmoid;
    }
  }
  return NAN;
}

double ref_grad(PointwiseLoss k, double x, double y, double param) {
  double d = x - y;
  switch (k) {
    case PointwiseLoss::kMse:
      return 2 * d;
    case PointwiseLoss::kSmoothL1:
      return d <= -param ? -1 : (d >= param ? 1 : d / param);
    case PointwiseLoss::kHuber:
      return d <= -param ? -param : (d >= param ? param : d);
    case PointwiseLoss::kBce:
      return d / std::max((1 - x) * x, 1e-12);
    default:
      return NAN;
  }
}

double reduce(const std::vector<double>& v, Reduction r) {
  double s = 0;
  for (double x : v) s += x;
  return r == Reduction::kMean ? s / v.size() : s;
}

struct PointwiseCase {
  PointwiseLoss kind;
  double param;
  DType dt;
  int64_t rows, cols;
  bool weighted;
};

void check_pointwise(Device& dev, const PointwiseCase& c, uint32_t seed) {
  const int64_t n = c.rows * c.cols;
  bool probs = c.kind == PointwiseLoss::kBce;
  double lo = probs ? 0.02 : -2, hi = probs ? 0.98 : 2;
  // input transposed in memory; target broadcast along rows (stride 0); weight per column.
  DevTensor x(dev, c.dt, {c.rows, c.cols}, {1, c.rows});
  DevTensor y(dev, c.dt, {c.rows, c.cols}, {0, 1}, c.cols);
  DevTensor w(dev, c.dt, {c.rows, c.cols}, {0, 1}, c.cols);
  DevTensor pw(dev, c.dt, {c.rows, c.cols}, {0, 1}, c.cols);
  auto xs = x.upload(dev, random_values(n, seed, lo, hi));
  std::vector<double> yrow = random_values(c.cols, seed + 1, probs ? 0.0 : -2.0, probs ? 1.0 : 2.0);
  std::vector<double> wrow = random_values(c.cols, seed + 2, 0.5, 1.5);
  std::vector<double> pwrow = random_values(c.cols, seed + 3, 0.5, 3.0);
  std::vector<double> ys(n), ws(n), pws(n);
  for (int64_t i = 0; i < n; ++i) {
    ys[i] = round_to(c.dt, yrow[i % c.cols]);
    ws[i] = round_to(c.dt, wrow[i % c.cols]);
    pws[i] = round_to(c.dt, pwrow[i % c.cols]);
  }
  y.upload(dev, ys);
  w.upload(dev, ws);
  pw.upload(dev, pws);
  bool logits = c.kind == PointwiseLoss::kBceWithLogits;
  std::vector<double> per(n);
  for (int64_t i = 0; i < n; ++i) {
    per[i] =
        ref_loss(c.kind, xs[i], ys[i], logits ? pws[i] : 1.0, c.param) * (c.weighted ? ws[i] : 1.0);
  }
  double tol = tol_for(c.dt);
  const TensorDesc* wd = c.weighted ? &w.d : nullptr;
  const TensorDesc* pwd = logits ? &pw.d : nullptr;
  DevTensor out(dev, c.dt, {c.rows, c.cols});
  ops::pointwise_loss(dev, c.kind, out.d, x.d, y.d, wd, pwd, Reduction::kNone, c.param);
  expect_close(out.read(dev), per, tol, tol, "loss none");
  for (Reduction r : {Reduction::kMean, Reduction::kSum}) {
    DevTensor s(dev, c.dt, {});
    ops::pointwise_loss(dev, c.kind, s.d, x.d, y.d, wd, pwd, r, c.param);
    expect_close(s.read(dev), {reduce(per, r)}, tol * 4, tol, "loss reduced");
  }
  if (logits) return;  // its backward is composite in PyTorch
  DevTensor go(dev, c.dt, {c.rows, c.cols}), gi(dev, c.dt, {c.rows, c.cols});
  auto gos = go.upload(dev, random_values(n, seed + 4));
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i) {
    want[i] = ref_grad(c.kind, xs[i], ys[i], c.param) * gos[i] * (c.weighted ? ws[i] : 1.0);
  }
  ops::pointwise_loss_backward(dev, c.kind, gi.d, go.d, x.d, y.d, wd, Reduction::kNone, c.param);
  expect_close(gi.read(dev), want, tol, tol, "grad none");
  DevTensor g1(dev, c.dt, {});
  auto g1s = g1.upload(dev, {0.75});
  ops::pointwise_loss_backward(dev, c.kind, gi.d, g1.d, x.d, y.d, wd, Reduction::kMean, c.param);
  for (int64_t i = 0; i < n; ++i) {
    want[i] = ref_grad(c.kind, xs[i], ys[i], c.param) * g1s[0] / n * (c.weighted ? ws[i] : 1.0);
  }
  expect_close(gi.read(dev), want, tol, tol / n, "grad mean");
}

}  // namespace

using LossTest = DeviceTest;

TEST_F(LossTest, PointwiseLossesF32) {
  uint32_t seed = 1;
  for (auto [kind, param] :
       std::vector<std::pair<PointwiseLoss, double>>{{PointwiseLoss::kMse, 0},
                                                     {PointwiseLoss::kSmoothL1, 0.7},
                                                     {PointwiseLoss::kHuber, 0.8},
                                                     {PointwiseLoss::kBce, 0},
                                                     {PointwiseLoss::kBceWithLogits, 0}}) {
    check_pointwise(dev(), {kind, param, DType::kF32, 7, 13, kind == PointwiseLoss::kBce}, seed++);
  }
}

TEST_F(LossTest, ManyWorkgroupsReduceDeterministically) {
  check_pointwise(dev(), {PointwiseLoss::kMse, 0, DType::kF32, 300, 257, false}, 10);
  ops::nn::force_tree_reductions(true);
  check_pointwise(dev(), {PointwiseLoss::kHuber, 1.0, DType::kF32, 200, 301, true}, 11);
  ops::nn::force_tree_reductions(false);
}

TEST_F(LossTest, HalfBfloatAndDouble) {
  check_pointwise(dev(), {PointwiseLoss::kMse, 0, DType::kBF16, 9, 11, false}, 20);
  check_pointwise(dev(), {PointwiseLoss::kBce, 0, DType::kF16, 9, 11, true}, 21);
  if (dev().caps().supports_dtype(DType::kF64)) {
    check_pointwise(dev(), {PointwiseLoss::kSmoothL1, 0.5, DType::kF64, 40, 33, false}, 22);
    check_pointwise(dev(), {PointwiseLoss::kBceWithLogits, 0, DType::kF64, 5, 7, true}, 23);
  }
}

void check_nll(Device& dev, std::vector<int64_t> in_sizes, DType dt, bool weighted, uint32_t seed) {
  const int class_dim = in_sizes.size() == 1 ? 0 : 1;
  const int64_t C = in_sizes[class_dim], ignore = 2;
  std::vector<int64_t> t_sizes = in_sizes;
  t_sizes.erase(t_sizes.begin() + class_dim);
  int64_t n_in = 1, n_t = 1;
  for (int64_t s : in_sizes) n_in *= s;
  for (int64_t s : t_sizes) n_t *= s;
  DevTensor x(dev, dt, in_sizes), t(dev, DType::kI64, t_sizes), w(dev, dt, {C});
  auto xs = x.upload(dev, random_values(n_in, seed, -3, 0));
  std::vector<double> tv(n_t);
  std::mt19937 rng(seed);
  for (auto& v : tv) v = static_cast<double>(rng() % C);
  t.upload(dev, tv);
  auto ws = w.upload(dev, random_values(C, seed + 1, 0.5, 2));
  // Element of x for sample s and class c (row-major sizes).
  int64_t inner = 1;
  for (size_t d = class_dim + 1; d < in_sizes.size(); ++d) inner *= in_sizes[d];
  auto x_at = [&](int64_t s, int64_t c) { return xs[(s / inner * C + c) * inner + s % inner]; };
  std::vector<double> per(n_t);
  double sum = 0, wsum = 0;
  for (int64_t s = 0; s < n_t; ++s) {
    int64_t c = static_cast<int64_t>(tv[s]);
    double wc = c == ignore ? 0 : (weighted ? ws[c] : 1.0);
    per[s] = -wc * x_at(s, c);
    sum += per[s];
    wsum += wc;
  }
  double tol = tol_for(dt);
  const TensorDesc* wd = weighted ? &w.d : nullptr;
  DevTensor out(dev, dt, t_sizes), tw(dev, dt, {});
  ops::nll_loss(dev, out.d, &tw.d, x.d, t.d, wd, Reduction::kNone, ignore);
  expect_close(out.read(dev), per, tol, tol, "nll none");
  for (Reduction r : {Reduction::kMean, Reduction::kSum}) {
    DevTensor s(dev, dt, {});
    ops::nll_loss(dev, s.d, &tw.d, x.d, t.d, wd, r, ignore);
    expect_close(s.read(dev), {r == Reduction::kMean ? sum / wsum : sum}, tol * 4, tol, "nll");
    expect_close(tw.read(dev), {wsum}, tol, tol, "total_weight");
  }
  // Backward, mean reduction with grad_output 1.5.
  DevTensor gi(dev, dt, in_sizes), go(dev, dt, {});
  auto gos = go.upload(dev, {1.5});
  auto tws = tw.read(dev);
  ops::nll_loss_backward(dev, gi.d, go.d, t.d, wd, Reduction::kMean, ignore, tw.d);
  std::vector<double> want(n_in, 0.0);
  for (int64_t s = 0; s < n_t; ++s) {
    int64_t c = static_cast<int64_t>(tv[s]);
    if (c == ignore) continue;
    want[(s / inner * C + c) * inner + s % inner] = -(weighted ? ws[c] : 1.0) * gos[0] / tws[0];
  }
  expect_close(gi.read(dev), want, tol, tol, "nll backward");
}

TEST_F(LossTest, NllLoss1d2dAndSpatial) {
  check_nll(dev(), {6, 5}, DType::kF32, true, 1);
  check_nll(dev(), {6, 5}, DType::kF32, false, 2);
  check_nll(dev(), {5}, DType::kF32, true, 3);
  check_nll(dev(), {2, 4, 3, 5}, DType::kF32, true, 4);
  check_nll(dev(), {300, 7, 3}, DType::kF32, true, 5);  // several workgroups
  check_nll(dev(), {3, 4, 6}, DType::kBF16, true, 6);
  if (dev().caps().supports_dtype(DType::kF64)) check_nll(dev(), {9, 4}, DType::kF64, true, 7);
}

TEST_F(LossTest, NllTargetOutOfRangeGivesNan) {
  DevTensor x(dev(), DType::kF32, {2, 3}), t(dev(), DType::kI64, {2}), out(dev(), DType::kF32, {});
  x.upload(dev(), random_values(6, 1));
  t.upload(dev(), {1, 7});
  ops::nll_loss(dev(), out.d, nullptr, x.d, t.d, nullptr, Reduction::kMean, -100);
  EXPECT_TRUE(std::isnan(out.read(dev())[0]));
}

// The bad-target record (an IndexErrorRecord read as two int64: claimed | operand << 32, value).
struct TargetRecord {
  DevTensor rec;
  explicit TargetRecord(Device& d) : rec(d, DType::kI64, {2}) { rec.upload(d, {0, 0}); }
  uint64_t address() const { return rec.d.address; }
  std::vector<double> read(Device& d) { return rec.read(d); }
};

TEST_F(LossTest, NllRecordsTheFirstBadTarget) {
  DevTensor x(dev(), DType::kF32, {300, 4}), t(dev(), DType::kI64, {300});
  DevTensor out(dev(), DType::kF32, {}), tw(dev(), DType::kF32, {}), go(dev(), DType::kF32, {});
  DevTensor gi(dev(), DType::kF32, {300, 4});
  x.upload(dev(), random_values(1200, 2));
  std::vector<double> tv(300, 2.0);
  tv[17] = -100;  // ignore_index: never a bad target
  tv[250] = 9;
  t.upload(dev(), tv);
  go.upload(dev(), {1.0});
  for (Reduction r : {Reduction::kNone, Reduction::kMean, Reduction::kSum}) {
    TargetRecord fwd(dev()), bwd(dev());
    DevTensor per(dev(), DType::kF32, {300});
    ops::nll_loss(dev(), r == Reduction::kNone ? per.d : out.d, &tw.d, x.d, t.d, nullptr, r, -100,
                  fwd.address());
    EXPECT_EQ(fwd.read(dev()), (std::vector<double>{1, 9})) << static_cast<int>(r);
    if (r == Reduction::kNone) continue;
    ops::nll_loss_backward(dev(), gi.d, go.d, t.d, nullptr, r, -100, tw.d, bwd.address());
    EXPECT_EQ(bwd.read(dev()), (std::vector<double>{1, 9})) << static_cast<int>(r);
  }
  tv[250] = 3;  // every target valid (or ignored): nothing recorded
  t.upload(dev(), tv);
  TargetRecord clean(dev());
  ops::nll_loss(dev(), out.d, &tw.d, x.d, t.d, nullptr, Reduction::kMean, -100, clean.address());
  EXPECT_EQ(clean.read(dev()), (std::vector<double>{0, 0}));
}

TEST_F(LossTest, MarginLossesRecordBadTargets) {
  DevTensor x(dev(), DType::kF32, {3, 4}), t(dev(), DType::kI64, {3, 1});
  DevTensor out(dev(), DType::kF32, {}), go(dev(), DType::kF32, {}), g(dev(), DType::kF32, {3, 4});
  x.upload(dev(), random_values(12, 3));
  go.upload(dev(), {1.0});
  t.upload(dev(), {0, -1, 2});
  TargetRecord multi(dev()), multi_bwd(dev());
  ops::MarginArgs a{&x.d, &t.d, nullptr, nullptr, false, 1, 1.0, Reduction::kSum, multi.address()};
  ops::margin_loss(dev(), a, out.d);
  EXPECT_EQ(multi.read(dev()), (std::vector<double>{1, -1}));
  a.error_flag = multi_bwd.address();
  ops::margin_loss_backward(dev(), a, g.d, go.d);
  EXPECT_EQ(multi_bwd.read(dev()), (std::vector<double>{1, -1}));
  // multilabel: every label, also past the first -1, must lie in [-1, C).
  DevTensor lt(dev(), DType::kI64, {3, 4}), is_t(dev(), DType::kF32, {3, 4});
  lt.upload(dev(), {1, 2, -1, 0, 3, -1, 0, 0, 0, -1, 7, 1});
  TargetRecord label(dev()), label_bwd(dev());
  ops::MarginArgs m{&x.d, &lt.d, nullptr, &is_t.d, true, 1, 1.0, Reduction::kSum, label.address()};
  ops::margin_loss(dev(), m, out.d);
  EXPECT_EQ(label.read(dev()), (std::vector<double>{1, 7}));
  m.error_flag = label_bwd.address();
  ops::margin_loss_backward(dev(), m, g.d, go.d);
  EXPECT_EQ(label_bwd.read(dev()), (std::vector<double>{1, 7}));
  lt.upload(dev(), {1, 2, -1, 0, 3, -1, 0, 0, 0, -1, 3, 1});
  TargetRecord clean(dev());
  m.error_flag = clean.address();
  ops::margin_loss(dev(), m, out.d);
  EXPECT_EQ(clean.read(dev()), (std::vector<double>{0, 0}));
}

TEST_F(LossTest, RejectsBadInput) {
  DevTensor x(dev(), DType::kF32, {4, 3}), t(dev(), DType::kI64, {5}), tf(dev(), DType::kF32, {4});
  DevTensor w(dev(), DType::kF32, {2}), out(dev(), DType::kF32, {});
  EXPECT_THROW(ops::nll_loss(dev(), out.d, nullptr, x.d, t.d, nullptr, Reduction::kSum, -100),
               InvalidArgument);
  DevTensor t4(dev(), DType::kI64, {4});
  EXPECT_THROW(ops::nll_loss(dev(), out.d, nullptr, x.d, t4.d, &w.d, Reduction::kSum, -100),
               InvalidArgument);
  EXPECT_THROW(ops::nll_loss(dev(), out.d, nullptr, x.d, tf.d, nullptr, Reduction::kSum, -100),
               InvalidArgument);
  EXPECT_THROW(ops::pointwise_loss(dev(), PointwiseLoss::kMse, out.d, x.d, tf.d, nullptr, nullptr,
                                   Reduction::kSum, 0),
               InvalidArgument);
}

}  // namespace vkml::testing
