// p-norm distances between rows: cdist (batched, all pairs of two row sets) and pdist (pairs
// i < j of one matrix), forward and backward. Floating tensors of any strides (f16/bf16 compute
// in f32, f64 in double where the device allows); p >= 0 or infinity.
#pragma once
#include "vkml/runtime.h"
#include "vkml/tensor.h"

namespace vkml::ops {

// x1 [B..., P, M], x2 [B..., R, M] and out [B..., P, R] with the same number of batch dims
// (broadcast ones carry stride 0).
void cdist(Device& dev, const TensorDesc& out, const TensorDesc& x1, const TensorDesc& x2,
           double p);

// grad_x1 [B..., P, M] of sum(grad * cdist) from the forward's distances `dist`.
void cdist_backward(Device& dev, const TensorDesc& grad_x1, const TensorDesc& grad,
                    const TensorDesc& x1, const TensorDesc& x2, double p, const TensorDesc& dist);

// x [N, M]; out [N (N - 1) / 2].
void pdist(Device& dev, const TensorDesc& out, const TensorDesc& x, double p);

// grad_x [N, M] of sum(grad * pdist).
void pdist_backward(Device& dev, const TensorDesc& grad_x, const TensorDesc& grad,
                    const TensorDesc& x, double p, const TensorDesc& dist);

}  // namespace vkml::ops
