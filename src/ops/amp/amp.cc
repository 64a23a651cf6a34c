// The amp family: GradScaler's unscale-and-check over a list of tensors, and its scale update.
#include "vkml/amp.h"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "ops/amp/amp_params.h"
#include "ops/launch.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

void check_scalar_tensor(const TensorDesc& t, DType dtype, const char* what) {
  if (t.numel() != 1) throw InvalidArgument(std::string("vkml: ") + what + " must have 1 element");
  if (t.dtype != dtype) {
    throw InvalidArgument(std::string("vkml: ") + what + " must be " +
                          std::string(dtype_name(dtype)) + ", got " +
                          std::string(dtype_name(t.dtype)));
  }
}

bool is_amp_dtype(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
}

// Records one dispatch over `tensors` (all of one dtype, none empty, at most the maximum).
void record_unscale(Device& dev, std::span<const TensorDesc> tensors, uint64_t found_inf,
                    uint64_t inv_scale) {
  AmpUnscaleParams p{};
  p.found_inf = found_inf;
  p.inv_scale = inv_scale;
  std::vector<MemRange> reads{{inv_scale, 4}}, writes{{found_inf, 4}};
  for (const TensorDesc& t : tensors) {
    std::vector<int64_t> strides = t.strides;
    std::vector<int64_t> sizes = coalesce_dims(t.sizes, {&strides});
    if (sizes.size() > VKML_AMP_MAX_DIMS) {
      throw NotSupported("vkml: GradScaler unscale of a tensor with more than " +
                         std::to_string(VKML_AMP_MAX_DIMS) + " non-mergeable dimensions");
    }
    AmpTensor& e = p.tensors[p.count++];
    e.address = t.address;
    e.start = p.total;
    e.ndim = static_cast<uint32_t>(sizes.size());
    std::copy(sizes.begin(), sizes.end(), e.sizes);
    std::copy(strides.begin(), strides.end(), e.strides);
    p.total += t.numel();
    reads.push_back({t.address, t.span_bytes()});
    writes.push_back({t.address, t.span_bytes()});
  }
  uint32_t spec[] = {kElementwiseWorkgroup};
  const Pipeline& pipe =
      dev.pipeline("amp_unscale_" + std::string(dtype_name(tensors.front().dtype)), spec);
  // Only the used entries travel; the shader never reads past `count`.
  uint64_t bytes = offsetof(AmpUnscaleParams, tensors) + p.count * sizeof(AmpTensor);
  uint64_t addr = dev.stream().params(&p, bytes);
  int64_t groups = (p.total + kElementwiseWorkgroup - 1) / kElementwiseWorkgroup;
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, kMaxGroupsX));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), reads, writes);
}

}  // namespace

void amp_unscale_check(Device& dev, std::span<const TensorDesc> tensors,
                       const TensorDesc& found_inf, const TensorDesc& inv_scale) {
  check_scalar_tensor(found_inf, DType::kF32, "found_inf");
  check_scalar_tensor(inv_scale, DType::kF32, "inv_scale");
  for (const TensorDesc& t : tensors) {
    if (!is_amp_dtype(t.dtype)) {
      throw InvalidArgument("vkml: GradScaler can only unscale floating-point tensors, got " +
                            std::string(dtype_name(t.dtype)));
    }
    if (!dev.caps().supports_dtype(t.dtype)) {
      throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                         std::string(dtype_name(t.dtype)) + " tensors");
    }
  }
  // Batches of one dtype (one shader variant), in the order the tensors came.
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    std::vector<TensorDesc> batch;
    for (const TensorDesc& t : tensors) {
      if (t.dtype != dtype || t.numel() == 0) continue;
      batch.push_back(t);
      if (batch.size() == VKML_AMP_MAX_TENSORS) {
        record_unscale(dev, batch, found_inf.address, inv_scale.address);
        batch.clear();
      }
    }
    if (!batch.empty()) record_unscale(dev, batch, found_inf.address, inv_scale.address);
  }
}

void amp_update_scale(Device& dev, const TensorDesc& scale, const TensorDesc& growth_tracker,
                      const TensorDesc& found_inf, double growth_factor, double backoff_factor,
                      int64_t growth_interval) {
  check_scalar_tensor(scale, DType::kF32, "scale");
  check_scalar_tensor(growth_tracker, DType::kI32, "growth_tracker");
  check_scalar_tensor(found_inf, DType::kF32, "found_inf");
  AmpUpdateScaleParams p{};
  p.scale = scale.address;
  p.growth_tracker = growth_tracker.address;
  p.found_inf = found_inf.address;
  p.growth_factor_f64 = std::bit_cast<uint64_t>(growth_factor);
  p.backoff_factor_f64 = std::bit_cast<uint64_t>(backoff_factor);
  p.growth_factor = static_cast<float>(growth_factor);
  p.backoff_factor = static_cast<float>(backoff_factor);
  p.growth_interval = growth_interval;
  const Pipeline& pipe =
      dev.pipeline(dev.caps().fp64_math ? "amp_update_scale_f64" : "amp_update_scale_f32");
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  MemRange reads[] = {{scale.address, 4}, {growth_tracker.address, 4}, {found_inf.address, 4}};
  MemRange writes[] = {{scale.address, 4}, {growth_tracker.address, 4}};
  dev.stream().dispatch(pipe, 1, 1, 1, &addr, sizeof(addr), reads, writes);
}

}  // namespace vkml::ops
