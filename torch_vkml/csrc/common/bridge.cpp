#include "common/bridge.h"

#include <c10/core/ScalarType.h>

namespace torch_vkml {

namespace common_bridge {
thread_local c10::DeviceIndex t_current_device = 0;
}  // namespace common_bridge

c10::DeviceIndex current_device() { return common_bridge::t_current_device; }

void set_current_device(c10::DeviceIndex index) {
  c10::DeviceIndex n = device_count();
  TORCH_CHECK_INDEX(index >= 0 && index < n, "vkml: invalid device index ", int(index), "; ",
                    int(n), " vkml device(s) available",
                    n == 0 ? std::string(" (") + vkml::no_device_reason() + ")" : std::string());
  common_bridge::t_current_device = index;
}

c10::DeviceIndex device_count() noexcept {
  return static_cast<c10::DeviceIndex>(vkml::device_count());
}

vkml::Device& core_device(c10::DeviceIndex index) {
  if (index < 0) index = current_device();
  return translate_errors([&]() -> vkml::Device& { return vkml::device(index); });
}

bool is_supported_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat: case at::kHalf: case at::kBFloat16: case at::kDouble: case at::kChar:
    case at::kByte: case at::kShort: case at::kInt: case at::kLong: case at::kBool:
      return true;
    default:
      return false;
  }
}

bool is_storage_dtype(at::ScalarType t) {
  return is_supported_dtype(t) || t == at::kComplexFloat || t == at::kComplexDouble;
}

vkml::DType to_core_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return vkml::DType::kF32;
    case at::kHalf: return vkml::DType::kF16;
    case at::kBFloat16: return vkml::DType::kBF16;
    case at::kDouble: return vkml::DType::kF64;
    case at::kChar: return vkml::DType::kI8;
    case at::kByte: return vkml::DType::kU8;
    case at::kShort: return vkml::DType::kI16;
    case at::kInt: return vkml::DType::kI32;
    case at::kLong: return vkml::DType::kI64;
    case at::kBool: return vkml::DType::kBool;
    case at::kComplexFloat: case at::kComplexDouble:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "vkml: this operator has no vkml kernel for ", t,
                                  " tensors");
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "vkml: dtype ", t, " is not supported on vkml devices");
  }
}

vkml::TensorDesc to_desc(const at::Tensor& t) {
  vkml::TensorDesc d;
  d.address = reinterpret_cast<uint64_t>(t.data_ptr());
  d.dtype = to_core_dtype(t.scalar_type());
  d.sizes.assign(t.sizes().begin(), t.sizes().end());
  d.strides.assign(t.strides().begin(), t.strides().end());
  return d;
}

vkml::TensorDesc to_complex_desc(const at::Tensor& t) {
  TORCH_CHECK(t.is_complex(), "vkml: expected a complex tensor, got ", t.scalar_type());
  vkml::TensorDesc d;
  d.address = reinterpret_cast<uint64_t>(t.data_ptr());
  d.dtype = t.scalar_type() == at::kComplexFloat ? vkml::DType::kC64 : vkml::DType::kC128;
  d.sizes.assign(t.sizes().begin(), t.sizes().end());
  d.strides.assign(t.strides().begin(), t.strides().end());
  return d;
}

bool is_element_dtype(at::ScalarType t) {
  return is_supported_dtype(t) || t == at::kComplexFloat;
}

vkml::TensorDesc to_element_desc(const at::Tensor& t) {
  if (t.scalar_type() != at::kComplexFloat) return to_desc(t);
  TORCH_CHECK(!t.is_conj() && !t.is_neg(),
              "vkml: complex kernels take tensors whose conjugate and negative bits are resolved");
  return to_complex_desc(t);
}

vkml::Scalar to_element_scalar(const c10::Scalar& s, at::ScalarType t) {
  if (t != at::kComplexFloat) return to_core_scalar(s);
  c10::complex<double> v = s.toComplexDouble();
  return vkml::Scalar::from_complex(v.real(), v.imag());
}

vkml::Scalar to_core_scalar(const c10::Scalar& s) {
  if (s.isFloatingPoint()) return vkml::Scalar::from_double(s.toDouble());
  if (s.isBoolean()) return vkml::Scalar::from_int(s.toBool() ? 1 : 0);
  TORCH_CHECK(s.isIntegral(false), "vkml: complex scalars are not supported");
  return vkml::Scalar::from_int(s.toLong());
}

}  // namespace torch_vkml
