// Multi-tensor elementwise ops (PyTorch's _foreach_*, the optimizers' default path): one dispatch
// applies one op to a list of tensor groups, as CUDA's multi_tensor_apply does, instead of one
// dispatch per tensor.
#pragma once
#include <cstdint>
#include <span>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

enum class ForeachOp : uint32_t {
  kAdd = 0,      // x + alpha * y
  kMul = 1,      // x * y
  kDiv = 2,      // x / y, correctly rounded
  kMaximum = 3,  // NaN-propagating
  kMinimum = 4,
  kLerp = 5,     // lerp(x, input 1, scalar)
  kAddcmul = 6,  // x + scalar * input 1 * input 2
  kAddcdiv = 7,  // x + scalar * input 1 / input 2
  kSqrt = 8,
  kNeg = 9,
  kCopy = 10,  // input 0
  kFill = 11,  // scalar
};

// The operands shared by every group of one call. y (the second operand of kAdd..kMinimum) is
// input 1 unless scalar_operand is set; then it is the group's scalar, or *scalar_tensor (a
// one-element f32/f16/bf16 tensor, or f64 for f64 groups, read on the device) when given.
struct ForeachConfig {
  ForeachOp op = ForeachOp::kAdd;
  double alpha = 1.0;
  bool scalar_operand = false;
  const TensorDesc* scalar_tensor = nullptr;
};

// One group: `out` and the inputs the op reads (input 0 is self; others as the op needs) are
// contiguous, of one float dtype (f32, f16, bf16, or f64 where caps allow) and one numel.
// `out` may be input 0 (in-place). Groups may mix dtypes (one dispatch per dtype).
struct ForeachGroup {
  TensorDesc out;
  TensorDesc in[3];
  int inputs = 1;
  double scalar = 0.0;
};

// True when foreach ops run on `dtype` tensors of this device.
bool foreach_supports(Device& dev, DType dtype);

// Applies config.op to every group: out = op(in...) in the op math type (float for
// f32/f16/bf16, double for f64), rounded once on store.
void foreach_apply(Device& dev, const ForeachConfig& config, std::span<const ForeachGroup> groups);

// Vector norms of whole tensors: out[i] (0-dim, the input's dtype) = ||in[i]||_ord for ord 1,
// 2 or infinity (ord_inf). Deterministic: partials per chunk, reduced in order.
enum class ForeachNorm : uint32_t { kL1 = 0, kL2 = 1, kInf = 2 };
void foreach_norm(Device& dev, ForeachNorm norm, std::span<const TensorDesc> in,
                  std::span<const TensorDesc> out);

}  // namespace vkml::ops
