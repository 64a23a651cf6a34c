// max_unpool (unpool.comp): a winners pass (atomicMax of input positions per output) and a
// write pass; deterministic for duplicate indices.
#include <string>

#include "ops/nn_util.h"
#include "ops/resample/unpool_params.h"
#include "vkml/errors.h"
#include "vkml/index.h"
#include "vkml/ops.h"
#include "vkml/resample.h"

namespace vkml::ops {

namespace {

// Sizes and strides as N, C, D, H, W (missing spatial dims: size 1, stride 0).
void five(const TensorDesc& t, int64_t* sizes3, int64_t* strides5) {
  int sd = t.ndim() - 2;
  strides5[0] = t.strides[0];
  strides5[1] = t.strides[1];
  for (int k = 0; k < 3; ++k) {
    int d = k - (3 - sd);
    if (sizes3) sizes3[k] = d >= 0 ? t.sizes[2 + d] : 1;
    strides5[2 + k] = d >= 0 ? t.strides[2 + d] : 0;
  }
}

}  // namespace

void max_unpool(Device& dev, const TensorDesc& out, const TensorDesc& self,
                const TensorDesc& indices, uint64_t error_flag) {
  int sd = self.ndim() - 2;
  if (sd < 1 || sd > 3 || out.ndim() != self.ndim() || indices.sizes != self.sizes ||
      indices.dtype != DType::kI64 || out.dtype != self.dtype || out.sizes[0] != self.sizes[0] ||
      out.sizes[1] != self.sizes[1]) {
    throw InvalidArgument("vkml: max_unpool: out " + out.describe() + ", self " +
                          self.describe() + " and indices " + indices.describe() +
                          " do not match");
  }
  UnpoolParams p{};
  p.channels = self.sizes[1];
  five(self, p.in_size, p.self_strides);
  five(indices, nullptr, p.index_strides);
  five(out, p.out_size, p.out_strides);
  p.out_plane = p.out_size[0] * p.out_size[1] * p.out_size[2];
  p.self = self.address;
  p.indices = indices.address;
  p.result = out.address;
  p.error_flag = error_flag;
  p.elem_bytes = static_cast<uint32_t>(dtype_size(self.dtype));
  if (out.numel() == 0) return;
  const int64_t planes = self.sizes[0] * self.sizes[1];
  if (p.in_size[0] * p.in_size[1] * p.in_size[2] >= (int64_t{1} << 32) - 1) {
    throw NotSupported("vkml: max_unpool: planes of 2^32 elements or more");
  }
  nn::Scratch winners(dev, static_cast<uint64_t>(planes * p.out_plane) * 4);
  p.winners = winners.address();
  MemRange win_range{winners.address(), static_cast<uint64_t>(planes * p.out_plane) * 4};
  dev.stream().fill(winners.address(), win_range.bytes, 0);
  constexpr uint32_t kWorkgroup = 256;
  if (self.numel() > 0) {
    UnpoolParams w = p;
    w.numel = self.numel();
    MemRange reads[] = {nn::range_of(indices)};
    MemRange writes[] = {win_range, {error_flag, error_flag ? kIndexErrorBytes : 0}};
    nn::dispatch_groups(dev, "unpool_winners", kWorkgroup, nn::groups_for(w.numel, kWorkgroup), &w,
                        sizeof(w), reads, writes);
  }
  p.numel = out.numel();
  MemRange reads[] = {nn::range_of(self), win_range};
  MemRange writes[] = {nn::range_of(out)};
  nn::dispatch_groups(dev, "unpool_write", kWorkgroup, nn::groups_for(p.numel, kWorkgroup), &p,
                      sizeof(p), reads, writes);
}

}  // namespace vkml::ops
