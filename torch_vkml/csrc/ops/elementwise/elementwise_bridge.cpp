#include "ops/elementwise/elementwise_bridge.h"

#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/scalar_tensor.h>
#include <c10/core/DeviceGuard.h>

namespace torch_vkml::ops_elementwise_bridge {

using ew::Promote;

bool is_cpu_scalar(const at::Tensor& t) { return t.device().is_cpu() && t.dim() == 0; }

at::ScalarType compute_type(Promote promote, at::ScalarType promoted, const char* name) {
  if (promote == Promote::kIntToFloat && at::isIntegralType(promoted, /*includeBool=*/true)) {
    return c10::typeMetaToScalarType(c10::get_default_dtype());
  }
  if (promote == Promote::kIntegral) {
    // The CPU's dtype dispatch raises NotImplementedError for an unsupported dtype.
    TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(promoted, /*includeBool=*/true), "\"", name,
                                "\" not implemented for '", c10::toString(promoted), "'");
  }
  if (promote == Promote::kFloating) {
    TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(promoted), "\"", name,
                                "\" not implemented for '", c10::toString(promoted), "'");
  }
  return promoted;
}

at::Scalar cpu_scalar_value(const at::Tensor& t) { return t.item(); }

// Prepares the output: allocates, or checks an in-place / out= destination like TensorIterator.
// Returns the tensor the kernel writes (out itself, or a temporary of the result dtype).
at::Tensor prepare_output(at::Tensor& out, bool inplace, at::IntArrayRef shape,
                          at::ScalarType result, const at::Tensor& like) {
  if (!out.defined()) {
    at::MemoryFormat fmt = like.sizes() == shape ? like.suggest_memory_format()
                                                 : at::MemoryFormat::Contiguous;
    out = at::empty(shape, like.options().dtype(result), fmt);
    return out;
  }
  TORCH_CHECK(out.device() == like.device(), "Expected out tensor to have device ", like.device(),
              ", but got ", out.device(), " instead");
  TORCH_CHECK(at::canCast(result, out.scalar_type()), "result type ", result,
              " can't be cast to the desired output type ", out.scalar_type());
  if (inplace) {
    TORCH_CHECK(out.sizes() == shape, "output with shape ", out.sizes(),
                " doesn't match the broadcast shape ", shape);
  } else {
    at::native::resize_output(out, shape);
  }
  if (out.scalar_type() == result) return out;
  return at::empty(shape, out.options().dtype(result), out.suggest_memory_format());
}

void finish_output(const at::Tensor& out, const at::Tensor& written) {
  if (!written.is_same(out)) out.copy_(written);
}

}  // namespace torch_vkml::ops_elementwise_bridge

namespace torch_vkml::ew {

at::Tensor wrap_scalar(const at::Scalar& s) {
  at::Tensor t = at::scalar_tensor(s, at::TensorOptions().dtype(s.type()));
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

at::Tensor binary(vkml::ops::BinaryOp op, Promote promote, const at::Tensor& a,
                  const at::Tensor& b, const at::Scalar& alpha, at::Tensor out, bool inplace) {
  using namespace ops_elementwise_bridge;
  const auto& info = vkml::ops::op_info(op);
  const at::Tensor& dev_operand = a.device().type() == kVkml ? a : b;
  TORCH_CHECK(dev_operand.device().type() == kVkml, "vkml elementwise op without a vkml tensor");
  for (const at::Tensor* t : {&a, &b}) {
    TORCH_CHECK(t->device() == dev_operand.device() || is_cpu_scalar(*t),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                dev_operand.device(), " and ", t->device(), "!");
  }
  at::ScalarType promoted = at::result_type(a, b);
  if (at::isComplexType(promoted)) return complex_binary(op, a, b, alpha, out, inplace);
  at::ScalarType compute = compute_type(promote, promoted, info.name.data());
  at::ScalarType result = promote == Promote::kBoolOut ? at::kBool : compute;
  std::vector<int64_t> shape = at::infer_size(a.sizes(), b.sizes());
  c10::DeviceGuard guard(dev_operand.device());
  at::Tensor target = prepare_output(out, inplace, shape, result, dev_operand);
  if (target.numel() == 0) return out;
  vkml::Device& d = core_device(dev_operand);
  vkml::TensorDesc od = to_desc(target);
  vkml::Scalar core_alpha = to_core_scalar(alpha);
  translate_errors([&] {
    if (is_cpu_scalar(a) && !is_cpu_scalar(b)) {
      at::Tensor bb = b.to(compute).expand(shape);
      vkml::ops::scalar_binary(d, op, od, to_core_scalar(cpu_scalar_value(a)), to_desc(bb),
                               core_alpha);
    } else if (is_cpu_scalar(b)) {
      at::Tensor aa = (is_cpu_scalar(a) ? a.to(dev_operand.device()) : a).to(compute).expand(shape);
      vkml::ops::binary_scalar(d, op, od, to_desc(aa), to_core_scalar(cpu_scalar_value(b)),
                               core_alpha);
    } else {
      at::Tensor aa = a.to(compute).expand(shape), bb = b.to(compute).expand(shape);
      vkml::ops::binary(d, op, od, to_desc(aa), to_desc(bb), core_alpha);
    }
  });
  finish_output(out, target);
  return out;
}

at::Tensor ternary(vkml::ops::BinaryOp op, Promote promote, const at::Tensor& a,
                   const at::Tensor& b, const at::Tensor& c, const at::Scalar& alpha,
                   at::Tensor out, bool inplace) {
  using namespace ops_elementwise_bridge;
  const auto& info = vkml::ops::op_info(op);
  const at::Tensor* dev_operand = nullptr;
  for (const at::Tensor* t : {&a, &b, &c}) {
    if (!dev_operand && t->device().type() == kVkml) dev_operand = t;
  }
  TORCH_CHECK(dev_operand, "vkml elementwise op without a vkml tensor");
  const at::Device device = dev_operand->device();
  for (const at::Tensor* t : {&a, &b, &c}) {
    TORCH_CHECK(t->device() == device || is_cpu_scalar(*t),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                device, " and ", t->device(), "!");
  }
  // The result type of three operands, by the same categories as TensorIterator's.
  at::native::ResultTypeState state = {};
  for (const at::Tensor* t : {&a, &b, &c}) state = at::native::update_result_type_state(*t, state);
  at::ScalarType promoted = at::native::result_type(state);
  if (at::isComplexType(promoted)) return complex_ternary(op, a, b, c, alpha, out, inplace);
  at::ScalarType compute = compute_type(promote, promoted, info.name.data());
  std::vector<int64_t> shape = at::infer_size(at::infer_size(a.sizes(), b.sizes()), c.sizes());
  c10::DeviceGuard guard(device);
  at::Tensor target = prepare_output(out, inplace, shape, compute, *dev_operand);
  if (target.numel() == 0) return out;
  auto operand = [&](const at::Tensor& t) {
    return (is_cpu_scalar(t) ? t.to(device) : t).to(compute).expand(shape);
  };
  at::Tensor aa = operand(a), bb = operand(b), cc = operand(c);
  vkml::Device& d = core_device(*dev_operand);
  translate_errors([&] {
    vkml::ops::ternary(d, op, to_desc(target), to_desc(aa), to_desc(bb), to_desc(cc),
                       to_core_scalar(alpha));
  });
  finish_output(out, target);
  return out;
}

at::Tensor binary_params(vkml::ops::BinaryOp op, Promote promote, const at::Tensor& a,
                         const at::Tensor& b, const Params& params, at::Tensor out) {
  using namespace ops_elementwise_bridge;
  const auto& info = vkml::ops::op_info(op);
  TORCH_CHECK(a.device() == b.device(), "Expected all tensors to be on the same device, but "
              "found at least two devices, ", a.device(), " and ", b.device(), "!");
  at::ScalarType compute = compute_type(promote, at::result_type(a, b), info.name.data());
  std::vector<int64_t> shape = at::infer_size(a.sizes(), b.sizes());
  c10::DeviceGuard guard(a.device());
  at::Tensor target = prepare_output(out, false, shape, compute, a);
  if (target.numel() == 0) return out;
  at::Tensor aa = a.to(compute).expand(shape), bb = b.to(compute).expand(shape);
  vkml::Device& d = core_device(a);
  translate_errors([&] {
    vkml::ops::binary_params(d, op, to_desc(target), to_desc(aa), to_desc(bb),
                             to_core_scalar(params.alpha), to_core_scalar(params.beta),
                             to_core_scalar(params.gamma));
  });
  finish_output(out, target);
  return out;
}

at::Tensor unary(vkml::ops::UnaryOp op, Promote promote, const at::Tensor& x, at::Tensor out,
                 bool inplace, const Params& params) {
  using namespace ops_elementwise_bridge;
  const auto& info = vkml::ops::op_info(op);
  if (x.is_complex()) return complex_unary(op, x, out, inplace);
  at::ScalarType compute = compute_type(promote, x.scalar_type(), info.name.data());
  at::ScalarType result = promote == Promote::kBoolOut ? at::kBool : compute;
  c10::DeviceGuard guard(x.device());
  at::Tensor target = prepare_output(out, inplace, x.sizes(), result, x);
  if (target.numel() == 0) return out;
  vkml::Device& d = core_device(x);
  at::Tensor xx = x.to(compute);
  translate_errors([&] {
    vkml::ops::unary(d, op, to_desc(target), to_desc(xx), to_core_scalar(params.alpha),
                     to_core_scalar(params.beta), to_core_scalar(params.gamma));
  });
  finish_output(out, target);
  return out;
}

}  // namespace torch_vkml::ew
