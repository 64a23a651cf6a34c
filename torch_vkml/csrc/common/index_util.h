// Helpers shared by the bridge files that take index tensors (index, embedding, shape, resample,
// linalg): validation through PyTorch's own meta kernels (identical errors to the CPU), device
// checks, out= handling and the bad-index record.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/bridge.h"
#include "vkml/index.h"

namespace torch_vkml {

inline bool on_vkml(const at::Tensor& t) { return t.defined() && t.device().type() == kVkml; }

// A shape-and-dtype twin on the meta device: PyTorch's meta kernels then run every input check
// of an op (with the CPU's messages and exception types) without touching data.
at::Tensor meta(const at::Tensor& t);
std::optional<at::Tensor> meta(const std::optional<at::Tensor>& t);

// Raises like PyTorch when `t` is not on `self`'s device.
void check_same_device(const at::Tensor& self, const at::Tensor& t, const char* op);

// Resizes out (warning like PyTorch when it held other data) and checks its dtype and device.
void prepare_out(const at::Tensor& out, const at::Tensor& self, c10::IntArrayRef sizes,
                 at::ScalarType dtype);

// Rejects dtypes without vkml kernels with NotImplementedError.
void check_dtype_supported(const at::Tensor& t);

// As check_dtype_supported, for ops whose kernels also take complex64 (is_element_dtype).
void check_element_dtype(const at::Tensor& t);

// CUDA-style errors for int64 values that do not fit a narrower index.
enum class BadIndexError { kIndex, kRuntime };

// The record a kernel leaves behind for a bad index in a device index tensor. Reading it
// waits for the device (one host sync per op), so it is allocated only when an index tensor
// lives on the device and VKML_CHECK_INDICES is not 0. Kernels never dereference bad indices
// either way; unchecked, a gather leaves 0 and a scatter skips the element.
class BadIndexCheck {
 public:
  BadIndexCheck(const at::Tensor& self, bool device_indices);
  uint64_t address() const { return address_; }
  // Waits for the device; returns the record when a bad index was seen.
  std::optional<vkml::ops::IndexErrorRecord> read();
  // Waits and raises `kind` with message(value, operand) on a bad index.
  template <typename Message>
  void raise_if_bad(BadIndexError kind, Message message) {
    auto rec = read();
    if (!rec) return;
    std::string msg = message(rec->value, rec->operand);
    if (kind == BadIndexError::kIndex) TORCH_CHECK_INDEX(false, msg);
    TORCH_CHECK(false, msg);
  }

 private:
  at::Tensor record_;
  uint64_t address_ = 0;
};

// True unless VKML_CHECK_INDICES=0 turned device-side index checks off.
bool device_index_checks_enabled();

// Raises (kind) like the CPU when a CPU index tensor holds values outside [lo, size).
void check_cpu_index_range(const at::Tensor& index, int64_t size, bool allow_negative,
                           BadIndexError kind, const std::string& prefix, int64_t dim);

std::string out_of_bounds_message(int64_t value, int64_t dim, int64_t size);

}  // namespace torch_vkml
