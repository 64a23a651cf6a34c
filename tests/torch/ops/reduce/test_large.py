"""Reductions and scans on 2^24-element tensors (float32 and int64) against the CPU: floats within
a reduction's rounding (checked against a float64 reference), integers exactly, and every result
bit-identical when run twice (no order-dependent accumulation). float32 prod of 2^24 factors near
1 within 1e-6 of the float64 product (a float32 chain of products drifts by several %). Sort,
argsort and topk run on 2^24 elements (the radix sort) and are compared exactly with the CPU's stable sort,
which also makes them deterministic."""

import pytest
import torch

import torch_vkml  # noqa: F401

N = 1 << 24

pytestmark = pytest.mark.large


def twice(fn, x):
    """fn on vkml twice: the results must be bit-identical; returns them on the CPU."""
    a, b = fn(x), fn(x)
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    out = []
    for r1, r2 in zip(a, b):
        r1, r2 = r1.cpu(), r2.cpu()
        if r1.is_floating_point():
            assert torch.equal(r1.view(torch.int32), r2.view(torch.int32)), "not deterministic"
        else:
            assert torch.equal(r1, r2), "not deterministic"
        out.append(r1)
    return out if len(out) > 1 else out[0]


def close_to_exact(got, cpu, exact, scale, what):
    """got and the CPU's float32 result both within a sum's rounding of the float64 value."""
    bound = 2e-6 * scale + 1e-6
    err = (got.double() - exact).abs().max().item()
    assert err <= bound, f"{what}: error {err} > {bound}"
    assert (cpu.double() - exact).abs().max().item() <= bound  # the reference is sane


@pytest.fixture(scope="module")
def data():
    g = torch.Generator().manual_seed(24)
    f = torch.randn(N, generator=g)
    i = torch.randint(-1000, 1000, (N,), generator=g)
    return f, f.to("vkml"), i, i.to("vkml")


def test_large_float_reductions(data):
    f, fv, _, _ = data
    f64 = f.double()
    abs_sum = f64.abs().sum().item()
    close_to_exact(twice(torch.sum, fv), f.sum(), f64.sum(), abs_sum, "sum")
    close_to_exact(twice(torch.mean, fv), f.mean(), f64.mean(), abs_sum / N, "mean")
    assert twice(torch.amax, fv).item() == f.amax().item()
    assert twice(torch.argmax, fv).item() == f.argmax().item()
    var = twice(torch.var, fv)
    torch.testing.assert_close(var.double(), f64.var(), rtol=1e-5, atol=0)
    # prod on +-1 with a few 2s and 0.5s: every partial product is exact, so any order of
    # multiplication must give the CPU's bits (a chain of 2^24 float32 roundings would not).
    u = torch.rand(N, generator=torch.Generator().manual_seed(25))
    factors = torch.where(u < 2e-6, 2.0, torch.where(u > 1 - 1e-6, 0.5, 1.0))
    factors = factors * torch.where(f > 1.5, -1.0, 1.0)
    prod = twice(torch.prod, factors.to("vkml"))
    assert prod.item() == factors.prod().item() == factors.double().prod().item()
    # cumsum: each prefix within the rounding of its running absolute sum.
    cs = twice(lambda t: torch.cumsum(t, 0), fv)
    exact = torch.cumsum(f64, 0)
    bound = 2e-6 * torch.cumsum(f64.abs(), 0) + 1e-4
    assert bool(((cs.double() - exact).abs() <= bound).all())


def test_large_int_reductions(data):
    _, _, i, iv = data
    assert twice(torch.sum, iv).item() == i.sum().item()
    assert twice(torch.amax, iv).item() == i.amax().item()
    assert twice(torch.argmax, iv).item() == i.argmax().item()  # many ties: the first one
    assert twice(torch.argmin, iv).item() == i.argmin().item()
    signs = torch.where(i % 97 == 0, -1, 1) * torch.where(i % 4099 == 0, 2, 1)
    assert twice(torch.prod, signs.to("vkml")).item() == signs.prod().item()
    assert torch.equal(twice(lambda t: torch.cumsum(t, 0), iv), torch.cumsum(i, 0))


def test_large_float_prod_precision():
    # Factors within 1e-6 of 1: every float32 product rounds, and a long chain of them drifts (the
    # CPU's float32 prod is off by about 0.7% here). vkml carries the rounding errors (in double
    # with fp64, as a float-float product without): within 1e-6 of the float64 product.
    g = torch.Generator().manual_seed(26)
    x = (1 + (torch.rand(N, generator=g, dtype=torch.float64) - 0.5) * 1e-6).float()
    exact = x.double().prod().item()
    got = twice(torch.prod, x.to("vkml")).item()
    assert abs(got - exact) <= 1e-6 * abs(exact), f"prod {got} vs float64 {exact}"


@pytest.fixture(scope="module")
def sort_data(data):
    """float32 with many duplicates (multiples of 1/8), NaN, +-inf and -0.0 among them; the
    int64 data (2001 values, both signs: all eight key bytes vary)."""
    f, _, i, _ = data
    x = (f * 64).round() / 8
    g = torch.Generator().manual_seed(27)
    pick = torch.randint(0, N, (N // 50,), generator=g)
    specials = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0])
    x[pick] = specials.repeat(len(pick) // 5 + 1)[: len(pick)]
    return {"float32": x, "int64": i}


def bits(t):
    return t.view(torch.int32) if t.dtype == torch.float32 else t


@pytest.mark.parametrize("which", ["float32", "int64"])
def test_large_sort_argsort_topk(sort_data, which):
    x = sort_data[which]
    xv = x.to("vkml")
    values, indices = torch.sort(xv, stable=True)
    ev, ei = torch.sort(x, stable=True)
    assert torch.equal(bits(values.cpu()), bits(ev))  # bit for bit: -0.0 and NaN in place
    assert torch.equal(indices.cpu(), ei)
    del values, indices, ev, ei
    order = torch.argsort(xv, descending=True, stable=True)
    assert torch.equal(order.cpu(), torch.argsort(x, descending=True, stable=True))
    del order
    k = 200_000  # past the float data's NaN and +inf into its largest real values
    tv, ti = torch.topk(xv, k)
    tv, ti = tv.cpu(), ti.cpu()
    assert torch.equal(bits(tv), bits(torch.topk(x, k).values))
    assert torch.equal(bits(x[ti]), bits(tv))  # ties may pick other positions holding the value
