// Native _foreach_* ops (torch.optim's default foreach path, clip_grad_norm_): each op runs as
// one multi-tensor dispatch per dtype over the groups that qualify (vkml tensors on one device,
// contiguous, one float dtype and size per group, the result in that dtype); the other groups
// (integer or mixed dtypes, strides, broadcasting, other devices, complex scalars) go through
// PyTorch's per-tensor loops (the composite "slow" kernels), which give CPU semantics and errors.
#include <ATen/native/ForeachUtils.h>
#include <ATen/ops/_foreach_add_native.h>
#include <ATen/ops/_foreach_addcdiv_native.h>
#include <ATen/ops/_foreach_addcmul_native.h>
#include <ATen/ops/_foreach_copy_native.h>
#include <ATen/ops/_foreach_div_native.h>
#include <ATen/ops/_foreach_lerp_native.h>
#include <ATen/ops/_foreach_maximum_native.h>
#include <ATen/ops/_foreach_minimum_native.h>
#include <ATen/ops/_foreach_mul_native.h>
#include <ATen/ops/_foreach_neg_native.h>
#include <ATen/ops/_foreach_norm_native.h>
#include <ATen/ops/_foreach_sqrt_native.h>
#include <ATen/ops/_foreach_sub_native.h>
#include <ATen/ops/_foreach_zero_native.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "common/bridge.h"
#include "vkml/foreach.h"

namespace torch_vkml::ops_foreach {

namespace nat = at::native;
using vkml::ops::ForeachOp;
using Lists = std::vector<at::TensorList>;
using Tensors = std::vector<at::Tensor>;
using Index = std::vector<size_t>;

// What one native call shares across groups. A scalar operand comes from scalar_of(i) per group
// or, when scalar_tensor is set, from that vkml tensor (read by the kernel: no host sync).
struct Native {
  ForeachOp op;
  double alpha = 1.0;
  bool scalar_operand = false;
  std::optional<at::Tensor> scalar_tensor;
  std::function<double(size_t)> scalar_of = [](size_t) { return 0.0; };
  std::function<bool(size_t)> scalar_ok = [](size_t) { return true; };
};

bool native_dtype(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat:
    case at::kHalf:
    case at::kBFloat16:
      return true;
    case at::kDouble:
      return vkml::ops::foreach_supports(core_device(t), vkml::DType::kF64);
    default:
      return false;
  }
}

// Group i qualifies when every tensor in it is a contiguous vkml tensor on self[0]'s device with
// self[i]'s float dtype and sizes.
bool native_group(at::TensorList self, const Lists& inputs, size_t i) {
  const at::Tensor& s = self[i];
  if (s.device().type() != kVkml || s.device() != self[0].device() || !native_dtype(s) ||
      !s.is_contiguous()) {
    return false;
  }
  for (at::TensorList l : inputs) {
    const at::Tensor& t = l[i];
    if (t.device() != s.device() || t.scalar_type() != s.scalar_type() ||
        t.sizes() != s.sizes() || !t.is_contiguous()) {
      return false;
    }
  }
  return true;
}

Tensors pick(at::TensorList l, const Index& idx) {
  Tensors r;
  r.reserve(idx.size());
  for (size_t i : idx) r.push_back(l[i]);
  return r;
}
std::vector<at::Scalar> pick(at::ArrayRef<at::Scalar> l, const Index& idx) {
  std::vector<at::Scalar> r;
  r.reserve(idx.size());
  for (size_t i : idx) r.push_back(l[i]);
  return r;
}

// Runs the qualifying groups natively into `self` (in place) or new tensors, and the rest through
// slow(rest), which returns their results (out of place) in order. `inputs` are the lists the op
// reads (self first, except for copy and fill).
Tensors apply(const Native& n, at::TensorList self, const Lists& inputs, bool inplace,
              const std::function<Tensors(const Index&)>& slow) {
  Index native, rest;
  for (size_t i = 0; i < self.size(); ++i) {
    (n.scalar_ok(i) && native_group(self, inputs, i) ? native : rest).push_back(i);
  }
  Tensors out(inplace ? 0 : self.size());
  if (!native.empty()) {
    c10::DeviceGuard guard(self[0].device());
    std::vector<vkml::ops::ForeachGroup> groups(native.size());
    Tensors alive;  // outputs of the out-of-place form
    for (size_t k = 0; k < native.size(); ++k) {
      const size_t i = native[k];
      at::Tensor o = inplace ? self[i] : at::empty(self[i].sizes(), self[i].options());
      if (!inplace) out[i] = o;
      groups[k].out = to_desc(o);
      groups[k].inputs = static_cast<int>(inputs.size());
      for (size_t j = 0; j < inputs.size(); ++j) groups[k].in[j] = to_desc(inputs[j][i]);
      groups[k].scalar = n.scalar_of(i);
    }
    vkml::ops::ForeachConfig config;
    config.op = n.op;
    config.alpha = n.alpha;
    config.scalar_operand = n.scalar_operand;
    vkml::TensorDesc scalar_desc;
    if (n.scalar_tensor) {
      scalar_desc = to_desc(*n.scalar_tensor);
      config.scalar_tensor = &scalar_desc;
    }
    vkml::Device& dev = core_device(self[0]);
    translate_errors([&] { vkml::ops::foreach_apply(dev, config, groups); });
  }
  if (!rest.empty()) {
    Tensors r = slow(rest);
    if (!inplace) {
      for (size_t k = 0; k < rest.size(); ++k) out[rest[k]] = r[k];
    }
  }
  return out;
}

bool real(const at::Scalar& s) { return !s.isComplex(); }

// ---- op x scalar / x op scalar-list / x op list / x op 0-dim tensor -------------------------

Native with_scalar(ForeachOp op, const at::Scalar& s, double alpha = 1.0) {
  Native n{op, alpha, true};
  const double v = s.isComplex() ? 0.0 : s.toDouble();
  n.scalar_of = [v](size_t) { return v; };
  n.scalar_ok = [ok = real(s)](size_t) { return ok; };
  return n;
}
Native with_scalars(ForeachOp op, at::ArrayRef<at::Scalar> s, double alpha = 1.0) {
  Native n{op, alpha, true};
  n.scalar_of = [s](size_t i) { return s[i].isComplex() ? 0.0 : s[i].toDouble(); };
  n.scalar_ok = [s](size_t i) { return real(s[i]); };
  return n;
}
// A 0-dim `other`: a CPU one is read as a number (no device sync), a vkml one by the kernel.
// Anything else (dims, complex or integer vkml tensors, another device) takes the slow path.
Native with_tensor(ForeachOp op, at::TensorList self, const at::Tensor& other, double alpha) {
  Native n{op, alpha, true};
  bool ok = other.dim() == 0 && !other.is_complex();
  if (ok && other.device().is_cpu()) {
    // used unrounded, as the CPU's kernels use a CPU scalar operand (add rounds it to the
    // tensor's dtype first; the shader does that)
    const double v = other.item<double>();
    n.scalar_of = [v](size_t) { return v; };
  } else if (ok && other.device() == self[0].device()) {
    const auto t = other.scalar_type();
    ok = t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
    n.scalar_tensor = other;
  } else {
    ok = false;
  }
  n.scalar_ok = [ok](size_t) { return ok; };
  return n;
}

double neg_alpha(const at::Scalar& alpha) { return real(alpha) ? -alpha.toDouble() : 0.0; }

// Binary ops with Scalar, ScalarList, List (and for add/mul/div, Tensor) overloads. Sub is add
// with alpha negated (a - alpha * b), exactly as the CPU computes it.
#define VKML_FOREACH_BINARY(NAME, OP, SLOW)                                                       \
  void NAME##_scalar_(at::TensorList self, const at::Scalar& s) {                                 \
    nat::check_foreach_api_restrictions(self);                                                    \
    apply(with_scalar(OP, s, SCALAR_ALPHA), self, {self}, true, [&](const Index& r) {              \
      nat::foreach_tensor_##SLOW##_scalar_kernel_slow_(pick(self, r), s);                         \
      return Tensors{};                                                                           \
    });                                                                                           \
  }                                                                                               \
  Tensors NAME##_scalar(at::TensorList self, const at::Scalar& s) {                               \
    nat::check_foreach_api_restrictions(self);                                                    \
    return apply(with_scalar(OP, s, SCALAR_ALPHA), self, {self}, false, [&](const Index& r) {      \
      return nat::foreach_tensor_##SLOW##_scalar_kernel_slow(pick(self, r), s);                   \
    });                                                                                           \
  }                                                                                               \
  void NAME##_scalarlist_(at::TensorList self, at::ArrayRef<at::Scalar> s) {                      \
    nat::check_foreach_api_restrictions(self, s);                                                 \
    apply(with_scalars(OP, s, SCALAR_ALPHA), self, {self}, true, [&](const Index& r) {             \
      nat::foreach_tensor_##SLOW##_scalarlist_kernel_slow_(pick(self, r), pick(s, r));            \
      return Tensors{};                                                                           \
    });                                                                                           \
  }                                                                                               \
  Tensors NAME##_scalarlist(at::TensorList self, at::ArrayRef<at::Scalar> s) {                    \
    nat::check_foreach_api_restrictions(self, s);                                                 \
    return apply(with_scalars(OP, s, SCALAR_ALPHA), self, {self}, false, [&](const Index& r) {     \
      return nat::foreach_tensor_##SLOW##_scalarlist_kernel_slow(pick(self, r), pick(s, r));      \
    });                                                                                           \
  }

#define SCALAR_ALPHA 1.0
VKML_FOREACH_BINARY(add, ForeachOp::kAdd, add)
VKML_FOREACH_BINARY(mul, ForeachOp::kMul, mul)
VKML_FOREACH_BINARY(div, ForeachOp::kDiv, div)
VKML_FOREACH_BINARY(maximum, ForeachOp::kMaximum, clamp_min)
VKML_FOREACH_BINARY(minimum, ForeachOp::kMinimum, clamp_max)
#undef SCALAR_ALPHA
#define SCALAR_ALPHA -1.0
VKML_FOREACH_BINARY(sub, ForeachOp::kAdd, sub)
#undef SCALAR_ALPHA

// List overloads: add/sub with alpha, the others without.
#define VKML_FOREACH_LIST(NAME, OP, SLOW)                                                         \
  void NAME##_list_(at::TensorList self, at::TensorList other) {                                  \
    nat::check_foreach_api_restrictions(self, other);                                             \
    apply(Native{OP}, self, {self, other}, true, [&](const Index& r) {                            \
      nat::foreach_tensor_##SLOW##_list_kernel_slow_(pick(self, r), pick(other, r));              \
      return Tensors{};                                                                           \
    });                                                                                           \
  }                                                                                               \
  Tensors NAME##_list(at::TensorList self, at::TensorList other) {                                \
    nat::check_foreach_api_restrictions(self, other);                                             \
    return apply(Native{OP}, self, {self, other}, false, [&](const Index& r) {                     \
      return nat::foreach_tensor_##SLOW##_list_kernel_slow(pick(self, r), pick(other, r));        \
    });                                                                                           \
  }
VKML_FOREACH_LIST(mul, ForeachOp::kMul, mul)
VKML_FOREACH_LIST(div, ForeachOp::kDiv, div)
VKML_FOREACH_LIST(maximum, ForeachOp::kMaximum, clamp_min)
VKML_FOREACH_LIST(minimum, ForeachOp::kMinimum, clamp_max)

template <bool kSub>
void add_list_(at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
  nat::check_foreach_api_restrictions(self, other);
  Native n{ForeachOp::kAdd, kSub ? neg_alpha(alpha) : (real(alpha) ? alpha.toDouble() : 0.0)};
  n.scalar_ok = [ok = real(alpha)](size_t) { return ok; };
  apply(n, self, {self, other}, true, [&](const Index& r) {
    if (kSub) {
      nat::foreach_tensor_sub_list_kernel_slow_(pick(self, r), pick(other, r), alpha);
    } else {
      nat::foreach_tensor_add_list_kernel_slow_(pick(self, r), pick(other, r), alpha);
    }
    return Tensors{};
  });
}
template <bool kSub>
Tensors add_list(at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
  nat::check_foreach_api_restrictions(self, other);
  Native n{ForeachOp::kAdd, kSub ? neg_alpha(alpha) : (real(alpha) ? alpha.toDouble() : 0.0)};
  n.scalar_ok = [ok = real(alpha)](size_t) { return ok; };
  return apply(n, self, {self, other}, false, [&](const Index& r) {
    return kSub ? nat::foreach_tensor_sub_list_kernel_slow(pick(self, r), pick(other, r), alpha)
                : nat::foreach_tensor_add_list_kernel_slow(pick(self, r), pick(other, r), alpha);
  });
}

// Tensor overloads (a 0-dim scalar tensor for every group: lr, clip coefficients).
void add_tensor_(at::TensorList self, const at::Tensor& other, const at::Scalar& alpha) {
  nat::check_foreach_api_restrictions(self);
  Native n = with_tensor(ForeachOp::kAdd, self, other, real(alpha) ? alpha.toDouble() : 0.0);
  if (!real(alpha)) n.scalar_ok = [](size_t) { return false; };
  apply(n, self, {self}, true, [&](const Index& r) {
    nat::foreach_tensor_add_tensor_kernel_slow_(pick(self, r), other, alpha);
    return Tensors{};
  });
}
Tensors add_tensor(at::TensorList self, const at::Tensor& other, const at::Scalar& alpha) {
  nat::check_foreach_api_restrictions(self);
  Native n = with_tensor(ForeachOp::kAdd, self, other, real(alpha) ? alpha.toDouble() : 0.0);
  if (!real(alpha)) n.scalar_ok = [](size_t) { return false; };
  return apply(n, self, {self}, false, [&](const Index& r) {
    return nat::foreach_tensor_add_tensor_kernel_slow(pick(self, r), other, alpha);
  });
}
#define VKML_FOREACH_TENSOR(NAME, OP)                                                             \
  void NAME##_tensor_(at::TensorList self, const at::Tensor& other) {                             \
    nat::check_foreach_api_restrictions(self);                                                    \
    apply(with_tensor(OP, self, other, 1.0), self, {self}, true, [&](const Index& r) {            \
      nat::foreach_tensor_##NAME##_tensor_kernel_slow_(pick(self, r), other);                     \
      return Tensors{};                                                                           \
    });                                                                                           \
  }                                                                                               \
  Tensors NAME##_tensor(at::TensorList self, const at::Tensor& other) {                           \
    nat::check_foreach_api_restrictions(self);                                                    \
    return apply(with_tensor(OP, self, other, 1.0), self, {self}, false, [&](const Index& r) {    \
      return nat::foreach_tensor_##NAME##_tensor_kernel_slow(pick(self, r), other);               \
    });                                                                                           \
  }
VKML_FOREACH_TENSOR(mul, ForeachOp::kMul)
VKML_FOREACH_TENSOR(div, ForeachOp::kDiv)

// ---- lerp, addcmul, addcdiv -------------------------------------------------------------------

// The scalar is a coefficient (lerp's weight, addcmul's value), not the second operand: that is
// input 1.
Native coefficient(Native n) {
  n.scalar_operand = false;
  return n;
}

void foreach_lerp_scalar_(at::TensorList self, at::TensorList end, const at::Scalar& w) {
  nat::check_foreach_api_restrictions(self, end);
  apply(coefficient(with_scalar(ForeachOp::kLerp, w)), self, {self, end}, true,
        [&](const Index& r) {
          nat::foreach_tensor_lerp_list_kernel_slow_(pick(self, r), pick(end, r), w);
          return Tensors{};
        });
}
Tensors foreach_lerp_scalar(at::TensorList self, at::TensorList end, const at::Scalar& w) {
  nat::check_foreach_api_restrictions(self, end);
  return apply(coefficient(with_scalar(ForeachOp::kLerp, w)), self, {self, end}, false,
               [&](const Index& r) {
                 return nat::foreach_tensor_lerp_list_kernel_slow(pick(self, r), pick(end, r), w);
               });
}

void foreach_lerp_scalarlist_(at::TensorList self, at::TensorList end, at::ArrayRef<at::Scalar> w) {
  nat::check_foreach_api_restrictions(self, end, w);
  apply(coefficient(with_scalars(ForeachOp::kLerp, w)), self, {self, end}, true,
        [&](const Index& r) {
          nat::foreach_tensor_lerp_scalarlist_kernel_slow_(pick(self, r), pick(end, r), pick(w, r));
          return Tensors{};
        });
}
Tensors foreach_lerp_scalarlist(at::TensorList self, at::TensorList end,
                                at::ArrayRef<at::Scalar> w) {
  nat::check_foreach_api_restrictions(self, end, w);
  return apply(coefficient(with_scalars(ForeachOp::kLerp, w)), self, {self, end}, false,
               [&](const Index& r) {
                 return nat::foreach_tensor_lerp_scalarlist_kernel_slow(pick(self, r),
                                                                        pick(end, r), pick(w, r));
               });
}

#define VKML_FOREACH_POINTWISE(NAME, OP)                                                          \
  void NAME##_scalar_(at::TensorList self, at::TensorList t1, at::TensorList t2,                  \
                      const at::Scalar& v) {                                                      \
    nat::check_foreach_api_restrictions(self, t1, t2);                                            \
    apply(coefficient(with_scalar(OP, v)), self, {self, t1, t2}, true, [&](const Index& r) {      \
      nat::foreach_tensor_##NAME##_scalar_slow_(pick(self, r), pick(t1, r), pick(t2, r), v);      \
      return Tensors{};                                                                           \
    });                                                                                           \
  }                                                                                               \
  Tensors NAME##_scalar(at::TensorList self, at::TensorList t1, at::TensorList t2,                \
                        const at::Scalar& v) {                                                    \
    nat::check_foreach_api_restrictions(self, t1, t2);                                            \
    return apply(coefficient(with_scalar(OP, v)), self, {self, t1, t2}, false,                    \
                 [&](const Index& r) {                                                            \
                   return nat::foreach_tensor_##NAME##_scalar_slow(pick(self, r), pick(t1, r),    \
                                                                   pick(t2, r), v);               \
                 });                                                                              \
  }                                                                                               \
  void NAME##_scalarlist_(at::TensorList self, at::TensorList t1, at::TensorList t2,              \
                          at::ArrayRef<at::Scalar> s) {                                           \
    nat::check_foreach_api_restrictions(self, t1, t2, s);                                         \
    apply(coefficient(with_scalars(OP, s)), self, {self, t1, t2}, true, [&](const Index& r) {     \
      nat::foreach_tensor_##NAME##_scalarlist_slow_(pick(self, r), pick(t1, r), pick(t2, r),      \
                                                    pick(s, r));                                  \
      return Tensors{};                                                                           \
    });                                                                                           \
  }                                                                                               \
  Tensors NAME##_scalarlist(at::TensorList self, at::TensorList t1, at::TensorList t2,            \
                            at::ArrayRef<at::Scalar> s) {                                         \
    nat::check_foreach_api_restrictions(self, t1, t2, s);                                         \
    return apply(coefficient(with_scalars(OP, s)), self, {self, t1, t2}, false,                   \
                 [&](const Index& r) {                                                            \
                   return nat::foreach_tensor_##NAME##_scalarlist_slow(                           \
                       pick(self, r), pick(t1, r), pick(t2, r), pick(s, r));                      \
                 });                                                                              \
  }                                                                                               \
  /* scalars: a 1-D CPU tensor of one value per group, read on the host as CPU/CUDA do */         \
  void NAME##_tensor_(at::TensorList self, at::TensorList t1, at::TensorList t2,                  \
                      const at::Tensor& scalars) {                                                \
    nat::check_foreach_api_restrictions(self, t1, t2);                                            \
    auto s = nat::convert_tensor_to_scalar_list(scalars, static_cast<int64_t>(self.size()));      \
    NAME##_scalarlist_(self, t1, t2, s);                                                          \
  }                                                                                               \
  Tensors NAME##_tensor(at::TensorList self, at::TensorList t1, at::TensorList t2,                \
                        const at::Tensor& scalars) {                                              \
    nat::check_foreach_api_restrictions(self, t1, t2);                                            \
    auto s = nat::convert_tensor_to_scalar_list(scalars, static_cast<int64_t>(self.size()));      \
    return NAME##_scalarlist(self, t1, t2, s);                                                    \
  }
VKML_FOREACH_POINTWISE(addcmul, ForeachOp::kAddcmul)
VKML_FOREACH_POINTWISE(addcdiv, ForeachOp::kAddcdiv)

// ---- unary, zero, copy ------------------------------------------------------------------------

#define VKML_FOREACH_UNARY(NAME, OP)                                                              \
  void NAME##_(at::TensorList self) {                                                             \
    nat::check_foreach_api_restrictions(self);                                                    \
    apply(Native{OP}, self, {self}, true, [&](const Index& r) {                                   \
      nat::foreach_tensor_##NAME##_slow_(pick(self, r));                                          \
      return Tensors{};                                                                           \
    });                                                                                           \
  }                                                                                               \
  Tensors NAME(at::TensorList self) {                                                             \
    nat::check_foreach_api_restrictions(self);                                                    \
    return apply(Native{OP}, self, {self}, false, [&](const Index& r) {                           \
      return nat::foreach_tensor_##NAME##_slow(pick(self, r));                                    \
    });                                                                                           \
  }
VKML_FOREACH_UNARY(sqrt, ForeachOp::kSqrt)
VKML_FOREACH_UNARY(neg, ForeachOp::kNeg)

void zero_(at::TensorList self) {
  nat::check_foreach_api_restrictions(self);
  apply(Native{ForeachOp::kFill}, self, {}, true, [&](const Index& r) {
    nat::foreach_tensor_zero_slow_(pick(self, r));
    return Tensors{};
  });
}

void copy_(at::TensorList self, at::TensorList src, bool non_blocking) {
  nat::check_foreach_api_restrictions(self, src);
  apply(Native{ForeachOp::kCopy}, self, {src}, true, [&](const Index& r) {
    nat::foreach_tensor_copy_list_kernel_slow_(pick(self, r), pick(src, r), non_blocking);
    return Tensors{};
  });
}

// ---- norm -------------------------------------------------------------------------------------

// ord 1, 2 and inf over float tensors in their own dtype run natively (inf only over non-empty
// tensors: the CPU raises on empty ones); other orders and dtype= casts take the slow path.
Tensors norm(at::TensorList self, const at::Scalar& ord, std::optional<at::ScalarType> dtype) {
  nat::check_foreach_api_restrictions(self);
  std::optional<vkml::ops::ForeachNorm> kind;
  const double p = ord.isComplex() ? 0.0 : ord.toDouble();
  if (!ord.isComplex() && p == 1.0) kind = vkml::ops::ForeachNorm::kL1;
  if (!ord.isComplex() && p == 2.0) kind = vkml::ops::ForeachNorm::kL2;
  if (!ord.isComplex() && p == std::numeric_limits<double>::infinity()) {
    kind = vkml::ops::ForeachNorm::kInf;
  }
  Index native, rest;
  for (size_t i = 0; i < self.size(); ++i) {
    bool ok = kind && native_group(self, {}, i) && (!dtype || *dtype == self[i].scalar_type()) &&
              (*kind != vkml::ops::ForeachNorm::kInf || self[i].numel() > 0);
    (ok ? native : rest).push_back(i);
  }
  Tensors out(self.size());
  if (!native.empty()) {
    c10::DeviceGuard guard(self[0].device());
    std::vector<vkml::TensorDesc> in, res;
    for (size_t i : native) {
      out[i] = at::empty({}, self[i].options());
      in.push_back(to_desc(self[i]));
      res.push_back(to_desc(out[i]));
    }
    vkml::Device& dev = core_device(self[0]);
    translate_errors([&] { vkml::ops::foreach_norm(dev, *kind, in, res); });
  }
  if (!rest.empty()) {
    Tensors r = nat::foreach_tensor_norm_slow(pick(self, rest), ord, dtype);
    for (size_t k = 0; k < rest.size(); ++k) out[rest[k]] = r[k];
  }
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define VKML_REGISTER_BINARY(NAME)                                   \
  m.impl("_foreach_" #NAME "_.Scalar", NAME##_scalar_);             \
  m.impl("_foreach_" #NAME ".Scalar", NAME##_scalar);               \
  m.impl("_foreach_" #NAME "_.ScalarList", NAME##_scalarlist_);     \
  m.impl("_foreach_" #NAME ".ScalarList", NAME##_scalarlist);
  VKML_REGISTER_BINARY(add)
  VKML_REGISTER_BINARY(sub)
  VKML_REGISTER_BINARY(mul)
  VKML_REGISTER_BINARY(div)
  VKML_REGISTER_BINARY(maximum)
  VKML_REGISTER_BINARY(minimum)
  m.impl("_foreach_clamp_min_.Scalar", maximum_scalar_);
  m.impl("_foreach_clamp_min.Scalar", maximum_scalar);
  m.impl("_foreach_clamp_min_.ScalarList", maximum_scalarlist_);
  m.impl("_foreach_clamp_min.ScalarList", maximum_scalarlist);
  m.impl("_foreach_clamp_max_.Scalar", minimum_scalar_);
  m.impl("_foreach_clamp_max.Scalar", minimum_scalar);
  m.impl("_foreach_clamp_max_.ScalarList", minimum_scalarlist_);
  m.impl("_foreach_clamp_max.ScalarList", minimum_scalarlist);
  m.impl("_foreach_add_.List", add_list_<false>);
  m.impl("_foreach_add.List", add_list<false>);
  m.impl("_foreach_sub_.List", add_list_<true>);
  m.impl("_foreach_sub.List", add_list<true>);
  m.impl("_foreach_mul_.List", mul_list_);
  m.impl("_foreach_mul.List", mul_list);
  m.impl("_foreach_div_.List", div_list_);
  m.impl("_foreach_div.List", div_list);
  m.impl("_foreach_maximum_.List", maximum_list_);
  m.impl("_foreach_maximum.List", maximum_list);
  m.impl("_foreach_minimum_.List", minimum_list_);
  m.impl("_foreach_minimum.List", minimum_list);
  m.impl("_foreach_clamp_min_.List", maximum_list_);
  m.impl("_foreach_clamp_min.List", maximum_list);
  m.impl("_foreach_clamp_max_.List", minimum_list_);
  m.impl("_foreach_clamp_max.List", minimum_list);
  m.impl("_foreach_add_.Tensor", add_tensor_);
  m.impl("_foreach_add.Tensor", add_tensor);
  m.impl("_foreach_mul_.Tensor", mul_tensor_);
  m.impl("_foreach_mul.Tensor", mul_tensor);
  m.impl("_foreach_div_.Tensor", div_tensor_);
  m.impl("_foreach_div.Tensor", div_tensor);
  m.impl("_foreach_lerp_.Scalar", foreach_lerp_scalar_);
  m.impl("_foreach_lerp.Scalar", foreach_lerp_scalar);
  m.impl("_foreach_lerp_.ScalarList", foreach_lerp_scalarlist_);
  m.impl("_foreach_lerp.ScalarList", foreach_lerp_scalarlist);
#define VKML_REGISTER_POINTWISE(NAME)                                \
  m.impl("_foreach_" #NAME "_.Scalar", NAME##_scalar_);             \
  m.impl("_foreach_" #NAME ".Scalar", NAME##_scalar);               \
  m.impl("_foreach_" #NAME "_.ScalarList", NAME##_scalarlist_);     \
  m.impl("_foreach_" #NAME ".ScalarList", NAME##_scalarlist);       \
  m.impl("_foreach_" #NAME "_.Tensor", NAME##_tensor_);             \
  m.impl("_foreach_" #NAME ".Tensor", NAME##_tensor);
  VKML_REGISTER_POINTWISE(addcmul)
  VKML_REGISTER_POINTWISE(addcdiv)
  m.impl("_foreach_sqrt_", sqrt_);
  m.impl("_foreach_sqrt", sqrt);
  m.impl("_foreach_neg_", neg_);
  m.impl("_foreach_neg", neg);
  m.impl("_foreach_zero_", zero_);
  m.impl("_foreach_copy_", copy_);
  m.impl("_foreach_norm.Scalar", norm);
}

#undef VKML_FOREACH_BINARY
#undef VKML_FOREACH_LIST
#undef VKML_FOREACH_TENSOR
#undef VKML_FOREACH_POINTWISE
#undef VKML_FOREACH_UNARY
#undef VKML_REGISTER_BINARY
#undef VKML_REGISTER_POINTWISE

}  // namespace torch_vkml::ops_foreach
