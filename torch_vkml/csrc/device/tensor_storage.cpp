// Tensors on vkml without kernels: empty / empty_strided, the views as_strided, view and
// _reshape_alias, resize_ and set_. Metadata only, no GPU work (except resize growth).
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <typeinfo>

#include "common/bridge.h"
#include "device/allocator.h"

namespace torch_vkml::device_tensor_storage {

constexpr c10::DispatchKeySet kVkmlKeys(c10::DispatchKey::PrivateUse1);

c10::Device resolve_device(std::optional<c10::Device> device) {
  c10::Device d = device.value_or(c10::Device(kVkml, current_device()));
  if (!d.has_index()) d = c10::Device(kVkml, current_device());
  TORCH_CHECK_INDEX(d.index() < device_count(), "vkml: invalid device index ", int(d.index()),
                    "; ", int(device_count()), " vkml device(s) available");
  return d;
}

// A dtype vkml does not store raises NotImplementedError. float64 and complex128 need fp64
// arithmetic: a device without it refuses them here, where the tensor is made (TypeError, as
// PyTorch's MPS backend does), rather than in whichever kernel meets one first.
void check_dtype(at::ScalarType t, c10::Device d) {
  TORCH_CHECK_NOT_IMPLEMENTED(is_storage_dtype(t), "vkml: dtype ", t,
                              " is not supported on vkml devices");
  if (t == at::kDouble || t == at::kComplexDouble) {
    const vkml::DeviceCaps& caps = core_device(d.index()).caps();
    TORCH_CHECK_TYPE(caps.supports_dtype(vkml::DType::kF64), "vkml: device ", d, " (", caps.name,
                     ") has no fp64 arithmetic, so it cannot hold ",
                     t == at::kDouble ? "float64" : "complex128",
                     " tensors; use float32 (or complex64) instead");
  }
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout,
                               std::optional<at::Device> device, std::optional<bool> pin_memory,
                               std::optional<at::MemoryFormat> memory_format) {
  c10::Device d = resolve_device(device);
  at::ScalarType t = dtype.value_or(c10::get_default_dtype_as_scalartype());
  check_dtype(t, d);
  c10::DeviceGuard guard(d);
  return at::detail::empty_generic(size, vkml_allocator(), kVkmlKeys, t, memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                         std::optional<at::Device> device, std::optional<bool> pin_memory) {
  c10::Device d = resolve_device(device);
  at::ScalarType t = dtype.value_or(c10::get_default_dtype_as_scalartype());
  check_dtype(t, d);
  c10::DeviceGuard guard(d);
  return at::detail::empty_strided_generic(size, stride, vkml_allocator(), kVkmlKeys, t);
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  c10::DeviceGuard guard(self.device());
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  at::MemoryFormat fmt = memory_format.value_or(at::MemoryFormat::Contiguous);
  if (fmt != at::MemoryFormat::Preserve) impl->empty_tensor_restride(fmt);
  if (impl->numel() > 0) {
    size_t needed = at::detail::computeStorageNbytes(size, impl->strides(), self.itemsize(),
                                                     impl->storage_offset());
    if (needed > impl->unsafe_storage().nbytes()) {
      at::native::resize_bytes_nocuda(impl->unsafe_storage(), static_cast<int64_t>(needed));
    }
  }
  return self;
}

at::Tensor& set_storage(at::Tensor& self, at::Storage source, int64_t storage_offset,
                        c10::IntArrayRef size, c10::IntArrayRef stride) {
  at::native::checkInBoundsForStorage(size, stride, storage_offset, self.dtype(), source);
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(std::move(source));
  impl->set_storage_offset(storage_offset);
  if (stride.data()) {
    impl->set_sizes_and_strides(size, stride);
  } else {
    impl->set_sizes_contiguous(size);
  }
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) {
  int64_t n = static_cast<int64_t>(source.nbytes() / self.itemsize());
  return set_storage(self, std::move(source), 0, {n}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.unsafeGetTensorImpl() == source.unsafeGetTensorImpl()) return self;
  return set_storage(self, source.storage(), source.storage_offset(), source.sizes(),
                     source.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  auto storage = c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), 0,
                                                       vkml_allocator(), true);
  return set_storage(self, at::Storage(std::move(storage)), 0, {0}, {});
}

// Whether `param.data = t` may swap t's storage into param (Module.to does, which keeps tied
// parameters one object). c10 counts only built-in backends as dense, so without this every
// Module.to("vkml") made new Parameters and untied shared weights. Plain strided TensorImpls of
// CPU and vkml (what vkml tensors are) are as interchangeable as CPU and CUDA ones.
bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  auto plain = [](const at::Tensor& t) {
    const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
    return t.layout() == c10::kStrided && (t.is_cpu() || t.is_privateuseone()) &&
           typeid(*impl) == typeid(c10::TensorImpl);
  };
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set()) ||
         (plain(self) && plain(from));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Storage_storage_offset", set_storage);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_", set_empty);
}

}  // namespace torch_vkml::device_tensor_storage
