"""Dropout on vkml: F.dropout runs native_dropout natively, keeps 1 - p of the elements with
exact 1/(1 - p) scaling, follows torch.manual_seed, and its gradient uses the same mask."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, only_native


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_dropout_forward_backward(dtype, gen, fallback):
    p = 0.3
    x = (torch.rand(64, 50, generator=gen, dtype=torch.float64) + 0.5).to(dtype)
    xv = x.to("vkml").t().requires_grad_()  # strided input
    torch.manual_seed(7)
    with only_native():
        y = F.dropout(xv, p, training=True)
        (g,) = torch.autograd.grad(y, xv, torch.ones_like(xv.detach()))
    kept = y.detach().cpu() != 0
    assert abs(kept.double().mean().item() - (1 - p)) < 0.03
    want = torch.where(kept, x.t().double() / (1 - p), torch.zeros((), dtype=torch.float64))
    tol = {torch.float16: 1e-3, torch.bfloat16: 8e-3}.get(dtype, 1e-6)
    torch.testing.assert_close(y.detach().cpu().double(), want, rtol=tol, atol=0)
    torch.testing.assert_close(g.cpu().double(), kept.double() / (1 - p), rtol=tol, atol=0)
    torch.manual_seed(7)
    assert torch.equal(F.dropout(xv.detach(), p, training=True).cpu(), y.detach().cpu())


def test_native_ops_and_eval(gen, fallback):
    x = torch.randn(10, 20, generator=gen).to("vkml")
    with only_native():
        out, mask = torch.native_dropout(x, 0.4, True)
        gi = torch.ops.aten.native_dropout_backward(torch.ones_like(x), mask, 2.0)
        ev, evmask = torch.native_dropout(x, 0.4, False)
    assert mask.dtype == torch.bool
    torch.testing.assert_close(out.cpu(), x.cpu() * mask.cpu() / 0.6)
    torch.testing.assert_close(gi.cpu(), mask.cpu().float() * 2.0)
    assert torch.equal(ev.cpu(), x.cpu()) and bool(evmask.cpu().all())
    m = torch.nn.Dropout(0.5).to("vkml").eval()
    assert torch.equal(m(x).cpu(), x.cpu())
    assert torch.native_dropout(torch.empty(0, device="vkml"), 0.5, True)[0].shape == (0,)
    with pytest.raises(RuntimeError, match="Bool"):
        torch.ops.aten.native_dropout_backward(x, mask.float(), 2.0)


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64])
def test_dropout_backward_integer_gradients_promote_like_cpu(dtype, gen, fallback):
    # The CPU computes grad * mask * scale: integer and bool gradients give default-dtype floats.
    grad = torch.randint(0, 3, (7, 9), generator=gen).to(dtype)
    mask = torch.rand(7, 9, generator=gen) > 0.4
    want = torch.ops.aten.native_dropout_backward(grad, mask, 1.7)
    with only_native():
        got = torch.ops.aten.native_dropout_backward(grad.to("vkml").t(), mask.to("vkml").t(), 1.7)
    assert got.dtype == want.dtype == torch.get_default_dtype()
    torch.testing.assert_close(got.cpu(), want.t(), rtol=0, atol=0)
