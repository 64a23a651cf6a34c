// Scaled dot-product attention on vkml through PyTorch's hook for out-of-tree devices:
// _fused_sdp_choice picks the "overrideable" backend for inputs the fused kernels take (4-D
// f32/f16/bf16, grouped-query heads, any mask that needs no gradient) and "math" otherwise
// (f64, other ranks, a mask that requires grad), which PyTorch then runs as composite vkml ops.
// F.scaled_dot_product_attention and nn.MultiheadAttention both arrive here.
#include <ATen/SDPBackend.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/scalar_tensor.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <mutex>

#include "common/nn_bridge.h"
#include "device/generator.h"
#include "vkml/attention.h"
#include "vkml/random.h"

namespace torch_vkml::ops_scaled_dot_product_attention {

bool fused_dtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

// True when a mask of these sizes broadcasts to (B, H, L, S).
bool mask_broadcasts(const at::Tensor& mask, const int64_t (&full)[4]) {
  if (mask.dim() > 4) return false;
  const int64_t off = 4 - mask.dim();
  for (int64_t d = 0; d < mask.dim(); ++d) {
    if (mask.size(d) != 1 && mask.size(d) != full[d + off]) return false;
  }
  return true;
}

int64_t fused_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::optional<at::Tensor>& attn_mask, double dropout_p,
                         bool is_causal, std::optional<double> scale, bool enable_gqa) {
  constexpr auto kMath = static_cast<int64_t>(at::SDPBackend::math);
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return kMath;
  if (q.is_nested() || k.is_nested() || v.is_nested()) return kMath;
  if (!fused_dtype(q.scalar_type()) || k.scalar_type() != q.scalar_type() ||
      v.scalar_type() != q.scalar_type()) {
    return kMath;
  }
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != v.size(1) ||
      k.size(2) != v.size(2) || k.size(3) != q.size(3)) {
    return kMath;  // the math path broadcasts or raises PyTorch's own error
  }
  const int64_t hq = q.size(1), hkv = k.size(1);
  if (hq != hkv && !(enable_gqa && hkv > 0 && hq % hkv == 0)) return kMath;
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) return kMath;
  if (attn_mask.has_value() && attn_mask->defined()) {
    const at::Tensor& m = *attn_mask;
    if (is_causal) return kMath;  // the math path raises for this combination
    if (m.requires_grad() && at::GradMode::is_enabled()) return kMath;  // no fused dMask
    const int64_t full[4] = {q.size(0), hq, q.size(2), k.size(2)};
    if (!mask_broadcasts(m, full)) return kMath;
    if (m.scalar_type() != at::kBool && m.scalar_type() != q.scalar_type()) return kMath;
    if (m.device() != q.device()) return kMath;
  }
  return static_cast<int64_t>(at::SDPBackend::overrideable);
}

vkml::ops::AttentionOptions options_for(const at::Tensor& q, double dropout_p, bool is_causal,
                                        std::optional<double> scale) {
  vkml::ops::AttentionOptions opt;
  opt.causal = is_causal;
  opt.dropout_p = dropout_p;
  opt.scale = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  return opt;
}

// The output in the query's dimension order, as the op's meta function allocates it (Inductor
// reads the output of the extern call by those strides): a query seen as (B, H, L, E) over
// (B, L, H, E) memory gives (B, L, H, Ev) memory, which transpose(1, 2).reshape reads as is.
at::Tensor output_like_query(const at::Tensor& q, int64_t ev) {
  if (q.size(3) == ev) return at::empty_like(q);
  std::array<int64_t, 4> order = {0, 1, 2, 3};  // outermost first; ties keep dimension order
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return q.stride(a) > q.stride(b); });
  const std::array<int64_t, 4> sizes = {q.size(0), q.size(1), q.size(2), ev};
  std::array<int64_t, 4> strides{};
  int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    strides[order[i]] = stride;
    stride *= sizes[order[i]];
  }
  return at::empty_strided(sizes, strides, q.options());
}

void check_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const at::Tensor& mask, const char* op) {
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, op,
              ": expected 4-D query, key and value");
  TORCH_CHECK(q.scalar_type() == k.scalar_type() && q.scalar_type() == v.scalar_type(), op,
              ": expected query, key and value to have the same dtype");
  TORCH_CHECK_NOT_IMPLEMENTED(fused_dtype(q.scalar_type()), op, ": no vkml kernel for ",
                              q.scalar_type(), " (the math backend handles it)");
  nn::check_on_device(q, k, op, "key");
  nn::check_on_device(q, v, op, "value");
  nn::check_on_device(q, mask, op, "attn_bias");
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor,
           at::Tensor, at::Tensor>
fused_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
              const std::optional<at::Tensor>& attn_bias, double dropout_p, bool is_causal,
              bool return_debug_mask, std::optional<double> scale) {
  const at::Tensor& mask = nn::value_or_undefined(attn_bias);
  const char* op = "_scaled_dot_product_fused_attention_overrideable";
  check_inputs(q, k, v, mask, op);
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2), S = k.size(2), Ev = v.size(3);
  at::Tensor out = output_like_query(q, Ev);
  at::Tensor lse = at::empty({B, H, L}, q.options().dtype(at::kFloat));
  vkml::ops::AttentionOptions opt = options_for(q, dropout_p, is_causal, scale);
  if (dropout_p > 0.0) {
    auto* gen = at::get_generator_or_default<VkmlGeneratorImpl>(
        std::nullopt, default_generator(q.device().index()));
    std::lock_guard<std::mutex> lock(gen->mutex_);
    std::tie(opt.seed, opt.offset) =
        gen->philox_engine_inputs(vkml::ops::random_counter_increment(B * H * L * S));
  }
  nn::run_on(q, [&](vkml::Device& dev) {
    vkml::ops::attention_forward(dev, to_desc(out), to_desc(lse), to_desc(q), to_desc(k),
                                 to_desc(v), nn::desc_or_empty(mask), opt);
  });
  // Host scalars, as CUDA's flash attention returns them outside graph capture.
  at::Tensor seed = at::scalar_tensor(static_cast<int64_t>(opt.seed), at::dtype(at::kLong));
  at::Tensor offset = at::scalar_tensor(static_cast<int64_t>(opt.offset), at::dtype(at::kLong));
  at::Tensor debug = return_debug_mask ? at::empty({0}, q.options()) : at::Tensor();
  return {out,          lse,          at::Tensor(), at::Tensor(), c10::SymInt(L),
          c10::SymInt(S), seed,       offset,       debug};
}

uint64_t host_u64(const at::Tensor& t) {
  return t.defined() && t.numel() == 1 ? static_cast<uint64_t>(t.item<int64_t>()) : 0;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_backward(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& lse, const at::Tensor& cum_seq_q, const at::Tensor& cum_seq_k,
    c10::SymInt max_q, c10::SymInt max_k, double dropout_p, bool is_causal,
    const at::Tensor& philox_seed, const at::Tensor& philox_offset,
    std::optional<double> scale) {
  const char* op = "_scaled_dot_product_fused_attention_overrideable_backward";
  check_inputs(q, k, v, attn_bias, op);
  TORCH_CHECK_NOT_IMPLEMENTED(!(grad_input_mask[3] && attn_bias.defined()), op,
                              ": vkml computes no gradient for attn_bias");
  nn::check_on_device(q, grad_out, op, "grad_out");
  nn::check_on_device(q, out, op, "out");
  nn::check_on_device(q, lse, op, "logsumexp");
  at::Tensor dq = grad_input_mask[0] ? at::empty_like(q) : at::Tensor();
  at::Tensor dk = grad_input_mask[1] ? at::empty_like(k) : at::Tensor();
  at::Tensor dv = grad_input_mask[2] ? at::empty_like(v) : at::Tensor();
  vkml::ops::AttentionOptions opt = options_for(q, dropout_p, is_causal, scale);
  if (dropout_p > 0.0) {
    opt.seed = host_u64(philox_seed);
    opt.offset = host_u64(philox_offset);
  }
  nn::run_on(q, [&](vkml::Device& dev) {
    vkml::ops::attention_backward(dev, nn::desc_or_empty(dq), nn::desc_or_empty(dk),
                                  nn::desc_or_empty(dv), to_desc(grad_out), to_desc(q),
                                  to_desc(k), to_desc(v), to_desc(out), to_desc(lse),
                                  nn::desc_or_empty(attn_bias), opt);
  });
  return {dq, dk, dv, at::Tensor()};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_sdp_choice", fused_sdp_choice);
  m.impl("_scaled_dot_product_fused_attention_overrideable", fused_forward);
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", fused_backward);
}

}  // namespace torch_vkml::ops_scaled_dot_product_attention

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub,
                              &torch_vkml::ops_scaled_dot_product_attention::fused_sdp_choice);
}  // namespace at::native
