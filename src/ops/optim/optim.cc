// The optim family: fused optimizer steps over lists of parameters, batched per dtype.
#include "vkml/optim.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>

#include "ops/launch.h"
#include "ops/optim/optim_params.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

const char* kind_name(FusedOptimizer kind) {
  switch (kind) {
    case FusedOptimizer::kAdam:
      return "adam";
    case FusedOptimizer::kSgd:
      return "sgd";
    case FusedOptimizer::kAdagrad:
      return "adagrad";
  }
  throw InvalidArgument("vkml: unknown fused optimizer");
}

void check_one_f32(const TensorDesc* t, const char* what) {
  if (t && (t->numel() != 1 || t->dtype != DType::kF32)) {
    throw InvalidArgument(std::string("vkml: fused optimizer ") + what +
                          " must be a one-element f32 tensor");
  }
}

// Elements fill [address, address + numel) exactly: strides, sorted, are the running products
// of the sizes (size-1 dims do not count).
bool is_dense(const TensorDesc& t) {
  std::vector<int> order(t.sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return t.strides[a] < t.strides[b]; });
  int64_t expected = 1;
  for (int d : order) {
    if (t.sizes[d] == 1) continue;
    if (t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

size_t expected_states(const FusedOptimizerConfig& c) {
  switch (c.kind) {
    case FusedOptimizer::kAdam:
      return c.amsgrad ? 3 : 2;
    case FusedOptimizer::kSgd:
      return c.momentum != 0.0 ? 1 : 0;
    case FusedOptimizer::kAdagrad:
      return 1;
  }
  return 0;
}

void validate(Device& dev, const FusedOptimizerConfig& c, const FusedOptimizerParam& p) {
  const DType t = p.param.dtype;
  if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16 && t != DType::kF64) {
    throw InvalidArgument("vkml: fused optimizers update floating-point parameters only, got " +
                          std::string(dtype_name(t)));
  }
  if (!dev.caps().supports_dtype(t)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                       std::string(dtype_name(t)) + " tensors");
  }
  if (p.state.size() != expected_states(c)) {
    throw InvalidArgument(std::string("vkml: fused ") + kind_name(c.kind) + " expects " +
                          std::to_string(expected_states(c)) + " state tensors per parameter");
  }
  if (!is_dense(p.param)) {
    throw InvalidArgument("vkml: fused optimizers need dense, non-overlapping parameters");
  }
  auto same_layout = [&](const TensorDesc& o) {
    return o.dtype == t && o.sizes == p.param.sizes && o.strides == p.param.strides;
  };
  if (!same_layout(p.grad) || !std::all_of(p.state.begin(), p.state.end(), same_layout)) {
    throw InvalidArgument(
        "vkml: a parameter's gradient and state must have its dtype, sizes and strides");
  }
  if (c.kind != FusedOptimizer::kSgd) check_one_f32(&p.step, "step");
}

void record(Device& dev, const FusedOptimizerConfig& c, const OptimParams& base,
            std::span<const FusedOptimizerParam* const> batch) {
  OptimParams prm = base;
  std::vector<MemRange> reads, writes;
  for (const TensorDesc* t : {c.lr_tensor, c.grad_scale, c.found_inf}) {
    if (t) reads.push_back({t->address, 4});
  }
  for (const FusedOptimizerParam* p : batch) {
    OptimTensor& e = prm.tensors[prm.count++];
    uint64_t bytes = p->param.numel() * dtype_size(p->param.dtype);
    e.param = p->param.address;
    e.grad = p->grad.address;
    for (size_t s = 0; s < p->state.size(); ++s) e.state[s] = p->state[s].address;
    e.step = c.kind == FusedOptimizer::kSgd ? 0 : p->step.address;
    e.start = prm.total;
    prm.total += p->param.numel();
    reads.push_back({e.param, bytes});
    writes.push_back({e.param, bytes});
    reads.push_back({e.grad, bytes});
    if (c.grad_scale) writes.push_back({e.grad, bytes});
    for (size_t s = 0; s < p->state.size(); ++s) {
      reads.push_back({e.state[s], bytes});
      writes.push_back({e.state[s], bytes});
    }
    if (e.step) reads.push_back({e.step, 4});
  }
  uint32_t spec[] = {kElementwiseWorkgroup};
  const Pipeline& pipe = dev.pipeline("fused_" + std::string(kind_name(c.kind)) + "_" +
                                          std::string(dtype_name(batch.front()->param.dtype)),
                                      spec);
  uint64_t bytes = offsetof(OptimParams, tensors) + prm.count * sizeof(OptimTensor);
  uint64_t addr = dev.stream().params(&prm, bytes);
  int64_t groups = (prm.total + kElementwiseWorkgroup - 1) / kElementwiseWorkgroup;
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, kMaxGroupsX));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), reads, writes);
}

}  // namespace

void fused_optimizer_step(Device& dev, const FusedOptimizerConfig& c,
                          std::span<const FusedOptimizerParam> params) {
  kind_name(c.kind);  // throws on an unknown kind
  check_one_f32(c.lr_tensor, "lr");
  check_one_f32(c.grad_scale, "grad_scale");
  check_one_f32(c.found_inf, "found_inf");
  for (const FusedOptimizerParam& p : params) validate(dev, c, p);

  OptimParams base{};
  base.lr_tensor = c.lr_tensor ? c.lr_tensor->address : 0;
  base.grad_scale = c.grad_scale ? c.grad_scale->address : 0;
  base.found_inf = c.found_inf ? c.found_inf->address : 0;
  const bool sgd = c.kind == FusedOptimizer::kSgd;
  double hyper[VKML_OPTIM_NUM_HYPER] = {};
  hyper[VKML_OPTIM_LR] = c.lr;
  hyper[VKML_OPTIM_BETA1] = sgd ? c.momentum : c.beta1;
  hyper[VKML_OPTIM_BETA2] = c.kind == FusedOptimizer::kAdagrad ? c.lr_decay : c.beta2;
  hyper[VKML_OPTIM_WEIGHT_DECAY] = c.weight_decay;
  hyper[VKML_OPTIM_EPS] = c.eps;
  hyper[VKML_OPTIM_ONE_MINUS_BETA1] = 1.0 - (sgd ? c.dampening : c.beta1);
  hyper[VKML_OPTIM_ONE_MINUS_BETA2] = 1.0 - c.beta2;
  for (int i = 0; i < VKML_OPTIM_NUM_HYPER; ++i) {
    base.hyper[i] = static_cast<float>(hyper[i]);
    base.hyper_f64[i] = std::bit_cast<uint64_t>(hyper[i]);
  }
  base.log_beta1 = static_cast<float>(std::log(c.beta1));
  base.log_beta2 = static_cast<float>(std::log(c.beta2));
  base.flags = (c.adamw ? VKML_OPTIM_FLAG_ADAMW : 0u) | (c.amsgrad ? VKML_OPTIM_FLAG_AMSGRAD : 0u) |
               (c.maximize ? VKML_OPTIM_FLAG_MAXIMIZE : 0u) |
               (c.nesterov ? VKML_OPTIM_FLAG_NESTEROV : 0u) |
               (c.first_step ? VKML_OPTIM_FLAG_FIRST_STEP : 0u) |
               (sgd && c.momentum != 0.0 ? VKML_OPTIM_FLAG_MOMENTUM : 0u);

  // One shader variant per dtype; batches keep the parameters' order.
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    std::vector<const FusedOptimizerParam*> batch;
    for (const FusedOptimizerParam& p : params) {
      if (p.param.dtype != dtype || p.param.numel() == 0) continue;
      batch.push_back(&p);
      if (batch.size() == VKML_OPTIM_MAX_TENSORS) {
        record(dev, c, base, batch);
        batch.clear();
      }
    }
    if (!batch.empty()) record(dev, c, base, batch);
  }
}

}  // namespace vkml::ops
