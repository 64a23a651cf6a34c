"""complex64 / complex128 tensors on vkml: storage, copies and casts, views, the conjugate bit,
and the ops with complex paths, against the CPU."""

import math
import warnings

import pytest
import torch
from nn_helpers import device_dtypes

import torch_vkml  # noqa: F401

CDTYPES = device_dtypes(torch.complex64, torch.complex128)
TOL = {torch.complex64: (1e-5, 1e-6), torch.complex128: (1e-12, 1e-14)}
SPECIALS = [0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan, 1e-30, 3e30]


def crandn(shape, dtype, gen):
    real = torch.randn(shape, generator=gen, dtype=torch.float64)
    imag = torch.randn(shape, generator=gen, dtype=torch.float64)
    return torch.complex(real, imag).to(dtype)


def specials(dtype):
    """Every pair of special values as one complex tensor."""
    v = torch.tensor(SPECIALS, dtype=torch.float64)
    return torch.complex(v.repeat_interleave(len(SPECIALS)), v.repeat(len(SPECIALS))).to(dtype)


def check(got, ref, exact=False):
    assert got.device.type == "vkml"
    got = got.cpu()
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, ref.dtype, got.shape)
    if exact:
        torch.testing.assert_close(got, ref, rtol=0, atol=0, equal_nan=True)
    else:
        rtol, atol = TOL.get(ref.dtype, (1e-5, 1e-6))
        torch.testing.assert_close(got, ref, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_factories_and_round_trip(dtype, gen):
    x = crandn((3, 5), dtype, gen)
    check(x.to("vkml"), x, exact=True)
    check(torch.zeros(4, 2, dtype=dtype, device="vkml"), torch.zeros(4, 2, dtype=dtype), True)
    full = torch.full((3,), 1.5 - 2j, dtype=dtype, device="vkml")
    check(full, torch.full((3,), 1.5 - 2j, dtype=dtype), exact=True)
    check(torch.empty(0, 3, dtype=dtype, device="vkml"), torch.empty(0, 3, dtype=dtype), True)
    r = torch.randn(1000, dtype=dtype, device="vkml").cpu()
    # As on the CPU: real and imaginary parts each of variance 1/2.
    assert abs(r.real.var().item() - 0.5) < 0.1 and abs(r.imag.var().item() - 0.5) < 0.1
    assert (x.to("vkml")[1, 2].item()) == x[1, 2].item()


@pytest.mark.parametrize("dtype", CDTYPES)
def test_strided_copies_and_casts(dtype, gen):
    x = crandn((6, 7), dtype, gen)
    d = x.to("vkml")
    check(d.t().contiguous(), x.t().contiguous(), exact=True)
    check(d[::2, 1::3].clone(), x[::2, 1::3].clone(), exact=True)
    assert torch.equal(d.t().cpu(), x.t())
    for other in CDTYPES:
        check(d.to(other), x.to(other), exact=True)
    for real in device_dtypes(torch.float32, torch.float64, torch.float16, torch.int32, torch.bool):
        src = (torch.randn(5, 4, generator=gen) * 5).to(real)
        check(src.to("vkml").to(dtype), src.to(dtype), exact=True)
        check(src.to("vkml").t().to(dtype), src.t().to(dtype), exact=True)
    for real in device_dtypes(torch.float32, torch.float64):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the imaginary part is discarded, as on the CPU
            check(d.to(real), x.to(real), exact=True)
            check(d.to(torch.bool), x.to(torch.bool), exact=True)
    dst = torch.zeros(7, 6, dtype=dtype, device="vkml")
    dst.copy_(d.t())
    check(dst, x.t().contiguous(), exact=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_views_and_conj_bit(dtype, gen):
    x = crandn((4, 3), dtype, gen)
    d = x.to("vkml")
    r = torch.view_as_real(d)
    assert r.data_ptr() == d.data_ptr() and r.shape == (4, 3, 2)
    check(r, torch.view_as_real(x), exact=True)
    back = torch.view_as_complex(r)
    assert back.data_ptr() == d.data_ptr()
    check(d.real, x.real, exact=True)
    check(d.imag, x.imag, exact=True)
    c = d.conj()
    assert c.is_conj() and c.data_ptr() == d.data_ptr()
    check(c.resolve_conj(), x.conj().resolve_conj(), exact=True)
    check(torch.conj_physical(d), torch.conj_physical(x), exact=True)
    assert torch.equal(c.cpu(), x.conj())
    check(c.imag.clone(), x.conj().imag.clone(), exact=True)
    y = d.clone()
    y.conj_physical_()
    check(y, x.conj_physical(), exact=True)
    # Writes through the real / imaginary views land in the complex tensor.
    z = d.clone()
    z.imag.fill_(2.0)
    expect = x.clone()
    expect.imag.fill_(2.0)
    check(z, expect, exact=True)
    w = torch.zeros(3, dtype=dtype, device="vkml")
    w.conj().fill_(1 + 2j)
    check(w, torch.full((3,), 1 - 2j, dtype=dtype), exact=True)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "eq", "ne"])
def test_binary(dtype, op, gen):
    fn = getattr(torch, op)
    a, b = crandn((5, 6), dtype, gen), crandn((6,), dtype, gen)
    check(fn(a.to("vkml"), b.to("vkml")), fn(a, b))
    check(fn(a.to("vkml").t(), a.to("vkml").t().conj()), fn(a.t(), a.t().conj()))
    s = specials(dtype)
    check(fn(s.to("vkml"), s.flip(0).to("vkml")), fn(s, s.flip(0)))
    real = torch.randn(6, generator=gen)
    check(fn(a.to("vkml"), real.to("vkml")), fn(a, real))
    check(fn(a.to("vkml"), 2.5), fn(a, 2.5))
    check(fn(a.to("vkml"), 1 - 3j), fn(a, 1 - 3j))
    check(fn(a.to("vkml")[:0], b.to("vkml")), fn(a[:0], b))
    if op in ("add", "sub"):
        check(fn(a.to("vkml"), b.to("vkml"), alpha=2 - 1j), fn(a, b, alpha=2 - 1j))
    if op in ("add", "mul"):
        got = a.to("vkml")
        getattr(got, op + "_")(b.to("vkml"))
        check(got, fn(a, b))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_unary(dtype, gen):
    x = torch.cat([crandn((20,), dtype, gen), specials(dtype)])
    d = x.to("vkml")
    check(-d, -x)
    check(torch.abs(d), torch.abs(x))
    check(torch.sgn(d), torch.sgn(x))
    check(torch.angle(d), torch.angle(x))
    check(torch.abs(d.conj()), torch.abs(x.conj()))
    real = torch.randn(7, generator=gen, dtype=torch.float64).to(dtype.to_real())
    ang = torch.randn(7, generator=gen, dtype=torch.float64).to(dtype.to_real())
    check(torch.polar(real.abs().to("vkml"), ang.to("vkml")), torch.polar(real.abs(), ang))
    check(torch.complex(real.to("vkml"), ang.to("vkml")), torch.complex(real, ang), exact=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_where_cat_stack_reductions(dtype, gen):
    a, b = crandn((4, 5), dtype, gen), crandn((4, 5), dtype, gen)
    m = torch.rand(4, 5, generator=gen) > 0.5
    da, db, dm = a.to("vkml"), b.to("vkml"), m.to("vkml")
    check(torch.where(dm, da, db), torch.where(m, a, b), exact=True)
    check(torch.where(dm, da.conj(), 0.5), torch.where(m, a.conj(), 0.5), exact=True)
    check(torch.cat([da, db.t().t()], 1), torch.cat([a, b], 1), exact=True)
    check(torch.stack([da, db.conj()]), torch.stack([a, b.conj()]), exact=True)
    check(da.sum(), a.sum())
    check(da.sum(0), a.sum(0))
    check(da.conj().mean(1, keepdim=True), a.conj().mean(1, keepdim=True))
    check(torch.fft.fftshift(da), torch.fft.fftshift(a), exact=True)
    check(torch.roll(da, 2), torch.roll(a, 2), exact=True)
    assert torch.allclose(da, da.clone())
    check(torch.isclose(da, db), torch.isclose(a, b), exact=True)


def test_rows_without_complex_path_fall_back(fallback, gen):
    # Under VKML_FALLBACK=warn such an op runs on the CPU and is counted, never a dtype error.
    g, y = crandn((8,), torch.complex64, gen), crandn((8,), torch.complex64, gen)
    tanh_backward = torch.ops.aten.tanh_backward
    check(tanh_backward(g.to("vkml"), y.to("vkml")), tanh_backward(g, y))
    out = torch.empty(0, dtype=torch.complex64, device="vkml")
    tanh_backward(g.to("vkml"), y.to("vkml"), grad_input=out)
    check(out, tanh_backward(g, y))
    stats = torch_vkml.fallback_stats()
    assert stats.get("aten::tanh_backward") == 2, stats


def test_rows_without_complex_path_refused_under_error(gen):
    g = crandn((8,), torch.complex64, gen).to("vkml")
    with pytest.raises(NotImplementedError, match="tanh_backward"):
        torch.ops.aten.tanh_backward(g, g)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_matmul_4m(dtype, gen):
    a, b = crandn((5, 7), dtype, gen), crandn((7, 3), dtype, gen)
    check(torch.mm(a.to("vkml"), b.to("vkml")), torch.mm(a, b))
    check(a.to("vkml").conj() @ b.to("vkml"), a.conj() @ b)
    x, y = crandn((2, 4, 6), dtype, gen), crandn((2, 6, 5), dtype, gen)
    check(torch.bmm(x.to("vkml"), y.to("vkml")), torch.bmm(x, y))
    check(torch.matmul(x.to("vkml"), y.to("vkml")[0]), torch.matmul(x, y[0]))
    out = torch.empty(0, dtype=dtype, device="vkml")
    torch.mm(a.to("vkml"), b.to("vkml"), out=out)
    check(out, torch.mm(a, b))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_cumsum(dtype, gen):
    a = crandn((4, 6), dtype, gen)
    check(torch.cumsum(a.to("vkml"), 1), torch.cumsum(a, 1))
    check(torch.cumsum(a.to("vkml").conj(), 0), torch.cumsum(a.conj(), 0))
    check(torch.cumsum(a.real.to("vkml"), 1, dtype=dtype), torch.cumsum(a.real, 1, dtype=dtype))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_indexing(dtype, gen):
    a = crandn((5, 6), dtype, gen)
    d = a.to("vkml")
    idx = torch.tensor([4, 0, 2, 2])
    check(d[idx.to("vkml")], a[idx], exact=True)
    check(d[:, idx.to("vkml")], a[:, idx], exact=True)
    m = a.real > 0
    check(d.conj()[idx.to("vkml"), 1:3], a.conj()[idx, 1:3], exact=True)
    check(torch.index_select(d, -1, idx.to("vkml")), torch.index_select(a, -1, idx), exact=True)
    check(d[m.to("vkml")], a[m], exact=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_prod_and_cumprod(dtype, gen):
    # Moduli near 1 keep long products finite; odd extents exercise the tree's leftover element.
    x = torch.polar(1 + 0.1 * torch.rand(5, 37, 3, generator=gen, dtype=torch.float64),
                    torch.randn(5, 37, 3, generator=gen, dtype=torch.float64)).to(dtype)
    d = x.to("vkml")
    check(d.prod(), x.prod())
    check(d.prod(1), x.prod(1))
    check(d.prod(0, keepdim=True), x.prod(0, keepdim=True))
    check(d.transpose(0, 2)[:, ::3].prod(2), x.transpose(0, 2)[:, ::3].prod(2))
    check(d.conj().prod(-1), x.conj().prod(-1))
    check(torch.empty(0, 4, dtype=dtype, device="vkml").prod(0), torch.empty(0, 4, dtype=dtype).prod(0))
    check(d[2, 3, 1].prod(), x[2, 3, 1].prod())
    for dim in (0, 1, -1):
        check(torch.cumprod(d, dim), torch.cumprod(x, dim))
    check(torch.cumprod(d.transpose(0, 1), 0), torch.cumprod(x.transpose(0, 1), 0))
    y = d.clone()
    y.cumprod_(1)
    check(y, torch.cumprod(x, 1))
    out = torch.empty(0, dtype=dtype, device="vkml")
    torch.cumprod(d, 2, out=out)
    check(out, torch.cumprod(x, 2))
    # A real tensor's product in a complex dtype; a zero inside a product.
    r = torch.randn(4, 6, generator=gen)
    check(r.to("vkml").prod(1, dtype=dtype), r.prod(1, dtype=dtype))
    s = torch.tensor([1 + 1j, 0, 2 - 1j, 4, 3j], dtype=dtype)
    check(s.to("vkml").cumprod(0), s.cumprod(0))
