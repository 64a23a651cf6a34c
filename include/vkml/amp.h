// Mixed-precision training support: the two kernels behind GradScaler. Both keep every flag and
// counter on the device, so a training step never waits for the GPU to decide anything.
#pragma once
#include <cstdint>
#include <span>

#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// For every tensor (f32, f16, bf16, or f64 where caps allow; any strides, any mix of dtypes):
// x *= inv_scale in place (skipped when inv_scale is 1), and found_inf = 1 if any element was
// inf or NaN (found_inf is left alone otherwise). found_inf and inv_scale are one-element f32
// tensors. f16/bf16 multiply in f32 and round to nearest even, as PyTorch's opmath does.
void amp_unscale_check(Device& dev, std::span<const TensorDesc> tensors,
                       const TensorDesc& found_inf, const TensorDesc& inv_scale);

// GradScaler's scale update (all one-element tensors): if found_inf != 0, scale *= backoff and
// growth_tracker = 0; otherwise growth_tracker += 1, and when it reaches growth_interval,
// scale *= growth (kept only if finite) and growth_tracker = 0. scale and found_inf are f32,
// growth_tracker i32. scale * factor is computed in double where the device has fp64 math.
void amp_update_scale(Device& dev, const TensorDesc& scale, const TensorDesc& growth_tracker,
                      const TensorDesc& found_inf, double growth_factor, double backoff_factor,
                      int64_t growth_interval);

}  // namespace vkml::ops
