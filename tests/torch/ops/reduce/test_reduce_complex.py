"""Reductions of complex64 / complex128 tensors on vkml against the CPU computing in complex128:
all / any / count_nonzero, std / var and their _mean forms, vector and matrix norms, dist,
logsumexp, logcumsumexp, and the composites built on them (normalize, pairwise_distance,
triplet_margin_loss, renorm), on strided, broadcast, zero-size and odd-sized inputs with NaN and
infinite components, and PyTorch's errors for bad arguments."""

import math
import warnings

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import crandn, wide

import torch_vkml

VK = "vkml"
CDTYPES = [torch.complex64, torch.complex128]
# (rtol, atol) of a result against the complex128 / float64 computation, by result dtype.
TOL = {torch.complex64: (2e-5, 2e-5), torch.float32: (2e-5, 2e-5),
       torch.complex128: (1e-11, 1e-11), torch.float64: (1e-11, 1e-11)}


def with_specials(x):
    """x (2-D, at least 4 x 5) with NaN and infinite parts in a few elements."""
    x = x.clone()
    x[0, 1] = complex(math.nan, 1.0)
    x[1, 2] = complex(2.0, math.inf)
    x[2, 0] = complex(-math.inf, 0.5)
    x[3, 4] = complex(0.0, -0.0)
    return x


def compare(fn, *inputs, exact=False, **kwargs):
    """fn on vkml against fn on the CPU: dtypes and shapes as on the CPU with the same inputs,
    values as the complex128 / float64 computation rounded to that dtype."""
    got = fn(*[t.to(VK) if isinstance(t, torch.Tensor) else t for t in inputs], **kwargs)
    want = fn(*inputs, **kwargs)
    ref = fn(*[wide(t) for t in inputs], **kwargs)
    if not isinstance(want, (tuple, list)):
        got, want, ref = (got,), (want,), (ref,)
    assert len(got) == len(want)
    for g, w, r in zip(got, want, ref, strict=True):
        assert g.device.type == VK
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        g = g.cpu()
        if exact or not (w.is_complex() or w.is_floating_point()):
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)
        else:
            rtol, atol = TOL[w.dtype]
            torch.testing.assert_close(g, r.to(w.dtype), rtol=rtol, atol=atol, equal_nan=True)


# Views taken on each device after the move: the tensor, a transpose, a strided slice and a
# broadcast (stride 0) view of a 2-D tensor.
VIEWS = [lambda t: t, lambda t: t.t(), lambda t: t[::2, 1:], lambda t: t[:1].expand(3, t.shape[1])]


def same_error(fn_cpu, fn_vkml):
    """Both calls raise, the vkml one with the CPU's exception type."""
    with pytest.raises(Exception) as cpu_err:
        fn_cpu()
    with pytest.raises(type(cpu_err.value)):
        fn_vkml()


# ---- all / any / count_nonzero ------------------------------------------------------------

@pytest.mark.parametrize("dtype", CDTYPES)
def test_all_any_count_nonzero(dtype, gen):
    x = crandn((6, 7), dtype, gen)
    x[x.real > 0.8] = 0  # whole zeros
    x[1, :] = torch.complex(torch.zeros(7), torch.randn(7, generator=gen)).to(dtype)  # 0 + bi
    x[2, 3] = complex(math.nan, 0.0)
    x[4, :] = 0
    for v in VIEWS:
        for op in (torch.all, torch.any):
            compare(lambda t, v=v, op=op: op(v(t)), x, exact=True)
            compare(lambda t, v=v, op=op: op(v(t), 1), x, exact=True)
            compare(lambda t, v=v, op=op: op(v(t), 0, keepdim=True), x, exact=True)
            compare(lambda t, v=v, op=op: op(v(t), (0, 1)), x, exact=True)
        compare(lambda t, v=v: torch.count_nonzero(v(t)), x, exact=True)
        compare(lambda t, v=v: torch.count_nonzero(v(t), 1), x, exact=True)
        compare(lambda t, v=v: torch.count_nonzero(v(t), (0, 1)), x, exact=True)
    for op in (torch.all, torch.any):
        compare(op, x[:0], exact=True)
        compare(lambda t, op=op: op(t, 1), x[:0], exact=True)
        compare(op, x[3, 2], exact=True)  # 0-dim
    compare(lambda t: torch.count_nonzero(t, 0), x[:0], exact=True)
    compare(lambda t: torch.all(t.conj(), 1), x, exact=True)
    compare(lambda t: torch.any(t._neg_view(), 0), x, exact=True)


@pytest.mark.parametrize("op", [torch.all, torch.any])
def test_all_any_out(op, gen):
    x = crandn((5, 3), torch.complex64, gen)
    out = torch.empty(0, dtype=torch.bool, device=VK)
    op(x.to(VK), 1, out=out)
    torch.testing.assert_close(out.cpu(), op(x, 1), rtol=0, atol=0)
    same_error(lambda: op(x, 1, out=torch.empty(0, dtype=torch.float32)),
               lambda: op(x.to(VK), 1, out=torch.empty(0, dtype=torch.float32, device=VK)))
    same_error(lambda: op(x, out=torch.empty(0, dtype=torch.complex64)),
               lambda: op(x.to(VK), out=torch.empty(0, dtype=torch.complex64, device=VK)))


# ---- std / var ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", [torch.var, torch.std, torch.var_mean, torch.std_mean])
def test_std_var(dtype, op, gen):
    x = crandn((5, 7), dtype, gen, scale=3.0) + 2 - 1j
    for v in VIEWS:
        compare(lambda t, v=v: op(v(t)), x)
        compare(lambda t, v=v: op(v(t), 1), x)
        compare(lambda t, v=v: op(v(t), 0, keepdim=True), x)
        compare(lambda t, v=v: op(v(t), (0, 1), correction=0), x)
        compare(lambda t, v=v: op(v(t), -1, correction=2, keepdim=True), x)
    compare(lambda t: op(t.conj(), 1), x)
    compare(lambda t: op(t, 1), with_specials(x))
    odd = crandn((3, 257, 5), dtype, gen)
    compare(lambda t: op(t, 1), odd)
    compare(lambda t: op(t, (0, 2)), odd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degrees of freedom <= 0, warned as on the CPU
        compare(lambda t: op(t, 0), crandn((1, 9), dtype, gen))  # one element per column
        compare(lambda t: op(t, 1), x[:, :0])
        compare(lambda t: op(t, 0), x[:0])


@pytest.mark.parametrize("op", [torch.var, torch.std])
def test_std_var_out(op, gen):
    x = crandn((4, 6), torch.complex64, gen)
    out = torch.empty(0, dtype=torch.float32, device=VK)
    op(x.to(VK), 1, out=out)
    torch.testing.assert_close(out.cpu(), op(x.to(torch.complex128), 1).float(), rtol=2e-5,
                               atol=2e-5)
    if torch_vkml.has_float64_support():  # a float64 result of complex64 input
        wider = torch.empty(0, dtype=torch.float64, device=VK)
        op(x.to(VK), 0, out=wider)
        torch.testing.assert_close(wider.cpu(), op(x, 0, out=torch.empty(0, dtype=torch.float64)),
                                   rtol=1e-5, atol=1e-6)
    same_error(lambda: op(x, 1, out=torch.empty(0, dtype=torch.int32)),
               lambda: op(x.to(VK), 1, out=torch.empty(0, dtype=torch.int32, device=VK)))


# ---- norms --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("ord", [2, 1, 3.5, math.inf, -math.inf, 0, -1])
def test_vector_norm(dtype, ord, gen):
    x = crandn((6, 9), dtype, gen)
    for v in VIEWS:
        compare(lambda t, v=v: torch.linalg.vector_norm(v(t), ord), x)
        compare(lambda t, v=v: torch.linalg.vector_norm(v(t), ord, dim=1), x)
        compare(lambda t, v=v: torch.linalg.vector_norm(v(t), ord, dim=0, keepdim=True), x)
        compare(lambda t, v=v: torch.linalg.vector_norm(v(t), ord, dim=(0, 1), keepdim=True), x)
    compare(lambda t: torch.linalg.vector_norm(t.conj(), ord, dim=1), x)
    compare(lambda t: torch.linalg.vector_norm(t, ord, dim=1), with_specials(x))
    compare(lambda t: torch.linalg.vector_norm(t, ord), x[2, 3])
    if ord < 0 or ord == math.inf:  # no identity: the CPU's error for an empty dimension
        same_error(lambda: torch.linalg.vector_norm(x[:, :0], ord, dim=1),
                   lambda: torch.linalg.vector_norm(x.to(VK)[:, :0], ord, dim=1))
    else:
        compare(lambda t: torch.linalg.vector_norm(t, ord, dim=1), x[:, :0])
    compare(lambda t: torch.linalg.vector_norm(t, ord, dim=1), crandn((3, 1001), dtype, gen))
    if dtype == torch.complex64 and torch_vkml.has_float64_support():
        compare(lambda t: torch.linalg.vector_norm(t, ord, dim=1, dtype=torch.complex128), x)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_norm_variants(dtype, gen):
    x = crandn((4, 5, 3), dtype, gen)
    compare(torch.norm, x)
    compare(lambda t: torch.norm(t, p="fro"), x)
    compare(lambda t: torch.norm(t, p="fro", dim=(0, 2)), x)
    compare(lambda t: torch.norm(t, p=math.inf, dim=1), x)
    compare(lambda t: torch.norm(t.transpose(0, 2), p=1, dim=-1, keepdim=True), x)
    compare(lambda t: torch.linalg.norm(t), x)
    compare(lambda t: torch.linalg.norm(t, dim=(0, 1)), x)
    compare(lambda t: torch.linalg.norm(t, ord=math.inf, dim=(1, 2)), x)
    for ord in ("fro", 1, -1, math.inf, -math.inf):
        compare(lambda t, ord=ord: torch.linalg.matrix_norm(t, ord), x)
    compare(lambda t: torch.linalg.matrix_norm(t, 1, dim=(0, 2), keepdim=True), x)
    y = crandn((5, 3), dtype, gen)
    compare(lambda a, b: torch.dist(a, b), x[0], y)
    compare(lambda a, b: torch.dist(a, b, 3), x[0], y[:1])  # broadcast
    compare(lambda a, b: torch.dist(a, b, math.inf), x[0], y)
    out = torch.empty(0, dtype=dtype.to_real(), device=VK)
    torch.linalg.vector_norm(x.to(VK), 2, dim=1, out=out)
    torch.testing.assert_close(out.cpu(), torch.linalg.vector_norm(x.to(torch.complex128), 2,
                                                                   dim=1).to(dtype.to_real()),
                               rtol=TOL[dtype][0], atol=TOL[dtype][1])
    same_error(lambda: torch.linalg.vector_norm(x, 2, out=torch.empty(0, dtype=dtype)),
               lambda: torch.linalg.vector_norm(x.to(VK), 2,
                                                out=torch.empty(0, dtype=dtype, device=VK)))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_norm_composites(dtype, gen):
    x, y, z = (crandn((6, 8), dtype, gen) for _ in range(3))
    compare(F.normalize, x)
    compare(lambda t: F.normalize(t.t(), p=1, dim=0), x)
    compare(lambda t: F.normalize(t, dim=1), torch.zeros(2, 3, dtype=dtype))
    compare(F.pairwise_distance, x, y)
    compare(lambda a, b: F.pairwise_distance(a, b, p=1, keepdim=True), x, y[:1])
    compare(F.triplet_margin_loss, x, y, z)
    compare(lambda a, b, c: F.triplet_margin_loss(a, b, c, p=1, swap=True,
                                                  reduction="none"), x, y, z)
    compare(F.triplet_margin_with_distance_loss, x, y, z)
    compare(lambda t: torch.renorm(t, 2, 0, 1.5), x)
    compare(lambda t: torch.renorm(t.t(), 1, 1, 0.5), x)
    r = x.to(VK)
    r.renorm_(2, 0, 1.5)
    torch.testing.assert_close(r.cpu(), torch.renorm(x.to(torch.complex128), 2, 0, 1.5).to(dtype),
                               rtol=TOL[dtype][0], atol=TOL[dtype][1])


# ---- logsumexp / logcumsumexp -------------------------------------------------------------

@pytest.mark.parametrize("dtype", CDTYPES)
def test_logsumexp(dtype, gen):
    x = crandn((5, 7), dtype, gen, scale=4.0)
    for v in VIEWS:
        compare(lambda t, v=v: torch.logsumexp(v(t), 1), x)
        compare(lambda t, v=v: torch.logsumexp(v(t), (0, 1), keepdim=True), x)
    compare(lambda t: torch.logsumexp(t.conj(), 0), x)
    # Large real parts: the CPU's shift by the largest one keeps the sum finite.
    compare(lambda t: torch.logsumexp(t, 1), x + 200)
    compare(lambda t: torch.logsumexp(t, 1), with_specials(x))
    inf_rows = x.clone()
    inf_rows[0] = complex(math.inf, 0.0)
    inf_rows[1, ::2] = complex(-math.inf, 1.0)
    inf_rows[2] = complex(-math.inf, 2.0)
    compare(lambda t: torch.logsumexp(t, 1), inf_rows)
    compare(lambda t: torch.logsumexp(t, 1), x[:0])
    compare(lambda t: torch.logsumexp(t, 0), x[:0])
    out = torch.empty(0, dtype=dtype, device=VK)
    torch.logsumexp(x.to(VK), 1, out=out)
    torch.testing.assert_close(out.cpu(), torch.logsumexp(x.to(torch.complex128), 1).to(dtype),
                               rtol=TOL[dtype][0], atol=TOL[dtype][1])
    same_error(lambda: torch.logsumexp(x, 1, out=torch.empty(0, dtype=torch.int64)),
               lambda: torch.logsumexp(x.to(VK), 1, out=torch.empty(0, dtype=torch.int64,
                                                                    device=VK)))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_logcumsumexp(dtype, gen):
    x = crandn((5, 11), dtype, gen, scale=3.0)
    for v in VIEWS:
        compare(lambda t, v=v: torch.logcumsumexp(v(t), 1), x)
        compare(lambda t, v=v: torch.logcumsumexp(v(t), 0), x)
    compare(lambda t: torch.logcumsumexp(t.conj(), -1), x)
    compare(lambda t: torch.logcumsumexp(t, 1), crandn((2, 37), dtype, gen))
    compare(lambda t: torch.logcumsumexp(t, 0), x[1, 2])  # 0-dim
    compare(lambda t: torch.logcumsumexp(t, 1), x[:0])
    specials = x.clone()
    specials[0, 3] = complex(math.nan, 0.0)
    specials[1, 0] = complex(-math.inf, 3.0)
    specials[2, :4] = complex(-math.inf, 1.0)
    specials[3, 5] = complex(math.inf, 0.0)
    specials[4, 2] = complex(1.0, math.inf)
    compare(lambda t: torch.logcumsumexp(t, 1), specials)
    out = torch.empty(0, dtype=dtype, device=VK)
    torch.logcumsumexp(x.to(VK), 1, out=out)
    torch.testing.assert_close(out.cpu(), torch.logcumsumexp(x.to(torch.complex128), 1).to(dtype),
                               rtol=TOL[dtype][0], atol=TOL[dtype][1])
