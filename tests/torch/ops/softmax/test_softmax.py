"""softmax / log_softmax on vkml against float64 CPU: every dim, dtypes, strides, out=, autograd,
half_to_float and errors."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, only_native, randn

SHAPES_DIMS = [
    ((7, 13), 1),
    ((7, 13), 0),
    ((3, 40, 5), 1),
    ((2, 3, 4, 5), -1),
    ((300,), 0),
    ((5, 1), 1),
    ((), 0),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", [False, True])
def test_forward_matches_cpu(dtype, log, gen):
    fn = F.log_softmax if log else F.softmax
    for shape, dim in SHAPES_DIMS:
        x = randn(shape, dtype, gen, scale=3)
        got = fn(x.to("vkml"), dim=dim)
        assert got.dtype == dtype and got.shape == x.shape
        assert_close_to_ref(got, fn(x.double(), dim=dim))


@pytest.mark.parametrize("log", [False, True])
def test_strided_inputs_and_out(log, gen):
    fn = torch._log_softmax if log else torch._softmax
    base = randn((12, 30), torch.float32, gen, scale=2)
    b = base.to("vkml")
    for view, vview in [
        (base.t(), b.t()),
        (base[::3, 1::2], b[::3, 1::2]),
        (base[:, 4], b[:, 4]),
        (base.unsqueeze(1).expand(12, 3, 30), b.unsqueeze(1).expand(12, 3, 30)),
    ]:
        for dim in range(view.dim()):
            assert_close_to_ref(fn(vview, dim, False), fn(view.double(), dim, False))
    out = torch.empty(0, device="vkml")  # resized like CPU
    res = fn(b.t(), 1, False, out=out)
    assert res is out and out.shape == (30, 12)
    assert_close_to_ref(out, fn(base.t().double(), 1, False))
    with pytest.raises(RuntimeError, match="dtype"):
        fn(b, 1, False, out=torch.empty(12, 30, dtype=torch.float16, device="vkml"))


def test_zero_size_and_extreme_values(gen):
    assert F.softmax(torch.empty(0, 4, device="vkml"), dim=1).shape == (0, 4)
    assert F.log_softmax(torch.empty(3, 0, device="vkml"), dim=1).shape == (3, 0)
    x = torch.tensor([[1000.0, 1001.0, -1000.0], [-float("inf"), 0.0, 1.0]])
    for fn in (F.softmax, F.log_softmax):
        torch.testing.assert_close(fn(x.to("vkml"), dim=1).cpu(), fn(x, dim=1))
    nan_row = torch.tensor([[1.0, float("nan"), 2.0]])
    assert torch.isnan(F.softmax(nan_row.to("vkml"), dim=1).cpu()).all()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", [False, True])
def test_autograd_matches_cpu(dtype, log, gen, fallback):
    fn = F.log_softmax if log else F.softmax
    for shape, dim in [((6, 33), 1), ((4, 50, 3), 1), ((9, 5), 0)]:
        x = randn(shape, dtype, gen, scale=2)
        g = randn(shape, dtype, gen)
        xv = x.to("vkml").requires_grad_()
        with only_native():
            y = fn(xv, dim=dim)
            y.backward(g.to("vkml"))
        xr = x.double().requires_grad_()
        fn(xr, dim=dim).backward(g.double())
        assert xv.grad.dtype == dtype
        assert_close_to_ref(xv.grad, xr.grad, scale=4)


def test_backward_ops_direct_and_out(gen):
    y = F.softmax(randn((5, 17), torch.float32, gen), dim=1)
    g = randn((5, 17), torch.float32, gen)
    ref = torch._softmax_backward_data(g.double(), y.double(), 1, torch.float64)
    got = torch._softmax_backward_data(
        g.to("vkml").t().contiguous().t(), y.to("vkml"), 1, torch.float32
    )
    assert_close_to_ref(got, ref)
    out = torch.empty(0, device="vkml")
    torch._log_softmax_backward_data(g.to("vkml"), y.log().to("vkml"), 1, torch.float32, out=out)
    assert_close_to_ref(
        out, torch._log_softmax_backward_data(g.double(), y.log().double(), 1, torch.float64)
    )


def test_half_to_float(gen):
    x = randn((4, 70), torch.float16, gen, scale=3)
    for fn, ref in [(torch._softmax, F.softmax), (torch._log_softmax, F.log_softmax)]:
        got = fn(x.to("vkml"), 1, True)
        assert got.dtype == torch.float32
        assert_close_to_ref(got, ref(x.double(), dim=1), dtype=torch.float32)
    # backward of a half_to_float softmax: float grads, half grad_input (CUDA's rule)
    y = F.softmax(x.float(), dim=1)
    g = randn((4, 70), torch.float32, gen)
    gi = torch._softmax_backward_data(g.to("vkml"), y.to("vkml"), 1, torch.float16)
    assert gi.dtype == torch.float16
    assert_close_to_ref(gi, torch._softmax_backward_data(g.double(), y.double(), 1, torch.float64))
    with pytest.raises(RuntimeError, match="Half"):
        torch._softmax(randn((3,), torch.bfloat16, gen).to("vkml"), 0, True)


def test_errors_match_cpu(gen):
    x = torch.randn(3, 4)
    for dev in ("cpu", "vkml"):
        with pytest.raises(IndexError):
            F.softmax(x.to(dev), dim=2)
        with pytest.raises(NotImplementedError):
            torch._softmax(torch.arange(4).to(dev), 0, False)
        with pytest.raises(RuntimeError, match="same size"):
            torch._softmax_backward_data(x.to(dev), torch.randn(4, 3).to(dev), 1, torch.float32)
