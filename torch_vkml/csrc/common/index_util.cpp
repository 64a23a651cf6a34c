#include "common/index_util.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>

#include <cstdlib>
#include <cstring>

#include "vkml/config.h"

namespace torch_vkml {

at::Tensor meta(const at::Tensor& t) {
  if (!t.defined()) return t;
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
}

std::optional<at::Tensor> meta(const std::optional<at::Tensor>& t) {
  if (!t.has_value()) return t;
  return meta(*t);
}

void check_same_device(const at::Tensor& self, const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.device() == self.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              self.device(), " and ", t.device(), "! (when checking argument for ", op, ")");
}

void check_dtype_supported(const at::Tensor& t) {
  TORCH_CHECK_NOT_IMPLEMENTED(is_supported_dtype(t.scalar_type()), "vkml: dtype ",
                              t.scalar_type(), " is not supported on vkml devices");
}

void check_element_dtype(const at::Tensor& t) {
  TORCH_CHECK_NOT_IMPLEMENTED(is_element_dtype(t.scalar_type()),
                              "vkml: this operator has no vkml kernel for ", t.scalar_type(),
                              " tensors");
}

void prepare_out(const at::Tensor& out, const at::Tensor& self, c10::IntArrayRef sizes,
                 at::ScalarType dtype) {
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to be on device ",
              self.device(), ", but got ", out.device(), " instead");
  TORCH_CHECK(out.scalar_type() == dtype, "Expected out tensor to have dtype ", dtype,
              ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, sizes);
}

bool device_index_checks_enabled() { return vkml::config().check_indices; }

BadIndexCheck::BadIndexCheck(const at::Tensor& self, bool device_indices) {
  if (!device_indices || !device_index_checks_enabled()) return;
  record_ = at::empty({static_cast<int64_t>(vkml::ops::kIndexErrorBytes)},
                      self.options().dtype(at::kByte));
  vkml::Device& d = core_device(self);
  address_ = reinterpret_cast<uint64_t>(record_.data_ptr());
  translate_errors([&] { d.stream().fill(address_, vkml::ops::kIndexErrorBytes, 0); });
}

std::optional<vkml::ops::IndexErrorRecord> BadIndexCheck::read() {
  if (!address_) return std::nullopt;
  vkml::ops::IndexErrorRecord rec;
  vkml::Device& d = core_device(record_);
  translate_errors([&] { d.stream().download(address_, &rec, sizeof(rec)); });
  if (!rec.claimed) return std::nullopt;
  return rec;
}

std::string out_of_bounds_message(int64_t value, int64_t dim, int64_t size) {
  return "index " + std::to_string(value) + " is out of bounds for dimension " +
         std::to_string(dim) + " with size " + std::to_string(size);
}

void check_cpu_index_range(const at::Tensor& index, int64_t size, bool allow_negative,
                           BadIndexError kind, const std::string& prefix, int64_t dim) {
  if (index.numel() == 0) return;
  // A CPU index tensor, read in place through its (1-D view's) stride: no device copy involved.
  at::Tensor flat = index.to(at::kLong).reshape({-1});
  const int64_t* p = flat.const_data_ptr<int64_t>();
  const int64_t step = flat.stride(0);
  const int64_t lo = allow_negative ? -size : 0;
  for (int64_t i = 0; i < flat.numel(); ++i) {
    const int64_t v = p[i * step];
    if (v < lo || v >= size) {
      std::string msg = prefix.empty() ? out_of_bounds_message(v, dim, size) : prefix;
      if (kind == BadIndexError::kIndex) TORCH_CHECK_INDEX(false, msg);
      TORCH_CHECK(false, msg);
    }
  }
}

}  // namespace torch_vkml
