"""Scaled dot-product attention's flash kernels on cooperative matrices (VKML_ATTENTION=flash:
the single-pass forward and the dq/dk/dv backward; flash-forward: the forward only), made
mandatory by VKML_SDPA_COOPMAT=1, against CPU math attention in float64: float and bool masks,
causal with L > S and L < S, grouped-query heads, head dims 64, 80, 96, 128 and 256 and one that
takes the element-wise loads, head-split (strided) layouts, and dropout draws equal to the fused
kernels'. Devices without cooperative matrices (lavapipe) cannot run the kernels: those tests skip
there, and one test checks that VKML_ATTENTION=flash runs as auto on them."""

import pytest
import torch
import torch.nn.functional as F
from test_attention import check, run_sdpa
from test_attention_gemm import kernels_during, keep_mask, make_inputs

import torch_vkml

FLASH_KERNELS = {"attention_flash_f16", "attention_flash_bf16"}
FLASH_BACKWARD = {f"attention_flash_{m}_{t}" for m in ("dq", "dk", "dv") for t in ("f16", "bf16")}


def flash_missing(dtype):
    """Why the flash kernel cannot run dtype on this device, or "" where it can."""
    props = torch_vkml.get_device_properties()
    name = "attention_flash_bf16" if dtype == torch.bfloat16 else "attention_flash_f16"
    if not props.cooperative_matrix or (dtype == torch.bfloat16 and
                                        not props.cooperative_matrix_bf16):
        return f"{props.name} has no cooperative matrices for {dtype}"
    if name not in torch_vkml._C.shader_variants():
        return f"{name} is not in this build (its glslang lacks cooperative matrices)"
    return ""


@pytest.fixture
def flash_path(vkml_config):
    vkml_config.set("VKML_ATTENTION", "flash")
    vkml_config.set("VKML_SDPA_COOPMAT", "1")


CASES = [
    # (B, H, Hkv, L, S, E, Ev, causal, mask kind)
    (2, 4, 4, 130, 77, 64, 64, False, None),
    (2, 4, 2, 70, 70, 80, 80, True, None),  # grouped-query heads, head dim padded to 96
    (1, 3, 3, 100, 160, 96, 96, False, "float"),
    (1, 2, 2, 200, 90, 128, 128, True, None),  # L > S: queries past the keys see them all
    (1, 2, 1, 60, 190, 128, 128, True, None),  # L < S
    (1, 2, 1, 60, 190, 128, 64, False, "bool"),  # value dim != key dim
    (1, 2, 2, 33, 300, 256, 256, False, "bool"),
    (2, 2, 2, 37, 53, 20, 20, False, "float"),  # head dim not a multiple of 8: element loads
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_flash_forward_against_math_float64(case, dtype, gen, fallback, flash_path):
    if reason := flash_missing(dtype):
        pytest.skip(reason)
    q, k, v, mask, kw = make_inputs(case, dtype, gen)
    results, kernels = kernels_during(lambda: run_sdpa(q, k, v, mask, **kw))
    assert kernels & FLASH_KERNELS and len(kernels & FLASH_BACKWARD) == 3, kernels
    assert not kernels & {"attention_fwd", "attention_rows_fwd", "attention_rows_bwd"}, kernels
    check(*results, dtype)


def test_flash_forward_only(gen, fallback, vkml_config):
    """flash-forward: the flash forward, and the backward of auto from its logsumexp."""
    if reason := flash_missing(torch.float16):
        pytest.skip(reason)
    vkml_config.set("VKML_ATTENTION", "flash-forward")
    q, k, v, mask, kw = make_inputs((2, 4, 2, 70, 90, 64, 64, True, None), torch.float16, gen)
    results, kernels = kernels_during(lambda: run_sdpa(q, k, v, mask, **kw))
    assert "attention_flash_f16" in kernels and not kernels & FLASH_BACKWARD, kernels
    check(*results, torch.float16)


@pytest.mark.parametrize("qblocks", ["1", "2"])
def test_flash_query_blocks(qblocks, gen, fallback, flash_path, vkml_config):
    """Both query-block counts per subgroup, at a head dim where auto picks 2 and one where 1."""
    if reason := flash_missing(torch.float16):
        pytest.skip(reason)
    vkml_config.set("VKML_ATTENTION_FLASH_QBLOCKS", qblocks)
    for e in (64, 128):
        q, k, v, mask, kw = make_inputs((1, 2, 2, 150, 150, e, e, True, None), torch.float16, gen)
        results, kernels = kernels_during(lambda: run_sdpa(q, k, v, mask, **kw))
        assert "attention_flash_f16" in kernels, kernels
        check(*results, torch.float16)


@pytest.mark.parametrize("hkv", [3, 1])
def test_flash_dropout_gradients_match_the_fused_kernels(hkv, gen, fallback, vkml_config):
    """Same seed: the flash kernels' output and gradients with dropout equal the fused kernels'."""
    if reason := flash_missing(torch.float16):
        pytest.skip(reason)
    q, k, v, _, kw = make_inputs((2, 3, hkv, 45, 70, 32, 32, False, None), torch.float16, gen)
    dout = torch.randn(2, 3, 45, 32, generator=gen).half().to("vkml")
    runs = {}
    for path, coopmat in (("fused", "0"), ("flash", "1")):
        vkml_config.set("VKML_ATTENTION", path)
        vkml_config.set("VKML_SDPA_COOPMAT", coopmat)
        qv, kv, vv = (t.to("vkml").requires_grad_() for t in (q, k, v))
        torch.manual_seed(5)
        out = F.scaled_dot_product_attention(qv, kv, vv, dropout_p=0.25, **kw)
        grads = torch.autograd.grad(out, (qv, kv, vv), dout)
        runs[path] = [t.detach().cpu().double() for t in (out, *grads)]
    for a, b in zip(runs["flash"], runs["fused"], strict=True):
        torch.testing.assert_close(a, b, rtol=2e-2, atol=2e-2 * max(1.0, b.abs().max().item()))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_flash_dropout_draws_equal_the_fused_kernel(dtype, vkml_config):
    if reason := flash_missing(dtype):
        pytest.skip(reason)
    masks = {}
    for path, coopmat in (("fused", "0"), ("flash", "1")):
        vkml_config.set("VKML_ATTENTION", path)
        vkml_config.set("VKML_SDPA_COOPMAT", coopmat)
        torch.manual_seed(0)  # the same q, k for both paths
        masks[path], kernels = kernels_during(lambda: keep_mask(2, 3, 37, 70, 0.3, 17, dtype))
        assert bool(kernels & FLASH_KERNELS) == (path == "flash"), kernels
    assert torch.equal(masks["flash"], masks["fused"])
    assert 0.65 < masks["flash"].double().mean().item() < 0.75


def test_flash_zero_size_and_no_keys(fallback, flash_path):
    if reason := flash_missing(torch.float16):
        pytest.skip(reason)
    with torch.no_grad():
        z = torch.zeros(0, 4, 8, 16, device="vkml", dtype=torch.float16)
        assert F.scaled_dot_product_attention(z, z, z).shape == (0, 4, 8, 16)
        q = torch.randn(1, 2, 5, 16, dtype=torch.float16).to("vkml")
        kv = torch.zeros(1, 2, 0, 16, device="vkml", dtype=torch.float16)
        out = F.scaled_dot_product_attention(q, kv, kv)
    assert torch.equal(out.cpu(), torch.zeros(1, 2, 5, 16, dtype=torch.float16))


def test_flash_elsewhere_runs_as_auto(gen, fallback, vkml_config):
    """Where the kernel cannot run (float32 anywhere; every dtype on lavapipe) flash chooses as
    auto, and VKML_SDPA_COOPMAT=1 turns the missing kernel into an error."""
    vkml_config.set("VKML_ATTENTION", "flash")
    dtypes = [torch.float32] + [t for t in (torch.float16, torch.bfloat16) if flash_missing(t)]
    for dtype in dtypes:
        q, k, v, mask, kw = make_inputs((1, 2, 2, 9, 11, 16, 16, False, "float"), dtype, gen)
        results, kernels = kernels_during(lambda: run_sdpa(q, k, v, mask, **kw))
        assert not kernels & FLASH_KERNELS, kernels
        check(*results, dtype)
    vkml_config.set("VKML_SDPA_COOPMAT", "1")
    q = torch.randn(1, 2, 8, 16, device="vkml")
    with pytest.raises(RuntimeError, match="flash kernel does not apply"):
        F.scaled_dot_product_attention(q, q, q)
