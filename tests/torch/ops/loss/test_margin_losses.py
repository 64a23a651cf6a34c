"""multi_margin_loss and multilabel_margin_loss on vkml against float64 CPU: forward and backward
natively, every reduction, p = 1/2, margins, class weights, 1-D (single frame) inputs, strided
inputs and out=, frames past a workgroup, repeated and -1-terminated label lists, errors."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, only_native, randn

# float64 only where the device computes in it (GPUs without fp64, VKML_CAPS_MASK=no-fp64).

REDUCTIONS = ["none", "mean", "sum"]


def run(fn, x, tensors, gen, scale=4.0):
    """fn(x, *tensors) on vkml and on float64 CPU, values and the gradient of x."""
    xv = x.to("vkml").requires_grad_()
    xr = x.double().requires_grad_()
    with only_native():
        got = fn(xv, *[t.to("vkml") for t in tensors])
    ref = fn(xr, *[t.double() if t.is_floating_point() else t for t in tensors])
    assert got.dtype == x.dtype and got.shape == ref.shape
    assert_close_to_ref(got, ref, scale=scale)
    g = torch.randn(ref.shape, generator=gen, dtype=torch.float64)
    with only_native():
        (gx,) = torch.autograd.grad(got, xv, g.to(x.dtype).to("vkml"))
    (rx,) = torch.autograd.grad(ref, xr, g)
    assert_close_to_ref(gx, rx, scale=scale)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss(dtype, reduction, p, gen, fallback):
    x = randn((7, 5), dtype, gen, scale=0.7)
    t = torch.randint(0, 5, (7,), generator=gen)
    w = (torch.rand(5, generator=gen) + 0.5).to(dtype)
    for weight, margin in [(None, 1.0), (w, 0.4)]:
        extra = [] if weight is None else [weight]

        def fn(x, t, *w, margin=margin):
            return F.multi_margin_loss(
                x, t, p=p, margin=margin, weight=w[0] if w else None, reduction=reduction
            )

        run(fn, x, [t, *extra], gen)
        run(fn, x.t().contiguous().t(), [t, *extra], gen)  # column-major input
    run(lambda x, t: F.multi_margin_loss(x, t, p=p, reduction=reduction), x[2], [t[2]], gen)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(dtype, reduction, gen, fallback):
    x = randn((5, 6), dtype, gen, scale=0.6)
    t = torch.tensor(
        [
            [3, 0, -1, 1, 2, 0],  # labels stop at the first -1
            [1, 1, 2, -1, 0, 0],  # a repeated label counts twice
            [-1, 0, 0, 0, 0, 0],  # no labels
            [5, 4, 3, 2, 1, 0],  # every class a target
            [2, 2, 2, 2, 2, 2],
        ]
    )
    fn = lambda x, t: F.multilabel_margin_loss(x, t, reduction=reduction)  # noqa: E731
    run(fn, x, [t], gen)
    run(fn, x.t().contiguous().t(), [t.t().contiguous().t()], gen)
    run(fn, x[0], [t[0]], gen)


def test_margin_losses_many_frames_and_out(gen, fallback):
    x = randn((300, 4), torch.float32, gen)
    t = torch.randint(0, 4, (300,), generator=gen)
    run(lambda x, t: F.multi_margin_loss(x, t), x, [t], gen)
    lt = torch.randint(-1, 4, (300, 4), generator=gen)
    run(lambda x, t: F.multilabel_margin_loss(x, t, reduction="sum"), x, [lt], gen, scale=50)
    out = torch.empty(600, device="vkml")[::2]  # strided out=
    with only_native():
        torch.ops.aten.multi_margin_loss.out(x.to("vkml"), t.to("vkml"), 1, 1.0, None, 0, out=out)
    assert_close_to_ref(out, F.multi_margin_loss(x.double(), t, reduction="none"))
    o2 = torch.empty(0, device="vkml")
    it = torch.empty(0, device="vkml")
    with only_native():
        torch.ops.aten.multilabel_margin_loss_forward.output(
            x.to("vkml"), lt.to("vkml"), 0, output=o2, is_target=it
        )
    ref, ref_it = torch.ops.aten.multilabel_margin_loss_forward(x.double(), lt, 0)
    assert_close_to_ref(o2, ref)
    assert torch.equal(it.cpu(), ref_it.float())


def test_margin_loss_errors_match_cpu():
    x = torch.randn(3, 4)
    for fn in [
        lambda x, dev: F.multi_margin_loss(x, torch.zeros(2, dtype=torch.long, device=dev)),
        lambda x, dev: torch.ops.aten.multi_margin_loss(
            x, torch.zeros(3, dtype=torch.long, device=dev), 3, 1.0, None, 1
        ),
        lambda x, dev: F.multi_margin_loss(x, torch.zeros(3, dtype=torch.int, device=dev)),
        lambda x, dev: F.multi_margin_loss(
            x, torch.zeros(3, dtype=torch.long, device=dev), weight=torch.ones(3, device=dev)
        ),
        lambda x, dev: F.multilabel_margin_loss(x, torch.zeros(3, 3, dtype=torch.long, device=dev)),
        lambda x, dev: F.multi_margin_loss(
            torch.zeros(3, 0, device=dev), torch.zeros(3, dtype=torch.long, device=dev)
        ),
    ]:
        with pytest.raises(RuntimeError):
            fn(x, "cpu")
        with pytest.raises(RuntimeError):
            fn(x.to("vkml"), "vkml")


MARGIN_BAD_TARGETS = [
    ("multi_margin out of range", lambda x, d: F.multi_margin_loss(x, torch.tensor([0, 7, 1], device=d))),
    ("multi_margin negative", lambda x, d: F.multi_margin_loss(x, torch.tensor([0, 1, -1], device=d), reduction="none")),
    ("multi_margin one frame", lambda x, d: F.multi_margin_loss(x[0], torch.tensor(4, device=d))),
    ("multilabel out of range", lambda x, d: F.multilabel_margin_loss(x, torch.tensor([[0, 9, -1, 0]] * 3, device=d))),
    ("multilabel below -1", lambda x, d: F.multilabel_margin_loss(x, torch.tensor([[0, -2, 1, 0]] * 3, device=d))),
    ("multilabel past the end", lambda x, d: F.multilabel_margin_loss(x, torch.tensor([[0, -1, 5, 0]] * 3, device=d), reduction="none")),
    ("multi_margin backward", lambda x, d: torch.ops.aten.multi_margin_loss_backward(torch.tensor(1.0, device=d), x, torch.tensor([0, 4, 1], device=d), 1, 1.0, None, 1)),
    ("multilabel backward", lambda x, d: torch.ops.aten.multilabel_margin_loss_backward(torch.tensor(1.0, device=d), x, torch.tensor([[0, 4, -1, 0]] * 3, device=d), 1, torch.zeros(3, 4, device=d))),
]


@pytest.mark.parametrize("name,fn", MARGIN_BAD_TARGETS, ids=[c[0] for c in MARGIN_BAD_TARGETS])
def test_margin_loss_target_out_of_range_raises_like_cpu(name, fn, gen):
    x = torch.randn(3, 4, generator=gen)
    with pytest.raises(RuntimeError) as cpu:
        fn(x, "cpu")
    with pytest.raises(RuntimeError) as got:
        fn(x.to("vkml"), "vkml")
    assert type(got.value) is type(cpu.value)
    assert str(got.value).splitlines()[0] == str(cpu.value).splitlines()[0]


def test_margin_loss_unchecked_bad_target_is_nan(vkml_config):
    # VKML_CHECK_INDICES=0 skips the host read: the frame's loss is NaN rather than a silent number.
    vkml_config.set("VKML_CHECK_INDICES", "0")
    x = torch.randn(3, 4, device="vkml")
    got = F.multi_margin_loss(x, torch.tensor([0, 7, 1], device="vkml"), reduction="none").cpu()
    assert torch.isnan(got[1]) and not torch.isnan(got[0]) and not torch.isnan(got[2])
    got = F.multilabel_margin_loss(x, torch.tensor([[0, 9, -1, 0]] * 3, device="vkml"))
    assert torch.isnan(got.cpu())
