// Rnn family: LSTM and GRU cell kernels, forward and backward, against a double reference on
// the host, for float dtypes and strided (transposed) gate matrices.
#include <cmath>

#include "nn_test_util.h"
#include "vkml/rnn.h"

namespace vkml::testing {

using RnnTest = DeviceTest;

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Element (b, c) of a row-major host matrix with `cols` columns.
double at(const std::vector<double>& v, int64_t cols, int64_t b, int64_t c) {
  return v[b * cols + c];
}

void check_lstm(Device& dev, DType dt) {
  const int64_t B = 19, H = 23, G = 4 * H;  // 437 units: two workgroups
  // igates stored transposed (column-major), the rest dense.
  DevTensor ig(dev, dt, {B, G}, {1, B}), hg(dev, dt, {B, G}), cx(dev, dt, {B, H});
  DevTensor bi(dev, dt, {G}), bh(dev, dt, {G});
  DevTensor hy(dev, dt, {B, H}), cy(dev, dt, {B, H}), ws(dev, dt, {B, G});
  auto igs = ig.upload(dev, random_values(B * G, 1));
  auto hgs = hg.upload(dev, random_values(B * G, 2));
  auto cxs = cx.upload(dev, random_values(B * H, 3));
  auto bis = bi.upload(dev, random_values(G, 4));
  auto bhs = bh.upload(dev, random_values(G, 5));
  ops::lstm_cell(dev, hy.d, cy.d, ws.d, ig.d, hg.d, cx.d, bi.d, bh.d);
  std::vector<double> want_hy(B * H), want_cy(B * H), want_ws(B * G);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < H; ++j) {
      double g[4];
      for (int k = 0; k < 4; ++k) {
        int64_t c = k * H + j;
        g[k] = at(igs, G, b, c) + at(hgs, G, b, c) + bis[c] + bhs[c];
      }
      double i = sigmoid(g[0]), f = sigmoid(g[1]), gg = std::tanh(g[2]), o = sigmoid(g[3]);
      double c = f * at(cxs, H, b, j) + i * gg;
      want_cy[b * H + j] = c;
      want_hy[b * H + j] = o * std::tanh(c);
      double act[4] = {i, f, gg, o};
      for (int k = 0; k < 4; ++k) want_ws[b * G + k * H + j] = act[k];
    }
  }
  double tol = 4 * tol_for(dt);
  expect_close(hy.read(dev), want_hy, tol, tol, "lstm hy");
  expect_close(cy.read(dev), want_cy, tol, tol, "lstm cy");
  auto wss = ws.read(dev);
  expect_close(wss, want_ws, tol, tol, "lstm workspace");

  // Backward from the device's own workspace and cy; only grad_hy given for half the checks.
  for (bool with_grad_cy : {true, false}) {
    DevTensor ghy(dev, dt, {B, H}), gcy(dev, dt, {B, H}), gg(dev, dt, {B, G}), gcx(dev, dt, {B, H});
    auto ghys = ghy.upload(dev, random_values(B * H, 6));
    auto gcys = gcy.upload(dev, random_values(B * H, 7));
    auto cys = cy.read(dev);
    ops::lstm_cell_backward(dev, gg.d, gcx.d, ghy.d, with_grad_cy ? gcy.d : TensorDesc{}, cx.d,
                            cy.d, ws.d);
    std::vector<double> want_gg(B * G), want_gcx(B * H);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t j = 0; j < H; ++j) {
        double i = at(wss, G, b, j), f = at(wss, G, b, H + j), g = at(wss, G, b, 2 * H + j);
        double o = at(wss, G, b, 3 * H + j), t = std::tanh(at(cys, H, b, j));
        double gh = at(ghys, H, b, j), gc0 = with_grad_cy ? at(gcys, H, b, j) : 0.0;
        double gc = gh * o * (1 - t * t) + gc0;
        want_gg[b * G + j] = gc * g * i * (1 - i);
        want_gg[b * G + H + j] = gc * at(cxs, H, b, j) * f * (1 - f);
        want_gg[b * G + 2 * H + j] = gc * i * (1 - g * g);
        want_gg[b * G + 3 * H + j] = gh * t * o * (1 - o);
        want_gcx[b * H + j] = gc * f;
      }
    }
    expect_close(gg.read(dev), want_gg, tol, tol, "lstm grad_gates");
    expect_close(gcx.read(dev), want_gcx, tol, tol, "lstm grad_cx");
  }
}

void check_gru(Device& dev, DType dt) {
  const int64_t B = 300, H = 3, G = 3 * H;  // 900 units: four workgroups
  DevTensor ig(dev, dt, {B, G}), hg(dev, dt, {B, G}, {1, B}), hx(dev, dt, {B, H});
  DevTensor hy(dev, dt, {B, H}), ws(dev, dt, {B, 5 * H});
  auto igs = ig.upload(dev, random_values(B * G, 11));
  auto hgs = hg.upload(dev, random_values(B * G, 12));
  auto hxs = hx.upload(dev, random_values(B * H, 13));
  ops::gru_cell(dev, hy.d, ws.d, ig.d, hg.d, hx.d, TensorDesc{}, TensorDesc{});  // no biases
  std::vector<double> want(B * H), r(B * H), z(B * H), n(B * H), hn(B * H);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < H; ++j) {
      int64_t e = b * H + j;
      r[e] = sigmoid(at(igs, G, b, j) + at(hgs, G, b, j));
      z[e] = sigmoid(at(igs, G, b, H + j) + at(hgs, G, b, H + j));
      hn[e] = at(hgs, G, b, 2 * H + j);
      n[e] = std::tanh(at(igs, G, b, 2 * H + j) + r[e] * hn[e]);
      want[e] = n[e] + z[e] * (hxs[e] - n[e]);
    }
  }
  double tol = 4 * tol_for(dt);
  expect_close(hy.read(dev), want, tol, tol, "gru hy");

  DevTensor ghy(dev, dt, {B, H}), gi(dev, dt, {B, G}), gh(dev, dt, {B, G}), ghx(dev, dt, {B, H});
  auto ghys = ghy.upload(dev, random_values(B * H, 14));
  ops::gru_cell_backward(dev, gi.d, gh.d, ghx.d, ghy.d, ws.d);
  std::vector<double> want_gi(B * G), want_gh(B * G), want_ghx(B * H);
  for (int64_t e = 0; e < B * H; ++e) {
    int64_t b = e / H, j = e % H;
    double g = ghys[e];
    double gz = g * (hxs[e] - n[e]) * (1 - z[e]) * z[e];
    double gn = g * (1 - z[e]) * (1 - n[e] * n[e]);
    double gr = gn * hn[e] * (1 - r[e]) * r[e];
    want_gi[b * G + j] = want_gh[b * G + j] = gr;
    want_gi[b * G + H + j] = want_gh[b * G + H + j] = gz;
    want_gi[b * G + 2 * H + j] = gn;
    want_gh[b * G + 2 * H + j] = gn * r[e];
    want_ghx[e] = g * z[e];
  }
  // The workspace holds rounded activations in f16/bf16: one more rounding step of slack.
  double btol = 8 * tol_for(dt);
  expect_close(gi.read(dev), want_gi, btol, btol, "gru grad_igates");
  expect_close(gh.read(dev), want_gh, btol, btol, "gru grad_hgates");
  expect_close(ghx.read(dev), want_ghx, btol, btol, "gru grad_hx");
}

}  // namespace

TEST_F(RnnTest, LstmCellMatchesReference) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) check_lstm(dev(), dt);
  if (dev().caps().supports_dtype(DType::kF64)) check_lstm(dev(), DType::kF64);
}

TEST_F(RnnTest, GruCellMatchesReference) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) check_gru(dev(), dt);
  if (dev().caps().supports_dtype(DType::kF64)) check_gru(dev(), DType::kF64);
}

TEST_F(RnnTest, RejectsBadShapes) {
  DevTensor g(dev(), DType::kF32, {4, 7}), c(dev(), DType::kF32, {4, 2});
  DevTensor hy(dev(), DType::kF32, {4, 2}), cy(dev(), DType::kF32, {4, 2});
  EXPECT_THROW(ops::lstm_cell(dev(), hy.d, cy.d, g.d, g.d, g.d, c.d, TensorDesc{}, TensorDesc{}),
               InvalidArgument);
  DevTensor i(dev(), DType::kI32, {4, 8}), ws(dev(), DType::kF32, {4, 8});
  EXPECT_THROW(ops::lstm_cell(dev(), hy.d, cy.d, ws.d, i.d, i.d, c.d, TensorDesc{}, TensorDesc{}),
               InvalidArgument);
}

}  // namespace vkml::testing
