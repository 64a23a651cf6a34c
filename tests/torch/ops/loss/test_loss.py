"""Losses on vkml against float64 CPU: nll_loss / nll_loss2d / cross_entropy, mse, smooth_l1,
huber, binary_cross_entropy (+ with_logits): reductions, weights, ignore_index, broadcasting,
strides, out=, autograd and errors."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, fell_back, only_native, randn
import torch_vkml

# float64 only where the device computes in it (GPUs without fp64, VKML_CAPS_MASK=no-fp64).

REDUCTIONS = ["none", "mean", "sum"]


def targets(shape, classes, gen, ignore=None):
    t = torch.randint(0, classes, shape, generator=gen)
    if ignore is not None:
        t[torch.rand(shape, generator=gen) < 0.2] = ignore
    return t


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_forward_backward(dtype, reduction, gen, fallback):
    for in_shape, weighted in [
        ((7, 5), True),
        ((7, 5), False),
        ((5,), True),
        ((2, 4, 3, 5), True),
        ((3, 6, 7), False),
        ((2, 3, 2, 2, 3), True),
    ]:
        c = in_shape[1] if len(in_shape) > 1 else in_shape[0]
        t_shape = in_shape[:1] + in_shape[2:] if len(in_shape) > 1 else ()
        x = randn(in_shape, dtype, gen, scale=2)
        t = targets(t_shape, c, gen, ignore=1 if len(in_shape) > 1 else None)
        w = randn((c,), dtype, gen).abs() + 0.5 if weighted else None
        xv = x.to("vkml").requires_grad_()
        xr = x.double().requires_grad_()
        kw = dict(reduction=reduction, ignore_index=1)
        allowed = () if len(in_shape) in (1, 2, 4) else ("aten::view",)
        with only_native(*allowed):
            got = F.nll_loss(xv, t.to("vkml"), None if w is None else w.to("vkml"), **kw)
        ref = F.nll_loss(xr, t, None if w is None else w.double(), **kw)
        assert got.dtype == dtype and got.shape == ref.shape
        assert_close_to_ref(got, ref, scale=4)
        g = randn(ref.shape, dtype, gen)
        with only_native():
            (gx,) = torch.autograd.grad(got, xv, g.to("vkml"))
        (rgx,) = torch.autograd.grad(ref, xr, g.double())
        assert_close_to_ref(gx, rgx, scale=4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cross_entropy_is_native(dtype, gen, fallback):
    x = randn((16, 10), dtype, gen, scale=3)
    t = targets((16,), 10, gen, ignore=-100)
    xv = x.to("vkml").requires_grad_()
    xr = x.double().requires_grad_()
    with only_native():
        loss = F.cross_entropy(xv, t.to("vkml"))
        (g,) = torch.autograd.grad(loss, xv, torch.tensor(1.0, dtype=dtype).to("vkml"))
    ref = F.cross_entropy(xr, t)
    (rg,) = torch.autograd.grad(ref, xr)
    assert_close_to_ref(loss, ref, scale=4)
    assert_close_to_ref(g, rg)
    # segmentation-style (N, C, H, W)
    x4 = randn((2, 5, 4, 3), dtype, gen)
    t4 = targets((2, 4, 3), 5, gen)
    with only_native():
        got = F.cross_entropy(x4.to("vkml"), t4.to("vkml"), reduction="sum")
    assert_close_to_ref(got, F.cross_entropy(x4.double(), t4, reduction="sum"), scale=8)


def test_cross_entropy_label_smoothing_decomposes(gen, fallback):
    x = randn((6, 4), torch.float32, gen)
    t = targets((6,), 4, gen)
    got = F.cross_entropy(x.to("vkml"), t.to("vkml"), label_smoothing=0.1)
    assert_close_to_ref(got, F.cross_entropy(x.double(), t, label_smoothing=0.1))
    # the smoothing term needs elementwise ops and sums from other families
    assert "aten::nll_loss_forward.output" not in fell_back()
    assert "aten::_log_softmax.out" not in fell_back()


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_backward_into_strided_out_overwrites_every_element(reduction, gen):
    """The backward zeroes grad_input, then writes each sample's target class: a transposed out=
    holding other values, a strided target with ignored entries, a strided grad_output (none)."""
    x = randn((6, 5), torch.float32, gen)
    t = torch.tensor([0, 9, 4, 9, -100, 9, 1, 9, 3, 9, 4, 9])[::2]
    w = torch.rand(5, generator=gen) + 0.5
    go = randn((12,), torch.float32, gen)[::2] if reduction == 0 else randn((), torch.float32, gen)
    _, tw = torch.ops.aten.nll_loss_forward(x.double(), t, w.double(), reduction, -100)
    ref = torch.ops.aten.nll_loss_backward(go.double(), x.double(), t, w.double(), reduction,
                                           -100, tw)
    out = randn((5, 6), torch.float32, gen).to("vkml").t()
    dev_go = go.to("vkml") if reduction else randn((12,), torch.float32, gen).to("vkml")[::2]
    if reduction == 0:
        dev_go.copy_(go)
    torch.ops.aten.nll_loss_backward.grad_input(
        dev_go, x.to("vkml"), torch.tensor([0, 9, 4, 9, -100, 9, 1, 9, 3, 9, 4, 9]).to("vkml")[::2],
        w.to("vkml"), reduction, -100, tw.float().to("vkml"), grad_input=out)
    assert not out.is_contiguous()
    assert_close_to_ref(out, ref)


def test_nll_ops_direct_out_and_total_weight(gen):
    x = randn((6, 4), torch.float32, gen)
    t = torch.tensor([0, 3, 1, -100, 2, 1])
    w = torch.rand(4, generator=gen) + 0.5
    for r in range(3):
        out, tw = torch.ops.aten.nll_loss_forward(x.to("vkml"), t.to("vkml"), w.to("vkml"), r, -100)
        rout, rtw = torch.ops.aten.nll_loss_forward(x.double(), t, w.double(), r, -100)
        assert_close_to_ref(out, rout)
        assert_close_to_ref(tw, rtw)
    o, tw = torch.empty(0, device="vkml"), torch.empty(0, device="vkml")
    torch.ops.aten.nll_loss_forward.output(
        x.to("vkml"), t.to("vkml"), None, 1, -100, output=o, total_weight=tw
    )
    assert o.shape == () and tw.item() == 5.0
    # a byte target works as on the CPU; all targets ignored gives nan for mean
    tb = torch.tensor([1, 0, 3, 2, 2, 0], dtype=torch.uint8)
    assert_close_to_ref(
        F.nll_loss(x.to("vkml"), tb.to("vkml").long()), F.nll_loss(x.double(), tb.long())
    )
    allign = torch.full((6,), -100)
    assert torch.isnan(F.nll_loss(x.to("vkml"), allign.to("vkml")).cpu())
    assert F.nll_loss(x.to("vkml"), allign.to("vkml"), reduction="sum").item() == 0.0
    empty = torch.ops.aten.nll_loss_forward(
        torch.empty(0, 4, device="vkml"),
        torch.empty(0, dtype=torch.long, device="vkml"),
        None,
        1,
        -100,
    )
    assert torch.isnan(empty[0].cpu()) and empty[1].item() == 0.0


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_out_of_range_target_raises_like_cpu(reduction, gen):
    x = randn((300, 4), torch.float32, gen).log_softmax(1)  # several workgroups
    for bad in (4, -2):
        tg = torch.randint(0, 4, (300,), generator=gen)
        tg[123] = bad
        tg[7] = -100  # ignore_index is never out of bounds
        with pytest.raises(IndexError, match=f"^Target {bad} is out of bounds.$"):
            F.nll_loss(x, tg, reduction=reduction)
        with pytest.raises(IndexError, match=f"^Target {bad} is out of bounds.$"):
            F.nll_loss(x.to("vkml"), tg.to("vkml"), reduction=reduction)
    # The backward op checks its targets as well.
    tw = torch.tensor(4.0)
    tg = torch.tensor([0, 9, 1] + [2] * 297)
    for dev in ("cpu", "vkml"):
        with pytest.raises(IndexError, match="^Target 9 is out of bounds.$"):
            torch.ops.aten.nll_loss_backward(
                tw.to(dev), x.to(dev), tg.to(dev), None, 2, -100, tw.to(dev)
            )


def test_nll_out_of_range_ignore_index_is_not_a_bad_target(gen):
    x = randn((5, 4), torch.float32, gen).log_softmax(1).requires_grad_()
    tg = torch.tensor([0, 7, 3, 7, 1])
    want = F.nll_loss(x, tg, ignore_index=7)
    want.backward()
    xv = x.detach().to("vkml").requires_grad_()
    got = F.nll_loss(xv, tg.to("vkml"), ignore_index=7)
    got.backward()
    torch.testing.assert_close(got.cpu(), want)
    torch.testing.assert_close(xv.grad.cpu(), x.grad)


def test_nll_unchecked_bad_target_is_nan(vkml_config, gen):
    # VKML_CHECK_INDICES=0 skips the host read: the bad sample's loss is NaN, not a silent number.
    vkml_config.set("VKML_CHECK_INDICES", "0")
    x = randn((3, 4), torch.float32, gen).to("vkml")
    assert torch.isnan(F.nll_loss(x, torch.tensor([0, 4, 1]).to("vkml")).cpu())
    got = F.nll_loss(x, torch.tensor([0, -3, 1]).to("vkml"), reduction="none").cpu()
    assert torch.isnan(got[1]) and not torch.isnan(got[0]) and not torch.isnan(got[2])


POINTWISE = [
    ("mse", lambda a, b, **k: F.mse_loss(a, b, **k), {}),
    ("smooth_l1", lambda a, b, **k: F.smooth_l1_loss(a, b, beta=0.6, **k), {}),
    (
        "smooth_l1_beta0",
        lambda a, b, **k: torch.ops.aten.smooth_l1_loss(
            a, b, {"none": 0, "mean": 1, "sum": 2}[k["reduction"]], 0.0
        ),
        {},
    ),
    ("huber", lambda a, b, **k: F.huber_loss(a, b, delta=0.7, **k), {}),
    (
        "bce",
        lambda a, b, **k: F.binary_cross_entropy(
            a.sigmoid() if a.dtype == torch.float64 else a, b, **k
        ),
        {"probs": True},
    ),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,fn,opts", POINTWISE, ids=[p[0] for p in POINTWISE])
def test_pointwise_losses(name, fn, opts, dtype, reduction, gen, fallback):
    shape = (9, 13)
    if opts.get("probs"):
        x = torch.rand(shape, generator=gen, dtype=torch.float64).clamp(0.02, 0.98).to(dtype)
        y = torch.rand(shape, generator=gen, dtype=torch.float64).to(dtype)
        fn = {"bce": lambda a, b, **k: F.binary_cross_entropy(a, b, **k)}[name]
    else:
        x, y = randn(shape, dtype, gen, scale=2), randn(shape, dtype, gen)
    # non-contiguous input, target sliced from a bigger tensor
    xv = x.t().contiguous().to("vkml").t().requires_grad_()
    yv = torch.stack([y, y], 2).to("vkml")[..., 1]
    xr = x.double().requires_grad_()
    yv_ref = y.double()
    with only_native():
        got = fn(xv, yv, reduction=reduction)
    ref = fn(xr, yv_ref, reduction=reduction)
    assert got.dtype == dtype and got.shape == ref.shape
    assert_close_to_ref(got, ref, scale=40 if reduction == "sum" else 4)
    g = randn(ref.shape, dtype, gen)
    with only_native():
        (gx,) = torch.autograd.grad(got, xv, g.to("vkml"))
    (rgx,) = torch.autograd.grad(ref, xr, g.double())
    assert_close_to_ref(gx, rgx, scale=4)


def test_broadcast_mixed_dtypes_and_out(gen, fallback):
    if not torch_vkml.has_float64_support():
        pytest.skip("mixes in float64 tensors, which this device does not compute in")
    x = randn((4, 1, 5), torch.float32, gen)
    y = randn((3, 5), torch.float64, gen)
    with only_native():
        got = torch.ops.aten.mse_loss(x.to("vkml"), y.to("vkml"), 0)
        half = F.mse_loss(x.half().to("vkml"), x.to("vkml"))
    assert got.dtype == torch.float64 and got.shape == (4, 3, 5)
    assert_close_to_ref(got, torch.ops.aten.mse_loss(x.double(), y, 0))
    assert half.dtype == torch.float32
    p = torch.rand(3, 5, generator=gen) * 0.8 + 0.1
    t = torch.rand(3, 5, generator=gen)
    w = torch.rand(5, generator=gen)
    with only_native():
        b = F.binary_cross_entropy(p.to("vkml"), t.to("vkml"), weight=w.to("vkml"))
    assert_close_to_ref(b, F.binary_cross_entropy(p.double(), t.double(), weight=w.double()))
    out = torch.empty(0, device="vkml")
    zeros = torch.zeros(4, 1, 5)
    with only_native():
        torch.ops.aten.huber_loss.out(x.to("vkml"), zeros.to("vkml"), 2, 1.0, out=out)
    assert_close_to_ref(out, F.huber_loss(x.double(), zeros.double(), reduction="sum"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_bce_with_logits_forward(dtype, gen, fallback):
    x = randn((6, 7), dtype, gen, scale=6)  # large logits test the stable formula
    y = torch.rand((6, 7), generator=gen, dtype=torch.float64).to(dtype)
    w = torch.rand(7, generator=gen, dtype=torch.float64).to(dtype) + 0.5
    pw = torch.rand(7, generator=gen, dtype=torch.float64).to(dtype) * 3
    for kw in [{}, {"weight": w}, {"pos_weight": pw}, {"weight": w, "pos_weight": pw}]:
        for reduction in REDUCTIONS:
            with only_native():
                got = F.binary_cross_entropy_with_logits(
                    x.to("vkml"),
                    y.to("vkml"),
                    reduction=reduction,
                    **{k: v.to("vkml") for k, v in kw.items()},
                )
            ref = F.binary_cross_entropy_with_logits(
                x.double(),
                y.double(),
                reduction=reduction,
                **{k: v.double() for k, v in kw.items()},
            )
            assert_close_to_ref(got, ref, scale=40 if reduction == "sum" else 4)
    # confident, correct logits: the loss is log1p(exp(-30)) ~ 9.4e-14 for both, which the
    # cancelling (1 - y) x - log_sigmoid(x) form loses even in double for y = 0
    tiny = torch.tensor([30.0, -30.0])
    got = F.binary_cross_entropy_with_logits(
        tiny.to("vkml"), torch.tensor([1.0, 0.0]).to("vkml"), reduction="none"
    )
    exact = torch.log1p(torch.exp(torch.tensor(-30.0, dtype=torch.float64)))
    torch.testing.assert_close(got.cpu().double(), exact.expand(2), rtol=1e-5, atol=0)


def test_bce_with_logits_autograd_uses_composite_backward(gen, fallback):
    x = randn((5, 3), torch.float32, gen).to("vkml").requires_grad_()
    y = torch.rand(5, 3, generator=gen)
    loss = F.binary_cross_entropy_with_logits(x, y.to("vkml"))
    (g,) = torch.autograd.grad(loss, x)
    xr = x.detach().cpu().double().requires_grad_()
    (rg,) = torch.autograd.grad(F.binary_cross_entropy_with_logits(xr, y.double()), xr)
    assert_close_to_ref(g, rg)
    assert "aten::binary_cross_entropy_with_logits" not in fell_back()


def test_errors_match_cpu(gen):
    x = torch.randn(4, 5)
    for dev in ("cpu", "vkml"):
        xd = x.to(dev)
        with pytest.raises(RuntimeError, match="size mismatch"):
            torch.ops.aten.nll_loss_forward(
                xd, torch.zeros(3, dtype=torch.long).to(dev), None, 1, -100
            )
        with pytest.raises(RuntimeError, match="weight tensor should be defined"):
            F.nll_loss(xd, torch.zeros(4, dtype=torch.long).to(dev), torch.ones(3).to(dev))
        with pytest.raises(RuntimeError, match="Long"):  # 2.13 says "Long or Byte", 2.11 "Long but found Int"
            torch.ops.aten.nll_loss_forward(
                xd, torch.zeros(4, dtype=torch.int32).to(dev), None, 1, -100
            )
        with pytest.raises(RuntimeError, match="1D or 2D"):
            torch.ops.aten.nll_loss_forward(
                xd.reshape(2, 2, 5), torch.zeros(2).long().to(dev), None, 1, -100
            )
        with pytest.raises(RuntimeError, match="spatial targets"):
            torch.ops.aten.nll_loss2d_forward(xd, torch.zeros(4).long().to(dev), None, 1, -100)
        with pytest.raises(RuntimeError, match="negative values for beta"):
            torch.ops.aten.smooth_l1_loss(xd, xd, 1, -1.0)
        with pytest.raises(RuntimeError, match="non-positive values for delta"):
            torch.ops.aten.huber_loss(xd, xd, 1, 0.0)
        with pytest.raises(RuntimeError):
            torch.ops.aten.mse_loss(xd, torch.randn(3).to(dev))
        with pytest.raises(NotImplementedError):
            torch.ops.aten.mse_loss(torch.arange(3).to(dev), torch.arange(3).to(dev))
        with pytest.raises(RuntimeError, match="broadcast shape"):
            torch.ops.aten.binary_cross_entropy(
                torch.rand(3).to(dev), torch.rand(3).to(dev), torch.rand(3, 1).to(dev), 0
            )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_half_precision_beats_cpu_rounding(dtype, reduction, gen, fallback):
    # vkml computes in float32 and rounds once: within the dtype's tolerance of float64 and no
    # further from it than the CPU, whose composite rounds every intermediate to the dtype.
    x = randn((9, 7), dtype, gen, scale=4)
    y = torch.rand((9, 7), generator=gen, dtype=torch.float64).to(dtype)
    w = randn((7,), dtype, gen, scale=3)
    pw = randn((7,), dtype, gen).abs() + 0.5
    kw = dict(weight=w, pos_weight=pw, reduction=reduction)
    with only_native():
        got = (
            F.binary_cross_entropy_with_logits(
                x.to("vkml"),
                y.to("vkml"),
                **{k: v.to("vkml") if torch.is_tensor(v) else v for k, v in kw.items()},
            )
            .cpu()
            .double()
        )
    ref = F.binary_cross_entropy_with_logits(
        x.double(),
        y.double(),
        **{k: v.double() if torch.is_tensor(v) else v for k, v in kw.items()},
    )
    cpu = F.binary_cross_entropy_with_logits(x, y, **kw).double()
    scale = 1.0 if reduction != "sum" else 16.0
    rtol, atol = {torch.float16: (2e-3, 1e-3), torch.bfloat16: (2e-2, 1e-2)}[dtype]
    torch.testing.assert_close(got, ref, rtol=rtol, atol=atol * scale)
    assert (got - ref).abs().max() <= (cpu - ref).abs().max() + 1e-7
