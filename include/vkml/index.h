// Indexing and selection ops: gather/scatter along a dim, index_select/add/copy/fill, advanced
// (NumPy) indexing and index_put, where/masked ops and nonzero. Embedding lookups are in
// vkml/embedding.h.
//
// Index tensors are int32 or int64 device tensors. Kernels never touch memory outside a tensor,
// even for bad indices: a bad index is skipped (a gather writes 0) and, when `error_flag` is a
// device address of kIndexErrorBytes zeroed bytes, the first one is recorded there as an
// IndexErrorRecord; read it back (a host sync) to raise an error. 0 skips the record.
//
// Data may be any dtype the device supports, kC64 (complex64) included: copies move its
// 8-byte elements, sums and products combine complex numbers, max/min refuse it (NotSupported);
// nonzero counts an element whose real or imaginary part is nonzero.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "vkml/ops.h"
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

constexpr uint64_t kIndexErrorBytes = 16;

struct IndexErrorRecord {
  uint32_t claimed = 0;  // 1 once a bad index was seen
  uint32_t operand = 0;  // which index tensor (advanced indexing: k-th given index)
  int64_t value = 0;     // the offending index value
};
static_assert(sizeof(IndexErrorRecord) == kIndexErrorBytes);

// How a scatter combines a value with its destination; kNone overwrites.
enum class ScatterReduce : uint32_t { kNone, kSum, kProd, kMax, kMin };

// out = self.gather(dim, index): out[i][j] = self[index[i][j]][j] (dim 0). Same dtype.
void gather(Device& dev, const TensorDesc& out, const TensorDesc& self, int dim,
            const TensorDesc& index, uint64_t error_flag = 0);

// self.scatter_(dim, index, src) and its reductions (scatter_add_, scatter_reduce_ without the
// include_self/mean handling, which callers compose). Duplicate indices accumulate in index
// order: results are deterministic.
void scatter(Device& dev, const TensorDesc& self, int dim, const TensorDesc& index,
             const TensorDesc& src, ScatterReduce reduce, uint64_t error_flag = 0);
void scatter_value(Device& dev, const TensorDesc& self, int dim, const TensorDesc& index,
                   Scalar value, ScatterReduce reduce, uint64_t error_flag = 0);

// out = self.index_select(dim, index) for a 1-D (or 0-dim) index.
void index_select(Device& dev, const TensorDesc& out, const TensorDesc& self, int dim,
                  const TensorDesc& index, uint64_t error_flag = 0);

// self.index_add_(dim, index, source, alpha) (kSum), index_copy_ (kNone), index_reduce_.
// kSum adds alpha * source; without alpha (std::nullopt), source itself. A complex alpha
// multiplies as the CPU's index_add does, alpha 1 included (an infinite part then gives NaN).
void index_accumulate(Device& dev, const TensorDesc& self, int dim, const TensorDesc& index,
                      const TensorDesc& source, ScatterReduce reduce,
                      std::optional<Scalar> alpha, uint64_t error_flag = 0);

// self.index_fill_(dim, index, value); negative indices wrap. `value_tensor` (0-dim, same
// dtype, on the device) replaces `value` when given: no host read of it.
void index_fill(Device& dev, const TensorDesc& self, int dim, const TensorDesc& index,
                Scalar value, const TensorDesc* value_tensor = nullptr,
                uint64_t error_flag = 0);

// Advanced indexing. indices[d] indexes dim d of self (nullopt: the whole dim); the given
// index tensors share one shape (broadcast them first). Negative indices wrap.
std::vector<int64_t> advanced_index_shape(const TensorDesc& self,
                                          const std::vector<std::optional<TensorDesc>>& indices);
void advanced_index(Device& dev, const TensorDesc& out, const TensorDesc& self,
                    const std::vector<std::optional<TensorDesc>>& indices,
                    uint64_t error_flag = 0);
// self[indices] = values (or += with accumulate, deterministic); values already broadcast to
// advanced_index_shape (zero strides allowed).
void advanced_index_put(Device& dev, const TensorDesc& self,
                        const std::vector<std::optional<TensorDesc>>& indices,
                        const TensorDesc& values, bool accumulate, uint64_t error_flag = 0);

// out = self.take(index): out[i] = the index[i]-th element of self in row-major order
// (negative positions wrap). out has index's shape.
void take(Device& dev, const TensorDesc& out, const TensorDesc& self, const TensorDesc& index,
          uint64_t error_flag = 0);
// self.put_(index, source, accumulate) with source laid out on index's shape; accumulation
// runs in index order (deterministic).
void put(Device& dev, const TensorDesc& self, const TensorDesc& index, const TensorDesc& source,
         bool accumulate, uint64_t error_flag = 0);

}  // namespace vkml::ops

namespace vkml::ops {

// An operand of where(): a device tensor laid out on the result shape (zero strides
// broadcast), or, with tensor == nullptr, the element bit pattern `bits` (see scalar_bits).
struct SelectOperand {
  const TensorDesc* tensor = nullptr;
  uint64_t bits = 0;
};

// out = cond ? a : b elementwise. cond is bool/uint8; a and b have out's dtype (callers
// promote). `a`/`b` may alias out (in-place masked_fill).
void where(Device& dev, const TensorDesc& out, SelectOperand cond, SelectOperand a,
           SelectOperand b);

// self[mask] = value, mask (bool/uint8) laid out on self's shape; value is a scalar, or a
// 0-dim device tensor of self's dtype (no host read).
void masked_fill(Device& dev, const TensorDesc& self, const TensorDesc& mask, Scalar value,
                 const TensorDesc* value_tensor = nullptr);

// Ranks of the set (nonzero) elements of a mask in row-major order, by a prefix sum on the
// device: the constructor records the scan into `scratch` (scratch_bytes(numel) bytes);
// total() reads the count back (waits for the device); write_* record the compaction.
class MaskScan {
 public:
  MaskScan(Device& dev, const TensorDesc& mask, uint64_t scratch);
  static uint64_t scratch_bytes(int64_t numel);
  int64_t total();
  // out (total, ndim) int64 = coordinates of each set element (nonzero).
  void write_nonzero(const TensorDesc& out);
  // out (total,) = data[set elements]; data laid out on the mask's shape (masked_select).
  void write_select(const TensorDesc& out, const TensorDesc& data);
  // data[k-th set element] = src's k-th element in row-major order (masked_scatter); ranks
  // beyond src's size are skipped.
  void write_scatter(const TensorDesc& data, const TensorDesc& src);

 private:
  void write(uint32_t mode, const TensorDesc* out, const TensorDesc* data, const TensorDesc* src);
  Device& dev_;
  TensorDesc mask_;
  uint64_t scratch_;
  int64_t nblocks_;
};

}  // namespace vkml::ops

namespace vkml::ops {

// self = counts == 0 ? self : self / counts elementwise (floor division for integers), counts
// of self's dtype and shape: the last step of a mean reduction (scatter_reduce, index_reduce).
void divide_by_counts(Device& dev, const TensorDesc& self, const TensorDesc& counts);

}  // namespace vkml::ops
