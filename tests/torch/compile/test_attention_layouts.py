"""Compiled scaled-dot-product attention with the query, key and value layouts models make.

Inductor calls vkml's _scaled_dot_product_fused_attention_overrideable as an extern kernel and
reads its output with the strides of the op's meta function (the query's dimension order); the
kernel must write that layout."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import TOLERANCES

import torch_vkml  # noqa: F401

DEV = "vkml"
B, H, L, S, E = 2, 3, 9, 7, 16


def rnd(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def contiguous_bhle(n, e, seed):
    return rnd(B, H, n, e, seed=seed)


def gpt2_bhle(n, e, seed):
    """(B, L, H, E) memory seen as (B, H, L, E): view(B, L, H, E).transpose(1, 2)."""
    return rnd(B, n, H * e, seed=seed).view(B, n, H, e).transpose(1, 2)


def vit_bhle(n, e, seed):
    """One slice of a fused qkv projection: reshape(B, L, 3, H, E).permute(2, 0, 3, 1, 4)[0]
    (not dense: the other two thirds lie between its rows)."""
    return rnd(B, n, 3, H, e, seed=seed).permute(2, 0, 3, 1, 4)[1]


def mha_bhle(n, e, seed):
    """Sequence-first (L, B, H, E) memory, as nn.MultiheadAttention's inputs."""
    return rnd(n, B, H, e, seed=seed).permute(1, 2, 0, 3)


LAYOUTS = {"contiguous": contiguous_bhle, "gpt2": gpt2_bhle, "vit": vit_bhle,
           "seq_first": mha_bhle}


def expected_strides(q, ev):
    """The output strides the op's meta function gives for this query."""
    meta_q = torch.empty_strided(q.shape, q.stride(), dtype=q.dtype, device="meta")
    meta_k = torch.empty(B, H, S, q.shape[-1], dtype=q.dtype, device="meta")
    meta_v = torch.empty(B, H, S, ev, dtype=q.dtype, device="meta")
    out = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(meta_q, meta_k, meta_v)
    return out[0].stride()


def to_dev(t, dtype):
    """t on vkml in dtype with t's strides and storage offset."""
    base = torch.as_strided(t, (t.untyped_storage().nbytes() // t.element_size(),), (1,), 0)
    dev = base.to(device=DEV, dtype=dtype)
    return torch.as_strided(dev, t.shape, t.stride(), t.storage_offset())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("ev", [E, 8])
def test_compiled_attention_reads_the_output_by_its_strides(layout, dtype, ev):
    make = LAYOUTS[layout]
    q, k = make(L, E, 1), make(S, E, 2)
    v = make(S, ev, 3)
    causal = layout in ("gpt2", "vit")

    def f(q, k, v):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        # A pointwise kernel and a reshape that read the output by its strides.
        return out * 2 + 1, out.transpose(1, 2).reshape(B, L, H * ev).sin()

    dq, dk, dv = (to_dev(t, dtype) for t in (q, k, v))
    assert dq.stride() == q.stride()
    eager = f(dq, dk, dv)
    compiled = torch.compile(f)(dq, dk, dv)
    ref = f(*(t.to(dtype).double() for t in (q, k, v)))
    rtol, atol = TOLERANCES[dtype]
    for got, e, r in zip(compiled, eager, ref, strict=True):
        assert got.device.type == DEV and got.dtype == dtype and got.shape == r.shape
        torch.testing.assert_close(got.cpu().double(), r, rtol=4 * rtol, atol=4 * atol)
        torch.testing.assert_close(got.cpu().double(), e.cpu().double(), rtol=2 * rtol,
                                   atol=2 * atol)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("ev", [E, 8])
def test_eager_output_has_the_meta_layout(layout, ev):
    make = LAYOUTS[layout]
    q, k, v = (to_dev(t, torch.float32) for t in (make(L, E, 1), make(S, E, 2), make(S, ev, 3)))
    out = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, k, v)[0]
    assert out.stride() == expected_strides(q, ev)
    ref = F.scaled_dot_product_attention(*(t.cpu().double() for t in (q, k, v)))
    torch.testing.assert_close(out.cpu().double(), ref, rtol=1e-4, atol=1e-5)


def test_compiled_attention_backward_with_a_contiguous_query():
    q, k, v = (contiguous_bhle(n, E, s).float() for n, s in ((L, 1), (S, 2), (S, 3)))

    def f(q, k, v):
        return (F.scaled_dot_product_attention(q, k, v) * 3).sum()

    dev_leaves = [t.to(DEV).requires_grad_() for t in (q, k, v)]
    cpu_leaves = [t.double().requires_grad_() for t in (q, k, v)]
    torch.compile(f)(*dev_leaves).backward()
    f(*cpu_leaves).backward()
    for got, ref in zip(dev_leaves, cpu_leaves, strict=True):
        torch.testing.assert_close(got.grad.cpu().double(), ref.grad, rtol=1e-4, atol=1e-5)
