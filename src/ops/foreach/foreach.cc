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

// Collects pieces of groups of one dtype into dispatches of at most VKML_FOREACH_MAX_TENSORS
// pieces and VKML_FOREACH_MAX_CHUNKS chunks.
class Batcher {
 public:
  Batcher(Device& dev, const ForeachConfig& c, const ForeachParams& base, int inputs)
      : dev_(dev), c_(c), base_(base), inputs_(inputs), prm_(base) {}

  void add(const ForeachGroup& g) {
    const int64_t n = g.out.numel(), esize = static_cast<int64_t>(dtype_size(g.out.dtype));
    constexpr int64_t kPiece = int64_t{VKML_FOREACH_MAX_CHUNKS} * VKML_FOREACH_CHUNK;
    for (int64_t off = 0; off < n; off += kPiece) {
      const int64_t len = std::min(kPiece, n - off);
      const auto chunks =
          static_cast<uint32_t>((len + VKML_FOREACH_CHUNK - 1) / VKML_FOREACH_CHUNK);
      if (prm_.count == VKML_FOREACH_MAX_TENSORS ||
          prm_.chunks + chunks > VKML_FOREACH_MAX_CHUNKS) {
        flush();
      }
      if (prm_.count == 0) dtype_ = g.out.dtype;
      const uint64_t byte_off = static_cast<uint64_t>(off * esize), bytes = len * esize;
      ForeachTensor& e = prm_.tensors[prm_.count];
      e.dst = g.out.address + byte_off;
      writes_.push_back({e.dst, bytes});
      for (int k = 0; k < inputs_; ++k) {
        e.src[k] = g.in[k].address + byte_off;
        reads_.push_back({e.src[k], bytes});
      }
      e.numel = len;
      e.scalar = static_cast<float>(g.scalar);
      e.scalar_f64 = std::bit_cast<uint64_t>(g.scalar);
      for (uint32_t k = 0; k < chunks; ++k) prm_.chunk[prm_.chunks++] = prm_.count | (k << 8);
      ++prm_.count;
    }
  }

  void flush() {
    if (prm_.count == 0) return;
    if (c_.scalar_tensor) {
      prm_.scalar_dtype = scalar_dtype_code(*c_.scalar_tensor, dtype_);
      reads_.push_back({c_.scalar_tensor->address, dtype_size(c_.scalar_tensor->dtype)});
    }
    uint32_t spec[] = {kElementwiseWorkgroup, static_cast<uint32_t>(c_.op)};
    const Pipeline& pipe = dev_.pipeline("foreach_" + std::string(dtype_name(dtype_)), spec);
    const uint64_t bytes = offsetof(ForeachParams, chunk) + prm_.chunks * sizeof(uint32_t);
    const uint64_t addr = dev_.stream().params(&prm_, bytes);
    const uint64_t cost = uint64_t{prm_.chunks} * VKML_FOREACH_CHUNK;
    dev_.stream().dispatch(pipe, prm_.chunks, 1, 1, &addr, sizeof(addr), reads_, writes_, cost);
    prm_ = base_;
    reads_.clear();
    writes_.clear();
  }

 private:
  Device& dev_;
  const ForeachConfig& c_;
  const ForeachParams& base_;
  const int inputs_;
  ForeachParams prm_;
  DType dtype_ = DType::kF32;
  std::vector<MemRange> reads_, writes_;
};

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
  static_assert((uint64_t{VKML_FOREACH_MAX_CHUNKS} << 8) <= (uint64_t{1} << 32));
  ForeachParams base{};
  base.scalar_tensor = c.scalar_tensor ? c.scalar_tensor->address : 0;
  base.flags = c.scalar_operand ? VKML_FOREACH_FLAG_SCALAR_OPERAND : 0u;
  base.alpha = static_cast<float>(c.alpha);
  base.alpha_f64 = std::bit_cast<uint64_t>(c.alpha);
  for (DType dtype : kDtypes) {  // one shader variant per dtype; groups keep their order
    Batcher batch(dev, c, base, inputs);
    for (const ForeachGroup& g : groups) {
      if (g.out.dtype == dtype) batch.add(g);
    }
    batch.flush();
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
