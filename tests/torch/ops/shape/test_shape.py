"""Shape and creation ops on vkml against the CPU: cat/stack, flip, roll, tril/triu (complex64
too), combinations, repeat, constant_pad_nd, arange, linspace, logspace, eye and randperm."""

import pytest
import torch
import torch.nn.functional as F

from nn_helpers import ALL_DTYPES, WIDE_FLOAT, device_dtypes, rand_any as rand, assert_same as same

import torch_vkml

NUMERIC = [t for t in ALL_DTYPES if t != torch.bool]
V = "vkml"


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cat_and_stack_every_dtype(dtype, gen):
    a, b = rand((3, 4), dtype, gen), rand((5, 4), dtype, gen)
    c = rand((3, 2), dtype, gen)
    av, bv, cv = a.to(V), b.to(V), c.to(V)
    same(torch.cat([av, bv]), torch.cat([a, b]))
    same(torch.cat([av.t(), cv.t(), cv.t()[::2]], 0), torch.cat([a.t(), c.t(), c.t()[::2]]))
    same(torch.cat([av, bv[1:4]], dim=-1 + 1), torch.cat([a, b[1:4]], 0))
    same(
        torch.cat([av, torch.empty(0, dtype=dtype).to(V)]),
        torch.cat([a, torch.empty(0, dtype=dtype)]),
    )
    same(torch.stack([av, bv[:3], av.t().t()], 1), torch.stack([a, b[:3], a], 1))
    out = torch.empty(8, 8, dtype=dtype, device=V)[:, ::2]
    torch.cat([av, bv], out=out)
    same(out, torch.cat([a, b]))


def test_cat_promotes_dtypes_and_memory_format(gen):
    a = rand((2, 3), torch.int32, gen)
    b = rand((1, 3), torch.float16, gen)
    c = rand((2, 3), torch.bool, gen)
    same(torch.cat([a.to(V), b.to(V), c.to(V)]), torch.cat([a, b, c]))
    x = rand((2, 3, 4, 5), torch.float32, gen).to(memory_format=torch.channels_last)
    got = torch.cat([x.to(V), x.to(V)], 1)
    ref = torch.cat([x, x], 1)
    same(got, ref)
    assert got.stride() == ref.stride()
    out = torch.empty(0, dtype=WIDE_FLOAT, device=V)  # out= of a wider dtype than the inputs'
    torch.cat([a.to(V), b.to(V)], out=out)
    same(out, torch.cat([a, b]).to(WIDE_FLOAT))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_flip_roll_tril_triu_every_dtype(dtype, gen):
    x = rand((3, 4, 5), dtype, gen)
    xv = x.to(V)
    for dims in [(0,), (2,), (0, 2), (-1, 1, 0)]:
        same(xv.flip(dims), x.flip(dims))
    same(xv.transpose(0, 2).flip(1), x.transpose(0, 2).flip(1))
    for shifts, dims in [(2, 1), (-7, 2), ((1, -2), (0, 2)), (5, None), ((3, 3), (1, 1))]:
        same(xv.roll(shifts, dims), x.roll(shifts, dims))
    same(xv.permute(2, 0, 1).roll(1, 0), x.permute(2, 0, 1).roll(1, 0))
    for k in (-2, 0, 1, 7):
        same(xv.tril(k), x.tril(k))
        same(xv.triu(k), x.triu(k))
    y = xv.transpose(1, 2)
    y.tril_(-1)
    same(xv, x.transpose(1, 2).tril(-1).transpose(1, 2))
    out = torch.empty(0, dtype=dtype, device=V)
    torch.triu(xv, 1, out=out)
    same(out, x.triu(1))


def test_tril_triu_and_combinations_complex64(gen):
    x = torch.complex(torch.randn(2, 4, 5, generator=gen), torch.randn(2, 4, 5, generator=gen))
    xv = x.to(V)
    for k in (-5, -1, 0, 2, 9):
        same(xv.tril(k), x.tril(k))
        same(xv.triu(k), x.triu(k))
    same(xv.transpose(0, 2).triu(1), x.transpose(0, 2).triu(1))
    y = xv.transpose(1, 2)
    y.triu_(-1)
    same(xv, x.transpose(1, 2).triu(-1).transpose(1, 2))
    out = torch.empty(3, dtype=torch.complex64, device=V)
    torch.tril(xv, 0, out=out)
    same(out, x.tril(0))
    same(xv[:, :0].tril(), x[:, :0].tril())
    v = x[0, 0]
    for r, rep in [(2, False), (3, True), (0, False)]:
        same(torch.combinations(v.to(V), r, rep), torch.combinations(v, r, rep))


def test_composites_run_natively(fallback, gen):
    x = rand((2, 3, 4), torch.float32, gen)
    xv = x.to(V)
    same(xv.repeat(2, 1, 3), x.repeat(2, 1, 3))
    same(
        xv.t() if xv.dim() == 2 else xv.transpose(0, 1).repeat(1, 2, 1),
        x.transpose(0, 1).repeat(1, 2, 1),
    )
    same(F.pad(xv, (1, 2, 0, 1), value=-3.0), F.pad(x, (1, 2, 0, 1), value=-3.0))
    same(F.pad(xv, (-1, 1)), F.pad(x, (-1, 1)))
    same(torch.stack([xv, xv], -1), torch.stack([x, x], -1))
    same(torch.eye(3, 5, device=V), torch.eye(3, 5))
    same(torch.arange(7, device=V), torch.arange(7))
    same(torch.linspace(0, 1, 5, device=V), torch.linspace(0, 1, 5))
    same(xv.flip(0), x.flip(0))
    assert torch_vkml.fallback_stats() == {}


@pytest.mark.parametrize("dtype", NUMERIC)
def test_arange_linspace_eye_every_dtype(dtype, gen):
    same(
        torch.arange(-5, 20, 3, dtype=dtype, device=V)
        if dtype != torch.uint8
        else torch.arange(5, 20, 3, dtype=dtype, device=V),
        torch.arange(-5, 20, 3, dtype=dtype)
        if dtype != torch.uint8
        else torch.arange(5, 20, 3, dtype=dtype),
    )
    if dtype.is_floating_point:
        got = torch.arange(-1.5, 2.25, 0.25, dtype=dtype, device=V).cpu()
        ref = torch.arange(-1.5, 2.25, 0.25, dtype=dtype)
        assert torch.equal(got, ref)
    for start, end, steps in [(0, 10, 5), (-3, 7, 11), (2, 2, 1), (1, 9, 0), (0, 100, 7)]:
        got = torch.linspace(start, end, steps, dtype=dtype, device=V).cpu()
        ref = torch.linspace(start, end, steps, dtype=dtype)
        # Half types: the CPU's own rounding at a tie differs between torch versions (2.11 vs
        # 2.13 at linspace(0, 100, 7)[4]), so one unit in the last place is allowed there.
        half = dtype in (torch.float16, torch.bfloat16)
        rtol = torch.finfo(dtype).eps if half else 1e-6 if dtype.is_floating_point else 0
        torch.testing.assert_close(got, ref, atol=0, rtol=rtol)
    same(torch.eye(4, dtype=dtype, device=V), torch.eye(4, dtype=dtype))
    out = torch.empty(6, dtype=dtype, device=V)[::2]
    torch.arange(3, out=out)
    same(out, torch.arange(3, dtype=dtype))


def test_float_ranges_match_cpu_closely():
    for dtype in device_dtypes(torch.float32, torch.float64, torch.float16, torch.bfloat16):
        got = torch.arange(0, 1, 0.1, dtype=dtype, device=V).cpu()
        assert torch.equal(got, torch.arange(0, 1, 0.1, dtype=dtype))
        got = torch.linspace(-2.5, 3.7, 33, dtype=dtype, device=V).cpu()
        ref = torch.linspace(-2.5, 3.7, 33, dtype=dtype)
        # The CPU kernel's rounding depends on its build (FMA contraction): allow one unit in
        # the last place of the largest intermediate.
        torch.testing.assert_close(got, ref, rtol=0, atol=3.7 * torch.finfo(dtype).eps)
    got = torch.logspace(-2, 2, 9, device=V).cpu()
    torch.testing.assert_close(got, torch.logspace(-2, 2, 9), rtol=1e-6, atol=0)
    got = torch.logspace(0, 3, 4, base=2.0, dtype=torch.int32, device=V).cpu()
    same(got.to(V), torch.logspace(0, 3, 4, base=2.0, dtype=torch.int32))
    # float64 logspace needs double pow; without fp64 the tensor itself is refused.
    with pytest.raises(NotImplementedError if WIDE_FLOAT == torch.float64 else TypeError):
        torch.logspace(0, 1, 3, dtype=torch.float64, device=V)


@pytest.mark.parametrize("start,step,n", [(0, 0.1, 1000), (-3.3, 0.7, 999), (1e6, 1 / 3, 5000),
                                          (0.5, -1e-3, 777), (1e-30, 3e-33, 100)])
def test_float32_arange_rounds_the_double_value_once(start, step, n):
    """start + step * i in double (each operation rounded, as the CPU's scalar loop), rounded to
    float32: devices without fp64 compute those double operations on integers."""
    i = torch.arange(n, dtype=torch.float64)
    want = torch.tensor(start, dtype=torch.float64) + torch.tensor(step, dtype=torch.float64) * i
    got = torch.arange(start, start + step * n, step, device=V)[:n].cpu()
    assert got.dtype == torch.float32 and torch.equal(got, want.float())


def test_randperm_is_a_reproducible_permutation():
    torch.manual_seed(11)
    a = torch.randperm(1000, device=V).cpu()
    torch.manual_seed(11)
    b = torch.randperm(1000, device=V).cpu()
    assert torch.equal(a, b) and torch.equal(a.sort().values, torch.arange(1000))
    assert not torch.equal(a, torch.arange(1000))
    c = torch.randperm(1000, device=V).cpu()
    assert not torch.equal(a, c)  # the generator advanced
    g = torch.Generator(device=V).manual_seed(3)
    d = torch.randperm(50, device=V, generator=g, dtype=torch.float32).cpu()
    assert torch.equal(d.sort().values, torch.arange(50.0))
    assert torch.randperm(0, device=V).numel() == 0


def test_gradients_match_cpu(gen):
    a = torch.randn(3, 4, generator=gen, dtype=WIDE_FLOAT)
    b = torch.randn(2, 4, generator=gen, dtype=WIDE_FLOAT)
    for fn in [
        lambda s, t: torch.cat([s, t]),
        lambda s, t: torch.stack([s[:2], t], 2),
        lambda s, t: s.flip(1),
        lambda s, t: s.roll((1, -1), (0, 1)),
        lambda s, t: s.tril(1),
        lambda s, t: s.triu(-1),
        lambda s, t: F.pad(s, (1, 1)),
    ]:
        ac, bc = a.clone().requires_grad_(), b.clone().requires_grad_()
        av, bv = a.to(V).requires_grad_(), b.to(V).requires_grad_()
        yc, yv = fn(ac, bc), fn(av, bv)
        g = torch.randn(yc.shape, generator=gen, dtype=WIDE_FLOAT)
        yc.backward(g)
        yv.backward(g.to(V))
        torch.testing.assert_close(av.grad.cpu(), ac.grad)
        if bc.grad is not None:
            torch.testing.assert_close(bv.grad.cpu(), bc.grad)


def test_bad_input_raises_like_cpu(gen):
    x = torch.randn(3, 4, generator=gen)

    def dev(t, d):
        return t.to(d)

    cases = [
        (lambda t, d: torch.cat([t, dev(torch.ones(3, 5), d)]), RuntimeError),
        (lambda t, d: torch.cat([t, dev(torch.ones(3), d)]), RuntimeError),
        (lambda t, d: torch.cat([t, t], dim=2), IndexError),
        (lambda t, d: torch.cat([t, t], out=dev(torch.empty(0, dtype=torch.long), d)), TypeError),
        (lambda t, d: torch.cat([t, t], out=t), RuntimeError),
        (lambda t, d: t.flip(0, 0), RuntimeError),
        (lambda t, d: t.roll((1, 2), (0,)), RuntimeError),
        (lambda t, d: t[0].tril(), RuntimeError),
        (lambda t, d: torch.arange(0, 10, -1, device=d), RuntimeError),
        (lambda t, d: torch.arange(0, 10, 0, device=d), RuntimeError),
        (lambda t, d: torch.linspace(0, 1, -1, device=d), RuntimeError),
        (lambda t, d: torch.eye(-1, device=d), RuntimeError),
        (lambda t, d: torch.randperm(-1, device=d), RuntimeError),
    ]
    for fn, exc in cases:
        with pytest.raises(exc):
            fn(x, "cpu")
        with pytest.raises(exc):
            fn(x.to(V), V)
