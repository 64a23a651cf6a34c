"""Complex exponentials, logarithms, roots, trigonometric and hyperbolic functions, their inverses,
reciprocal, sigmoid and pow on vkml (the complex family's kernels) against the CPU: random
values over several scales, strided, broadcast, zero-size and odd-sized tensors, every pair of
special values (zeros of both signs, infinities, NaN, tiny and huge), in-place and out= forms."""

import math

import pytest
import torch
from nn_helpers import complex_pairs, crandn, device_dtypes

import torch_vkml  # noqa: F401

CDTYPES = device_dtypes(torch.complex64, torch.complex128)
# complex64 computes in float: a few ulp from the CPU's float kernels, as OpInfo allows.
TOL = {torch.complex64: (1e-5, 1e-5), torch.complex128: (1e-12, 1e-12)}
SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, math.inf, -math.inf, math.nan, 1e-30, 3e30]

FUNCTIONS = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
             "reciprocal", "sigmoid", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin",
             "acos", "atan", "asinh", "acosh", "atanh"]


def specials(dtype):
    """Every pair of special values as one complex tensor."""
    return complex_pairs(SPECIALS, dtype)


def check(got, ref):
    assert got.device.type == "vkml"
    got = got.cpu()
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, ref.dtype, got.shape)
    rtol, atol = TOL[ref.dtype]
    torch.testing.assert_close(got, ref, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_random_values(name, dtype, gen):
    fn = getattr(torch, name)
    for scale in (0.01, 1.0, 4.0, 20.0):
        x = crandn((67,), dtype, gen, scale)
        check(fn(x.to("vkml")), fn(x))
    # Strided (a transposed, stepped view), zero-size and 0-dim.
    m = crandn((9, 14), dtype, gen, 2.0)
    check(fn(m.to("vkml").t()[::2, 1::3]), fn(m.t()[::2, 1::3]))
    check(fn(torch.empty(0, 3, dtype=dtype, device="vkml")), fn(torch.empty(0, 3, dtype=dtype)))
    check(fn(m[2, 3].to("vkml")), fn(m[2, 3]))
    # The conjugate and negative bits are applied before the function.
    check(fn(m.to("vkml").conj()), fn(m.conj()))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_special_values(name, dtype):
    fn = getattr(torch, name)
    x = specials(dtype)
    check(fn(x.to("vkml")), fn(x))


# Zero parts carry the CPU's sign for every pair of special values (complex64, whose CPU kernels
# are checked here element by element; assert_close does not compare the signs of zeros).
SIGNED_ZERO_FUNCTIONS = FUNCTIONS


@pytest.mark.parametrize("name", SIGNED_ZERO_FUNCTIONS)
def test_signed_zeros(name):
    fn = getattr(torch, name)
    x = specials(torch.complex64)
    got, ref = torch.view_as_real(fn(x.to("vkml")).cpu()), torch.view_as_real(fn(x))
    zero = ref == 0
    assert torch.equal(torch.signbit(got[zero]), torch.signbit(ref[zero])), \
        [(x[i].item(), fn(x.to("vkml"))[i].item(), fn(x)[i].item())
         for i in range(len(x)) if bool((torch.signbit(got[i]) != torch.signbit(ref[i]))[zero[i]].any())]


@pytest.mark.parametrize("dtype", CDTYPES)
def test_inplace_and_out(dtype, gen):
    x = crandn((6, 5), dtype, gen)
    d = x.to("vkml")
    view = d[:, 1:4]
    view.sin_()
    ref = x.clone()
    ref[:, 1:4].sin_()
    check(d, ref)
    out = torch.empty(3, dtype=dtype, device="vkml")
    torch.log(x.to("vkml"), out=out)  # resized as out= is
    check(out, torch.log(x))
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.exp(x.to("vkml"), out=torch.empty(6, 5, device="vkml"))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_pow(dtype, gen):
    a, b = crandn((7, 5), dtype, gen, 2.0), crandn((5,), dtype, gen)
    check(torch.pow(a.to("vkml"), b.to("vkml")), torch.pow(a, b))  # broadcast exponent
    check(a.to("vkml") ** 2.5, a ** 2.5)
    check(a.to("vkml") ** (1 - 0.5j), a ** (1 - 0.5j))
    for e in (0, 1, 2, 3, -2, 0.5, -0.5, -1):  # the CPU's shortcuts
        check(a.to("vkml") ** e, a ** e)
    check(2 ** a.to("vkml"), 2 ** a)
    check(torch.pow(a.to("vkml").t(), b[:1].to("vkml")), torch.pow(a.t(), b[:1]))
    s = specials(dtype)
    check(torch.pow(s.to("vkml"), 0), torch.pow(s, 0))
    s = s[torch.isfinite(s) & (s.abs() < 10)]  # products of infinities: the complex mul's business
    check(torch.pow(s.to("vkml"), 2), torch.pow(s, 2))
    check(torch.pow(s.to("vkml"), -2), torch.pow(s, -2))
    # Real exponent promoted to complex; in place.
    r = torch.randn(5, generator=gen, dtype=dtype.to_real())
    check(torch.pow(a.to("vkml"), r.to("vkml")), torch.pow(a, r))
    d = a.to("vkml")
    d.pow_(b.to("vkml"))
    check(d, torch.pow(a, b))


def test_backward_through_complex_functions(gen):
    x = crandn((11,), torch.complex64, gen)
    grads = []
    for device in ("cpu", "vkml"):
        leaf = x.detach().clone().to(device).requires_grad_()
        y = torch.exp(torch.sin(leaf)) * torch.sqrt(leaf) + torch.log(leaf + 3)
        y.abs().sum().backward()
        grads.append(leaf.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-5)
