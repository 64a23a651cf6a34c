// searchsorted / bucketize: one thread per query, binary search in the sort family's key order.
#include <string>

#include "ops/launch.h"
#include "ops/sort/search_params.h"
#include "vkml/errors.h"
#include "vkml/sort.h"

namespace vkml::ops {

void searchsorted(Device& dev, const TensorDesc& boundaries, const TensorDesc* sorter,
                  const TensorDesc& queries, const TensorDesc& out, bool right) {
  if (boundaries.dtype != queries.dtype) {
    throw InvalidArgument("vkml: searchsorted boundaries and queries must share a dtype");
  }
  if (!dev.caps().supports_dtype(queries.dtype)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                       std::string(dtype_name(queries.dtype)) + " tensors");
  }
  if (out.dtype != DType::kI64 && out.dtype != DType::kI32) {
    throw InvalidArgument("vkml: searchsorted output must be int64 or int32");
  }
  if (out.sizes != queries.sizes) throw InvalidArgument("vkml: searchsorted output shape");
  int bnd = boundaries.ndim();
  if (bnd == 0) throw InvalidArgument("vkml: searchsorted boundaries must have a dimension");
  bool shared_line = bnd == 1;
  if (!shared_line) {
    bool ok = queries.ndim() == bnd;
    for (int d = 0; ok && d < bnd - 1; ++d) ok = queries.sizes[d] == boundaries.sizes[d];
    if (!ok) throw InvalidArgument("vkml: searchsorted boundaries and queries leading dims differ");
  }
  if (sorter && (sorter->sizes != boundaries.sizes || sorter->dtype != DType::kI64)) {
    throw InvalidArgument("vkml: searchsorted sorter must be int64 with the boundaries' shape");
  }
  if (queries.ndim() > VKML_SEARCH_MAX_DIMS) {
    throw NotSupported("vkml: searchsorted of a tensor with too many dimensions");
  }
  if (queries.numel() == 0) return;

  SearchParams p{};
  p.numel = queries.numel();
  p.n = boundaries.sizes[bnd - 1];
  p.ndim = static_cast<uint32_t>(queries.ndim());
  for (int d = 0; d < queries.ndim(); ++d) {
    p.sizes[d] = queries.sizes[d];
    p.q_strides[d] = queries.strides[d];
    p.out_strides[d] = out.strides[d];
    bool leading = !shared_line && d < bnd - 1;
    p.b_strides[d] = leading ? boundaries.strides[d] : 0;
    p.s_strides[d] = leading && sorter ? sorter->strides[d] : 0;
  }
  p.b_last_stride = boundaries.strides[bnd - 1];
  p.s_last_stride = sorter ? sorter->strides[bnd - 1] : 0;
  p.queries = queries.address;
  p.boundaries = boundaries.address;
  p.sorter = sorter ? sorter->address : 0;
  p.result = out.address;
  p.right = right ? 1 : 0;
  p.out_int32 = out.dtype == DType::kI32 ? 1 : 0;
  p.elem_bytes = static_cast<uint32_t>(dtype_size(queries.dtype));
  MemRange reads[3] = {{queries.address, queries.span_bytes()},
                       {boundaries.address, boundaries.span_bytes()}};
  int nr = 2;
  if (sorter) reads[nr++] = {sorter->address, sorter->span_bytes()};
  MemRange writes[] = {{out.address, out.span_bytes()}};
  launch_elementwise(dev, "searchsorted_" + std::string(dtype_name(queries.dtype)), p, p.numel,
                     std::span(reads, nr), writes);
}

}  // namespace vkml::ops
