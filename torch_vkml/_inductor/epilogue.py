"""GEMM epilogue fusion: addmm(bias, x, w) + residual becomes one vkml GEMM.

vkml's GEMM adds a scaled C_in and an unscaled bias in its epilogue (include/vkml/gemm.h). A
linear layer followed by a residual add (the output projection and the second MLP layer of a
transformer block) lowers to addmm and a separate pointwise kernel; this post-grad pattern
replaces the pair by `vkml_inductor::addmm_residual`, which Inductor calls as one extern kernel.

Activations stay generated kernels: the GEMM epilogue has no activation stage.
Inductor's own post-grad pass already folds mm + tensor into addmm for devices outside its GPU
list, vkml included."""

from __future__ import annotations

import torch

aten = torch.ops.aten
_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)
_registered = False


def _val(node):
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _fusable(bias, mat1, mat2, residual, out_shape) -> bool:
    vals = [_val(n) for n in (bias, mat1, mat2, residual)]
    if not all(isinstance(v, torch.Tensor) for v in vals):
        return False
    bias_v, mat1_v, mat2_v, res_v = vals
    if mat1_v.device.type != "vkml" or mat1_v.dim() != 2 or mat2_v.dim() != 2:
        return False
    if any(v.device != mat1_v.device or v.dtype != mat1_v.dtype for v in vals):
        return False
    if mat1_v.dtype not in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        return False
    m, n = mat1_v.shape[0], mat2_v.shape[1]
    # The residual is the sum's full shape and contiguous (the residual stream): its (m, n) view
    # costs no copy, and the sum, like the fused call, is row-major. The bias broadcasts to
    # (m, n) as addmm's does.
    if tuple(res_v.shape) != tuple(out_shape) or not res_v.is_contiguous():
        return False
    try:
        torch.broadcast_shapes(tuple(bias_v.shape), (m, n))
    except RuntimeError:
        return False
    return True


def _replace(match, bias, mat1, mat2, residual) -> None:
    def repl(bias, mat1, mat2, residual):
        m, n = mat1.shape[0], mat2.shape[1]
        fused = torch.ops.vkml_inductor.addmm_residual(residual.reshape(m, n), bias, mat1, mat2)
        return fused.view(residual.shape)

    match.replace_by_example(repl, [bias, mat1, mat2, residual])


def _register_fake() -> None:
    @torch.library.register_fake("vkml_inductor::addmm_residual")
    def _(residual, bias, mat1, mat2):
        return mat1.new_empty((mat1.shape[0], mat2.shape[1]))


def register(post_grad) -> None:
    """Adds the patterns to Inductor's last post-grad pattern pass (with its own addmm folding);
    they match only vkml tensors."""
    global _registered
    if _registered:
        return
    _registered = True
    from torch._inductor import lowering
    from torch._inductor.pattern_matcher import (
        CallFunction,
        KeywordArg,
        register_graph_pattern,
    )

    _register_fake()
    lowering.make_fallback(torch.ops.vkml_inductor.addmm_residual.default, warn=False)
    pass_dict = post_grad.pass_patterns[2]
    addmm = CallFunction(aten.addmm.default, KeywordArg("bias"), KeywordArg("mat1"),
                         KeywordArg("mat2"), _users=1)
    sources = [addmm] + [CallFunction(view, addmm, KeywordArg("shape"), _users=1)
                         for view in _VIEWS]

    def check(match):
        kw = match.kwargs
        return _fusable(kw["bias"], kw["mat1"], kw["mat2"], kw["residual"],
                        _val(match.output_node()).shape)

    def handler(match, bias, mat1, mat2, residual, shape=None):
        _replace(match, bias, mat1, mat2, residual)

    for source in sources:
        for args in ((source, KeywordArg("residual")), (KeywordArg("residual"), source)):
            register_graph_pattern(CallFunction(aten.add.Tensor, *args), extra_check=check,
                                   pass_dict=pass_dict)(handler)
