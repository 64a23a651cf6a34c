// Optim family (fused optimizer steps) against a float64 host reference of PyTorch's fused math:
// Adam/AdamW/SGD/Adagrad over lists of parameters of several dtypes and layouts, GradScaler's
// grad_scale and found_inf, device learning rates, large step counts, and bad arguments.
#include <cmath>
#include <memory>

#include "float_buffers.h"
#include "test_util.h"
#include "vkml/errors.h"
#include "vkml/optim.h"

namespace vkml::testing {

namespace {

// A parameter with its grad and `states` state tensors, in one allocation, with host copies.
struct HostParam {
  DType dtype;
  std::vector<int64_t> sizes, strides;
  size_t n;
  std::vector<HostFloats> host;  // param, grad, states...
  std::unique_ptr<DeviceBuffer> mem;
  float step;

  HostParam(Device& dev, DType t, std::vector<int64_t> sz, std::vector<int64_t> st, int states,
            float step_count, uint32_t seed)
      : dtype(t), sizes(sz), strides(st), step(step_count) {
    n = 1;
    for (int64_t s : sizes) n *= static_cast<size_t>(s);
    mem = std::make_unique<DeviceBuffer>(dev, (2 + states) * bytes() + 4);
    for (int r = 0; r < 2 + states; ++r) {
      host.emplace_back(t, n);
      host.back().randomize(seed + r);
      if (r >= 2) {  // states are non-negative where it matters (exp_avg_sq, sums)
        for (size_t i = 0; i < n; ++i) host.back().set(i, std::fabs(host.back().get(i)));
      }
      host.back().upload(dev, address(r));
    }
    dev.stream().upload(&step, step_address(), 4);
  }
  // Each role 16-byte aligned (the step is read as a float: misaligned floats fail on NVIDIA).
  size_t bytes() const { return (std::max<size_t>(n, 1) * dtype_size(dtype) + 15) / 16 * 16; }
  uint64_t address(int role) const { return mem->address + role * bytes(); }
  uint64_t step_address() const { return mem->address + host.size() * bytes(); }
  ops::FusedOptimizerParam desc_all() const {
    ops::FusedOptimizerParam p;
    p.param = desc(address(0), dtype, sizes, strides);
    p.grad = desc(address(1), dtype, sizes, strides);
    for (size_t r = 2; r < host.size(); ++r)
      p.state.push_back(desc(address(r), dtype, sizes, strides));
    p.step = desc(step_address(), DType::kF32, {});
    return p;
  }
};

// PyTorch's fused update of element i in double; returns the new values of every role.
std::vector<double> reference(const ops::FusedOptimizerConfig& c, const HostParam& hp, size_t i,
                              double grad_scale, double lr) {
  std::vector<double> v;
  for (const HostFloats& h : hp.host) v.push_back(h.get(i));
  double& param = v[0];
  double grad = v[1] / grad_scale;
  v[1] = grad;
  if (c.maximize) grad = -grad;
  if (c.kind == ops::FusedOptimizer::kAdam) {
    if (c.weight_decay != 0) {
      if (c.adamw)
        param -= lr * c.weight_decay * param;
      else
        grad += param * c.weight_decay;
    }
    v[2] = c.beta1 * v[2] + (1 - c.beta1) * grad;
    v[3] = c.beta2 * v[3] + (1 - c.beta2) * grad * grad;
    double second = v[3];
    if (c.amsgrad) second = v[4] = std::max(v[4], v[3]);
    double bc1 = 1 - std::pow(c.beta1, hp.step), bc2 = 1 - std::pow(c.beta2, hp.step);
    param -= lr / bc1 * v[2] / (std::sqrt(second) / std::sqrt(bc2) + c.eps);
  } else if (c.kind == ops::FusedOptimizer::kSgd) {
    if (c.weight_decay != 0) grad += c.weight_decay * param;
    if (c.momentum != 0) {
      v[2] = c.first_step ? grad : c.momentum * v[2] + (1 - c.dampening) * grad;
      grad = c.nesterov ? grad + c.momentum * v[2] : v[2];
    }
    param -= lr * grad;
  } else {
    if (c.weight_decay != 0) grad += param * c.weight_decay;
    double clr = lr / (1 + (hp.step - 1) * c.lr_decay);
    v[2] += grad * grad;
    param -= clr * grad / (std::sqrt(v[2]) + c.eps);
  }
  return v;
}

double tolerance(DType t) {
  return t == DType::kF64 ? 1e-12 : t == DType::kF32 ? 2e-6 : t == DType::kF16 ? 2e-3 : 1.6e-2;
}

}  // namespace

class OptimTest : public DeviceTest {
 protected:
  // Runs one step over `params` and checks every role of every element against the reference.
  void check_step(const ops::FusedOptimizerConfig& c, std::vector<HostParam*> params,
                  double grad_scale = 1.0, double lr = -1.0) {
    std::vector<ops::FusedOptimizerParam> list;
    for (HostParam* p : params) list.push_back(p->desc_all());
    ops::fused_optimizer_step(dev(), c, list);
    for (HostParam* p : params) {
      for (size_t r = 0; r < p->host.size(); ++r) {
        HostFloats got(p->dtype, p->n);
        got.download(dev(), p->address(r));
        for (size_t i = 0; i < p->n; ++i) {
          double want = reference(c, *p, i, grad_scale, lr < 0 ? c.lr : lr)[r];
          double tol = tolerance(p->dtype) * std::max(1.0, std::fabs(want));
          ASSERT_NEAR(got.get(i), want, tol) << dtype_name(p->dtype) << " role " << r << " i " << i;
        }
      }
    }
  }
};

TEST_F(OptimTest, AdamOverManyParamsDtypesAndLayouts) {
  ops::FusedOptimizerConfig c;
  c.lr = 0.05;
  c.weight_decay = 0.1;
  c.amsgrad = true;
  std::vector<std::unique_ptr<HostParam>> owned;
  std::vector<HostParam*> params;
  for (int i = 0; i < 70; ++i) {  // more than one dispatch holds
    owned.push_back(std::make_unique<HostParam>(dev(), DType::kF32, std::vector<int64_t>{3 + i % 4},
                                                std::vector<int64_t>{1}, 3, 1.0f + i, 10 * i));
  }
  // A transposed (dense, permuted) bf16 matrix, an f16 one, and an empty parameter.
  owned.push_back(std::make_unique<HostParam>(dev(), DType::kBF16, std::vector<int64_t>{5, 7},
                                              std::vector<int64_t>{1, 5}, 3, 4.0f, 900));
  owned.push_back(std::make_unique<HostParam>(dev(), DType::kF16, std::vector<int64_t>{33},
                                              std::vector<int64_t>{1}, 3, 2.0f, 910));
  owned.push_back(std::make_unique<HostParam>(dev(), DType::kF32, std::vector<int64_t>{0, 4},
                                              std::vector<int64_t>{4, 1}, 3, 1.0f, 920));
  for (auto& p : owned) params.push_back(p.get());
  check_step(c, params);
  c.adamw = true;
  c.amsgrad = false;
  c.maximize = true;
  HostParam plain(dev(), DType::kF32, {6, 5}, {5, 1}, 2, 3.0f, 930);
  check_step(c, {&plain});
}

TEST_F(OptimTest, AdamBiasCorrectionStaysAccurateAtLargeSteps) {
  // 1 - 0.999^step cancels badly in float (1e-5 relative error at step 1000); the kernel must
  // match the double result anyway. Parameters start at 0 so the result is the update itself.
  ops::FusedOptimizerConfig c;
  c.lr = 0.1;
  for (float step : {2.0f, 37.0f, 1000.0f, 123457.0f}) {
    HostParam p(dev(), DType::kF32, {257}, {1}, 2, step, 42);
    for (size_t i = 0; i < p.n; ++i) p.host[0].set(i, 0.0);
    p.host[0].upload(dev(), p.address(0));
    ops::FusedOptimizerParam d = p.desc_all();
    ops::fused_optimizer_step(dev(), c, {&d, 1});
    HostFloats got(DType::kF32, p.n);
    got.download(dev(), p.address(0));
    for (size_t i = 0; i < p.n; ++i) {
      double want = reference(c, p, i, 1.0, c.lr)[0];
      ASSERT_NEAR(got.get(i), want, 1e-6 * std::fabs(want)) << "step " << step << " i " << i;
    }
  }
}

TEST_F(OptimTest, DoubleParamsWhereSupported) {
  if (!dev().caps().supports_dtype(DType::kF64)) GTEST_SKIP() << "no fp64 on this device";
  ops::FusedOptimizerConfig c;
  c.lr = 0.05;
  HostParam p(dev(), DType::kF64, {4, 9}, {9, 1}, 2, 5.0f, 7);
  check_step(c, {&p});
}

TEST_F(OptimTest, SgdMomentumNesterovAndPlain) {
  ops::FusedOptimizerConfig c;
  c.kind = ops::FusedOptimizer::kSgd;
  c.lr = 0.1;
  c.momentum = 0.9;
  c.dampening = 0.2;
  c.weight_decay = 0.01;
  HostParam a(dev(), DType::kF32, {4, 6}, {6, 1}, 1, 0.0f, 3);
  check_step(c, {&a});
  c.first_step = true;
  c.nesterov = true;
  c.dampening = 0.0;
  HostParam b(dev(), DType::kBF16, {40}, {1}, 1, 0.0f, 4);
  check_step(c, {&b});
  c = {};
  c.kind = ops::FusedOptimizer::kSgd;
  c.lr = 0.3;
  c.maximize = true;
  HostParam d(dev(), DType::kF16, {3, 11}, {1, 3}, 0, 0.0f, 5);
  check_step(c, {&d});
}

TEST_F(OptimTest, Adagrad) {
  ops::FusedOptimizerConfig c;
  c.kind = ops::FusedOptimizer::kAdagrad;
  c.lr = 0.1;
  c.lr_decay = 0.05;
  c.weight_decay = 0.1;
  c.eps = 1e-10;
  HostParam a(dev(), DType::kF32, {50}, {1}, 1, 3.0f, 6);
  HostParam b(dev(), DType::kBF16, {2, 8}, {8, 1}, 1, 7.0f, 8);
  check_step(c, {&a, &b});
}

TEST_F(OptimTest, GradScaleFoundInfAndDeviceLearningRate) {
  DeviceBuffer scalars(dev(), 12);
  float values[3] = {256.0f, 0.0f, 0.02f};  // grad_scale, found_inf, lr
  dev().stream().upload(values, scalars.address, 12);
  TensorDesc scale = desc(scalars.address, DType::kF32, {});
  TensorDesc inf = desc(scalars.address + 4, DType::kF32, {1});
  TensorDesc lr = desc(scalars.address + 8, DType::kF32, {});
  ops::FusedOptimizerConfig c;
  c.lr = 123.0;  // ignored: the device tensor wins
  c.grad_scale = &scale;
  c.found_inf = &inf;
  c.lr_tensor = &lr;
  HostParam p(dev(), DType::kF32, {64}, {1}, 2, 2.0f, 11);
  check_step(c, {&p}, 256.0, 0.02);  // grads come back unscaled
  // found_inf set: nothing at all changes, not even the grads.
  float one = 1.0f;
  dev().stream().upload(&one, inf.address, 4);
  for (size_t r = 0; r < p.host.size(); ++r) p.host[r].download(dev(), p.address(r));
  ops::FusedOptimizerParam d = p.desc_all();
  ops::fused_optimizer_step(dev(), c, {&d, 1});
  for (size_t r = 0; r < p.host.size(); ++r) {
    HostFloats got(DType::kF32, p.n);
    got.download(dev(), p.address(r));
    EXPECT_EQ(got.bytes, p.host[r].bytes) << "role " << r;
  }
}

TEST_F(OptimTest, RejectsBadArguments) {
  ops::FusedOptimizerConfig c;
  HostParam p(dev(), DType::kF32, {4, 4}, {4, 1}, 2, 1.0f, 12);
  ops::FusedOptimizerParam d = p.desc_all();
  d.state.pop_back();  // Adam needs two states
  EXPECT_THROW(ops::fused_optimizer_step(dev(), c, {&d, 1}), InvalidArgument);
  d = p.desc_all();
  d.grad.strides = {1, 4};  // grad laid out unlike the param
  EXPECT_THROW(ops::fused_optimizer_step(dev(), c, {&d, 1}), InvalidArgument);
  d = p.desc_all();
  d.param.strides = {8, 1};  // not dense
  EXPECT_THROW(ops::fused_optimizer_step(dev(), c, {&d, 1}), InvalidArgument);
  d = p.desc_all();
  d.step.dtype = DType::kI32;
  EXPECT_THROW(ops::fused_optimizer_step(dev(), c, {&d, 1}), InvalidArgument);
  d = p.desc_all();
  for (TensorDesc* t : {&d.param, &d.grad, &d.state[0], &d.state[1]}) t->dtype = DType::kI32;
  EXPECT_THROW(ops::fused_optimizer_step(dev(), c, {&d, 1}), InvalidArgument);
}

}  // namespace vkml::testing
