"""Pooling on vkml against float64 CPU: max (indices exact), average, adaptive; 1-D/2-D/3-D,
dilation, padding, ceil_mode, count_include_pad, divisor_override, channels_last, out=, autograd
and errors."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, only_native, randn


def run_with_grad(fn, x, dtype, gen):
    """(output(s), grad of x) on vkml and on float64 CPU for a random grad_output."""
    xv = x.to("vkml").requires_grad_()
    xr = x.double().requires_grad_()
    with only_native():
        out = fn(xv)
    ref = fn(xr)
    first, rfirst = (out[0], ref[0]) if isinstance(out, tuple) else (out, ref)
    g = randn(rfirst.shape, dtype, gen)
    with only_native():
        (gx,) = torch.autograd.grad(first, xv, g.to("vkml"))
    (rgx,) = torch.autograd.grad(rfirst, xr, g.double())
    return out, ref, gx, rgx


MAX2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), ceil_mode=True),
    dict(kernel_size=3, stride=1, padding=1),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_max_pool2d(dtype, gen, fallback):
    for kw in MAX2D:
        for shape in [(2, 3, 9, 8), (3, 7, 6)]:
            x = randn(shape, dtype, gen, scale=3)
            out, ref, gx, rgx = run_with_grad(
                lambda t, kw=kw: F.max_pool2d(t, return_indices=True, **kw), x, dtype, gen
            )
            assert_close_to_ref(out[0], ref[0])
            assert torch.equal(out[1].cpu(), ref[1])  # indices exactly as on the CPU
            assert_close_to_ref(gx, rgx, scale=4)


def test_max_pool_channels_last_nan_and_out(gen, fallback):
    x = randn((2, 4, 7, 7), torch.float32, gen).to(memory_format=torch.channels_last)
    x[0, 1, 2, 3] = float("nan")
    with only_native():
        out, idx = F.max_pool2d(x.to("vkml"), 3, 2, 1, return_indices=True)
    rout, ridx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert out.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(out.cpu(), rout, equal_nan=True)
    assert torch.equal(idx.cpu(), ridx)
    o, i = torch.empty(0, device="vkml"), torch.empty(0, dtype=torch.long, device="vkml")
    with only_native():
        torch.ops.aten.max_pool2d_with_indices.out(
            x.to("vkml"), [2], [], [0], [1], False, out=o, indices=i
        )
    ro, ri = torch.ops.aten.max_pool2d_with_indices(x, [2])
    torch.testing.assert_close(o.cpu(), ro, equal_nan=True)
    assert torch.equal(i.cpu(), ri)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_pool1d_decompose_to_2d(dtype, gen, fallback):
    x = randn((2, 3, 11), dtype, gen)
    for fn in [
        lambda t: F.max_pool1d(t, 3, 2, 1),
        lambda t: F.avg_pool1d(t, 4, 2, 2, True),
        lambda t: F.adaptive_avg_pool1d(t, 4),
        lambda t: F.adaptive_max_pool1d(t, 5),
    ]:
        out, ref, gx, rgx = run_with_grad(fn, x, dtype, gen)
        assert_close_to_ref(out, ref)
        assert_close_to_ref(gx, rgx, scale=4)


AVG2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=2, divisor_override=3),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_avg_pool2d(dtype, gen, fallback):
    for kw in AVG2D:
        x = randn((2, 3, 9, 7), dtype, gen)
        out, ref, gx, rgx = run_with_grad(lambda t, kw=kw: F.avg_pool2d(t, **kw), x, dtype, gen)
        assert_close_to_ref(out, ref)
        assert_close_to_ref(gx, rgx, scale=4)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_pool3d(dtype, gen, fallback):
    x = randn((2, 2, 5, 6, 7), dtype, gen)
    for fn in [
        lambda t: F.max_pool3d(t, 2, return_indices=True),
        lambda t: F.max_pool3d(
            t, (3, 2, 2), (2, 1, 2), 1, dilation=(1, 2, 1), ceil_mode=True, return_indices=True
        ),
        lambda t: F.avg_pool3d(t, 3, 2, 1),
        lambda t: F.avg_pool3d(t, 2, 1, 1, True, False),
        lambda t: F.avg_pool3d(t, 2, divisor_override=5),
        lambda t: F.adaptive_avg_pool3d(t, (2, 4, 3)),
        lambda t: F.adaptive_max_pool3d(t, (3, 4, 5), return_indices=True),
    ]:
        out, ref, gx, rgx = run_with_grad(fn, x, dtype, gen)
        if isinstance(out, tuple):
            assert torch.equal(out[1].cpu(), ref[1])
            out, ref = out[0], ref[0]
        assert_close_to_ref(out, ref)
        assert_close_to_ref(gx, rgx, scale=4)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_adaptive_pool2d(dtype, gen, fallback):
    for shape, size in [
        ((2, 3, 9, 7), (4, 3)),
        ((3, 5, 6), (5, 6)),
        ((1, 2, 4, 5), (7, 8)),
        ((2, 3, 7, 9), (1, 2)),
    ]:
        x = randn(shape, dtype, gen)
        out, ref, gx, rgx = run_with_grad(
            lambda t, size=size: F.adaptive_avg_pool2d(t, size), x, dtype, gen
        )
        assert_close_to_ref(out, ref)
        assert_close_to_ref(gx, rgx, scale=4)
        out, ref, gx, rgx = run_with_grad(
            lambda t, size=size: F.adaptive_max_pool2d(t, size, return_indices=True), x, dtype, gen
        )
        assert_close_to_ref(out[0], ref[0])
        assert torch.equal(out[1].cpu(), ref[1])
        assert_close_to_ref(gx, rgx, scale=4)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64])
def test_integer_pools_like_cpu(dtype, gen, fallback):
    lo = 0 if dtype == torch.uint8 else -100
    x = torch.randint(lo, 100, (2, 3, 7, 6), generator=gen).to(dtype)
    with only_native():
        out, idx = F.max_pool2d(x.to("vkml"), 3, 2, 1, return_indices=True)
        out3 = F.max_pool3d(x.to("vkml"), 2)
    rout, ridx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert torch.equal(out.cpu(), rout) and torch.equal(idx.cpu(), ridx)
    assert torch.equal(out3.cpu(), F.max_pool3d(x, 2))
    if dtype == torch.int64:  # the only integer average pool of the CPU: truncating division
        with only_native():
            avg = F.avg_pool2d(x.to("vkml"), 3, 2, 1, count_include_pad=False)
        assert torch.equal(avg.cpu(), F.avg_pool2d(x, 3, 2, 1, count_include_pad=False))
    else:
        for dev in ("cpu", "vkml"):
            with pytest.raises(NotImplementedError):
                F.avg_pool2d(x.to(dev), 2)
    for dev in ("cpu", "vkml"):
        with pytest.raises(NotImplementedError):
            F.adaptive_avg_pool2d(x.to(dev), 2)
        with pytest.raises(NotImplementedError):
            F.max_pool2d(x.bool().to(dev), 2)


def test_out_forms_and_strided_input(gen, fallback):
    base = randn((2, 3, 10, 12), torch.float32, gen)
    x = base.to("vkml")[:, :, ::2, 1::2]  # a strided view
    with only_native():
        o = torch.empty(0, device="vkml")
        torch.ops.aten.avg_pool2d.out(x, [2, 2], [], [0, 0], False, True, None, out=o)
        a = torch.empty(0, device="vkml")
        torch.ops.aten.adaptive_avg_pool2d.out(x, [3, 2], out=a)
        gi = torch.empty(0, device="vkml")
        g = torch.ones(2, 3, 2, 3, device="vkml")
        torch.ops.aten.avg_pool2d_backward.grad_input(
            g, x, [2, 2], [], [0, 0], False, True, None, grad_input=gi
        )
    xr = base[:, :, ::2, 1::2].double()
    assert_close_to_ref(o, F.avg_pool2d(xr, 2))
    assert_close_to_ref(a, F.adaptive_avg_pool2d(xr, (3, 2)))
    assert_close_to_ref(
        gi,
        torch.ops.aten.avg_pool2d_backward(
            g.cpu().double(), xr, [2, 2], [], [0, 0], False, True, None
        ),
    )
    assert F.max_pool2d(torch.empty(0, 2, 5, 5, device="vkml"), 2).shape == (0, 2, 2, 2)


def test_errors_match_cpu(gen):
    x = torch.randn(1, 2, 5, 5)
    for dev in ("cpu", "vkml"):
        xd = x.to(dev)
        with pytest.raises(RuntimeError, match="pad should be at most half"):
            F.max_pool2d(xd, 2, padding=2)
        with pytest.raises(RuntimeError, match="stride should not be zero"):
            F.max_pool2d(xd, 0)
        with pytest.raises(RuntimeError, match="dilation should be greater than zero"):
            F.max_pool2d(xd, 2, dilation=0)
        with pytest.raises(RuntimeError, match="3D or 4D"):
            F.max_pool2d(torch.randn(5, 5).to(dev), 2)
        with pytest.raises(RuntimeError, match="Output size is too small"):
            F.max_pool2d(xd, 6)
        with pytest.raises(RuntimeError, match="kernel_size must either"):
            torch.ops.aten.max_pool2d_with_indices(xd, [2, 2, 2])
        with pytest.raises(RuntimeError, match="divisor must be not zero"):
            F.avg_pool2d(xd, 2, divisor_override=0)
        with pytest.raises(RuntimeError, match="Expected 3D or 4D tensor"):
            F.adaptive_avg_pool2d(torch.randn(5).to(dev), 2)
        with pytest.raises(RuntimeError, match="non-zero size for non-batch"):
            F.adaptive_max_pool2d(torch.randn(1, 2, 0, 5).to(dev), 2)
        with pytest.raises(RuntimeError, match="4D or 5D"):
            F.max_pool3d(torch.randn(3, 4, 4).to(dev), 2)
