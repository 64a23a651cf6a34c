"""Scaled dot-product attention on the split-KV decode kernels (attention_decode_split_sg, and
attention_decode_reduce where the keys go in several splits): a few queries against many keys,
as in LLM decoding, against CPU math attention in float64. Covers 1-8 queries, odd key counts up
to 5000, grouped-query and multi-query heads, head dims 64-256, masks, top-left causal alignment,
KV caches that are views of a preallocated cache, fp32/fp16/bf16 and empty batches."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import only_native
from test_attention import TOL, run_sdpa

import torch_vkml

SPLIT, REDUCE = "attention_decode_split_sg", "attention_decode_reduce"
# The split-KV kernels reduce with subgroup arithmetic: without it every path is the fused one.
DECODE = torch_vkml.get_device_properties().subgroup_arithmetic


@pytest.fixture
def decode_path(vkml_config):
    vkml_config.set("VKML_ATTENTION", "decode")


def kernels_during(fn):
    with torch_vkml.profiler.profile() as prof:
        result = fn()
        torch_vkml.synchronize()
    return result, set(prof.times)


def cache_view(b, hkv, s, e, dtype, gen, layout):
    """Keys or values (B, Hkv, S, E) laid out as a KV cache holds them: "cache" is the first S
    positions of a preallocated (B, Hkv, S + 37, E) buffer, "bshd" a (B, S, Hkv, E) tensor seen
    through transpose(1, 2), "strided" every other element of the last dim."""
    if layout == "cache":
        full = torch.randn(b, hkv, s + 37, e, generator=gen, dtype=torch.float64).to(dtype)
        return full[:, :, :s]
    if layout == "bshd":
        full = torch.randn(b, s, hkv, e, generator=gen, dtype=torch.float64).to(dtype)
        return full.transpose(1, 2)
    full = torch.randn(b, hkv, s, 2 * e, generator=gen, dtype=torch.float64).to(dtype)
    return full[..., ::2]


def forward_both(q, k, v, mask=None, **kw):
    """The vkml output (no grad) and the float64 CPU reference."""
    with torch.no_grad(), only_native():
        mv = mask.to("vkml") if mask is not None else None
        out = F.scaled_dot_product_attention(
            q.to("vkml"), k.to("vkml"), v.to("vkml"), attn_mask=mv, **kw
        )
    m64 = mask.double() if mask is not None and mask.is_floating_point() else mask
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=m64, **kw)
    return out, ref


def assert_close(out, ref, dtype):
    rtol, atol = TOL[dtype]
    assert out.device.type == "vkml" and out.dtype == dtype
    torch.testing.assert_close(out.cpu().double(), ref, rtol=rtol, atol=atol)


CASES = [
    # (B, H, Hkv, L, S, E, Ev, layout)
    (1, 2, 2, 1, 1, 64, 64, "cache"),  # a single key
    (2, 4, 1, 1, 5000, 64, 64, "cache"),  # multi-query heads, many splits
    (1, 8, 2, 3, 777, 80, 80, "bshd"),  # 12 rows per key head: two row blocks on CPU devices
    (1, 14, 2, 1, 301, 64, 64, "cache"),  # groups of 7 (Qwen2.5-0.5B's heads)
    (1, 2, 2, 8, 129, 128, 128, "strided"),
    (1, 2, 1, 2, 513, 256, 256, "cache"),  # the widest heads
    (3, 2, 2, 5, 70, 32, 48, "bshd"),  # value dim != key dim
    (1, 4, 2, 1, 64, 16, 8, "cache"),
    (2, 4, 2, 2, 300, 64, 64, "cache/strided"),  # keys read 4 at a time, values one by one
]


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.bfloat16], ids=lambda d: str(d).split(".")[1]
)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_decode_against_math_float64(case, dtype, gen, fallback, decode_path):
    b, h, hkv, lq, s, e, ev, layout = case
    q = torch.randn(b, h, lq, e, generator=gen, dtype=torch.float64).to(dtype)
    k_layout, v_layout = (layout.split("/") * 2)[:2]
    k = cache_view(b, hkv, s, e, dtype, gen, k_layout)
    v = cache_view(b, hkv, s, ev, dtype, gen, v_layout)
    (out, ref), kernels = kernels_during(lambda: forward_both(q, k, v, enable_gqa=h != hkv))
    assert (SPLIT in kernels) == DECODE
    assert_close(out, ref, dtype)


MASK_CASES = [
    # (B, H, Hkv, L, S, mask kind)
    (2, 4, 2, 1, 600, "bool"),  # (B, 1, L, S), broadcast over heads
    (1, 4, 4, 4, 333, "float"),  # additive with -inf, (L, S) with transposed storage
    (2, 2, 1, 2, 1500, "float_full"),  # (B, H, L, S)
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("case", MASK_CASES, ids=lambda c: "-".join(map(str, c)))
def test_decode_masks(case, dtype, gen, fallback, decode_path):
    b, h, hkv, lq, s, kind = case
    q = torch.randn(b, h, lq, 64, generator=gen).to(dtype)
    k, v = (cache_view(b, hkv, s, 64, dtype, gen, "cache") for _ in range(2))
    if kind == "bool":
        mask = torch.rand(b, 1, lq, s, generator=gen) > 0.4
        mask[..., 3] = True
    elif kind == "float":
        mask = torch.randn(s, lq, generator=gen).t()
        mask[torch.rand(lq, s, generator=gen) > 0.7] = float("-inf")
        mask[:, 0] = 0.0
        mask = mask.to(dtype)
    else:
        mask = torch.randn(b, h, lq, s, generator=gen).to(dtype)
    (out, ref), kernels = kernels_during(lambda: forward_both(q, k, v, mask, enable_gqa=True))
    assert (SPLIT in kernels) == DECODE
    assert_close(out, ref, dtype)


@pytest.mark.parametrize("lq,s", [(1, 400), (4, 900), (8, 8), (3, 2)])
def test_decode_causal_is_top_left(lq, s, gen, fallback, decode_path):
    """PyTorch's is_causal for L != S hides key n from query m when n > m (the top-left
    alignment of torch.ones(L, S).tril()): a single query sees key 0 only."""
    q = torch.randn(2, 6, lq, 64, generator=gen)
    k, v = (cache_view(2, 2, s, 64, torch.float32, gen, "cache") for _ in range(2))
    out, ref = forward_both(q, k, v, is_causal=True, enable_gqa=True)
    assert_close(out, ref, torch.float32)
    if lq == 1:
        torch.testing.assert_close(out.cpu()[:, :, 0], v.repeat_interleave(3, 1)[:, :, 0])


def test_decode_fully_hidden_rows_give_zero(gen, fallback, decode_path):
    q = torch.randn(1, 2, 2, 32, generator=gen)
    k, v = (torch.randn(1, 2, 700, 32, generator=gen) for _ in range(2))
    mask = torch.ones(1, 2, 2, 700, dtype=torch.bool)
    mask[:, :, 1] = False  # the second query sees no key
    out, ref = forward_both(q, k, v, mask)
    assert_close(out[:, :, :1], ref[:, :, :1], torch.float32)
    assert torch.equal(out.cpu()[:, :, 1], torch.zeros(1, 2, 32))  # as the fused and GEMM paths


def test_decode_forward_feeds_the_backward(gen, fallback, decode_path):
    """A forward on the decode kernels saves the logsumexp the backward reads."""
    q = torch.randn(1, 4, 2, 32, generator=gen, dtype=torch.float64).float()
    k = torch.randn(1, 2, 300, 32, generator=gen, dtype=torch.float64).float()
    v = torch.randn(1, 2, 300, 32, generator=gen, dtype=torch.float64).float()
    (out, grads, ref, ref_grads), kernels = kernels_during(
        lambda: run_sdpa(q, k, v, enable_gqa=True)
    )
    assert (SPLIT in kernels) == DECODE
    torch.testing.assert_close(out.detach().cpu().double(), ref.detach(), rtol=2e-5, atol=2e-5)
    for g, r in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(g.cpu().double(), r, rtol=1e-4, atol=1e-4)


def test_decode_dropout_draws_equal_the_fused_kernels(vkml_config):
    q = torch.randn(1, 4, 2, 16, device="vkml")
    k, v = torch.randn(1, 4, 300, 16, device="vkml"), torch.randn(1, 4, 300, 16, device="vkml")
    outs = {}
    for path in ("decode", "fused"):
        vkml_config.set("VKML_ATTENTION", path)
        torch.manual_seed(3)
        outs[path], kernels = kernels_during(
            lambda: F.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
        )
        assert (SPLIT in kernels) == (path == "decode" and DECODE)
    torch.testing.assert_close(outs["decode"].cpu(), outs["fused"].cpu(), rtol=1e-5, atol=1e-5)


def test_decode_zero_size(fallback, decode_path):
    q = torch.randn(0, 4, 1, 64, device="vkml")
    k = torch.randn(0, 2, 100, 64, device="vkml")
    with only_native():
        out = F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    assert out.shape == (0, 4, 1, 64)


@pytest.mark.parametrize(
    "lq,s,hq,hkv,expect",
    [
        (1, 512, 8, 2, True),  # one query over many keys
        (8, 64, 4, 4, True),
        (16, 512, 4, 4, False),  # too many queries: the other paths
        (1, 32, 4, 4, False),  # too few keys
        (8, 512, 16, 1, False),  # 128 query rows per key head
    ],
)
def test_auto_picks_decode_for_short_queries(lq, s, hq, hkv, expect, gen, fallback, vkml_config):
    vkml_config.set("VKML_ATTENTION", "auto")
    q = torch.randn(1, hq, lq, 64, generator=gen)
    k, v = (torch.randn(1, hkv, s, 64, generator=gen) for _ in range(2))
    (out, ref), kernels = kernels_during(lambda: forward_both(q, k, v, enable_gqa=hq != hkv))
    assert (SPLIT in kernels) == (expect and DECODE)
    assert_close(out, ref, torch.float32)


def test_decode_splits_and_merges(gen, fallback, decode_path):
    """Enough keys for several splits on every device class: the reduce pass runs."""
    q = torch.randn(1, 2, 1, 64, generator=gen)
    k, v = (torch.randn(1, 1, 4099, 64, generator=gen) for _ in range(2))
    (out, ref), kernels = kernels_during(lambda: forward_both(q, k, v, enable_gqa=True))
    assert ({SPLIT, REDUCE} <= kernels) == DECODE
    assert_close(out, ref, torch.float32)
