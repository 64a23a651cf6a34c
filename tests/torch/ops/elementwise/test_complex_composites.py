"""Complex elementwise ops composed of native vkml kernels, against the CPU computing in
complex128: logical and / or / xor / not, isnan, isclose, logaddexp, sinc, silu, lerp, addcmul
and addcdiv, on strided, broadcast, zero-size and odd-sized inputs with NaN, infinite and zero
parts, their in-place and out= forms, and PyTorch's errors for bad arguments."""

import math

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import complex_pairs, crandn, wide

import torch_vkml  # noqa: F401

VK = "vkml"
CDTYPES = [torch.complex64, torch.complex128]
TOL = {torch.complex64: (2e-5, 2e-5), torch.complex128: (1e-11, 1e-11)}
PARTS = [0.0, -0.0, 1.0, -2.5, 0.3, math.inf, -math.inf, math.nan]


def specials(dtype):
    """Every pair of PARTS as (real, imaginary) parts: 64 values."""
    return complex_pairs(PARTS, dtype)


def on_vkml(t):
    return t.to(VK) if isinstance(t, torch.Tensor) and t.dim() > 0 else t


def compare(fn, *inputs, exact=False):
    """fn on vkml against fn on the CPU (0-dim tensors stay on the CPU, as scalars): dtype and
    shape as on the CPU with the same inputs, values as the complex128 computation rounded."""
    got = fn(*[on_vkml(t) for t in inputs])
    want = fn(*inputs)
    assert got.device.type == VK
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    if exact or not want.is_complex():
        torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0, equal_nan=True)
        return
    ref = fn(*[wide(t) for t in inputs]).to(want.dtype)
    rtol, atol = TOL[want.dtype]
    torch.testing.assert_close(got.cpu(), ref, rtol=rtol, atol=atol, equal_nan=True)


def same_error(fn, *inputs):
    """fn raises on the CPU, and on vkml with the same exception type."""
    with pytest.raises(Exception) as cpu_err:
        fn(*inputs)
    with pytest.raises(type(cpu_err.value)):
        fn(*[on_vkml(t) for t in inputs])


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", [torch.logical_and, torch.logical_or, torch.logical_xor])
def test_logical_binary(dtype, op, gen):
    a = crandn((7, 9), dtype, gen)
    a[a.real > 0.5] = 0
    a[:, 2] = torch.complex(torch.zeros(7), torch.randn(7, generator=gen)).to(dtype)
    b = crandn((9,), dtype, gen)
    b[::3] = 0
    s = specials(dtype)
    compare(op, a, b, exact=True)  # broadcast
    compare(lambda x, y: op(x.t(), y[::2]), a, crandn((14,), dtype, gen), exact=True)
    compare(op, s, s.flip(0), exact=True)
    compare(lambda x, y: op(x.conj(), y), s, s.roll(3), exact=True)
    compare(op, a, (torch.randn(9, generator=gen) > 0).float(), exact=True)  # complex and real
    compare(op, torch.tensor([0, 1, 2, 0]), crandn((4,), dtype, gen), exact=True)
    compare(op, a, torch.tensor(0j, dtype=dtype), exact=True)  # a CPU scalar
    compare(op, a[:0], b, exact=True)
    out = torch.empty(0, dtype=torch.float32, device=VK)
    op(a.to(VK), b.to(VK), out=out)
    torch.testing.assert_close(out.cpu(), op(a, b, out=torch.empty(0)), rtol=0, atol=0)
    inplace = a.to(VK)
    getattr(inplace, op.__name__ + "_")(b.to(VK))
    torch.testing.assert_close(inplace.cpu(), getattr(a.clone(), op.__name__ + "_")(b),
                               rtol=0, atol=0)
    same_error(op, a, crandn((4,), dtype, gen))  # shapes that do not broadcast


@pytest.mark.parametrize("dtype", CDTYPES)
def test_logical_not_and_isnan(dtype, gen):
    x = torch.cat([crandn((23,), dtype, gen), specials(dtype)])
    x[::5] = 0
    for op in (torch.logical_not, torch.isnan):
        compare(op, x, exact=True)
        compare(lambda t, op=op: op(t[::3]), x, exact=True)
        compare(lambda t, op=op: op(t.conj()), x, exact=True)
        compare(lambda t, op=op: op(t.reshape(3, -1).t()), x[:87], exact=True)
        compare(op, x[:0], exact=True)
    out = torch.empty(0, dtype=torch.int32, device=VK)
    torch.logical_not(x.to(VK), out=out)
    want = torch.logical_not(x, out=torch.empty(0, dtype=torch.int32))
    torch.testing.assert_close(out.cpu(), want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_isclose(dtype, gen):
    a = torch.cat([crandn((20,), dtype, gen), specials(dtype)])
    b = a + crandn(a.shape, dtype, gen, scale=1e-6)
    b[::4] = crandn((b[::4].numel(),), dtype, gen)
    b[20:] = specials(dtype).roll(1)
    b[21] = a[21]  # equal specials
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0, "atol": 1e-3}, {"rtol": 1e-2, "atol": 0}):
        compare(lambda x, y, kwargs=kwargs: torch.isclose(x, y, **kwargs), a, b, exact=True)
    compare(lambda x, y: torch.isclose(x, y), a[:0], b[:0], exact=True)
    compare(lambda x, y: torch.isclose(x[::2], y[1::2]), a, b, exact=True)
    assert torch.allclose(a.to(VK), a.to(VK).clone(), equal_nan=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_logaddexp(dtype, gen):
    a, b = crandn((6, 9), dtype, gen, scale=5.0), crandn((9,), dtype, gen, scale=5.0)
    compare(torch.logaddexp, a, b)
    compare(lambda x, y: torch.logaddexp(x.t(), y[::2]), a, crandn((12,), dtype, gen))
    compare(torch.logaddexp, a + 80, a.flip(1) - 80)
    s = specials(dtype)
    for shift in range(0, 64, 7):
        compare(torch.logaddexp, s, s.roll(shift))
    compare(torch.logaddexp, a, torch.tensor(0.5 - 1j, dtype=dtype))
    compare(torch.logaddexp, a, torch.randn(9, generator=gen, dtype=dtype.to_real()))
    compare(torch.logaddexp, a[:0], b)
    out = torch.empty(0, dtype=dtype, device=VK)
    torch.logaddexp(a.to(VK), b.to(VK), out=out)
    torch.testing.assert_close(out.cpu(), torch.logaddexp(a.to(torch.complex128),
                                                          b.to(torch.complex128)).to(dtype),
                               rtol=TOL[dtype][0], atol=TOL[dtype][1])
    same_error(lambda x, y: torch.logaddexp(x, y, out=torch.empty(0, device=x.device)), a, b)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_sinc_silu(dtype, gen):
    x = torch.cat([crandn((31,), dtype, gen, scale=2.0), specials(dtype),
                   torch.tensor([1e-20j, 1e-3, 2.0, -1.0 + 0j], dtype=dtype)])
    for op in (torch.sinc, F.silu):
        compare(op, x)
        compare(lambda t, op=op: op(t[1::2]), x)
        compare(lambda t, op=op: op(t.conj()), x)
        compare(op, x[:0])
    y = x.to(VK)
    y.sinc_()
    torch.testing.assert_close(y.cpu(), torch.sinc(x.to(torch.complex128)).to(dtype),
                               rtol=TOL[dtype][0], atol=TOL[dtype][1], equal_nan=True)
    y = x.to(VK)
    F.silu(y, inplace=True)
    torch.testing.assert_close(y.cpu(), F.silu(x.to(torch.complex128)).to(dtype),
                               rtol=TOL[dtype][0], atol=TOL[dtype][1], equal_nan=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_lerp(dtype, gen):
    a, b = crandn((5, 7), dtype, gen), crandn((7,), dtype, gen)
    for w in (0.25, 0.75, 1.5, -0.3, 0.2 + 0.4j, 0.6 - 0.1j):
        compare(lambda x, y, w=w: torch.lerp(x, y, w), a, b)
        compare(lambda x, y, w=w: torch.lerp(x.t(), y[::2], w), a, crandn((10,), dtype, gen))
    w = crandn((5, 7), dtype, gen, scale=0.5)  # both sides of |w| = 0.5
    compare(torch.lerp, a, b, w)
    compare(lambda x, y, z: torch.lerp(x, y, z[:, :1]), a, b, w)
    s = specials(dtype)
    compare(lambda x, y: torch.lerp(x, y, 0.3), s, s.roll(5))
    compare(lambda x, y, z: torch.lerp(x, y, z), s, s.roll(9), crandn((64,), dtype, gen))
    compare(torch.lerp, a[:0], b, w[:0])
    y = a.to(VK)
    y.lerp_(b.to(VK), 0.7 + 0.1j)
    torch.testing.assert_close(y.cpu(), torch.lerp(a.to(torch.complex128), b.to(torch.complex128),
                                                   0.7 + 0.1j).to(dtype),
                               rtol=TOL[dtype][0], atol=TOL[dtype][1])
    out = torch.empty(0, dtype=dtype, device=VK)
    torch.lerp(a.to(VK), b.to(VK), w.to(VK), out=out)
    torch.testing.assert_close(out.cpu(), torch.lerp(*(t.to(torch.complex128) for t in (a, b, w)))
                               .to(dtype), rtol=TOL[dtype][0], atol=TOL[dtype][1])
    same_error(torch.lerp, a, b.real, w)  # `end` of another dtype
    same_error(torch.lerp, a, b, w.real)  # `weight` of another dtype


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", [torch.addcmul, torch.addcdiv])
def test_addcmul_addcdiv(dtype, op, gen):
    a, b, c = crandn((4, 6), dtype, gen), crandn((6,), dtype, gen), crandn((4, 1), dtype, gen)
    compare(op, a, b, c)
    compare(lambda x, y, z: op(x, y, z, value=-0.5 + 2j), a, b, c)
    compare(lambda x, y, z: op(x.t(), y[::2], z.t(), value=3), a, crandn((8,), dtype, gen), c)
    compare(op, a, torch.randn(6, generator=gen, dtype=dtype.to_real()), c)  # mixed with real
    s = specials(dtype)
    compare(op, s, s.roll(3), s.roll(11))
    compare(op, a[:0], b, c[:0])
    y = a.to(VK)
    getattr(y, op.__name__ + "_")(b.to(VK), c.to(VK), value=1.5j)
    torch.testing.assert_close(y.cpu(), op(*(t.to(torch.complex128) for t in (a, b, c)),
                                          value=1.5j).to(dtype),
                               rtol=TOL[dtype][0], atol=TOL[dtype][1])
    out = torch.empty(0, dtype=dtype, device=VK)
    op(a.to(VK), b.to(VK), c.to(VK), out=out)
    torch.testing.assert_close(out.cpu(), op(*(t.to(torch.complex128) for t in (a, b, c)))
                               .to(dtype), rtol=TOL[dtype][0], atol=TOL[dtype][1])
    same_error(lambda x, y, z: op(x, y, z, out=torch.empty(0, device=x.device)), a, b, c)
    same_error(op, a, b, crandn((5,), dtype, gen))  # shapes that do not broadcast
