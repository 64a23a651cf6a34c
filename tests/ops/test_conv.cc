// Conv family against a float64 CPU reference: forward, data, weight and bias gradients over
// 1-D/2-D/3-D geometries with stride, padding, dilation, groups (depthwise too), 1x1 kernels,
// strided inputs, batch chunking and every floating dtype.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "float_buffers.h"
#include "ops/conv/conv_igemm.h"
#include "ops/conv/conv_policy.h"
#include "ops/conv/conv_winograd.h"
#include "vkml/config.h"
#include "vkml/conv.h"
#include "vkml/errors.h"
#include "vkml/profiling.h"

namespace vkml::testing {

namespace {

using ops::ConvDesc;

struct Geo {
  int spatial;
  int64_t n, cin, cout, groups;
  std::vector<int64_t> in, kernel, stride, pad, dil;
};

ConvDesc make_desc(const Geo& g, DType t) {
  ConvDesc c;
  c.spatial = g.spatial;
  c.batch = g.n, c.in_channels = g.cin, c.out_channels = g.cout, c.groups = g.groups;
  c.dtype = t;
  for (int i = 0; i < g.spatial; ++i) {
    c.in_size[i] = g.in[i], c.kernel[i] = g.kernel[i], c.stride[i] = g.stride[i];
    c.padding[i] = g.pad[i], c.dilation[i] = g.dil[i];
    c.out_size[i] = (g.in[i] + 2 * g.pad[i] - g.dil[i] * (g.kernel[i] - 1) - 1) / g.stride[i] + 1;
  }
  return c;
}

std::vector<int64_t> shape(int64_t a, int64_t b, const int64_t* s, int spatial) {
  std::vector<int64_t> v = {a, b};
  for (int i = 0; i < spatial; ++i) v.push_back(s[i]);
  return v;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// Row-major index of (a, b, spatial...) in a tensor of the given shape.
int64_t index(const std::vector<int64_t>& shape, int64_t a, int64_t b, const int64_t* pos) {
  int64_t i = a * shape[1] + b;
  for (size_t d = 2; d < shape.size(); ++d) i = i * shape[d] + pos[d - 2];
  return i;
}

// Calls f(n, oc, ci_global, out_pos, in_pos, k_pos) for every tap inside the input.
template <typename F>
void for_each_tap(const ConvDesc& c, F f) {
  const int64_t cig = c.in_channels / c.groups, cog = c.out_channels / c.groups;
  const int sp = c.spatial;
  int64_t o[3] = {0, 0, 0}, k[3] = {0, 0, 0}, in[3] = {0, 0, 0};
  int64_t out_vol = 1, k_vol = 1;
  for (int i = 0; i < sp; ++i) out_vol *= c.out_size[i], k_vol *= c.kernel[i];
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t oc = 0; oc < c.out_channels; ++oc) {
      for (int64_t ov = 0; ov < out_vol; ++ov) {
        for (int64_t r = ov, i = sp - 1; i >= 0; --i) o[i] = r % c.out_size[i], r /= c.out_size[i];
        for (int64_t ci = 0; ci < cig; ++ci) {
          for (int64_t kvi = 0; kvi < k_vol; ++kvi) {
            bool ok = true;
            for (int64_t r = kvi, i = sp - 1; i >= 0; --i) k[i] = r % c.kernel[i], r /= c.kernel[i];
            for (int i = 0; i < sp; ++i) {
              in[i] = o[i] * c.stride[i] - c.padding[i] + k[i] * c.dilation[i];
              ok = ok && in[i] >= 0 && in[i] < c.in_size[i];
            }
            if (ok) f(n, oc, (oc / cog) * cig + ci, ci, o, in, k);
          }
        }
      }
    }
  }
}

struct ConvData {
  ConvDesc c;
  std::vector<int64_t> xs, ws, ys;
  HostFloats x, w, y, b;
  ConvData(const Geo& g, DType t)
      : c(make_desc(g, t)),
        xs(shape(g.n, g.cin, c.in_size, g.spatial)),
        ws(shape(g.cout, g.cin / g.groups, c.kernel, g.spatial)),
        ys(shape(g.n, g.cout, c.out_size, g.spatial)),
        x(t, numel(xs)),
        w(t, numel(ws)),
        y(t, numel(ys)),
        b(t, g.cout) {
    x.randomize(11), w.randomize(12), y.randomize(13), b.randomize(14);
  }
};

double rel_error(const HostFloats& got, const std::vector<double>& ref) {
  double scale = 1e-30, worst = 0;
  for (double r : ref) scale = std::max(scale, std::abs(r));
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = std::abs(got.get(i) - ref[i]);
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst / scale;
}

class ConvTest : public DeviceTest {
 protected:
  // run_once under both algorithms (VKML_CONV), whatever the device's default; for fp16/bf16 on
  // devices with cooperative matrices, also under each B gather of the forward-style passes
  // (VKML_CONV_COOPMAT_B).
  void run(const Geo& g, DType t, uint64_t workspace = 0, bool channels_last = false) {
    for (const char* mode : {"im2col", "implicit"}) {
      ConfigOverride conv("VKML_CONV", mode);
      run_once(g, t, workspace, channels_last);
    }
    const bool half = t == DType::kF16 || t == DType::kBF16;
    if (dev().caps().coopmat && half) {
      ConfigOverride conv("VKML_CONV", "implicit");
      for (const char* gather : {"kn", "octets"}) {
        ConfigOverride b("VKML_CONV_COOPMAT_B", gather);
        run_once(g, t, workspace, channels_last);
      }
    }
  }

  // Runs forward, data, weight and bias passes of one geometry; checks each against the
  // reference. x can be given channels-last strides (2-D only).
  void run_once(const Geo& g, DType t, uint64_t workspace = 0, bool channels_last = false) {
    ConvData d(g, t);
    d.c.workspace_limit = workspace;
    const ConvDesc& c = d.c;
    std::vector<double> y_ref(d.y.size(), 0.0), gx_ref(d.x.size(), 0.0), gw_ref(d.w.size(), 0.0);
    std::vector<double> gb_ref(g.cout, 0.0);
    for_each_tap(c, [&](int64_t n, int64_t oc, int64_t cg, int64_t ci, const int64_t* o,
                        const int64_t* in, const int64_t* k) {
      const int64_t yi = index(d.ys, n, oc, o), xi = index(d.xs, n, cg, in);
      const int64_t wi = index(d.ws, oc, ci, k);
      y_ref[yi] += d.x.get(xi) * d.w.get(wi);
      gx_ref[xi] += d.y.get(yi) * d.w.get(wi);  // d.y doubles as the output gradient
      gw_ref[wi] += d.y.get(yi) * d.x.get(xi);
    });
    const int64_t per_channel = d.y.size() / std::max<int64_t>(g.n * g.cout, 1);
    for (size_t i = 0; i < y_ref.size(); ++i) {
      const int64_t oc = (static_cast<int64_t>(i) / per_channel) % g.cout;
      y_ref[i] += d.b.get(oc);
      gb_ref[oc] += d.y.get(i);
    }

    DeviceBuffer bx(dev(), d.x.bytes.size() + 8), bw(dev(), d.w.bytes.size() + 8);
    DeviceBuffer by(dev(), d.y.bytes.size() + 8), bb(dev(), d.b.bytes.size() + 8);
    DeviceBuffer out(dev(),
                     std::max(d.x.bytes.size(), std::max(d.y.bytes.size(), d.w.bytes.size())) + 8);
    TensorDesc x = desc(bx.address, t, d.xs), w = desc(bw.address, t, d.ws);
    TensorDesc gy = desc(by.address, t, d.ys), bias = desc(bb.address, t, {g.cout});
    HostFloats x_up = d.x;
    if (channels_last) {  // same values, stored NHWC: strides (H*W*C, 1, W*C, C)
      const int64_t C = d.xs[1], H = d.xs[2], W = d.xs[3];
      x.strides = {H * W * C, 1, W * C, C};
      for (int64_t n = 0; n < d.xs[0]; ++n)
        for (int64_t ch = 0; ch < C; ++ch)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t ww = 0; ww < W; ++ww) {
              int64_t pos[2] = {h, ww};
              x_up.set(n * H * W * C + h * W * C + ww * C + ch, d.x.get(index(d.xs, n, ch, pos)));
            }
    }
    x_up.upload(dev(), bx.address), d.w.upload(dev(), bw.address);
    d.y.upload(dev(), by.address), d.b.upload(dev(), bb.address);
    const double tol = rel_tolerance(t);
    auto name = [&](const char* pass) {
      return std::string(pass) + " " + std::string(dtype_name(t)) + " " + config().conv + " " +
             config().conv_coopmat_b + " spatial=" + std::to_string(g.spatial) +
             " groups=" + std::to_string(g.groups);
    };

    ops::conv_forward(dev(), c, x, w, &bias, desc(out.address, t, d.ys));
    HostFloats got_y(t, d.y.size());
    got_y.download(dev(), out.address);
    EXPECT_LE(rel_error(got_y, y_ref), tol) << name("forward");

    ops::conv_backward_data(dev(), c, gy, w, nullptr, desc(out.address, t, d.xs));
    HostFloats got_x(t, d.x.size());
    got_x.download(dev(), out.address);
    EXPECT_LE(rel_error(got_x, gx_ref), tol) << name("backward data");

    ops::conv_backward_weight(dev(), c, x, gy, desc(out.address, t, d.ws));
    HostFloats got_w(t, d.w.size());
    got_w.download(dev(), out.address);
    EXPECT_LE(rel_error(got_w, gw_ref), tol) << name("backward weight");

    ops::conv_backward_bias(dev(), gy, desc(out.address, t, {g.cout}));
    HostFloats got_b(t, g.cout);
    got_b.download(dev(), out.address);
    EXPECT_LE(rel_error(got_b, gb_ref), tol) << name("backward bias");
  }

};

// A bad value of a setting is refused with InvalidArgument when it is set.
void expect_refused(const char* name, const char* value) {
  EXPECT_THROW(ConfigOverride(name, value), InvalidArgument) << name << "=" << value;
}

const Geo k2d{2, 2, 3, 4, 1, {7, 6}, {3, 2}, {2, 1}, {1, 0}, {1, 2}};

}  // namespace

TEST(ConvAlgoTest, ChoosesByGeometry) {
  ConvDesc c = make_desc(k2d, DType::kF32);
  EXPECT_EQ(ops::choose_conv_algo(c), ops::ConvAlgo::kIm2colGemm);
  ConvDesc dw = make_desc({2, 1, 8, 16, 8, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, DType::kF32);
  EXPECT_EQ(ops::choose_conv_algo(dw), ops::ConvAlgo::kDepthwise);
  ConvDesc pw = make_desc({2, 1, 8, 16, 1, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {1, 1}}, DType::kF32);
  EXPECT_EQ(ops::choose_conv_algo(pw), ops::ConvAlgo::kPointwise);
  pw.stride[0] = 2;
  EXPECT_EQ(ops::choose_conv_algo(pw), ops::ConvAlgo::kIm2colGemm);
}

TEST_F(ConvTest, TwoDStrideDilationPadding) { run(k2d, DType::kF32); }

// A budget far too small for one pass: forward and data gradient run per sample, the weight
// gradient per output channel (groups 1; grouped ones go whole), each slice on its own
// submission, with the results unchanged.
TEST_F(ConvTest, SlicedForTheSubmitBudget) {
  SubmitBudgetScope budget(dev().stream(), 1e-9);
  const uint64_t before = dev().stream().submissions();
  run({2, 3, 4, 6, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, DType::kF32, 0,
      /*channels_last=*/true);
  run({2, 3, 4, 6, 2, {7, 6}, {3, 2}, {2, 1}, {1, 0}, {1, 2}}, DType::kF32);
  run({1, 2, 3, 5, 1, {9}, {3}, {1}, {1}, {1}}, DType::kF16);
  EXPECT_GE(dev().stream().submissions() - before, 2u * (3 + 3 + 6));
}

TEST_F(ConvTest, GroupsAndDepthwise) {
  run({2, 2, 4, 6, 2, {6, 5}, {3, 3}, {1, 2}, {1, 1}, {1, 1}}, DType::kF32);
  run({2, 2, 3, 6, 3, {7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}}, DType::kF32);  // multiplier 2
  run({1, 2, 5, 5, 5, {9}, {4}, {1}, {2}, {2}}, DType::kF32);
}

TEST_F(ConvTest, PointwiseAndOneAndThreeD) {
  run({2, 3, 5, 7, 1, {4, 3}, {1, 1}, {1, 1}, {0, 0}, {1, 1}}, DType::kF32);
  run({1, 3, 4, 5, 1, {11}, {3}, {2}, {1}, {1}}, DType::kF32);
  run({3, 2, 3, 4, 1, {4, 5, 3}, {2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}}, DType::kF32);
}

TEST_F(ConvTest, ChunkedBatchAndStridedInput) {
  run({2, 5, 3, 4, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, DType::kF32, /*workspace=*/64,
      /*channels_last=*/true);
  run({2, 4, 3, 4, 1, {6, 5}, {3, 3}, {2, 1}, {0, 1}, {1, 1}}, DType::kF16, 64);
}

// Channels per group a multiple of 8: the cooperative-matrix kernel's channel octets (an NCHW
// source transposed first, a channels-last one read in place), with stride phases, groups,
// dilation and 1-D / 3-D geometries; elsewhere the same passes on the other kernels.
TEST_F(ConvTest, ChannelOctets) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    if (!dev().caps().supports_dtype(t)) continue;
    run({2, 2, 16, 24, 1, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, t);
    run({2, 2, 16, 24, 1, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, t, 0, /*channels_last=*/true);
    run({2, 2, 16, 16, 2, {9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}}, t);
    run({1, 1, 8, 8, 1, {13}, {3}, {1}, {2}, {2}}, t);
    run({3, 1, 8, 16, 1, {4, 5, 3}, {2, 3, 2}, {1, 1, 1}, {1, 0, 1}, {1, 1, 2}}, t);
  }
  expect_refused("VKML_CONV_COOPMAT_B", "rows");
  expect_refused("VKML_CONV_COOPMAT_B", "nk");
}

// VKML_CONV_FOLD=1: 1x1 kernels (strided ones too) as one GEMM over the batch's positions,
// gathered channel-major, from NCHW and channels-last inputs in every float dtype; the forward
// then records two copies and the GEMM, and no im2col or implicit kernel.
TEST_F(ConvTest, FoldedPointwise) {
  ConfigOverride fold("VKML_CONV_FOLD", "1");
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    if (!dev().caps().supports_dtype(t)) continue;
    run({2, 3, 5, 7, 1, {4, 3}, {1, 1}, {1, 1}, {0, 0}, {1, 1}}, t);
    run({2, 3, 6, 4, 1, {7, 7}, {1, 1}, {2, 2}, {0, 0}, {1, 1}}, t, 0, /*channels_last=*/true);
    run({1, 2, 3, 5, 1, {9}, {1}, {3}, {0}, {1}}, t);
  }
  set_profiling(dev().stream(), true);
  kernel_times(dev().stream(), true);
  ConvData d({2, 3, 6, 4, 1, {7, 7}, {1, 1}, {2, 2}, {0, 0}, {1, 1}}, DType::kF32);
  DeviceBuffer bx(dev(), d.x.bytes.size()), bw(dev(), d.w.bytes.size());
  DeviceBuffer by(dev(), d.y.bytes.size());
  d.x.upload(dev(), bx.address), d.w.upload(dev(), bw.address);
  ops::conv_forward(dev(), d.c, desc(bx.address, DType::kF32, d.xs),
                    desc(bw.address, DType::kF32, d.ws), nullptr,
                    desc(by.address, DType::kF32, d.ys));
  size_t copies = 0, gemms = 0, others = 0;
  for (const auto& [name, t] : kernel_times(dev().stream(), true)) {
    size_t& slot = name.rfind("copy_", 0) == 0 ? copies : name.rfind("gemm_", 0) == 0 ? gemms : others;
    slot += t.count;
  }
  EXPECT_EQ(copies, 2u);
  EXPECT_GE(gemms, 1u);
  EXPECT_EQ(others, 0u);
  set_profiling(dev().stream(), false);
}

// VKML_CONV_WINOGRAD=1: 3x3 stride-1 forward passes and both gradients through the F(2x2, 3x3)
// and F(4x4, 3x3) transforms (VKML_CONV_WINOGRAD_TILE), over padding 0-2 (output sizes that
// leave partial tiles), a one-sample workspace (one chunk per sample) and channels-last input,
// fp16/bf16 too; other geometries ignore it.
TEST_F(ConvTest, Winograd) {
  ConfigOverride winograd("VKML_CONV_WINOGRAD", "1");
  set_profiling(dev().stream(), true);
  for (const char* tile : {"2", "4"}) {
    ConfigOverride edge("VKML_CONV_WINOGRAD_TILE", tile);
    kernel_times(dev().stream(), true);
    for (int64_t pad : {0, 1, 2}) {
      run_once({2, 3, 5, 7, 1, {7, 6}, {3, 3}, {1, 1}, {pad, pad}, {1, 1}}, DType::kF32);
    }
    run_once({2, 2, 4, 6, 1, {5, 13}, {3, 3}, {1, 1}, {1, 2}, {1, 1}}, DType::kF32,
             /*workspace=*/64, /*channels_last=*/true);
    run_once({2, 1, 9, 6, 1, {12, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, DType::kF32);
    const auto ran = kernel_times(dev().stream(), true);
    // Forward, input and weight gradients of each of the five geometries, the fourth in two
    // chunks.
    auto count = [&](const char* stage) {
      const auto it = ran.find(std::string("conv_wino") + tile + "_" + stage + "_f32");
      return it == ran.end() ? uint64_t{0} : it->second.count;
    };
    EXPECT_EQ(count("weight"), 10u) << tile;
    EXPECT_EQ(count("input"), 18u) << tile;
    EXPECT_EQ(count("output"), 12u) << tile;
    EXPECT_EQ(count("dy"), 6u) << tile;
    EXPECT_EQ(count("wgrad"), 5u) << tile;
    run_once({2, 2, 3, 4, 1, {6, 5}, {3, 3}, {2, 1}, {1, 1}, {1, 1}}, DType::kF32);  // strided
    for (const auto& [name, time] : kernel_times(dev().stream(), true)) {
      EXPECT_NE(name.rfind("conv_wino", 0), 0u) << name;
    }
    // Half tensors: the same transforms and fp32 GEMMs, loads widened and results rounded.
    for (DType t : {DType::kF16, DType::kBF16}) {
      if (!dev().caps().supports_dtype(t)) continue;
      run_once({2, 2, 4, 6, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, t);
      const auto half = kernel_times(dev().stream(), true);
      const auto it =
          half.find(std::string("conv_wino") + tile + "_input_" + std::string(dtype_name(t)));
      EXPECT_EQ(it == half.end() ? uint64_t{0} : it->second.count, 3u) << tile;
    }
  }
  set_profiling(dev().stream(), false);
  expect_refused("VKML_CONV_WINOGRAD", "yes");
  expect_refused("VKML_CONV_WINOGRAD", "forward,backward");
  expect_refused("VKML_CONV_WINOGRAD_TILE", "3");
}

// Only the listed passes take Winograd under a comma-separated VKML_CONV_WINOGRAD.
TEST_F(ConvTest, WinogradListedPasses) {
  ConfigOverride winograd("VKML_CONV_WINOGRAD", "data,weight");
  set_profiling(dev().stream(), true);
  kernel_times(dev().stream(), true);
  run_once({2, 3, 5, 7, 1, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, DType::kF32);
  const auto ran = kernel_times(dev().stream(), true);
  auto count = [&](const char* stage) {
    const auto it = ran.find(std::string("conv_wino4_") + stage + "_f32");
    return it == ran.end() ? uint64_t{0} : it->second.count;
  };
  EXPECT_EQ(count("weight"), 1u);  // the data pass's kernel transform only
  EXPECT_EQ(count("output"), 1u);
  EXPECT_EQ(count("wgrad"), 1u);
  set_profiling(dev().stream(), false);
}

// The rules that pick Winograd and the implicit GEMM where their settings are auto, on
// synthetic devices of the generic and CPU classes.
TEST(ConvPolicy, WinogradDefaultsPerDtypeAndPass) {
  DeviceCaps gpu;
  gpu.kind = DeviceKind::kDiscrete;
  gpu.device_class = DeviceClass::kGeneric;
  DeviceCaps tensor_gpu = gpu;
  tensor_gpu.coopmat = true;
  tensor_gpu.coopmat_shapes.push_back({16, 16, 16, DType::kF16, DType::kF16, DType::kF32,
                                       DType::kF32});
  DeviceCaps cpu = tensor_gpu;
  cpu.kind = DeviceKind::kCpu;
  cpu.device_class = DeviceClass::kCpu;
  auto desc = [](DType t, int64_t channels, int64_t plane) {
    ConvDesc c;
    c.batch = 2, c.in_channels = channels, c.out_channels = channels, c.dtype = t;
    for (int i = 0; i < 2; ++i) {
      c.in_size[i] = c.out_size[i] = plane, c.kernel[i] = 3, c.padding[i] = 1;
    }
    return c;
  };
  using ops::ConvPass;
  for (ConvPass pass : {ConvPass::kForward, ConvPass::kData, ConvPass::kWeight}) {
    SCOPED_TRACE(std::string(ops::conv_pass_name(pass)));
    const bool forward = pass == ConvPass::kForward;
    auto rule = [&](const DeviceCaps& caps, const ConvDesc& c) {
      return ops::conv_winograd_by_default(caps, c, pass);
    };
    EXPECT_TRUE(rule(gpu, desc(DType::kF32, 64, 4)));
    EXPECT_TRUE(rule(tensor_gpu, desc(DType::kF32, 64, 4)));
    EXPECT_FALSE(rule(tensor_gpu, desc(DType::kF32, 32, 32)));
    EXPECT_FALSE(rule(cpu, desc(DType::kF32, 64, 32)));
    // Halves: the gradients on planes of 64+ positions; the forward without tensor cores.
    EXPECT_EQ(rule(tensor_gpu, desc(DType::kF16, 64, 8)), !forward);
    EXPECT_FALSE(rule(tensor_gpu, desc(DType::kF16, 512, 7)));
    EXPECT_TRUE(rule(gpu, desc(DType::kF16, 64, 8)));
    EXPECT_FALSE(rule(tensor_gpu, desc(DType::kBF16, 48, 32)));
    // No bf16 cooperative matrices on tensor_gpu: its bf16 forward takes Winograd too.
    EXPECT_TRUE(rule(tensor_gpu, desc(DType::kBF16, 64, 8)));
    // The implicit GEMM: always on CPU devices and for fp32; fp16/bf16 only on the
    // cooperative-matrix kernel, per pass.
    const ConvDesc half = desc(DType::kF16, 64, 8);
    EXPECT_TRUE(ops::conv_implicit_by_default(cpu, half, pass, false));
    EXPECT_TRUE(ops::conv_implicit_by_default(gpu, desc(DType::kF32, 3, 8), pass, false));
    EXPECT_FALSE(ops::conv_implicit_by_default(gpu, half, pass, false));
    EXPECT_TRUE(ops::conv_implicit_by_default(tensor_gpu, half, pass, true));
    // The weight gradient's implicit kernel only over columns of up to 576 channels x taps.
    EXPECT_EQ(ops::conv_implicit_by_default(tensor_gpu, desc(DType::kF16, 128, 8), pass, true),
              pass != ConvPass::kWeight);
  }
  EXPECT_EQ(ops::conv_wgrad_split_target(cpu), 8);
  EXPECT_EQ(ops::conv_wgrad_split_target(gpu), 1024);
  ConfigOverride blocks("VKML_CONV_WGRAD_BLOCKS", "300");
  EXPECT_EQ(ops::conv_wgrad_split_target(gpu), 300);
}

TEST_F(ConvTest, EveryDtype) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF64}) {
    if (!dev().caps().supports_dtype(t)) continue;
    run(k2d, t);
    run({2, 2, 4, 4, 4, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, t);  // depthwise
  }
}

// VKML_CONV=implicit: the forward, the input gradient (one pass per stride phase) and the weight
// gradient run as implicit GEMMs (no im2col / col2im), over tiles left partly empty in m, n and
// k, groups, 1-D to 3-D, channels-last input and a chunk-sized workspace that must not matter.
TEST_F(ConvTest, ImplicitGemm) {
  {
    ConfigOverride conv("VKML_CONV", "implicit");
    // The strided 1x1 forward below is counted as implicit.
    ConfigOverride fold("VKML_CONV_FOLD", "0");
    set_profiling(dev().stream(), true);
    kernel_times(dev().stream(), true);
    run_once({2, 3, 20, 70, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, DType::kF32);
    run_once({2, 2, 4, 6, 2, {6, 5}, {3, 2}, {1, 1}, {2, 0}, {2, 1}}, DType::kF32, 64, true);
    run_once({1, 2, 3, 5, 1, {9}, {4}, {1}, {2}, {2}}, DType::kF32);
    run_once({3, 2, 3, 4, 1, {4, 5, 3}, {2, 3, 2}, {1, 1, 1}, {1, 0, 1}, {1, 1, 2}}, DType::kF32);
    auto times = kernel_times(dev().stream(), true);
    EXPECT_EQ(times["conv_igemm_f32"].count, 8u) << "forward and input gradient of 4 geometries";
    EXPECT_EQ(times["conv_igemm_wgrad_f32"].count, 4u);
    EXPECT_EQ(times.count("conv_col2im_f32") + times.count("conv_im2col_rows_u32"), 0u);
    // Stride (2, 1): the input gradient is two phases (even and odd rows), each with its own taps.
    run_once(k2d, DType::kF32);
    times = kernel_times(dev().stream(), true);
    EXPECT_EQ(times["conv_igemm_f32"].count, 3u);
    EXPECT_EQ(times["conv_igemm_wgrad_f32"].count, 1u);
    EXPECT_EQ(times.count("conv_col2im_f32"), 0u);
    // Phases no tap reaches get zeros: a strided 1x1 convolution (3 of 4 phases), and dilation 2
    // with stride 2 and padding 1 in 1-D (the even positions).
    run_once({2, 2, 3, 4, 1, {7, 6}, {1, 1}, {2, 2}, {0, 0}, {1, 1}}, DType::kF32);
    run_once({1, 2, 3, 4, 1, {11}, {3}, {2}, {1}, {2}}, DType::kF32);
    times = kernel_times(dev().stream(), true);
    EXPECT_EQ(times["conv_igemm_f32"].count, 1u + 4u + 1u + 2u);
    EXPECT_EQ(times.count("conv_col2im_f32"), 0u);
    // K = 2 samples x 576 positions: the weight gradient splits K, summed by a second pass.
    run_once({2, 2, 3, 4, 1, {24, 24}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, DType::kF32);
    times = kernel_times(dev().stream(), true);
    EXPECT_EQ(times["conv_igemm_wgrad_f32"].count, 1u);
    EXPECT_EQ(times["gemm_splitk_reduce_f32"].count, 1u);
    // K steps that carry across the tap digits (a 7x7 stem, stride 2) and, in the weight gradient,
    // across samples (2x2 outputs: one K step spans 4 samples).
    run_once({2, 1, 3, 8, 1, {15, 13}, {7, 7}, {2, 2}, {3, 3}, {1, 1}}, DType::kF32);
    run_once({2, 9, 3, 4, 1, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}}, DType::kF32);
    kernel_times(dev().stream(), true);
    for (DType t : {DType::kF16, DType::kBF16}) {  // widened on load, fp32 accumulation
      if (!dev().caps().supports_dtype(t)) continue;
      run_once({2, 2, 4, 6, 2, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, t);
      times = kernel_times(dev().stream(), true);
      const std::string dt(dtype_name(t));
      // The SIMT kernels, or their cooperative-matrix twins where the device has them.
      EXPECT_EQ(times["conv_igemm_" + dt].count + times["conv_igemmc_" + dt].count, 2u) << dt;
      EXPECT_EQ(times["conv_igemm_wgrad_" + dt].count + times["conv_igemmc_wgrad_" + dt].count, 1u)
          << dt;
    }
    set_profiling(dev().stream(), false);
  }
  // The default: implicit for fp32, and everywhere on CPU devices.
  ConvData d(k2d, DType::kF32);
  for (ops::ConvPass pass :
       {ops::ConvPass::kForward, ops::ConvPass::kData, ops::ConvPass::kWeight}) {
    EXPECT_TRUE(ops::conv_implicit_requested(dev(), d.c, pass));
    if (dev().caps().device_class == DeviceClass::kCpu) {
      EXPECT_TRUE(ops::conv_implicit_requested(dev(), make_desc(k2d, DType::kF16), pass));
    }
  }
  expect_refused("VKML_CONV", "im2col-typo");
}

TEST_F(ConvTest, RejectsInconsistentGeometry) {
  ConvDesc c = make_desc(k2d, DType::kF32);
  DeviceBuffer buf(dev(), 1 << 16);
  TensorDesc x = desc(buf.address, DType::kF32, {2, 3, 7, 6});
  TensorDesc w = desc(buf.address, DType::kF32, {4, 3, 3, 2});
  TensorDesc y = desc(buf.address + 8192, DType::kF32, {2, 4, 4, 3});  // wrong out size
  EXPECT_THROW(ops::conv_forward(dev(), c, x, w, nullptr, y), InvalidArgument);
  ConvDesc bad = c;
  bad.groups = 2;
  EXPECT_THROW(ops::validate_conv(bad, dev().caps()), InvalidArgument);
  ConvDesc ints = c;
  ints.dtype = DType::kI32;
  EXPECT_THROW(ops::validate_conv(ints, dev().caps()), NotSupported);
}

// With timestamps, a forward convolution several budgets long runs in batch slices that each stay
// within the budget once the stream has learned the throughput from the same convolution (10 ms).
// On CPU devices (50 ms) it still runs in slices with an exact result, and the longest
// submission is reported.
TEST_F(ConvTest, SubmissionsStayWithinTheBudget) {
  if (!dev().caps().timestamps) GTEST_SKIP() << "no compute timestamps on this device";
  const bool cpu = dev().caps().kind == DeviceKind::kCpu;
  const double budget_ms = cpu ? 50.0 : 10.0;
  SubmitBudgetScope budget(dev().stream(), budget_ms);
  const int64_t ch = cpu ? 16 : 256, side = cpu ? 16 : 56;
  const int64_t per_sample = ch * ch * 9 * side * side;
  auto forward = [&](int64_t n) {
    ConvDesc c = make_desc({2, n, ch, ch, 1, {side, side}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
                           DType::kF32);
    const std::vector<int64_t> xs = {n, ch, side, side}, ws = {ch, ch, 3, 3};
    const uint64_t x_bytes = static_cast<uint64_t>(numel(xs)) * 4, w_bytes = numel(ws) * 4;
    DeviceBuffer x(dev(), x_bytes), w(dev(), w_bytes), y(dev(), x_bytes);
    dev().stream().fill(x.address, x_bytes, 0x3d800000u);  // 2^-4: every sum is exact
    dev().stream().fill(w.address, w_bytes, 0x3d800000u);
    ops::conv_forward(dev(), c, desc(x.address, DType::kF32, xs), desc(w.address, DType::kF32, ws),
                      nullptr, desc(y.address, DType::kF32, xs));
    // Last sample, last channel, an interior position: ch * 9 taps of 2^-8.
    const int64_t at = ((n - 1) * ch + ch - 1) * side * side + side + 1;
    return download<float>(dev(), y.address + static_cast<uint64_t>(at) * 4, 1)[0];
  };
  const int64_t warm = std::max<int64_t>(2, (cpu ? 2e8 : 2e11) / per_sample);
  for (int i = 0; i < 2; ++i) forward(warm);  // learn the throughput
  // On CPU devices a loaded host may leave no submission long enough to learn from; the stream
  // then keeps its starting estimate, which the sizing below follows as well.
  double rate = dev().stream().submission_times().ops_per_ns;
  if (!cpu) ASSERT_GT(rate, 0.0) << "no submission was long enough to learn the throughput from";
  if (rate == 0) rate = 1.0;
  const int64_t n = std::clamp<int64_t>(
      static_cast<int64_t>(6.0 * budget_ms * 1e6 * rate / per_sample), 4, cpu ? 4096 : 256);
  dev().stream().submission_times(/*reset=*/true);
  EXPECT_EQ(forward(n), static_cast<float>(ch * 9) / 256.0f) << "batch " << n;
  const SubmissionTimes t = dev().stream().submission_times();
  EXPECT_GE(t.count, 2u) << "batch " << n;
  // Other processes on a CPU device's cores change a slice's speed after it was sized: there
  // the budget is reported, not asserted.
  if (!cpu) EXPECT_LE(t.max_ms, budget_ms)
      << "batch " << n << " submissions=" << t.count << " learned ops/ns=" << rate;
  std::printf("[ budget ] conv %lldx%lld 3x3 @%lld batch %lld: %llu submissions, longest %.2f ms "
              "of %.0f\n",
              static_cast<long long>(ch), static_cast<long long>(ch), static_cast<long long>(side),
              static_cast<long long>(n), static_cast<unsigned long long>(t.count), t.max_ms,
              budget_ms);
}

}  // namespace vkml::testing
