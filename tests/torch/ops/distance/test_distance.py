"""Distances on vkml against float64 CPU: torch.cdist (batched, broadcast, p in {0, 1, 2, inf,
fractional, > 2}) and F.pdist run _cdist_forward / _pdist_forward and their backward natively;
strided inputs, zero-size and errors; the matmul-based euclidean path for many rows too."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import HAS_FLOAT64, assert_close_to_ref, only_native, randn

P_VALUES = [0.0, 1.0, 2.0, 3.0, 0.5, 1.5, float("inf")]
DTYPES = [torch.float32] + ([torch.float64] if HAS_FLOAT64 else [])


def grads_match(got, ref, inputs_v, inputs_r, gen, scale=4.0):
    g = torch.randn(ref.shape, generator=gen, dtype=torch.float64)
    with only_native():
        gv = torch.autograd.grad(got, inputs_v, g.to(got.dtype).to("vkml"))
    gr = torch.autograd.grad(ref, inputs_r, g)
    for a, b in zip(gv, gr, strict=True):
        assert a.shape == b.shape
        assert_close_to_ref(a, b, scale=scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", P_VALUES)
def test_cdist_matches_cpu(dtype, p, gen, fallback):
    # batch dims broadcast (2, 1) against (1, 3); x2 transposed in memory; odd sizes
    x1 = randn((2, 1, 5, 7), dtype, gen)
    x2 = randn((1, 3, 7, 4), dtype, gen).transpose(-1, -2)
    x1v = x1.to("vkml").requires_grad_()
    x2v = x2.to("vkml").requires_grad_()
    x1r = x1.double().requires_grad_()
    x2r = x2.double().requires_grad_()
    with only_native():
        got = torch.cdist(x1v, x2v, p=p)
    ref = torch.cdist(x1r, x2r, p=p)
    assert got.shape == ref.shape == (2, 3, 5, 4) and got.dtype == dtype
    # Fractional p goes through the GPU's pow (exp2 of a log2 product: a few ulp more).
    fractional = p not in (0.0, 1.0, 2.0, 3.0, float("inf"))
    assert_close_to_ref(got, ref, scale=16 if fractional else 4)
    grads_match(got, ref, (x1v, x2v), (x1r, x2r), gen, scale=16 if fractional else 4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", P_VALUES)
def test_pdist_matches_cpu(dtype, p, gen, fallback):
    x = randn((9, 6), dtype, gen)
    x[3] = x[1]  # a zero distance: the gradient there is 0 (or sign(d) for p = 1)
    xv = x.to("vkml").requires_grad_()
    xr = x.double().requires_grad_()
    with only_native():
        got = F.pdist(xv, p=p)
    ref = F.pdist(xr, p=p)
    assert got.shape == ref.shape == (36,)
    assert_close_to_ref(got, ref, scale=4)
    grads_match(got, ref, (xv,), (xr,), gen)


def test_distances_larger_than_a_workgroup(gen, fallback):
    # 300 x 20 distances (more than 256 per dispatch row), and pdist over 40 rows (780 pairs)
    x1 = randn((300, 3), torch.float32, gen)
    x2 = randn((20, 3), torch.float32, gen)
    with only_native():
        got = torch.cdist(x1.to("vkml"), x2.to("vkml"), p=1.0)
        pd = F.pdist(x1[:40].to("vkml"), p=3.0)
    assert_close_to_ref(got, torch.cdist(x1.double(), x2.double(), p=1.0), scale=4)
    assert_close_to_ref(pd, F.pdist(x1[:40].double(), p=3.0), scale=4)


def test_cdist_euclidean_matmul_path(gen, fallback):
    # p = 2 with more than 25 rows takes PyTorch's composite matmul formulation
    x1 = randn((2, 30, 5), torch.float32, gen)
    x2 = randn((2, 27, 5), torch.float32, gen)
    x1v = x1.to("vkml").requires_grad_()
    x1r = x1.double().requires_grad_()
    with only_native():
        got = torch.cdist(x1v, x2.to("vkml"))
    ref = torch.cdist(x1r, x2.double())
    assert_close_to_ref(got, ref, scale=100)
    grads_match(got, ref, (x1v,), (x1r,), gen, scale=100)


def test_distance_empty_and_errors(gen):
    e = torch.cdist(torch.zeros(3, 0, device="vkml"), torch.zeros(4, 0, device="vkml"))
    assert e.shape == (3, 4) and bool((e.cpu() == 0).all())
    assert torch.cdist(
        torch.zeros(0, 2, device="vkml"), torch.zeros(4, 2, device="vkml")
    ).shape == (0, 4)
    assert F.pdist(torch.zeros(1, 3, device="vkml")).shape == (0,)
    assert bool((F.pdist(torch.zeros(3, 0, device="vkml")).cpu() == 0).all())
    x = torch.randn(3, 4)
    for fn in [
        lambda t: torch.cdist(t, t, p=-1.0),
        lambda t: torch.cdist(t, t[:, :3]),
        lambda t: torch.cdist(t[0], t),
        lambda t: torch.ops.aten._pdist_forward(t.t(), 2.0),
        lambda t: torch.ops.aten._cdist_forward(t, t, 2.0, 5),
    ]:
        with pytest.raises(RuntimeError):
            fn(x)
        with pytest.raises(RuntimeError):
            fn(x.to("vkml"))
