// Shared helpers of the torch bridge: ATen tensors to core descriptors, and core errors to
// PyTorch's exception types. The bridge never touches Vulkan directly.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include <string>

#include "vkml/device.h"
#include "vkml/errors.h"
#include "vkml/ops.h"
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace torch_vkml {

constexpr c10::DeviceType kVkml = c10::DeviceType::PrivateUse1;

// The device the current thread works on (torch.vkml.set_device / device guard).
c10::DeviceIndex current_device();
void set_current_device(c10::DeviceIndex index);
c10::DeviceIndex device_count() noexcept;

// Runs `fn`, turning core errors into the exception types PyTorch users expect.
template <typename Fn>
auto translate_errors(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const vkml::OutOfMemoryError& e) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, e.what());
  } catch (const vkml::NoDeviceError& e) {
    TORCH_CHECK_INDEX(false, e.what());
  } catch (const vkml::NotSupported& e) {
    TORCH_CHECK_NOT_IMPLEMENTED(false, e.what());
  } catch (const vkml::InvalidArgument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  } catch (const vkml::DeviceLostError& e) {
    // torch.AcceleratorError (a RuntimeError), with VK_ERROR_DEVICE_LOST as its code.
    throw c10::AcceleratorError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, -4,
                                e.what());
  } catch (const vkml::Error& e) {
    TORCH_CHECK(false, e.what());
  }
}

// The runtime device behind a vkml tensor or index (created on first use).
vkml::Device& core_device(c10::DeviceIndex index);
inline vkml::Device& core_device(const at::Tensor& t) { return core_device(t.device().index()); }

// Dtypes the generic kernels compute in. Complex tensors are stored on vkml as well
// (is_storage_dtype), but only complex-aware kernels take them: to_core_dtype and to_desc raise
// NotImplementedError for them, so a kernel without a complex path never misreads the pairs.
bool is_supported_dtype(at::ScalarType t);
bool is_storage_dtype(at::ScalarType t);
vkml::DType to_core_dtype(at::ScalarType t);

// Sizes, strides (elements) and the address of the first element, passed through unchanged.
vkml::TensorDesc to_desc(const at::Tensor& t);

// A complex tensor (complex64 / complex128) as kC64 / kC128 elements, for complex-aware kernels.
// The conjugate and negative bits are the caller's to resolve.
vkml::TensorDesc to_complex_desc(const at::Tensor& t);

vkml::Scalar to_core_scalar(const c10::Scalar& s);

// Dtypes of the kernels that move elements, or combine them per complex number (the index,
// select, shape and padding kernels): the generic ones and complex64, as kC64 elements.
bool is_element_dtype(at::ScalarType t);

// to_desc, with complex64 tensors as kC64 elements, for the kernels is_element_dtype names.
// Their conjugate and negative bits must be resolved (PyTorch's fallbacks do so ahead of them).
vkml::TensorDesc to_element_desc(const at::Tensor& t);

// `s` as a value of dtype `t`: complex64 keeps the imaginary part; other dtypes as
// to_core_scalar.
vkml::Scalar to_element_scalar(const c10::Scalar& s, at::ScalarType t);

}  // namespace torch_vkml
