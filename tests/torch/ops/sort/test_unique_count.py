"""unique / unique_consecutive (flat and along a dim, inverse and counts), isin, bincount and histc
on vkml against torch CPU: every dtype, duplicates, NaN and +-0, strided inputs, empty inputs and
the CPU's errors."""

import pytest
import torch
from nn_helpers import HAS_FLOAT64, device_dtypes
from test_sort import DTYPES, FLOATS, make, same

import torch_vkml


def check_unique(x, **kw):
    expected = torch.unique(x, **kw)
    actual = torch.unique(x.to("vkml"), **kw)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, tuple) else (actual,)
    assert len(actual) == len(expected)
    for k, (a, e) in enumerate(zip(actual, expected)):
        assert a.device.type == "vkml"
        if k == 1 and kw.get("return_inverse") and x.is_floating_point() and x.isnan().any():
            # Which of several NaNs (each its own value) an element maps to is the CPU
            # sort's accident: the inverse must rebuild the input.
            dim = kw.get("dim")
            values = actual[0].cpu()
            got = values[a.cpu()] if dim is None else values.index_select(dim, a.cpu())
            same(got, x)
        else:
            same(a, e)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_flat(dtype):
    for shape in [(50,), (7, 37), (3000,), (1,)]:
        x = make(shape, dtype, seed=shape[0])
        for sorted_ in (True, False):
            check_unique(x, sorted=sorted_)
            check_unique(x, sorted=sorted_, return_inverse=True, return_counts=True)
        check_unique(x, return_counts=True)
        check_unique(x, return_inverse=True)


def test_unique_nan_and_signed_zero_order():
    nan = float("nan")
    for vals in ([1.0, nan, 2.0, nan, -0.0, 0.0, 1.0], [0.0, -0.0], [-0.0, 0.0], [nan, nan]):
        x = torch.tensor(vals)
        check_unique(x, return_inverse=True, return_counts=True)
        got = torch.unique(x.to("vkml")).cpu()
        want = torch.unique(x)
        # The representative of {-0, +0} is the first one in the input, bit for bit.
        assert torch.equal(torch.signbit(got), torch.signbit(want))


def test_unique_strided_and_empty():
    x = make((40, 30), torch.int32, seed=3)
    check_unique(x.t(), return_inverse=True, return_counts=True)
    check_unique(x[::3, 1::2], return_inverse=True, return_counts=True)
    check_unique(torch.empty(0, 4), return_inverse=True, return_counts=True)
    check_unique(torch.tensor(5), return_inverse=True, return_counts=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_dim(dtype):
    g = torch.Generator().manual_seed(1)
    base = torch.randint(0, 3, (12, 3, 4), generator=g).to(dtype)
    for dim in (0, 1, 2, -1):
        for consecutive in (False, True):
            x = base
            if consecutive:  # runs of repeated slices
                x = base.repeat_interleave(2, dim=dim)
            check_unique(x, dim=dim, return_inverse=True, return_counts=True)
            e = torch.unique_consecutive(x, dim=dim, return_inverse=True, return_counts=True)
            a = torch.unique_consecutive(x.to("vkml"), dim=dim, return_inverse=True,
                                         return_counts=True)
            for ai, ei in zip(a, e):
                same(ai, ei)
    check_unique(base.transpose(0, 2), dim=1, return_inverse=True, return_counts=True)


def test_unique_dim_empty_and_errors():
    check_unique(torch.zeros(0, 3), dim=0, return_inverse=True, return_counts=True)
    for bad in (torch.zeros(3, 0), torch.zeros(0, 0)):
        with pytest.raises(RuntimeError):
            torch.unique(bad, dim=0)
        with pytest.raises(RuntimeError):
            torch.unique(bad.to("vkml"), dim=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_consecutive_flat(dtype):
    g = torch.Generator().manual_seed(2)
    x = make((40,), dtype, seed=4).repeat_interleave(torch.randint(1, 4, (40,), generator=g))
    for kw in ({}, {"return_inverse": True}, {"return_counts": True},
               {"return_inverse": True, "return_counts": True}):
        e = torch.unique_consecutive(x, **kw)
        a = torch.unique_consecutive(x.to("vkml"), **kw)
        for ai, ei in zip(a if kw else (a,), e if kw else (e,)):
            same(ai, ei)
    y = x[:80].view(8, -1).t()  # strided
    for ai, ei in zip(torch.unique_consecutive(y.to("vkml"), return_inverse=True,
                                               return_counts=True),
                      torch.unique_consecutive(y, return_inverse=True, return_counts=True)):
        same(ai, ei)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != torch.bool])
def test_isin(dtype):
    x = make((9, 31), dtype, seed=5)
    tests = make((17,), dtype, seed=6)
    for invert in (False, True):
        same(torch.isin(x.to("vkml"), tests.to("vkml"), invert=invert),
             torch.isin(x, tests, invert=invert))
        same(torch.isin(x.t().to("vkml"), tests[::2].to("vkml"), invert=invert),
             torch.isin(x.t(), tests[::2], invert=invert))
        same(torch.isin(x.to("vkml"), tests[:0].to("vkml"), invert=invert),
             torch.isin(x, tests[:0], invert=invert))
    scalar = x.view(-1)[3].item()
    same(torch.isin(x.to("vkml"), scalar), torch.isin(x, scalar))
    same(torch.isin(scalar, tests.to("vkml")), torch.isin(scalar, tests))


def test_isin_mixed_dtypes_and_nan():
    x = torch.tensor([1.5, float("nan"), 2.0, -0.0, 3.0])
    t = torch.tensor([2, 0, 7])
    same(torch.isin(x.to("vkml"), t.to("vkml")), torch.isin(x, t))
    same(torch.isin(x.to("vkml"), x.to("vkml")), torch.isin(x, x))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64])
def test_bincount(dtype):
    g = torch.Generator().manual_seed(7)
    x = torch.randint(0, 40, (500,), generator=g).to(dtype)
    w = torch.randn(500, generator=g)
    same(torch.bincount(x.to("vkml")), torch.bincount(x))
    same(torch.bincount(x.to("vkml"), minlength=60), torch.bincount(x, minlength=60))
    same(torch.bincount(x[::3].to("vkml")), torch.bincount(x[::3]))
    # float32 weights count in float32; any other weights in float64, as on the CPU.
    wide_weights = [torch.float64, torch.int32, torch.float16] if HAS_FLOAT64 else []
    for wd in [torch.float32, *wide_weights]:
        ww = w.to(wd)
        torch.testing.assert_close(torch.bincount(x.to("vkml"), ww.to("vkml")).cpu(),
                                   torch.bincount(x, ww))
    if not HAS_FLOAT64:
        with pytest.raises(TypeError, match="float64"):
            torch.bincount(x.to("vkml"), w.half().to("vkml"))
    same(torch.bincount(x[:0].to("vkml"), minlength=5), torch.bincount(x[:0], minlength=5))


def test_bincount_errors():
    for bad, kw in [(torch.tensor([1, -1]), {}), (torch.tensor([[1]]), {}),
                    (torch.tensor([1.0]), {}), (torch.tensor([1, 2]), {"minlength": -1}),
                    (torch.tensor([1, 2]), {"weights": torch.ones(3)})]:
        kw_vk = {k: (v.to("vkml") if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        with pytest.raises(RuntimeError):
            torch.bincount(bad, **kw)
        with pytest.raises(RuntimeError):
            torch.bincount(bad.to("vkml"), **kw_vk)


@pytest.mark.parametrize("dtype", device_dtypes(*sorted(FLOATS, key=str)))
def test_histc(dtype):
    g = torch.Generator().manual_seed(8)
    # Few elements: the CPU's bfloat16 bins saturate at 256 per thread's partial count.
    x = (torch.randn(600, generator=g) * 3).to(dtype)
    x[::97] = float("nan")
    cases = [dict(bins=10, min=-2, max=2), dict(bins=100, min=-5, max=5), dict(bins=7)]
    for kw in cases:
        data = x if "min" in kw else x.nan_to_num(0.0)  # the data's range needs finite data
        same(torch.histc(data.to("vkml"), **kw), torch.histc(data, **kw))
    y = x.nan_to_num(0.0).view(30, 20).t()  # strided
    same(torch.histc(y.to("vkml"), bins=13, min=-1, max=3), torch.histc(y, bins=13, min=-1, max=3))
    # Values on the edges: the last bin includes the right edge.
    edges = torch.tensor([0.0, 0.25, 0.5, 1.0, 1.0, -0.0, 1.5, -0.5], dtype=dtype)
    same(torch.histc(edges.to("vkml"), bins=4, min=0, max=1),
         torch.histc(edges, bins=4, min=0, max=1))
    same(torch.histc(torch.full((5,), 3.0, dtype=dtype).to("vkml"), bins=4),
         torch.histc(torch.full((5,), 3.0, dtype=dtype), bins=4))
    same(torch.histc(x[:0].to("vkml"), bins=4), torch.histc(x[:0], bins=4))


def test_histc_errors():
    x = torch.randn(10)
    for kw in (dict(bins=0), dict(bins=4, min=2, max=1), dict(bins=4, min=0, max=float("inf"))):
        with pytest.raises(RuntimeError):
            torch.histc(x, **kw)
        with pytest.raises(RuntimeError):
            torch.histc(x.to("vkml"), **kw)


def test_trace():
    for dtype in DTYPES:
        if dtype == torch.bool:
            continue
        x = make((7, 9), dtype, seed=9, special=False)
        for m in (x, x.t(), x[1::2, ::3]):
            # Half types summed in fp32 and rounded once (torch 2.11's CPU has no half trace).
            half = m.dtype in (torch.float16, torch.bfloat16)
            ref = torch.trace(m.float()).to(m.dtype) if half else torch.trace(m)
            torch.testing.assert_close(torch.trace(m.to("vkml")).cpu(), ref)
    with pytest.raises(RuntimeError):
        torch.trace(torch.ones(3).to("vkml"))
