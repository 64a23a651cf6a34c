"""Scaled dot-product attention on vkml: F.scaled_dot_product_attention and nn.MultiheadAttention
reach the fused kernels (_scaled_dot_product_fused_attention_overrideable) for f32/f16/bf16 and
PyTorch's math path (composite vkml ops) for float64. Results and gradients are checked against
CPU math attention in float64. Every test runs three times: on the fused kernels, on the GEMM path
and on the single-pass cooperative-matrix forward where it applies (VKML_ATTENTION=fused|gemm|flash;
test_attention_gemm.py and test_attention_flash.py cover the last two further)."""

import math

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import HAS_FLOAT64, only_native


@pytest.fixture(autouse=True, params=["fused", "gemm", "flash"])
def attention_path(request, vkml_config):
    vkml_config.set("VKML_ATTENTION", request.param)


FUSED_GRAD_FN = "ScaledDotProductFusedAttentionOverrideableBackward0"
TOL = {torch.float32: (2e-5, 2e-5), torch.float16: (5e-3, 5e-3), torch.bfloat16: (4e-2, 4e-2)}


def heads_split(b, h, n, e, dtype, gen):
    """A (B, H, N, E) view of a (B, N, H, E) tensor, as attention layers make them."""
    x = torch.randn(b, n, h, e, generator=gen, dtype=torch.float64).to(dtype)
    return x.transpose(1, 2)


def run_sdpa(q, k, v, mask=None, **kw):
    """Forward and q/k/v gradients on vkml and on the CPU in float64 (the math path)."""
    qv, kv, vv = (t.to("vkml").requires_grad_() for t in (q, k, v))
    mv = mask.to("vkml") if mask is not None else None
    with only_native():
        out = F.scaled_dot_product_attention(qv, kv, vv, attn_mask=mv, **kw)
        dout = torch.randn(
            out.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(9)
        )
        grads = torch.autograd.grad(out, (qv, kv, vv), dout.to(out.dtype).to("vkml"))
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    m64 = mask.double() if mask is not None and mask.is_floating_point() else mask
    ref = F.scaled_dot_product_attention(q64, k64, v64, attn_mask=m64, **kw)
    ref_grads = torch.autograd.grad(ref, (q64, k64, v64), dout.to(out.dtype).double())
    return out, grads, ref, ref_grads


def check(out, grads, ref, ref_grads, dtype, fused=True):
    rtol, atol = TOL[dtype] if dtype in TOL else (1e-9, 1e-9)
    assert out.device.type == "vkml" and out.dtype == dtype
    if fused:
        assert out.grad_fn.name() == FUSED_GRAD_FN
    torch.testing.assert_close(out.detach().cpu().double(), ref.detach(), rtol=rtol, atol=atol)
    for g, r, name in zip(grads, ref_grads, "qkv", strict=True):
        scale = max(1.0, r.abs().max().item())
        torch.testing.assert_close(
            g.cpu().double(),
            r,
            rtol=rtol,
            atol=atol * scale,
            msg=lambda m, name=name: f"d{name}: {m}",
        )


CASES = [
    # (B, H, Hkv, L, S, E, Ev, causal, mask kind)
    (2, 2, 2, 7, 33, 8, 8, False, None),
    (1, 2, 2, 1, 1, 64, 64, False, None),
    (1, 2, 2, 130, 130, 64, 64, True, None),
    (1, 1, 1, 33, 7, 80, 80, True, None),
    (2, 2, 2, 33, 33, 128, 128, False, "bool"),
    (2, 3, 3, 7, 130, 16, 24, False, "float"),
    (1, 4, 2, 17, 33, 32, 32, False, None),  # grouped-query attention
    (1, 4, 1, 9, 12, 16, 16, True, None),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_sdpa_against_math_float64(case, gen, fallback):
    b, h, hkv, lq, s, e, ev, causal, mask_kind = case
    q = heads_split(b, h, lq, e, torch.float32, gen)
    k = heads_split(b, hkv, s, e, torch.float32, gen)
    v = heads_split(b, hkv, s, ev, torch.float32, gen)
    mask = None
    if mask_kind == "bool":  # (B, 1, L, S) broadcast over heads; every row sees key 0
        mask = torch.rand(b, 1, lq, s, generator=gen) > 0.3
        mask[..., 0] = True
    elif mask_kind == "float":  # (L, S) broadcast over batch and heads, transposed storage
        mask = torch.randn(s, lq, generator=gen).t()
    kw = {"is_causal": causal, "enable_gqa": h != hkv}
    check(*run_sdpa(q, k, v, mask, **kw), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_sdpa_half_precision(dtype, gen, fallback):
    q = heads_split(2, 2, 40, 64, dtype, gen)
    k = heads_split(2, 2, 33, 64, dtype, gen)
    v = heads_split(2, 2, 33, 64, dtype, gen)
    mask = torch.randn(40, 33, generator=gen).to(dtype)
    check(*run_sdpa(q, k, v, mask), dtype)
    check(*run_sdpa(q, k, v, is_causal=True, scale=0.3), dtype)


@pytest.mark.skipif(not HAS_FLOAT64, reason="float64 tensors need fp64 arithmetic")
def test_sdpa_float64_uses_math_path(gen, fallback):
    q, k, v = (heads_split(1, 2, 9, 16, torch.float64, gen) for _ in range(3))
    out, grads, ref, ref_grads = run_sdpa(q, k, v, is_causal=True)
    assert out.grad_fn.name() != FUSED_GRAD_FN
    check(out, grads, ref, ref_grads, torch.float64, fused=False)


def test_fused_choice_and_zero_size(gen, fallback):
    q = torch.randn(2, 4, 8, 16, device="vkml")
    k = torch.randn(2, 2, 8, 16, device="vkml")
    assert torch._fused_sdp_choice(q, q, q) == 4  # SDPBackend.overrideable
    assert torch._fused_sdp_choice(q, k, k, enable_gqa=True) == 4
    if HAS_FLOAT64:
        assert torch._fused_sdp_choice(q.double(), q.double(), q.double()) == 0  # math
    needs_grad = torch.zeros(8, 8, device="vkml", requires_grad=True)
    assert torch._fused_sdp_choice(q, q, q, attn_mask=needs_grad) == 0  # no fused dMask
    with only_native():
        z = torch.zeros(0, 4, 8, 16, device="vkml", requires_grad=True)
        out = F.scaled_dot_product_attention(z, z, z)
        out.sum().backward()
    assert out.shape == (0, 4, 8, 16) and z.grad.shape == z.shape
    with pytest.raises(RuntimeError, match="same dtype"):
        F.scaled_dot_product_attention(q, q.half(), q)


def keep_mask(b, h, lq, s, p, seed):
    """The fused kernel's dropout decisions, read back through v = identity (output = P * keep)."""
    q, k = torch.randn(b, h, lq, 8, device="vkml"), torch.randn(b, h, s, 8, device="vkml")
    eye = torch.eye(s, device="vkml").expand(b, h, s, s)
    torch.manual_seed(seed)
    out = F.scaled_dot_product_attention(q, k, eye, dropout_p=p)
    return out.cpu() != 0


def test_dropout_statistics_and_reproducibility(gen, fallback):
    p, b, h, lq, s = 0.25, 2, 2, 64, 48
    keep = keep_mask(b, h, lq, s, p, 11)
    assert abs(keep.double().mean().item() - (1 - p)) < 0.02
    assert not torch.equal(keep, keep_mask(b, h, lq, s, p, 12))
    q = heads_split(b, h, lq, 16, torch.float32, gen).to("vkml").requires_grad_()
    k = heads_split(b, h, s, 16, torch.float32, gen).to("vkml").requires_grad_()
    v = heads_split(b, h, s, 16, torch.float32, gen).to("vkml").requires_grad_()
    runs = []
    for _ in range(2):
        torch.manual_seed(5)
        with only_native():
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
            runs.append((out, *torch.autograd.grad(out.sum(), (q, k, v))))
    for a, c in zip(*runs, strict=True):
        assert torch.equal(a.detach().cpu(), c.detach().cpu())


def test_dropout_gradients_match_the_forward_mask(gen, fallback):
    p, b, h, lq, s, e = 0.3, 1, 2, 20, 24, 16
    keep = keep_mask(b, h, lq, s, p, 21)  # the same seed gives the same (b, h, m, n) draws
    q = heads_split(b, h, lq, e, torch.float32, gen)
    k = heads_split(b, h, s, e, torch.float32, gen)
    v = heads_split(b, h, s, e, torch.float32, gen)
    dout = torch.randn(b, h, lq, e, generator=gen)
    qv, kv, vv = (t.to("vkml").requires_grad_() for t in (q, k, v))
    torch.manual_seed(21)
    with only_native():
        out = F.scaled_dot_product_attention(qv, kv, vv, dropout_p=p)
        grads = torch.autograd.grad(out, (qv, kv, vv), dout.to("vkml"))
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    attn = torch.softmax(q64 @ k64.transpose(-2, -1) / math.sqrt(e), -1)
    ref = (attn * keep / (1 - p)) @ v64
    ref_grads = torch.autograd.grad(ref, (q64, k64, v64), dout.double())
    check(out, grads, ref, ref_grads, torch.float32)


def graph_nodes(fn) -> set[str]:
    """Names of the autograd nodes reachable from fn."""
    # The visited wrappers stay referenced: torch 2.11 makes a new Python object per access, and
    # a freed one's id() can come back for a different node, which would end the walk early.
    names, seen, alive, todo = set(), set(), [], [fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        alive.append(node)
        seen.add(id(node))
        names.add(node.name())
        todo.extend(nxt for nxt, _ in node.next_functions)
    return names


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_multihead_attention_uses_fused_kernel(dtype, gen, fallback):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(32, 4, batch_first=True)
    x = torch.randn(2, 10, 32, generator=gen)
    pad = torch.zeros(2, 10, dtype=torch.bool)
    pad[1, 7:] = True
    ref, _ = mha.double()(
        x.double(), x.double(), x.double(), key_padding_mask=pad, need_weights=False
    )
    mv = mha.to("vkml", dtype)
    xv = x.to("vkml", dtype).requires_grad_()
    with only_native():
        out, _ = mv(xv, xv, xv, key_padding_mask=pad.to("vkml"), need_weights=False)
        nodes = graph_nodes(out.grad_fn)  # before backward frees the graph
        out.sum().backward()
    assert FUSED_GRAD_FN in nodes
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(
        out.detach().cpu().double(), ref.detach(), rtol=rtol * 4, atol=atol * 4
    )
    assert xv.grad is not None and torch.isfinite(xv.grad.cpu()).all()
