// The elementwise family's public entry points: op and dtype checks, then plan and record.
#include "vkml/elementwise.h"

#include <string>

#include "ops/elementwise/elementwise_plan.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

template <typename Op>
bool supports_impl(const DeviceCaps& caps, Op op, uint32_t count, DType t) {
  if (static_cast<uint32_t>(op) >= count) return false;
  const ElementwiseOpInfo& info = op_info(op);
  if (info.out_bool && !caps.supports_dtype(DType::kBool)) return false;
  return op_has_dtype(info, t) && caps.supports_dtype(t);
}

template <typename Op>
void run(Device& dev, EwKind kind, Op op, uint32_t count, const TensorDesc& out,
         const EwOperand& a, const EwOperand& b, Scalar alpha, const TensorDesc* c = nullptr,
         Scalar beta = Scalar::from_double(0.0), Scalar gamma = Scalar::from_double(0.0)) {
  uint32_t id = static_cast<uint32_t>(op);
  if (id >= count) throw InvalidArgument("vkml: unknown elementwise op " + std::to_string(id));
  ElementwisePlan plan = plan_elementwise(kind, id, op_info(op), out, a, b, alpha, c, beta, gamma);
  if (plan.numel == 0) return;
  if (!supports(dev.caps(), op, plan.compute)) {
    throw NotSupported("vkml: " + std::string(op_info(op).name) + " has no " +
                       std::string(dtype_name(plan.compute)) + " kernel on " + dev.caps().name);
  }
  record_plan(dev, plan);
}

}  // namespace

bool supports(const DeviceCaps& caps, BinaryOp op, DType t) {
  return supports_impl(caps, op, kNumBinaryOps, t);
}

bool supports(const DeviceCaps& caps, UnaryOp op, DType t) {
  return supports_impl(caps, op, kNumUnaryOps, t);
}

void binary(Device& dev, BinaryOp op, const TensorDesc& out, const TensorDesc& a,
            const TensorDesc& b, Scalar alpha) {
  run(dev, EwKind::kBinary, op, kNumBinaryOps, out, {&a, {}}, {&b, {}}, alpha);
}

void binary_scalar(Device& dev, BinaryOp op, const TensorDesc& out, const TensorDesc& a, Scalar b,
                   Scalar alpha) {
  run(dev, EwKind::kBinary, op, kNumBinaryOps, out, {&a, {}}, {nullptr, b}, alpha);
}

void scalar_binary(Device& dev, BinaryOp op, const TensorDesc& out, Scalar a, const TensorDesc& b,
                   Scalar alpha) {
  run(dev, EwKind::kBinary, op, kNumBinaryOps, out, {nullptr, a}, {&b, {}}, alpha);
}

void ternary(Device& dev, BinaryOp op, const TensorDesc& out, const TensorDesc& a,
             const TensorDesc& b, const TensorDesc& c, Scalar alpha) {
  run(dev, EwKind::kBinary, op, kNumBinaryOps, out, {&a, {}}, {&b, {}}, alpha, &c);
}

void binary_params(Device& dev, BinaryOp op, const TensorDesc& out, const TensorDesc& a,
                   const TensorDesc& b, Scalar alpha, Scalar beta, Scalar gamma) {
  run(dev, EwKind::kBinary, op, kNumBinaryOps, out, {&a, {}}, {&b, {}}, alpha, nullptr, beta,
      gamma);
}

void unary(Device& dev, UnaryOp op, const TensorDesc& out, const TensorDesc& in, Scalar alpha,
           Scalar beta, Scalar gamma) {
  run(dev, EwKind::kUnary, op, kNumUnaryOps, out, {&in, {}}, {}, alpha, nullptr, beta, gamma);
}

}  // namespace vkml::ops
