// Attention family: fused forward and backward against a double-precision CPU reference, with
// grouped-query heads, masks (float and bool, broadcast), causal masking, odd sizes, strided
// (transposed) layouts, half precision and zero-size inputs.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "nn_test_util.h"
#include "vkml/config.h"
#include "vkml/attention.h"
#include "vkml/profiling.h"

namespace vkml::testing {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Shape {
  int64_t b, h, hk, l, s, e, ev;
};

struct Reference {
  std::vector<double> o, lse, dq, dk, dv;
};

// Row-major (B, H, L, S) additive mask; empty for none.
Reference reference(const Shape& z, const std::vector<double>& q, const std::vector<double>& k,
                    const std::vector<double>& v, const std::vector<double>& mask, bool causal,
                    double scale, const std::vector<double>& dout) {
  Reference r;
  r.o.assign(z.b * z.h * z.l * z.ev, 0.0);
  r.lse.assign(z.b * z.h * z.l, kNegInf);
  r.dq.assign(z.b * z.h * z.l * z.e, 0.0);
  r.dk.assign(z.b * z.hk * z.s * z.e, 0.0);
  r.dv.assign(z.b * z.hk * z.s * z.ev, 0.0);
  const int64_t group = z.h / z.hk;
  for (int64_t b = 0; b < z.b; ++b) {
    for (int64_t h = 0; h < z.h; ++h) {
      const int64_t hk = h / group;
      auto Q = [&](int64_t m, int64_t c) { return q[((b * z.h + h) * z.l + m) * z.e + c]; };
      auto K = [&](int64_t n, int64_t c) { return k[((b * z.hk + hk) * z.s + n) * z.e + c]; };
      auto V = [&](int64_t n, int64_t c) { return v[((b * z.hk + hk) * z.s + n) * z.ev + c]; };
      auto DO = [&](int64_t m, int64_t c) { return dout[((b * z.h + h) * z.l + m) * z.ev + c]; };
      for (int64_t m = 0; m < z.l; ++m) {
        std::vector<double> p(z.s, kNegInf);
        double mx = kNegInf;
        for (int64_t n = 0; n < z.s; ++n) {
          if (causal && n > m) continue;
          double d = 0;
          for (int64_t c = 0; c < z.e; ++c) d += Q(m, c) * K(n, c);
          p[n] = d * scale + (mask.empty() ? 0.0 : mask[((b * z.h + h) * z.l + m) * z.s + n]);
          mx = std::max(mx, p[n]);
        }
        double sum = 0;
        for (int64_t n = 0; n < z.s; ++n) {
          p[n] = mx == kNegInf ? 0.0 : std::exp(p[n] - mx);
          sum += p[n];
        }
        if (sum == 0) continue;  // every key hidden: output 0, lse -inf, no gradient
        for (double& x : p) x /= sum;
        const int64_t row = (b * z.h + h) * z.l + m;
        r.lse[row] = mx + std::log(sum);
        for (int64_t c = 0; c < z.ev; ++c) {
          double o = 0;
          for (int64_t n = 0; n < z.s; ++n) o += p[n] * V(n, c);
          r.o[row * z.ev + c] = o;
        }
        if (dout.empty()) continue;
        double delta = 0;
        for (int64_t c = 0; c < z.ev; ++c) delta += DO(m, c) * r.o[row * z.ev + c];
        for (int64_t n = 0; n < z.s; ++n) {
          double dp = 0;
          for (int64_t c = 0; c < z.ev; ++c) dp += DO(m, c) * V(n, c);
          const double ds = p[n] * (dp - delta) * scale;
          for (int64_t c = 0; c < z.e; ++c) {
            r.dq[row * z.e + c] += ds * K(n, c);
            r.dk[((b * z.hk + hk) * z.s + n) * z.e + c] += ds * Q(m, c);
          }
          for (int64_t c = 0; c < z.ev; ++c) {
            r.dv[((b * z.hk + hk) * z.s + n) * z.ev + c] += p[n] * DO(m, c);
          }
        }
      }
    }
  }
  return r;
}

// Strides of a (B, H, N, D) tensor stored as (B, N, H, D), as after a head split.
std::vector<int64_t> heads_inner(const std::vector<int64_t>& s) {
  return {s[2] * s[1] * s[3], s[3], s[1] * s[3], 1};
}

class AttentionTest : public DeviceTest {
 protected:
  // Runs forward (and backward when `grad`) and compares with the reference.
  void check(const Shape& z, DType t, bool causal, int mask_kind, bool strided, bool grad) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(z.e));
    std::vector<int64_t> qs{z.b, z.h, z.l, z.e}, ks{z.b, z.hk, z.s, z.e}, vs{z.b, z.hk, z.s, z.ev};
    std::vector<int64_t> os{z.b, z.h, z.l, z.ev};
    DevTensor q(dev(), t, qs, strided ? heads_inner(qs) : std::vector<int64_t>{});
    DevTensor k(dev(), t, ks, strided ? heads_inner(ks) : std::vector<int64_t>{});
    DevTensor v(dev(), t, vs, strided ? heads_inner(vs) : std::vector<int64_t>{});
    DevTensor o(dev(), t, os, strided ? heads_inner(os) : std::vector<int64_t>{});
    DevTensor lse(dev(), DType::kF32, {z.b, z.h, z.l});
    auto hq = q.upload(dev(), random_values(q.d.numel(), 1));
    auto hk = k.upload(dev(), random_values(k.d.numel(), 2));
    auto hv = v.upload(dev(), random_values(v.d.numel(), 3));
    // Masks: 1 = float (L, S) broadcast over batch and heads, 2 = bool (B, 1, L, S).
    std::vector<double> full_mask;
    DType mt = mask_kind == 2 ? DType::kBool : t;
    std::vector<int64_t> msizes = mask_kind == 2 ? std::vector<int64_t>{z.b, 1, z.l, z.s}
                                                 : std::vector<int64_t>{z.l, z.s};
    DevTensor mask(dev(), mt, msizes);
    TensorDesc mask_desc{};
    if (mask_kind != 0) {
      std::vector<double> raw = random_values(mask.d.numel(), 4, -1.0, 1.0);
      for (size_t i = 0; i < raw.size(); ++i) {
        if (mask_kind == 2) raw[i] = (raw[i] > -0.5 || i % z.s == 0) ? 1.0 : 0.0;
        else if (raw[i] < -0.8) raw[i] = kNegInf;
      }
      auto seen = mask.upload(dev(), raw);
      full_mask.resize(z.b * z.h * z.l * z.s);
      for (int64_t b = 0; b < z.b; ++b)
        for (int64_t h = 0; h < z.h; ++h)
          for (int64_t i = 0; i < z.l * z.s; ++i) {
            double x = mask_kind == 2 ? seen[b * z.l * z.s + i] : seen[i];
            if (mask_kind == 2) x = x != 0 ? 0.0 : kNegInf;
            full_mask[(b * z.h + h) * z.l * z.s + i] = x;
          }
      mask_desc = mask.d;
    }
    ops::AttentionOptions opt;
    opt.causal = causal;
    opt.scale = scale;
    ops::attention_forward(dev(), o.d, lse.d, q.d, k.d, v.d, mask_desc, opt);
    std::vector<double> hdo = random_values(o.d.numel(), 5);
    DevTensor dout(dev(), t, os);
    hdo = dout.upload(dev(), hdo);
    Reference want = reference(z, hq, hk, hv, full_mask, causal, scale,
                               grad ? hdo : std::vector<double>{});
    const double rtol = tol_for(t) * 10, atol = tol_for(t) * 10;
    expect_close(o.read(dev()), want.o, rtol, atol, "output");
    std::vector<double> got_lse = lse.read(dev());
    for (size_t i = 0; i < want.lse.size(); ++i) {
      if (want.lse[i] == kNegInf) {
        EXPECT_EQ(got_lse[i], kNegInf) << "logsumexp [" << i << "]";
      } else {
        ASSERT_NEAR(got_lse[i], want.lse[i], 1e-4 * (1 + std::fabs(want.lse[i]))) << i;
      }
    }
    if (!grad) return;
    auto layout = [&](const std::vector<int64_t>& sz) {
      return strided ? heads_inner(sz) : std::vector<int64_t>{};
    };
    DevTensor dq(dev(), t, qs, layout(qs)), dk(dev(), t, ks, layout(ks));
    DevTensor dv(dev(), t, vs, layout(vs));
    ops::attention_backward(dev(), dq.d, dk.d, dv.d, dout.d, q.d, k.d, v.d, o.d, lse.d, mask_desc,
                            opt);
    expect_close(dq.read(dev()), want.dq, rtol, atol, "grad_query");
    expect_close(dk.read(dev()), want.dk, rtol, atol, "grad_key");
    expect_close(dv.read(dev()), want.dv, rtol, atol, "grad_value");
  }
};

TEST_F(AttentionTest, ForwardBackwardF32OddSizes) {
  check({2, 2, 2, 7, 33, 8, 8}, DType::kF32, false, 0, false, true);
  check({1, 2, 2, 1, 1, 16, 16}, DType::kF32, false, 0, false, true);
}

TEST_F(AttentionTest, GroupedQueryHeadsAndDifferentValueDim) {
  check({1, 4, 2, 33, 40, 80, 24}, DType::kF32, false, 0, true, true);
}

TEST_F(AttentionTest, CausalManyTiles) {
  check({1, 1, 1, 130, 130, 32, 32}, DType::kF32, true, 0, false, true);
  check({1, 2, 1, 40, 7, 8, 8}, DType::kF32, true, 0, true, true);  // L > S: top-left aligned
}

TEST_F(AttentionTest, FloatAndBoolMasksBroadcast) {
  check({2, 2, 1, 17, 33, 16, 16}, DType::kF32, false, 1, false, true);
  check({2, 2, 2, 9, 20, 8, 12}, DType::kF32, false, 2, true, true);
}

TEST_F(AttentionTest, WideHeadsSplitColumns) {
  check({1, 1, 1, 20, 24, 256, 160}, DType::kF32, false, 0, false, true);
}

TEST_F(AttentionTest, HalfAndBfloat) {
  check({1, 2, 2, 20, 33, 64, 64}, DType::kF16, true, 0, false, true);
  check({1, 2, 1, 20, 33, 64, 64}, DType::kBF16, false, 1, true, true);
}

// The tile shape chosen for GPUs (128 threads, 32 x 64 tiles, 128 output columns per block).
TEST_F(AttentionTest, GpuTileShape) {
  ops::attention_force_gpu_tiles(true);
  check({1, 4, 2, 70, 130, 80, 40}, DType::kF32, true, 0, true, true);
  check({2, 2, 2, 33, 65, 160, 16}, DType::kBF16, false, 1, false, true);
  ops::attention_force_gpu_tiles(false);
}

// The cooperative-matrix forward (fp16/bf16), forced with VKML_SDPA_COOPMAT=1; the backward
// then runs on its logsumexp. Skipped where the device or the build has no coopmat kernel.
TEST_F(AttentionTest, CoopMatForward) {
  const DeviceCaps& caps = dev().caps();
  if (!caps.coopmat || !has_shader("attention_coopmat_f16")) {
    GTEST_SKIP() << "no cooperative-matrix attention kernel on this device/build";
  }
  ConfigOverride force("VKML_SDPA_COOPMAT", "1");
  check({2, 4, 2, 130, 77, 64, 64}, DType::kF16, false, 1, true, true);
  check({1, 2, 2, 70, 70, 80, 48}, DType::kF16, true, 2, false, true);
  check({1, 2, 1, 33, 40, 256, 256}, DType::kF16, false, 0, false, false);
  check({1, 1, 1, 3, 0, 16, 16}, DType::kF16, false, 0, false, false);
  if (caps.coopmat_bf16 && has_shader("attention_coopmat_bf16")) {
    check({2, 2, 2, 65, 129, 128, 128}, DType::kBF16, true, 0, true, true);
    check({1, 4, 4, 17, 33, 8, 8}, DType::kBF16, false, 1, false, true);
  }
}

// The GEMM path (scores in fp32 scratch, products on the GEMM kernels), forced with
// VKML_ATTENTION=gemm, on the fused tests' shapes: GQA, masks, causal (a causal row whose only
// key the float mask hides is fully hidden), strided inputs and outputs, half types.
TEST_F(AttentionTest, GemmPath) {
  ConfigOverride path("VKML_ATTENTION", "gemm");
  set_profiling(dev().stream(), true);
  kernel_times(dev().stream(), true);
  check({2, 2, 2, 7, 33, 8, 8}, DType::kF32, false, 0, false, true);
  const auto ran = kernel_times(dev().stream(), true);
  set_profiling(dev().stream(), false);
  EXPECT_TRUE(ran.count("attention_rows_fwd") && ran.count("attention_rows_bwd"));
  EXPECT_FALSE(ran.count("attention_fwd") || ran.count("attention_dq"));
  check({1, 4, 2, 33, 40, 80, 24}, DType::kF32, false, 0, true, true);
  check({1, 2, 1, 40, 7, 8, 8}, DType::kF32, true, 0, true, true);
  check({2, 2, 1, 17, 33, 16, 16}, DType::kF32, true, 1, false, true);
  check({2, 2, 2, 9, 20, 8, 12}, DType::kF32, false, 2, true, true);
  check({1, 2, 2, 20, 33, 64, 64}, DType::kF16, true, 0, false, true);
  check({1, 2, 1, 20, 33, 64, 64}, DType::kBF16, false, 1, true, true);
  check({0, 2, 2, 5, 5, 8, 8}, DType::kF32, false, 0, false, true);
  check({1, 2, 2, 0, 5, 8, 8}, DType::kF32, false, 0, false, true);
  check({1, 1, 1, 3, 0, 8, 8}, DType::kF32, false, 0, false, true);
}

// A scratch budget of a few pairs: chunks of single heads, and of whole batches with a partial
// last chunk.
TEST_F(AttentionTest, GemmPathInChunks) {
  ConfigOverride path("VKML_ATTENTION", "gemm");
  const Shape z{3, 4, 2, 9, 10, 8, 8};
  const int64_t ld = (z.s + 7) / 8 * 8;  // score rows are padded to 8 elements
  for (int pairs : {1, 5}) {
    const std::string budget = std::to_string(z.l * ld * 8 * pairs);  // backward: 2 fp32
    ConfigOverride scratch("VKML_ATTENTION_SCRATCH", budget.c_str());
    check(z, DType::kF32, true, 1, true, true);
  }
  ConfigOverride scratch("VKML_ATTENTION_SCRATCH", std::to_string(z.l * ld * 12 * 3).c_str());
  check(z, DType::kF16, false, 2, false, true);
}

bool flash_kernel_present(const DeviceCaps& caps) {
  return caps.coopmat && has_shader("attention_flash_f16");
}

// The cooperative-matrix flash kernels, forward and backward (VKML_ATTENTION=flash, made
// mandatory by VKML_SDPA_COOPMAT=1). Float and bool masks, causal with L > S and L < S,
// grouped-query heads, head dims padded to 16 (80, 96, 20 with scalar loads), 128 and 256,
// strided (head-inner) layouts, no keys, and both query-block counts of the forward.
TEST_F(AttentionTest, FlashKernels) {
  if (!flash_kernel_present(dev().caps())) {
    GTEST_SKIP() << "no cooperative matrices on this device, or the flash kernel is not built";
  }
  ConfigOverride path("VKML_ATTENTION", "flash");
  ConfigOverride force("VKML_SDPA_COOPMAT", "1");
  set_profiling(dev().stream(), true);
  kernel_times(dev().stream(), true);
  check({2, 4, 2, 130, 77, 64, 64}, DType::kF16, false, 1, false, true);
  const auto ran = kernel_times(dev().stream(), true);
  set_profiling(dev().stream(), false);
  EXPECT_TRUE(ran.count("attention_flash_f16") && ran.count("attention_flash_dq_f16") &&
              ran.count("attention_flash_dk_f16") && ran.count("attention_flash_dv_f16"));
  EXPECT_FALSE(ran.count("attention_fwd") || ran.count("attention_coopmat_f16") ||
               ran.count("attention_rows_fwd") || ran.count("attention_rows_bwd") ||
               ran.count("attention_dq"));
  check({1, 2, 2, 70, 70, 80, 48}, DType::kF16, true, 2, true, true);
  check({1, 4, 1, 33, 40, 20, 12}, DType::kF16, false, 0, false, true);   // scalar loads
  check({1, 2, 2, 200, 150, 96, 96}, DType::kF16, true, 0, false, true);  // L > S
  check({1, 2, 1, 100, 300, 96, 96}, DType::kF16, true, 1, true, true);  // L < S
  check({1, 2, 2, 257, 513, 128, 128}, DType::kF16, true, 0, false, true);
  check({1, 2, 1, 33, 300, 256, 256}, DType::kF16, false, 0, false, true);
  check({1, 1, 1, 3, 0, 16, 16}, DType::kF16, false, 0, false, false);  // no keys: zeros
  {
    ConfigOverride qb("VKML_ATTENTION_FLASH_QBLOCKS", "1");
    check({2, 2, 2, 95, 129, 64, 64}, DType::kF16, true, 1, false, true);
  }
  {
    ConfigOverride qb("VKML_ATTENTION_FLASH_QBLOCKS", "2");
    check({1, 2, 2, 95, 129, 128, 128}, DType::kF16, false, 2, true, true);
  }
  if (dev().caps().coopmat_bf16 && has_shader("attention_flash_bf16")) {
    check({2, 2, 2, 65, 129, 128, 128}, DType::kBF16, true, 0, true, true);
    check({1, 4, 4, 17, 33, 8, 8}, DType::kBF16, false, 1, false, true);
    check({1, 2, 1, 64, 64, 64, 64}, DType::kBF16, false, 2, false, true);
  }
}

// Dropout in the flash kernels draws what the fused kernels draw: same seed and offset, same
// output, logsumexp and gradients (up to fp16 rounding of the probabilities and weights).
TEST_F(AttentionTest, FlashDropoutMatchesFusedKernels) {
  if (!flash_kernel_present(dev().caps())) {
    GTEST_SKIP() << "no cooperative matrices on this device, or the flash kernel is not built";
  }
  const Shape z{2, 3, 3, 77, 150, 64, 64};
  DevTensor q(dev(), DType::kF16, {z.b, z.h, z.l, z.e}), k(dev(), DType::kF16, {z.b, z.hk, z.s, z.e});
  DevTensor v(dev(), DType::kF16, {z.b, z.hk, z.s, z.ev});
  q.upload(dev(), random_values(q.d.numel(), 11));
  k.upload(dev(), random_values(k.d.numel(), 12));
  v.upload(dev(), random_values(v.d.numel(), 13));
  ops::AttentionOptions opt;
  opt.scale = 0.125;
  opt.dropout_p = 0.3;
  opt.seed = 1234;
  opt.offset = 56;
  opt.causal = true;
  DevTensor dout(dev(), DType::kF16, {z.b, z.h, z.l, z.ev});
  dout.upload(dev(), random_values(dout.d.numel(), 14));
  // Output, logsumexp, dq, dk, dv.
  auto run = [&](const char* path, const char* coopmat) {
    ConfigOverride a("VKML_ATTENTION", path);
    ConfigOverride c("VKML_SDPA_COOPMAT", coopmat);
    DevTensor o(dev(), DType::kF16, {z.b, z.h, z.l, z.ev}), lse(dev(), DType::kF32, {z.b, z.h, z.l});
    ops::attention_forward(dev(), o.d, lse.d, q.d, k.d, v.d, TensorDesc{}, opt);
    DevTensor dq(dev(), DType::kF16, q.d.sizes), dk(dev(), DType::kF16, k.d.sizes);
    DevTensor dv(dev(), DType::kF16, v.d.sizes);
    ops::attention_backward(dev(), dq.d, dk.d, dv.d, dout.d, q.d, k.d, v.d, o.d, lse.d,
                            TensorDesc{}, opt);
    return std::vector<std::vector<double>>{o.read(dev()), lse.read(dev()), dq.read(dev()),
                                            dk.read(dev()), dv.read(dev())};
  };
  const auto flash = run("flash", "1");
  const auto fused = run("fused", "0");
  const char* names[] = {"output", "logsumexp", "grad_query", "grad_key", "grad_value"};
  for (int i = 0; i < 5; ++i) {
    const double tol = i == 1 ? 1e-4 : 3e-2;
    expect_close(flash[i], fused[i], tol, tol, names[i]);
  }
  // The draws are not all kept or all dropped: the output differs from the one without dropout.
  opt.dropout_p = 0;
  const auto plain = run("flash", "1");
  double diff = 0;
  for (size_t i = 0; i < plain[0].size(); ++i) {
    diff = std::max(diff, std::fabs(plain[0][i] - flash[0][i]));
  }
  EXPECT_GT(diff, 0.1);
}

// Without cooperative matrices (lavapipe) VKML_ATTENTION=flash runs as auto, and
// VKML_SDPA_COOPMAT=1 makes the missing kernel an error.
TEST_F(AttentionTest, FlashElsewhereRunsAsAuto) {
  if (flash_kernel_present(dev().caps())) GTEST_SKIP() << "the flash kernel runs here";
  ConfigOverride path("VKML_ATTENTION", "flash");
  check({1, 2, 1, 20, 33, 64, 64}, DType::kF16, true, 1, true, true);
  ConfigOverride force("VKML_SDPA_COOPMAT", "1");
  DevTensor q(dev(), DType::kF16, {1, 2, 8, 16}), o(dev(), DType::kF16, {1, 2, 8, 16});
  DevTensor lse(dev(), DType::kF32, {1, 2, 8});
  EXPECT_THROW(ops::attention_forward(dev(), o.d, lse.d, q.d, q.d, q.d, TensorDesc{},
                                      ops::AttentionOptions{}),
               NotSupported);
}

// The split-KV decode forward, forced with VKML_ATTENTION=decode, with its logsumexp checked
// and the backward run on it: one to a few queries, grouped-query heads, masks, causal (a causal
// row whose only key the float mask hides is fully hidden), strided inputs, half types, and keys
// enough for several splits (the merge pass).
TEST_F(AttentionTest, DecodePath) {
  ConfigOverride path("VKML_ATTENTION", "decode");
  set_profiling(dev().stream(), true);
  kernel_times(dev().stream(), true);
  check({2, 4, 2, 1, 3000, 64, 64}, DType::kF32, false, 0, false, false);
  const auto ran = kernel_times(dev().stream(), true);
  set_profiling(dev().stream(), false);
  EXPECT_TRUE(ran.count("attention_decode_split_sg") && ran.count("attention_decode_reduce"));
  EXPECT_FALSE(ran.count("attention_fwd"));
  check({1, 4, 2, 3, 40, 80, 24}, DType::kF32, false, 0, true, true);
  check({1, 6, 2, 2, 700, 32, 32}, DType::kF32, true, 0, true, false);
  check({2, 2, 1, 4, 333, 16, 16}, DType::kF32, true, 1, false, true);
  check({2, 2, 2, 1, 20, 8, 12}, DType::kF32, false, 2, true, true);
  check({1, 2, 2, 8, 1025, 128, 128}, DType::kF16, false, 1, false, false);
  check({1, 2, 1, 1, 513, 256, 256}, DType::kBF16, false, 2, true, false);
  check({0, 2, 2, 1, 5, 8, 8}, DType::kF32, false, 0, false, true);
  check({1, 1, 1, 1, 0, 8, 8}, DType::kF32, false, 0, false, true);
}

// The decode kernels' launch shape for GPUs (128 threads, 16 rows per workgroup, 256-workgroup
// grids): two row blocks, the widest heads, several splits.
TEST_F(AttentionTest, DecodePathGpuShape) {
  ConfigOverride path("VKML_ATTENTION", "decode");
  ops::attention_force_gpu_tiles(true);
  check({1, 8, 1, 3, 2000, 64, 48}, DType::kF32, false, 1, true, false);
  check({2, 4, 4, 1, 700, 256, 256}, DType::kF16, false, 0, true, false);
  check({1, 14, 2, 1, 1100, 64, 64}, DType::kBF16, false, 2, false, false);
  ops::attention_force_gpu_tiles(false);
}

TEST_F(AttentionTest, ZeroSize) {
  check({0, 2, 2, 5, 5, 8, 8}, DType::kF32, false, 0, false, true);
  check({1, 2, 2, 0, 5, 8, 8}, DType::kF32, false, 0, false, true);
  check({1, 1, 1, 3, 0, 8, 8}, DType::kF32, false, 0, false, true);  // no keys: zeros
}

TEST_F(AttentionTest, RejectsBadInput) {
  DevTensor q(dev(), DType::kF32, {1, 3, 4, 8}), k(dev(), DType::kF32, {1, 2, 4, 8});
  DevTensor o(dev(), DType::kF32, {1, 3, 4, 8}), lse(dev(), DType::kF32, {1, 3, 4});
  ops::AttentionOptions opt;
  EXPECT_THROW(ops::attention_forward(dev(), o.d, lse.d, q.d, k.d, k.d, TensorDesc{}, opt),
               InvalidArgument);  // 3 query heads over 2 key heads
  DevTensor qd(dev(), DType::kF64, {1, 2, 4, 8});
  DevTensor od(dev(), DType::kF64, {1, 2, 4, 8}), lsed(dev(), DType::kF32, {1, 2, 4});
  if (dev().caps().supports_dtype(DType::kF64)) {
    EXPECT_THROW(ops::attention_forward(dev(), od.d, lsed.d, qd.d, qd.d, qd.d, TensorDesc{}, opt),
                 NotSupported);
  }
}

}  // namespace

}  // namespace vkml::testing
