// Elementwise ops: out = op(a, b) or out = op(in) over arbitrarily strided tensors.
// The ops are rows of vkml/elementwise_ops.def; this header turns the rows into enums and
// constexpr metadata, so the torch bridge can ask what is supported without a device.
#pragma once
#include <cstdint>
#include <string_view>

#include "vkml/ops.h"

namespace vkml::ops {

enum class BinaryOp : uint32_t {
#define VKML_BINARY_OP(Name, name, id, out, group, fexpr, iexpr) k##Name = id,
#include "vkml/elementwise_ops.def"
#undef VKML_BINARY_OP
};

enum class UnaryOp : uint32_t {
#define VKML_UNARY_OP(Name, name, id, out, group, fexpr, iexpr) k##Name = id,
#include "vkml/elementwise_ops.def"
#undef VKML_UNARY_OP
};

// One row of the table as seen from C++.
struct ElementwiseOpInfo {
  std::string_view name;   // snake_case, as in ATen ("div_floor", "logical_not")
  std::string_view group;  // the float shader variant that holds it ("basic", "exp", ...)
  bool out_bool;           // out is bool (comparisons, logical ops, isnan...)
  bool has_float;          // defined for f32/f16/bf16/f64
  bool has_int;            // defined for i8/u8/i16/i32/i64/bool
};

namespace detail {
constexpr bool is_na(std::string_view expr) { return expr == "NA"; }
// Ids must be dense: they index these arrays and are the shaders' specialization constants.
constexpr ElementwiseOpInfo kBinaryOps[] = {
#define VKML_BINARY_OP(Name, name, id, out, group, fexpr, iexpr) \
  {#name, #group, std::string_view(#out) == "BOOL", !is_na(#fexpr), !is_na(#iexpr)},
#include "vkml/elementwise_ops.def"
#undef VKML_BINARY_OP
};
constexpr ElementwiseOpInfo kUnaryOps[] = {
#define VKML_UNARY_OP(Name, name, id, out, group, fexpr, iexpr) \
  {#name, #group, std::string_view(#out) == "BOOL", !is_na(#fexpr), !is_na(#iexpr)},
#include "vkml/elementwise_ops.def"
#undef VKML_UNARY_OP
};
constexpr bool ids_dense() {
  uint32_t i = 0;
#define VKML_BINARY_OP(Name, name, id, out, group, fexpr, iexpr) \
  if (id != i++) return false;
#include "vkml/elementwise_ops.def"
#undef VKML_BINARY_OP
  i = 0;
#define VKML_UNARY_OP(Name, name, id, out, group, fexpr, iexpr) \
  if (id != i++) return false;
#include "vkml/elementwise_ops.def"
#undef VKML_UNARY_OP
  return true;
}
static_assert(ids_dense(), "elementwise_ops.def: ids must be 0, 1, 2, ... in row order");
}  // namespace detail

constexpr uint32_t kNumBinaryOps = sizeof(detail::kBinaryOps) / sizeof(ElementwiseOpInfo);
constexpr uint32_t kNumUnaryOps = sizeof(detail::kUnaryOps) / sizeof(ElementwiseOpInfo);

constexpr const ElementwiseOpInfo& op_info(BinaryOp op) {
  return detail::kBinaryOps[static_cast<uint32_t>(op)];
}
constexpr const ElementwiseOpInfo& op_info(UnaryOp op) {
  return detail::kUnaryOps[static_cast<uint32_t>(op)];
}

// Whether the table defines `op` for inputs of dtype `t` (device capabilities aside).
constexpr bool op_has_dtype(const ElementwiseOpInfo& info, DType t) {
  return dtype_is_float(t) ? info.has_float : (t != DType::kCount && info.has_int);
}
// The table's rule and the device's: the dtype itself, and fp64 arithmetic for f64.
bool supports(const DeviceCaps& caps, BinaryOp op, DType t);
bool supports(const DeviceCaps& caps, UnaryOp op, DType t);

// out = op(a, b). a and b are already broadcast to out's sizes (stride 0 on broadcast dims) and
// have one compute dtype (the caller promotes and casts); out has it too, or is bool for ops
// with op_info(op).out_bool. f16/bf16 compute in fp32 and round to nearest even on store.
// alpha scales b for add/sub (out = a + alpha * b, like PyTorch) and is the threshold of
// threshold_backward. Integer division or remainder by zero gives 0 (the caller raises).
void binary(Device& dev, BinaryOp op, const TensorDesc& out, const TensorDesc& a,
            const TensorDesc& b, Scalar alpha = Scalar::from_double(1.0));
// out = op(a, b) with b a scalar converted to a's dtype (floats keep fp32 precision for
// f16/bf16 compute, as PyTorch's opmath does).
void binary_scalar(Device& dev, BinaryOp op, const TensorDesc& out, const TensorDesc& a, Scalar b,
                   Scalar alpha = Scalar::from_double(1.0));
// out = op(a, b) with a a scalar (rsub, pow(scalar, tensor), ...); b's dtype is the compute one.
void scalar_binary(Device& dev, BinaryOp op, const TensorDesc& out, Scalar a, const TensorDesc& b,
                   Scalar alpha = Scalar::from_double(1.0));
// out = op(a, b, c) for rows that read a third tensor (addcmul, addcdiv, lerp with a tensor
// weight); c is broadcast to out's sizes and has the compute dtype, like a and b.
void ternary(Device& dev, BinaryOp op, const TensorDesc& out, const TensorDesc& a,
             const TensorDesc& b, const TensorDesc& c, Scalar alpha = Scalar::from_double(1.0));
// out = op(a, b) for rows with up to three parameters (elu_backward's alpha, scale, input scale).
void binary_params(Device& dev, BinaryOp op, const TensorDesc& out, const TensorDesc& a,
                   const TensorDesc& b, Scalar alpha, Scalar beta, Scalar gamma);
// out = op(in); same dtype rules as binary(). alpha, beta and gamma are the row's parameters
// (softplus's beta and threshold, nan_to_num's replacements, ...), in the compute dtype.
void unary(Device& dev, UnaryOp op, const TensorDesc& out, const TensorDesc& in,
           Scalar alpha = Scalar::from_double(1.0), Scalar beta = Scalar::from_double(0.0),
           Scalar gamma = Scalar::from_double(0.0));

}  // namespace vkml::ops
