"""CTC loss on vkml against float64 CPU: _ctc_loss and its backward run natively for padded
(2-D) and concatenated (1-D) targets, int32/int64 labels, any blank, zero_infinity, every
reduction, strided log_probs, targets longer than a workgroup, unbatched input and errors."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import assert_close_to_ref, only_native

import torch_vkml

# float64 CTC is native only on CPU devices: on NVIDIA GPUs its nll is wrong, so GPUs refuse it
# with NotImplementedError (see src/ops/loss/ctc.cc). Elsewhere float32 stands in.
F64_CTC = torch_vkml.get_device_properties(0).type == "CPU" and torch_vkml.has_float64_support()
PRECISE = torch.float64 if F64_CTC else torch.float32

REDUCTIONS = ["none", "mean", "sum"]


def log_probs(t, n, c, dtype, gen, strided=False):
    """Normalised log-probabilities [T, N, C]; strided ones are a transposed [N, T, C] buffer."""
    x = torch.randn((n, t, c) if strided else (t, n, c), generator=gen, dtype=torch.float64)
    x = (x * 2).to(dtype)
    if strided:
        x = x.transpose(0, 1)
    return x.log_softmax(2)


def targets_for(lengths, c, blank, gen, layout, dtype=torch.long):
    """Labels avoiding blank, padded [N, S] (with junk padding) or concatenated 1-D."""
    labels = [torch.randint(0, c - 1, (int(n),), generator=gen) for n in lengths]
    labels = [torch.where(x >= blank, x + 1, x) for x in labels]
    if layout == "concat":
        return torch.cat(labels).to(dtype)
    width = max(int(max(lengths)), 1) + 2
    out = torch.randint(0, c, (len(lengths), width), generator=gen)
    for i, x in enumerate(labels):
        out[i, : len(x)] = x
    return out.to(dtype)


def check(lp, tg, il, tl, blank, reduction, zero_infinity, gen, scale=8.0, as_lists=False):
    lpv = lp.detach().to("vkml").requires_grad_()
    lpr = lp.detach().double().requires_grad_()
    lens = (il.tolist(), tl.tolist()) if as_lists else (il.to("vkml"), tl.to("vkml"))
    kw = dict(blank=blank, reduction=reduction, zero_infinity=zero_infinity)
    with only_native():
        got = F.ctc_loss(lpv, tg.to("vkml"), *lens, **kw)
    ref = F.ctc_loss(lpr, tg, il, tl, **kw)
    assert got.dtype == lp.dtype and got.shape == ref.shape
    assert_close_to_ref(got, ref, scale=scale)
    g = torch.randn(ref.shape, generator=gen, dtype=torch.float64)
    with only_native():
        (gx,) = torch.autograd.grad(got, lpv, g.to(lp.dtype).to("vkml"))
    (rgx,) = torch.autograd.grad(ref, lpr, g)
    assert_close_to_ref(gx, rgx, scale=scale)
    return got


@pytest.mark.parametrize("dtype", [torch.float32, PRECISE])
@pytest.mark.parametrize("layout", ["padded", "concat"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_matches_cpu(dtype, layout, reduction, gen, fallback):
    t, n, c = 13, 4, 7
    il = torch.tensor([13, 10, 6, 13])
    tl = torch.tensor([5, 0, 3, 6])  # an empty target and repeated labels below
    tg = targets_for(tl, c, 0, gen, layout)
    if layout == "padded":
        tg[3, :6] = torch.tensor([2, 2, 3, 3, 3, 1])
    for strided in (False, True):
        lp = log_probs(t, n, c, dtype, gen, strided)
        for zero_infinity in (False, True):
            check(lp, tg, il, tl, 0, reduction, zero_infinity, gen)


@pytest.mark.parametrize("layout", ["padded", "concat"])
def test_ctc_blank_int32_targets_and_list_lengths(layout, gen, fallback):
    t, n, c, blank = 9, 3, 6, 4
    il = torch.tensor([9, 7, 8])
    tl = torch.tensor([3, 4, 1])
    tg = targets_for(tl, c, blank, gen, layout, dtype=torch.int32)
    lp = log_probs(t, n, c, torch.float32, gen)
    check(lp, tg, il, tl, blank, "sum", False, gen)
    check(lp, tg, il, tl, blank, "none", False, gen, as_lists=True)


def test_ctc_impossible_alignment_and_zero_infinity(gen, fallback):
    # item 1 needs more steps than its input has: infinite loss, zero gradient with zero_infinity
    t, n, c = 6, 3, 5
    il = torch.tensor([6, 2, 0])
    tl = torch.tensor([2, 4, 0])
    tg = targets_for(tl, c, 0, gen, "padded")
    lp = log_probs(t, n, c, PRECISE, gen)
    got = check(lp, tg, il, tl, 0, "none", True, gen)
    assert got[1].item() == 0.0 and got[2].item() == 0.0
    lpv = lp.to("vkml")
    nll, _ = torch.ops.aten._ctc_loss(lpv, tg.to("vkml"), il.tolist(), tl.tolist(), 0, False)
    assert torch.isinf(nll.cpu()[1]) and nll.cpu()[2].item() == 0.0


def test_ctc_long_targets_span_several_workgroup_passes(gen, fallback):
    # 2 * 150 + 1 = 301 states: more than the 256 invocations of a workgroup; 330 steps
    t, n, c = 330, 2, 5
    il = torch.tensor([330, 310])
    tl = torch.tensor([150, 120])
    tg = targets_for(tl, c, 0, gen, "concat")
    lp = log_probs(t, n, c, torch.float64, gen)
    if F64_CTC:  # elsewhere only the float32 comparison below applies
        check(lp, tg, il, tl, 0, "sum", False, gen)
    # float32: a loss of ~600 leaves exp(lcab + nll - lp) with ~1e-4 absolute error on any
    # device; vkml must be as close to the float64 gradient as the CPU's float32 kernel.
    lp32 = lp.float()
    ref = lp.clone().requires_grad_()
    cpu32 = lp32.clone().requires_grad_()
    vk = lp32.to("vkml").requires_grad_()
    grads = []
    for x, tgt in ((ref, tg), (cpu32, tg), (vk, tg.to("vkml"))):
        loss = F.ctc_loss(x, tgt, il, tl, reduction="sum")
        grads.append(torch.autograd.grad(loss, x)[0].cpu().double())
        if x is vk:
            assert_close_to_ref(loss, F.ctc_loss(ref, tg, il, tl, reduction="sum"), scale=1e3)
    vk_err = (grads[2] - grads[0]).abs().max().item()
    cpu_err = (grads[1] - grads[0]).abs().max().item()
    assert vk_err <= 1.5 * cpu_err + 1e-6, (vk_err, cpu_err)


def test_ctc_unbatched_and_empty(gen, fallback):
    lp = log_probs(8, 1, 6, torch.float32, gen)[:, 0]  # [T, C]
    tg = torch.tensor([1, 3, 3])
    check(lp, tg, torch.tensor(8), torch.tensor(3), 0, "none", False, gen)
    empty = torch.zeros(5, 0, 4).log_softmax(2).to("vkml")
    nll, alpha = torch.ops.aten._ctc_loss(
        empty, torch.zeros(0, 2, dtype=torch.long).to("vkml"), [], [], 0, False
    )
    assert nll.shape == (0,) and alpha.shape == (0, 5, 1)


def test_ctc_log_alpha_is_minus_inf_outside_lengths(gen):
    lp = log_probs(6, 2, 4, PRECISE, gen)
    tg = torch.tensor([[1, 2, 3], [2, 0, 0]])
    nll, alpha = torch.ops.aten._ctc_loss(lp.to("vkml"), tg.to("vkml"), [6, 4], [3, 1], 0, False)
    ref_nll, ref_alpha = torch.ops.aten._ctc_loss(lp, tg, [6, 4], [3, 1], 0, False)
    alpha = alpha.cpu()
    torch.testing.assert_close(nll.cpu(), ref_nll)
    torch.testing.assert_close(alpha[0], ref_alpha[0])  # fully defined for a full-length item
    torch.testing.assert_close(alpha[1, :4, :3], ref_alpha[1, :4, :3])
    assert torch.all(alpha[1, 4:] == float("-inf")) and torch.all(alpha[1, :, 3:] == float("-inf"))


def test_ctc_errors_match_cpu(gen):
    lp = log_probs(5, 2, 4, torch.float32, gen)
    tg = torch.tensor([[1, 2], [3, 1]])
    for args in [
        ([6, 5], [2, 2], 0),  # input length past T
        ([5, 5], [2, 3], 0),  # target length past the padded width
        ([5, 5], [2, 2], 4),  # blank out of range
        ([5], [2, 2], 0),  # lengths of the wrong batch size
        ([5, -1], [2, 2], 0),
    ]:
        with pytest.raises(RuntimeError):
            torch.ops.aten._ctc_loss(lp, tg, args[0], args[1], args[2], False)
        with pytest.raises(RuntimeError):
            torch.ops.aten._ctc_loss(lp.to("vkml"), tg.to("vkml"), args[0], args[1], args[2], False)
    with pytest.raises(RuntimeError):
        torch.ops.aten._ctc_loss(lp.to("vkml")[0], tg.to("vkml"), [5, 5], [2, 2], 0, False)


@pytest.mark.parametrize("targets", [[[1, 2, 9], [1, 1, 2]], [[1, 2, 3], [1, -2, 2]]])
def test_ctc_target_out_of_range_raises_index_error(targets, gen):
    # The CPU kernel reads past the class dim for such a label; vkml raises instead, forward and
    # backward. Labels past an item's target length are not read, so they are never bad.
    lp = log_probs(12, 2, 6, torch.float32, gen).to("vkml")
    tg = torch.tensor(targets).to("vkml")
    bad = [v for row in targets for v in row if not 0 <= v < 6][0]
    with pytest.raises(IndexError, match=f"ctc_loss: target {bad} is out of bounds for 6 classes"):
        F.ctc_loss(lp, tg, torch.tensor([12, 12]), torch.tensor([3, 3]))
    nll, alpha = torch.ops.aten._ctc_loss(lp, torch.zeros_like(tg) + 1, [12, 12], [3, 3], 0, False)
    with pytest.raises(IndexError, match=f"ctc_loss: target {bad} is out of bounds"):
        torch.ops.aten._ctc_loss_backward(torch.ones(2).to("vkml"), lp, tg, [12, 12], [3, 3], nll,
                                          alpha, 0, False)
    # Target lengths 2 and 1 leave the bad label past each item's length.
    got = F.ctc_loss(lp, tg, torch.tensor([12, 12]), torch.tensor([2, 1]), reduction="sum")
    want = F.ctc_loss(lp.cpu(), tg.cpu(), torch.tensor([12, 12]), torch.tensor([2, 1]),
                      reduction="sum")
    torch.testing.assert_close(got.cpu(), want)


def test_ctc_float64_native_on_cpu_devices_clear_error_on_gpus(gen):
    lp = log_probs(5, 2, 4, torch.float64, gen)
    tg = torch.tensor([[1, 2], [3, 1]])
    if F64_CTC:
        check(lp, tg, torch.tensor([5, 4]), torch.tensor([2, 1]), 0, "sum", False, gen)
        return
    if not torch_vkml.has_float64_support():
        # Without float64 arithmetic (VKML_CAPS_MASK=no-fp64) no float64 tensor reaches the device.
        with pytest.raises(TypeError, match="no fp64 arithmetic, so it cannot hold float64"):
            lp.to("vkml")
        return
    with pytest.raises(NotImplementedError, match="float64 ctc_loss is disabled on GPUs"):
        torch.ops.aten._ctc_loss(lp.to("vkml"), tg.to("vkml"), [5, 4], [2, 1], 0, False)
