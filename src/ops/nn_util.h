// Host helpers shared by the neural-network families (softmax, norm, loss, pool, dropout):
// dtype codes for nn_common.glsl, variant names, launch shapes and scratch memory.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops::nn {

// Dtype codes understood by nn_load/nn_store (src/ops/shaders/common/nn_common.glsl).
constexpr uint32_t kF32 = 0, kF16 = 1, kBF16 = 2, kF64 = 3, kI64 = 4, kU8 = 5, kI32 = 6;

// The code of a floating tensor; throws InvalidArgument naming `what` for other dtypes.
uint32_t float_code(const TensorDesc& t, const char* what);
// The code of a class-index tensor (int64, uint8 or int32).
uint32_t index_code(const TensorDesc& t, const char* what);

// True when any of the tensors is float64; then checks that the device computes in double.
bool needs_fp64(const Device& dev, std::initializer_list<const TensorDesc*> tensors);

// `base` + "_f64" when computing in double, + "_sg" for the subgroup-reduction build.
std::string variant(const Device& dev, const std::string& base, bool fp64, bool reduces);

// Tests use this to run the shared-memory reductions on devices that have subgroup arithmetic.
void force_tree_reductions(bool on);

// Tests use this to send every norm through its split path (few long rows).
void force_split_rows(bool on);
bool split_rows_forced();

// A workgroup size for loops over `n` elements: a power of two in [32, max_size].
uint32_t workgroup_for(int64_t n, uint32_t max_size = 256);

// Records `pipeline` over `groups` workgroups (a 2-D grid past 65535; shaders loop with
// nn_group_id/nn_group_count), passing the parameter block by device address.
void dispatch_groups(Device& dev, const std::string& shader, uint32_t workgroup, int64_t groups,
                     const void* params, size_t params_bytes, std::span<const MemRange> reads,
                     std::span<const MemRange> writes);

// Groups of `workgroup` threads to cover `n` elements with one thread each (grid-stride capped).
int64_t groups_for(int64_t n, uint32_t workgroup);

// Device memory released when it goes out of scope. Safe right after recording: the stream
// orders later reuse of the same bytes behind the work recorded now (hazard tracking).
class Scratch {
 public:
  Scratch(Device& dev, uint64_t bytes) : dev_(dev), address_(bytes ? dev.allocate(bytes) : 0) {}
  ~Scratch() { dev_.free(address_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  uint64_t address() const { return address_; }

 private:
  Device& dev_;
  uint64_t address_;
};

// Strides of `t` with dimension `skip` removed.
std::vector<int64_t> strides_without(const TensorDesc& t, int skip);

// Throws InvalidArgument unless `a` and `b` have the same sizes.
void check_same_sizes(const TensorDesc& a, const TensorDesc& b, const char* op);

// Byte range of a tensor for hazard tracking.
inline MemRange range_of(const TensorDesc& t) { return {t.address, t.span_bytes()}; }

}  // namespace vkml::ops::nn
