// Autocast for the vkml device: `torch.autocast("vkml", dtype=torch.float16 / torch.bfloat16)`
// casts exactly like CUDA's autocast. PyTorch keeps CUDA's op lists in the AT_FORALL_* macros of
// ATen/autocast_mode.h (shared so that other backends can reuse them); registering the same
// macros on AutocastPrivateUse1 gives vkml the lists of whichever torch we are built against.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#if !defined(AT_FORALL_LOWER_PRECISION_FP) || !defined(AT_FORALL_FP32) ||    \
    !defined(AT_FORALL_FP32_SET_OPT_DTYPE) || !defined(AT_FORALL_PROMOTE) || \
    !defined(AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE)
#error "torch_vkml autocast needs the AT_FORALL_* autocast op lists (torch >= 2.4)"
#endif

namespace torch_vkml::device_autocast {

// AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE spells its signatures without the at:: prefix (torch
// <= 2.12 also lists the named-dimension overloads of norm).
#if __has_include(<ATen/core/Dimname.h>)
using at::DimnameList;
#endif
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

// CUDA's autocast rejects binary_cross_entropy (unsafe in fp16); so does vkml's, with its words.
at::Tensor binary_cross_entropy_banned(const at::Tensor&, const at::Tensor&,
                                       const std::optional<at::Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
              "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
              "layer.\nIn this case, combine the two layers using "
              "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss."
              "  binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.");
}

// Ops without an entry pass through to the vkml kernels unchanged.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  // Matmul-class ops run in the autocast dtype (float16 by default, or bfloat16).
#define VKML_AUTOCAST_LOWER_PRECISION(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
  AT_FORALL_LOWER_PRECISION_FP(VKML_AUTOCAST_LOWER_PRECISION)
#undef VKML_AUTOCAST_LOWER_PRECISION

  // Ops that lose accuracy or overflow in 16 bits run in float32.
#define VKML_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
  AT_FORALL_FP32(VKML_AUTOCAST_FP32)
#undef VKML_AUTOCAST_FP32

  // Reductions and softmax with an optional dtype argument: dtype=float32 unless one was given.
#define VKML_AUTOCAST_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
  AT_FORALL_FP32_SET_OPT_DTYPE(VKML_AUTOCAST_FP32_SET_OPT_DTYPE)
#undef VKML_AUTOCAST_FP32_SET_OPT_DTYPE

  // norm: redispatched to the overload that takes a dtype, with float32 appended.
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)

  // Multi-input ops run in the widest floating type among their inputs.
#define VKML_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_PROMOTE(VKML_AUTOCAST_PROMOTE)
#undef VKML_AUTOCAST_PROMOTE

  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"),
         TORCH_FN((&binary_cross_entropy_banned)));
}

}  // namespace torch_vkml::device_autocast
