"""fp32 products through fp16 tensor-core GEMMs (VKML_GEMM_F32_SPLIT; =force takes the path on
CPU devices too, where the fp16 GEMMs run on the tiled kernel): each operand line is scaled by a
power of two and split into hi and lo halves, and three fp16 products carry fp32's precision.
Checked against float64 relative to |A| |B| (fp32 rounding's own scale), beside the CPU's fp32
error, on odd sizes, transposed and sliced operands, lines whose magnitudes span 1e-20..1e20, and
non-finite elements, and that the split kernels really ran."""

import pytest
import torch

import torch_vkml
from nn_helpers import kernels_run

settings = torch_vkml.config.override


@pytest.fixture(autouse=True)
def _split():
    with settings(VKML_GEMM_F32_SPLIT="force"):
        yield


def scaled_err(out, a, b):
    a64, b64 = a.cpu().double(), b.cpu().double()
    return ((out.cpu().double() - a64 @ b64).abs() / (a64.abs() @ b64.abs()).clamp_min(1e-300)).max()


# (3, 70, 4100): B's columns (adjacent lines) in 129 groups of 32, the one-pass transposing split.
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 33, 5), (64, 96, 80), (33, 257, 65),
                                   (128, 512, 64), (3, 70, 4100), (5, 130, 4128)])
def test_matches_float64_like_fp32(gen, m, k, n):
    a = torch.randn(m, k, generator=gen)
    b = torch.randn(k, n, generator=gen)
    outs = []
    ran = kernels_run(lambda: outs.append(a.to("vkml") @ b.to("vkml")))
    out = outs[0]
    assert {"gemm_split_f16", "gemm_split_scale"} <= ran.keys()
    cpu_err = scaled_err(a @ b, a, b)
    assert scaled_err(out, a, b) <= max(4 * cpu_err, 1e-6)


def test_strided_operands_and_output(gen):
    a_big = torch.randn(40, 70, generator=gen)
    b_big = torch.randn(50, 30, generator=gen)
    a = a_big.to("vkml")[:, 3:67:2]  # 40 x 32, column stride 2
    b = b_big.to("vkml").t()[:, 5:45]  # 30 x 40 view of a transposed matrix: k-contiguous
    out = torch.empty(40, 80, device="vkml")[:, ::2]
    torch.mm(a[:, :30], b, out=out)
    ref_a, ref_b = a_big[:, 3:67:2][:, :30], b_big.t()[:, 5:45]
    assert scaled_err(out, ref_a, ref_b) <= 1e-6


def test_magnitudes_across_forty_decades(gen):
    a = torch.randn(40, 64, generator=gen) * torch.logspace(-20, 20, 40)[:, None]
    b = torch.randn(64, 48, generator=gen) * torch.logspace(-10, 10, 48)[None, :]
    out = a.to("vkml") @ b.to("vkml")
    assert scaled_err(out, a, b) <= 1e-6


def test_non_finite_elements_propagate_like_fp32():
    a = torch.tensor([[1.0, float("inf")], [2.0, 3.0], [float("nan"), 1.0]])
    b = torch.tensor([[1.0, 0.0], [2.0, 1.0]])
    out = (a.to("vkml") @ b.to("vkml")).cpu()
    torch.testing.assert_close(out, a @ b, equal_nan=True)


def test_zero_sizes_and_batched_products_keep_their_paths(gen):
    assert (torch.ones(0, 3, device="vkml") @ torch.ones(3, 4, device="vkml")).shape == (0, 4)
    z = torch.ones(3, 0, device="vkml") @ torch.ones(0, 4, device="vkml")
    assert torch.equal(z.cpu(), torch.zeros(3, 4))
    a = torch.randn(2, 5, 7, generator=gen)
    b = torch.randn(2, 7, 3, generator=gen)
    outs = []
    ran = kernels_run(lambda: outs.append(torch.bmm(a.to("vkml"), b.to("vkml"))))
    out = outs[0]
    assert "gemm_split_f16" not in ran  # batched: the fp32 kernels
    torch.testing.assert_close(out.cpu(), torch.bmm(a, b), rtol=1e-5, atol=1e-5)


def test_extreme_scales_with_zero_products():
    # Combined scales beyond 2^127 either way: a 1e30 row against a zero-product column (2^170),
    # a 1e-30 row against a unit column (2^-128). Every value stays a normal fp32 number (GPUs
    # such as NVIDIA's flush subnormals, which would be a different test).
    a = torch.tensor([[1e30, 0.0], [1e-30, 1e-35]])
    b = torch.tensor([[0.0, 1.0], [1e30, 1e-3]])
    torch.testing.assert_close((a.to("vkml") @ b.to("vkml")).cpu(), a @ b, rtol=1e-6, atol=0.0)


@pytest.mark.parametrize("m,k,n", [(5, 19, 4100), (4100, 9, 3)])
def test_wide_lines_take_the_one_pass_split(gen, m, k, n):
    # 4,096+ adjacent lines (B's columns of a row-major B; A's rows of a transposed A) are split by
    # the one-pass kernel, fewer by the two-pass one (every other test here).
    a = torch.randn(k, m, generator=gen).t()  # m x k, rows adjacent in memory
    b = torch.randn(k, n, generator=gen)
    out = a.to("vkml") @ b.to("vkml")
    assert scaled_err(out, a, b) <= max(4 * scaled_err(a @ b, a, b), 1e-6)


def test_addmm_linear_epilogues_and_in_place(gen):
    """alpha, beta * C_in and a broadcast bias come in the split's last pass; an in-place addmm_
    (C_in is C, overwritten by the products) keeps the fp32 kernels."""
    a, b = torch.randn(33, 40, generator=gen), torch.randn(40, 24, generator=gen)
    c, bias = torch.randn(33, 24, generator=gen), torch.randn(24, generator=gen)
    ref = 0.5 * c.double() - 1.5 * (a.double() @ b.double())
    outs = []
    ran = kernels_run(lambda: outs.append(torch.addmm(c.to("vkml"), a.to("vkml"), b.to("vkml"),
                                                      beta=0.5, alpha=-1.5)))
    assert "gemm_split_scale" in ran
    torch.testing.assert_close(outs[0].cpu().double(), ref, rtol=1e-5, atol=1e-5)
    w = torch.randn(24, 40, generator=gen)
    lin = torch.nn.functional.linear(a.to("vkml"), w.to("vkml"), bias.to("vkml"))
    ref = torch.nn.functional.linear(a.double(), w.double(), bias.double())
    torch.testing.assert_close(lin.cpu().double(), ref, rtol=1e-5, atol=1e-5)
    d = c.to("vkml")
    ran = kernels_run(lambda: d.addmm_(a.to("vkml"), b.to("vkml"), beta=2.0))
    assert "gemm_split_f16" not in ran
    torch.testing.assert_close(d.cpu().double(), 2.0 * c.double() + a.double() @ b.double(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m,k,n,slice_env", [(9, 4100, 7, None), (33, 100, 20, "32"), (16, 64, 8, "64")])
def test_main_product_in_k_slices(gen, m, k, n, slice_env):
    """Full fp32 precision slices the main product along K (1024 by default: 4100 gives five
    slices, the last short); VKML_GEMM_F32_SPLIT_KCHUNK sets the slice (32 over 100: a ragged
    end; 64 over 64: one slice). Here one GEMM per slice, as for outputs of many blocks
    (VKML_GEMM_F32_SPLIT_FEW_BLOCKS=0; split-K below)."""
    a = torch.randn(m, k, generator=gen)
    b = torch.randn(k, n, generator=gen)
    outs = []
    with settings(VKML_GEMM_F32_SPLIT_FEW_BLOCKS=0, VKML_GEMM_F32_SPLIT_KCHUNK=slice_env):
        ran = kernels_run(lambda: outs.append(a.to("vkml") @ b.to("vkml")))
    slices = -(-k // int(slice_env or 1024))
    assert gemm_dispatches(ran) == slices + 1  # and the correction product
    assert scaled_err(outs[0], a, b) <= max(4 * scaled_err(a @ b, a, b), 1e-6)


@pytest.mark.parametrize("few,relaxed", [("1024", False), ("2", False), ("1024", True)])
def test_few_block_products_split_k(gen, few, relaxed):
    """VKML_GEMM_F32_SPLIT_FEW_BLOCKS (opt-in): outputs of fewer blocks run each product as one
    split-K GEMM (the fp32 partial sums are the main product's K slices), slices at least 1024
    deep: 5 for K = 4100 under the precision bound, 5 for parallelism where precision is relaxed
    (the main product's depth is then unbounded). alpha, beta * C_in and bias still come last."""
    torch.set_float32_matmul_precision("high" if relaxed else "highest")
    try:
        with settings(VKML_GEMM_F32_SPLIT_FEW_BLOCKS=few):
            check_few_block_products(gen)
    finally:
        torch.set_float32_matmul_precision("highest")


def check_few_block_products(gen):
    a = torch.randn(9, 4100, generator=gen)
    b = torch.randn(4100, 7, generator=gen)
    outs = []
    ran = kernels_run(lambda: outs.append(a.to("vkml") @ b.to("vkml")))
    assert ran.get("gemm_splitk_reduce_f32") == 2, ran  # main product and correction
    assert gemm_dispatches(ran) == 2, ran  # one GEMM per product
    assert scaled_err(outs[0], a, b) <= max(4 * scaled_err(a @ b, a, b), 1e-6)
    c, bias = torch.randn(9, 7, generator=gen), torch.randn(7, generator=gen)
    got = torch.addmm(c.to("vkml"), a.to("vkml"), b.to("vkml"), beta=0.5, alpha=-1.5)
    ref = 0.5 * c.double() - 1.5 * (a.double() @ b.double())
    torch.testing.assert_close(got.cpu().double(), ref, rtol=1e-5, atol=1e-4)
    w = b.t().contiguous()
    got = torch.nn.functional.linear(a.to("vkml"), w.to("vkml"), bias.to("vkml"))
    ref = torch.nn.functional.linear(a.double(), w.double(), bias.double())
    torch.testing.assert_close(got.cpu().double(), ref, rtol=1e-5, atol=1e-4)


def test_split_k_over_k_ranges_within_the_scratch(gen):
    """Where the main product's 1024-deep slices would need more split-K scratch than the
    planner allows (VKML_GEMM_SPLITK_SCRATCH bytes; 256 MiB by default, which GPT-2's LM-head
    input gradient over K = 50257 exceeds), it runs as split-K GEMMs over K ranges of as many
    slices as fit (here 2 of 9x7 fp32 partials: K = 4100 padded to 4104 gives ranges of 2048,
    2048 and 8), each adding to C."""
    a = torch.randn(9, 4100, generator=gen)
    b = torch.randn(4100, 7, generator=gen)
    outs = []
    c = torch.randn(9, 7, generator=gen)
    with settings(VKML_GEMM_F32_SPLIT_FEW_BLOCKS=1024, VKML_GEMM_SPLITK_SCRATCH=2 * 9 * 7 * 4):
        ran = kernels_run(lambda: outs.append(a.to("vkml") @ b.to("vkml")))
        got = torch.addmm(c.to("vkml"), a.to("vkml"), b.to("vkml"), beta=0.5, alpha=-1.5)
        got = got.cpu()
    assert gemm_dispatches(ran) == 3 + 1, ran  # three ranges, then the correction
    assert ran.get("gemm_splitk_reduce_f32", 0) >= 2, ran  # the two ranges of two slices
    assert scaled_err(outs[0], a, b) <= max(4 * scaled_err(a @ b, a, b), 1e-6)
    ref = 0.5 * c.double() - 1.5 * (a.double() @ b.double())
    torch.testing.assert_close(got.cpu().double(), ref, rtol=1e-5, atol=1e-4)


def gemm_dispatches(ran):
    return sum(count for name, count in ran.items()
               if name.startswith("gemm_") and not name.startswith("gemm_split"))


def test_relaxed_float32_matmul_precision(gen):
    """torch.set_float32_matmul_precision("high") (CUDA's TF32 switch) lets the split skip its K
    slices; the result keeps the split's accuracy. (Under VKML_GEMM_F32_SPLIT_FEW_BLOCKS, pinned
    off here, outputs of few blocks would still cut K, for parallelism.)"""
    a = torch.randn(20, 4100, generator=gen)
    b = torch.randn(4100, 12, generator=gen)
    outs = []
    torch.set_float32_matmul_precision("high")
    try:
        with settings(VKML_GEMM_F32_SPLIT_FEW_BLOCKS=0):
            ran = kernels_run(lambda: outs.append(a.to("vkml") @ b.to("vkml")))
    finally:
        torch.set_float32_matmul_precision("highest")
    assert gemm_dispatches(ran) == 2  # the main product whole, then the correction
    assert scaled_err(outs[0], a, b) <= max(4 * scaled_err(a @ b, a, b), 2e-6)
