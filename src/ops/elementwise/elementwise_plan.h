// Planning of one elementwise dispatch: validation, dimension coalescing, shader variant and mode.
// A pure function of the descriptors, so tests can check variant choice without a GPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ops/elementwise/elementwise_params.h"
#include "vkml/elementwise.h"

namespace vkml::ops {

enum class EwKind { kBinary, kUnary };

// An operand: a tensor, or (tensor == nullptr) a scalar broadcast to every element.
struct EwOperand {
  const TensorDesc* tensor = nullptr;
  Scalar scalar;
};

struct ElementwisePlan {
  std::string shader;  // "ew_binary_f32", ...
  uint32_t op = 0;     // the row id in elementwise_ops.def (specialization constant 1)
  uint32_t mode = 0;   // VKML_EW_* bits (specialization constant 2)
  DType compute = DType::kF32;
  int64_t numel = 0;
  ElementwiseParams params{};
  std::vector<MemRange> reads, writes;
};

// Validates shapes and dtypes (InvalidArgument; NotSupported above VKML_EW_MAX_DIMS coalesced
// dims) and fills the plan for row `op` of the table. Unary ops pass their input as `a`; binary
// ops may pass a third tensor `c` (never a scalar).
ElementwisePlan plan_elementwise(EwKind kind, uint32_t op, const ElementwiseOpInfo& info,
                                 const TensorDesc& out, const EwOperand& a, const EwOperand& b,
                                 Scalar alpha, const TensorDesc* c = nullptr,
                                 Scalar beta = Scalar::from_double(0.0),
                                 Scalar gamma = Scalar::from_double(0.0));

// `value` as the shaders decode it for compute dtype t: f32 bits for f32/f16/bf16 (opmath),
// f64 bits, or int64 (bool as 0/1; floats truncate toward zero, saturating).
uint64_t encode_scalar(DType t, Scalar value);

// Elements per 16-byte vector of the VEC mode for compute dtype t.
uint32_t vector_width(DType t);

// Uploads the params and records the dispatch (one thread per element, grid-stride capped).
void record_plan(Device& dev, const ElementwisePlan& plan);

}  // namespace vkml::ops
