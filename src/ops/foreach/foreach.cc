// The foreach family: _foreach_* elementwise ops and norms over lists of tensors, batched per
// dtype into dispatches of up to VKML_FOREACH_MAX_TENSORS groups.
#include "vkml/foreach.h"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "ops/foreach/foreach_params.h"
#include "ops/launch.h"
#include "ops/nn_util.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

constexpr DType kDtypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64};

int inputs_of(ForeachOp op, bool scalar_operand) {
  switch (op) {
    case ForeachOp::kAdd:
    case ForeachOp::kMul:
    case ForeachOp::kDiv:
    case ForeachOp::kMaximum:
    case ForeachOp::kMinimum:
      return scalar_operand ? 1 : 2;
    case ForeachOp::kLerp:
      return 2;
    case ForeachOp::kAddcmul:
    case ForeachOp::kAddcdiv:
      return 3;
    case ForeachOp::kSqrt:
    case ForeachOp::kNeg:
    case ForeachOp::kCopy:
      return 1;
    case ForeachOp::kFill:
      return 0;
  }
  throw InvalidArgument("vkml: unknown foreach op");
}

void check_tensor(Device& dev, const TensorDesc& t, const TensorDesc& like, const char* what) {
  if (!foreach_supports(dev, t.dtype)) {
    throw InvalidArgument(std::string("vkml: foreach ops need f32/f16/bf16/f64 tensors the "
                                      "device supports, got ") +
                          std::string(dtype_name(t.dtype)));
  }
  if (t.dtype != like.dtype || t.numel() != like.numel() || !t.is_contiguous()) {
    throw InvalidArgument(std::string("vkml: foreach ") + what +
                          " must be contiguous, with its group's dtype and numel");
  }
}

uint32_t scalar_dtype_code(const TensorDesc& t, DType group) {
  if (t.numel() != 1) throw InvalidArgument("vkml: foreach scalar tensor must have one element");
  switch (t.dtype) {
    case DType::kF32:
      return VKML_FOREACH_SCALAR_F32;
    case DType::kF16:
      return VKML_FOREACH_SCALAR_F16;
    case DType::kBF16:
      return VKML_FOREACH_SCALAR_BF16;
    case DType::kF64:
      if (group == DType::kF64) return VKML_FOREACH_SCALAR_F64;
      break;
    default:
      break;
  }
  throw InvalidArgument("vkml: foreach scalar tensor must be f32/f16/bf16 (f64 with f64 groups)");
}

void record(Device& dev, const ForeachConfig& c, const ForeachParams& base,
            std::span<const ForeachGroup* const> batch, int inputs) {
  ForeachParams prm = base;
  std::vector<MemRange> reads, writes;
  if (c.scalar_tensor) {
    prm.scalar_dtype = scalar_dtype_code(*c.scalar_tensor, batch.front()->out.dtype);
    reads.push_back({c.scalar_tensor->address, dtype_size(c.scalar_tensor->dtype)});
  }
  for (const ForeachGroup* g : batch) {
    ForeachTensor& e = prm.tensors[prm.count++];
    const uint64_t bytes = g->out.numel() * dtype_size(g->out.dtype);
    e.dst = g->out.address;
    for (int k = 0; k < inputs; ++k) {
      e.src[k] = g->in[k].address;
      reads.push_back({e.src[k], bytes});
    }
    e.start = prm.total;
    e.scalar = static_cast<float>(g->scalar);
    e.scalar_f64 = std::bit_cast<uint64_t>(g->scalar);
    prm.total += g->out.numel();
    writes.push_back({e.dst, bytes});
  }
  uint32_t spec[] = {kElementwiseWorkgroup};
  const Pipeline& pipe =
      dev.pipeline("foreach_" + std::string(dtype_name(batch.front()->out.dtype)), spec);
  uint64_t bytes = offsetof(ForeachParams, tensors) + prm.count * sizeof(ForeachTensor);
  uint64_t addr = dev.stream().params(&prm, bytes);
  int64_t groups = (prm.total + kElementwiseWorkgroup - 1) / kElementwiseWorkgroup;
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, kMaxGroupsX));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), reads, writes);
}

void record_norm(Device& dev, ForeachNorm norm, DType dtype,
                 const std::vector<std::pair<const TensorDesc*, const TensorDesc*>>& batch) {
  ForeachNormParams prm{};
  prm.norm = static_cast<uint32_t>(norm);
  std::vector<MemRange> reads, writes;
  for (const auto& [in, out] : batch) {
    ForeachNormTensor& e = prm.tensors[prm.count++];
    e.src = in->address;
    e.dst = out->address;
    e.numel = in->numel();
    e.first_chunk = prm.chunks;
    prm.chunks += (e.numel + VKML_FOREACH_NORM_CHUNK - 1) / VKML_FOREACH_NORM_CHUNK;
    if (e.numel) reads.push_back({e.src, e.numel * dtype_size(dtype)});
    writes.push_back({e.dst, dtype_size(dtype)});
  }
  const uint64_t partial_bytes = dtype == DType::kF64 ? 8 : 4;
  nn::Scratch partials(dev, std::max<int64_t>(prm.chunks, 1) * partial_bytes);
  prm.partials = partials.address();
  const MemRange scratch{prm.partials, std::max<int64_t>(prm.chunks, 1) * partial_bytes};
  const std::string dt(dtype_name(dtype));
  uint64_t bytes = offsetof(ForeachNormParams, tensors) + prm.count * sizeof(ForeachNormTensor);
  if (prm.chunks > 0) {
    uint64_t addr = dev.stream().params(&prm, bytes);
    uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(prm.chunks, kMaxGroupsX));
    std::vector<MemRange> w{scratch};
    dev.stream().dispatch(dev.pipeline("foreach_norm_partial_" + dt), gx, 1, 1, &addr,
                          sizeof(addr), reads, w, prm.chunks * VKML_FOREACH_NORM_CHUNK);
  }
  uint64_t addr = dev.stream().params(&prm, bytes);
  std::vector<MemRange> r{scratch};
  dev.stream().dispatch(dev.pipeline("foreach_norm_finish_" + dt), prm.count, 1, 1, &addr,
                        sizeof(addr), r, writes);
}

}  // namespace

bool foreach_supports(Device& dev, DType dtype) {
  return std::find(std::begin(kDtypes), std::end(kDtypes), dtype) != std::end(kDtypes) &&
         dev.caps().supports_dtype(dtype);
}

void foreach_apply(Device& dev, const ForeachConfig& c, std::span<const ForeachGroup> groups) {
  const int inputs = inputs_of(c.op, c.scalar_operand);
  for (const ForeachGroup& g : groups) {
    if (g.inputs != inputs) {
      throw InvalidArgument("vkml: foreach op expects " + std::to_string(inputs) +
                            " inputs per group");
    }
    check_tensor(dev, g.out, g.out, "output");
    for (int k = 0; k < inputs; ++k) check_tensor(dev, g.in[k], g.out, "input");
  }
  ForeachParams base{};
  base.scalar_tensor = c.scalar_tensor ? c.scalar_tensor->address : 0;
  base.op = static_cast<uint32_t>(c.op);
  base.flags = c.scalar_operand ? VKML_FOREACH_FLAG_SCALAR_OPERAND : 0u;
  base.alpha = static_cast<float>(c.alpha);
  base.alpha_f64 = std::bit_cast<uint64_t>(c.alpha);
  for (DType dtype : kDtypes) {
    std::vector<const ForeachGroup*> batch;
    for (const ForeachGroup& g : groups) {
      if (g.out.dtype != dtype || g.out.numel() == 0) continue;
      batch.push_back(&g);
      if (batch.size() == VKML_FOREACH_MAX_TENSORS) {
        record(dev, c, base, batch, inputs);
        batch.clear();
      }
    }
    if (!batch.empty()) record(dev, c, base, batch, inputs);
  }
}

void foreach_norm(Device& dev, ForeachNorm norm, std::span<const TensorDesc> in,
                  std::span<const TensorDesc> out) {
  if (in.size() != out.size()) {
    throw InvalidArgument("vkml: foreach_norm needs one output per input");
  }
  if (static_cast<uint32_t>(norm) > VKML_FOREACH_NORM_INF) {
    throw InvalidArgument("vkml: unknown foreach norm");
  }
  for (size_t i = 0; i < in.size(); ++i) {
    check_tensor(dev, in[i], in[i], "input");
    if (out[i].dtype != in[i].dtype || out[i].numel() != 1) {
      throw InvalidArgument("vkml: foreach_norm outputs are one element of the input's dtype");
    }
  }
  for (DType dtype : kDtypes) {
    std::vector<std::pair<const TensorDesc*, const TensorDesc*>> batch;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].dtype != dtype) continue;
      batch.emplace_back(&in[i], &out[i]);
      if (batch.size() == VKML_FOREACH_MAX_TENSORS) {
        record_norm(dev, norm, dtype, batch);
        batch.clear();
      }
    }
    if (!batch.empty()) record_norm(dev, norm, dtype, batch);
  }
}

}  // namespace vkml::ops
