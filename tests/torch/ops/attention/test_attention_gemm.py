"""Scaled dot-product attention through the GEMM path (VKML_ATTENTION=gemm: scores materialised in
fp32 scratch, products on the GEMM kernels, row-wise softmax / dS shaders), against CPU math
attention in float64, and against the fused kernels for the dropout draws. VKML_ATTENTION_SCRATCH
shrinks the scratch budget so that the (batch, key head) pairs go in several chunks."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import only_native
from test_attention import check, heads_split, run_sdpa

import torch_vkml

GEMM_KERNELS = {"attention_rows_fwd", "attention_rows_bwd"}
FUSED_KERNELS = {"attention_fwd", "attention_dq", "attention_dk", "attention_dv"}
# The fused forward: attention_fwd, or on a device with cooperative matrices (fp16/bf16) its
# tensor-core twin attention_coopmat_f16 / _bf16.
FUSED_FORWARDS = {"attention_fwd", "attention_coopmat_f16", "attention_coopmat_bf16"}


@pytest.fixture
def gemm_path(vkml_config):
    vkml_config.set("VKML_ATTENTION", "gemm")


def kernels_during(fn):
    """fn()'s result and the names of the kernels it ran."""
    with torch_vkml.profiler.profile() as prof:
        result = fn()
        torch_vkml.synchronize()
    return result, set(prof.times)


def make_inputs(case, dtype, gen):
    b, h, hkv, lq, s, e, ev, causal, mask_kind = case
    q = heads_split(b, h, lq, e, dtype, gen)
    k = heads_split(b, hkv, s, e, dtype, gen)
    v = heads_split(b, hkv, s, ev, dtype, gen)
    mask = None
    if mask_kind == "bool":  # (B, 1, L, S) broadcast over heads; every row sees key 0
        mask = torch.rand(b, 1, lq, s, generator=gen) > 0.3
        mask[..., 0] = True
    elif mask_kind == "float":  # additive (B, 1, L, S) broadcast over heads, some keys hidden
        mask = torch.randn(b, 1, lq, s, generator=gen)
        mask[torch.rand(b, 1, lq, s, generator=gen) > 0.8] = float("-inf")
        mask[..., 0] = 0.0
        mask = mask.to(dtype)
    return q, k, v, mask, {"is_causal": causal, "enable_gqa": h != hkv}


CASES = [
    # (B, H, Hkv, L, S, E, Ev, causal, mask kind)
    (2, 2, 2, 37, 53, 24, 24, False, None),  # odd sizes, L != S
    (1, 2, 2, 37, 53, 24, 16, True, None),  # causal, value dim != key dim
    (2, 3, 3, 17, 29, 16, 16, False, "bool"),
    (2, 3, 3, 29, 17, 16, 16, False, "float"),
    (2, 4, 2, 19, 23, 16, 16, False, "float"),  # grouped-query attention
    (1, 6, 2, 29, 17, 8, 8, True, None),  # groups of 3, L > S
    (1, 6, 2, 9, 40, 8, 8, False, "bool"),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_gemm_path_against_math_float64(case, dtype, gen, fallback, gemm_path):
    q, k, v, mask, kw = make_inputs(case, dtype, gen)
    results, kernels = kernels_during(lambda: run_sdpa(q, k, v, mask, **kw))
    assert GEMM_KERNELS <= kernels and not kernels & FUSED_KERNELS, kernels
    check(*results, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("budget_pairs", [1, 3, 5])
def test_gemm_path_in_chunks(budget_pairs, dtype, gen, fallback, gemm_path, vkml_config):
    """Scratch for 1, 3 or 5 (batch, key head) pairs of B * Hkv = 6: single pairs, whole
    batches one at a time, and two batches with a partial last chunk."""
    case = (3, 4, 2, 13, 11, 8, 8, False, "float")
    q, k, v, mask, kw = make_inputs(case, dtype, gen)
    # backward: 2 fp32 (+ 2 half) score buffers of 13 rows, each padded from 11 to 16 elements
    per_pair = 13 * 16 * (8 if dtype == torch.float32 else 12)
    vkml_config.set("VKML_ATTENTION_SCRATCH", str(per_pair * budget_pairs))
    results, kernels = kernels_during(lambda: run_sdpa(q, k, v, mask, **kw))
    assert GEMM_KERNELS <= kernels and not kernels & FUSED_KERNELS, kernels
    check(*results, dtype)


def test_gemm_path_too_small_budget_uses_fused(gen, fallback, gemm_path, vkml_config):
    vkml_config.set("VKML_ATTENTION_SCRATCH", "64")  # not even one pair fits
    q, k, v, mask, kw = make_inputs((1, 2, 2, 9, 11, 8, 8, False, None), torch.float32, gen)
    results, kernels = kernels_during(lambda: run_sdpa(q, k, v, mask, **kw))
    assert "attention_fwd" in kernels and not kernels & GEMM_KERNELS, kernels
    check(*results, torch.float32)


def test_fully_hidden_rows_give_zero(gen, fallback, vkml_config):
    """A query that sees no key: output 0 and no gradient through it, on both paths alike."""
    q, k, v, _, _ = make_inputs((1, 2, 2, 6, 9, 8, 8, False, None), torch.float32, gen)
    mask = torch.rand(1, 2, 6, 9, generator=gen) > 0.3
    mask[..., 0] = True
    mask[0, 1, 4] = False
    dout = torch.randn(1, 2, 6, 8, generator=gen)
    runs = {}
    for path in ("fused", "gemm"):
        vkml_config.set("VKML_ATTENTION", path)
        qv, kv, vv = (t.to("vkml").requires_grad_() for t in (q, k, v))
        with only_native():
            out = F.scaled_dot_product_attention(qv, kv, vv, attn_mask=mask.to("vkml"))
            grads = torch.autograd.grad(out, (qv, kv, vv), dout.to("vkml"))
        runs[path] = [t.detach().cpu() for t in (out, *grads)]
    out, dq = runs["gemm"][0], runs["gemm"][1]
    assert torch.equal(out[0, 1, 4], torch.zeros(8)) and torch.equal(dq[0, 1, 4], torch.zeros(8))
    for a, b in zip(runs["gemm"], runs["fused"], strict=True):
        assert torch.isfinite(a).all()
        torch.testing.assert_close(a, b, rtol=2e-5, atol=2e-5)


def keep_mask(b, h, lq, s, p, seed, dtype):
    """Which attention weights survived dropout, read back through v = identity."""
    q = torch.randn(b, h, lq, 8, device="vkml", dtype=dtype)
    k = torch.randn(b, h, s, 8, device="vkml", dtype=dtype)
    eye = torch.eye(s, device="vkml", dtype=dtype).expand(b, h, s, s)
    torch.manual_seed(seed)
    out = F.scaled_dot_product_attention(q, k, eye, dropout_p=p)
    return out.cpu() != 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_dropout_draws_equal_the_fused_kernels(dtype, vkml_config):
    masks = {}
    for path in ("fused", "gemm"):
        vkml_config.set("VKML_ATTENTION", path)
        torch.manual_seed(0)  # the same q, k for both paths
        masks[path], kernels = kernels_during(lambda: keep_mask(2, 3, 37, 29, 0.3, 17, dtype))
        assert ("attention_rows_fwd" in kernels) == (path == "gemm"), kernels
    assert torch.equal(masks["gemm"], masks["fused"])
    assert 0.6 < masks["gemm"].double().mean().item() < 0.8


@pytest.mark.parametrize("hkv", [3, 1])
def test_dropout_gradients_match_the_forward_mask(hkv, gen, fallback, gemm_path):
    p, b, h, lq, s, e = 0.3, 2, 3, 20, 24, 16
    torch.manual_seed(0)
    keep = keep_mask(b, h, lq, s, p, 21, torch.float32)
    q = heads_split(b, h, lq, e, torch.float32, gen)
    k = heads_split(b, hkv, s, e, torch.float32, gen)
    v = heads_split(b, hkv, s, e, torch.float32, gen)
    dout = torch.randn(b, h, lq, e, generator=gen)
    qv, kv, vv = (t.to("vkml").requires_grad_() for t in (q, k, v))
    torch.manual_seed(21)
    with only_native():
        out = F.scaled_dot_product_attention(qv, kv, vv, dropout_p=p, enable_gqa=hkv != h)
        grads = torch.autograd.grad(out, (qv, kv, vv), dout.to("vkml"))
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    kr, vr = (t.repeat_interleave(h // hkv, dim=1) for t in (k64, v64))
    attn = torch.softmax(q64 @ kr.transpose(-2, -1) / e**0.5, -1)
    ref = (attn * keep / (1 - p)) @ vr
    ref_grads = torch.autograd.grad(ref, (q64, k64, v64), dout.double())
    check(out, grads, ref, ref_grads, torch.float32)


def test_gemm_path_zero_size(fallback, gemm_path):
    with only_native():
        z = torch.zeros(0, 4, 8, 16, device="vkml", requires_grad=True)
        out = F.scaled_dot_product_attention(z, z, z)
        out.sum().backward()
    assert out.shape == (0, 4, 8, 16) and z.grad.shape == z.shape


def test_default_and_auto_paths_on_this_device(gen, fallback, vkml_config):
    """Unset or VKML_ATTENTION=auto: the CPU device (lavapipe) keeps the fused kernels and GPUs
    take the GEMM path up to 4096 keys; VKML_ATTENTION=fused keeps the fused kernels everywhere."""
    q, k, v, mask, kw = make_inputs((1, 2, 2, 9, 11, 8, 8, False, None), torch.float32, gen)
    cpu = torch_vkml.get_device_properties().type.lower() == "cpu"
    for mode, gemm in ((None, not cpu), ("auto", not cpu), ("", not cpu), ("fused", False)):
        if mode is None:
            vkml_config.set("VKML_ATTENTION", None)
        else:
            vkml_config.set("VKML_ATTENTION", mode)
        results, kernels = kernels_during(lambda: run_sdpa(q, k, v, mask, **kw))
        assert bool(kernels & GEMM_KERNELS) == gemm, (mode, kernels)
        assert gemm or kernels & FUSED_FORWARDS, (mode, kernels)
        check(*results, torch.float32)


def test_unknown_attention_mode_is_an_error(vkml_config):
    """A misspelt VKML_ATTENTION names the accepted values instead of silently picking a path."""
    with pytest.raises(ValueError, match="VKML_ATTENTION.*auto, fused, gemm, gemm-backward"):
        vkml_config.set("VKML_ATTENTION", "gemm_backward")
    assert torch_vkml.config.get("VKML_ATTENTION") == "auto"


def test_nan_propagates_like_the_fused_kernels(gen, vkml_config):
    """A NaN in a query poisons that query's row; one in a key every row that reads it."""
    q, k, v, _, _ = make_inputs((1, 2, 2, 5, 7, 8, 8, False, None), torch.float32, gen)
    q[0, 1, 3, 2] = float("nan")
    k[0, 0, 4, 1] = float("nan")
    nan_maps = {}
    for path in ("fused", "gemm"):
        vkml_config.set("VKML_ATTENTION", path)
        qv, kv, vv = (t.to("vkml").requires_grad_() for t in (q, k, v))
        out = F.scaled_dot_product_attention(qv, kv, vv)
        grads = torch.autograd.grad(out.sum(), (qv, kv, vv))
        nan_maps[path] = [t.detach().cpu().isnan() for t in (out, *grads)]
    out_nan = nan_maps["gemm"][0]
    assert out_nan[0, 0].all() and out_nan[0, 1, 3].all() and not out_nan[0, 1, :3].any()
    for a, b in zip(nan_maps["gemm"], nan_maps["fused"], strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_gemm_backward_only(dtype, gen, fallback, vkml_config):
    """VKML_ATTENTION=gemm-backward: the fused forward's lse feeds the GEMM backward."""
    vkml_config.set("VKML_ATTENTION", "gemm-backward")
    q, k, v, mask, kw = make_inputs((2, 4, 2, 19, 23, 16, 16, False, "bool"), dtype, gen)
    results, kernels = kernels_during(lambda: run_sdpa(q, k, v, mask, **kw))
    assert kernels & FUSED_FORWARDS and "attention_rows_bwd" in kernels, kernels
    assert not kernels & {"attention_rows_fwd", "attention_dq", "attention_dk"}, kernels
    check(*results, dtype)
