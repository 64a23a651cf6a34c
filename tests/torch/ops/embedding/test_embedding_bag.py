"""embedding_bag on vkml against float64 CPU: sum/mean/max, offsets with empty bags,
include_last_offset, per_sample_weights, padding_idx, 2-D input, int32 indices, weight and
per_sample_weights gradients, scale_grad_by_freq, bad-index errors; embedding's max_norm
renormalisation."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, only_native, randn


def run(dtype, gen, weight_shape, idx, offsets, **kw):
    """(output, weight grad, psw grad) on vkml and float64 CPU for a random grad_output."""
    w = randn(weight_shape, dtype, gen)
    psw = kw.pop("per_sample_weights", None)
    wv = w.to("vkml").requires_grad_()
    wr = w.double().requires_grad_()
    pv = pr = None
    if psw is not None:
        pv = psw.to(dtype).to("vkml").requires_grad_()
        pr = psw.to(dtype).double().requires_grad_()
    ov = None if offsets is None else offsets.to("vkml")
    with only_native():
        out = F.embedding_bag(idx.to("vkml"), wv, ov, per_sample_weights=pv, **kw)
    ref = F.embedding_bag(idx, wr, offsets, per_sample_weights=pr, **kw)
    g = randn(ref.shape, dtype, gen)
    inputs_v = [wv] + ([pv] if pv is not None else [])
    inputs_r = [wr] + ([pr] if pr is not None else [])
    with only_native():
        gv = torch.autograd.grad(out, inputs_v, g.to("vkml"))
    gr = torch.autograd.grad(ref, inputs_r, g.double())
    return out, ref, gv, gr


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(dtype, mode, gen, fallback):
    idx = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 0, 7])
    offsets = torch.tensor([0, 3, 3, 7, 12])  # bag 1 is empty
    # include_last_offset: the last offset closes the last bag (the CPU leaves indices after it
    # with uninitialised gradients, so none are left out here)
    last = torch.tensor([0, 3, 3, 7, 13])
    cases = [
        dict(),
        dict(padding_idx=5),
        dict(include_last_offset=True, offsets=last),
        dict(padding_idx=1, include_last_offset=True, offsets=last),
    ]
    if mode == "sum":
        cases.append(dict(per_sample_weights=torch.randn(13, generator=gen)))
        cases.append(dict(per_sample_weights=torch.randn(13, generator=gen), padding_idx=3))
    for kw in cases:
        off = kw.pop("offsets", offsets)
        out, ref, gv, gr = run(dtype, gen, (10, 7), idx, off, mode=mode, **kw)
        assert_close_to_ref(out, ref)
        for a, b in zip(gv, gr):
            assert_close_to_ref(a, b, scale=4)
    if mode != "max":
        # scale_grad_by_freq divides each weight row's gradient by its index's count (as CUDA
        # does; the CPU kernel of this torch scales by the wrong rows' counts)
        out, ref, gv, gr = run(dtype, gen, (10, 7), idx, offsets, mode=mode)
        w = randn((10, 7), dtype, gen).to("vkml").requires_grad_()
        g = randn((5, 7), dtype, gen).to("vkml")
        with only_native():
            o = F.embedding_bag(idx.to("vkml"), w, offsets.to("vkml"), mode=mode,
                                scale_grad_by_freq=True)
            (gs,) = torch.autograd.grad(o, w, g)
            o = F.embedding_bag(idx.to("vkml"), w, offsets.to("vkml"), mode=mode)
            (gp,) = torch.autograd.grad(o, w, g)
        counts = torch.bincount(idx, minlength=10).clamp_min(1).double().unsqueeze(1)
        assert_close_to_ref(gs, gp.cpu().double() / counts, scale=4)


def test_embedding_bag_2d_int32_and_large(gen, fallback):
    idx = torch.randint(0, 50, (6, 4), generator=gen, dtype=torch.int32)
    out, ref, gv, gr = run(torch.float32, gen, (50, 300), idx, None, mode="mean")
    assert_close_to_ref(out, ref)
    assert_close_to_ref(gv[0], gr[0])
    # a transposed (non-contiguous) weight
    w = randn((9, 5), torch.float32, gen)
    wt = w.to("vkml").t().contiguous().t()
    idx = torch.tensor([0, 8, 2, 2, 4])
    off = torch.tensor([0, 2])
    with only_native():
        got = F.embedding_bag(idx.to("vkml"), wt, off.to("vkml"), mode="max")
    assert_close_to_ref(got, F.embedding_bag(idx, w.double(), off, mode="max"))


def test_embedding_bag_errors(fallback):
    w = torch.randn(5, 3, device="vkml")
    with pytest.raises(RuntimeError, match="idx"):
        F.embedding_bag(torch.tensor([1, 7], device="vkml"), w, torch.tensor([0], device="vkml"))
    with pytest.raises(RuntimeError):
        F.embedding_bag(torch.tensor([1.0], device="vkml"), w, torch.tensor([0], device="vkml"))
    with pytest.raises((RuntimeError, ValueError)):
        F.embedding_bag(
            torch.tensor([1, 2], device="vkml"), w, torch.tensor([0], device="vkml"), mode="max",
            per_sample_weights=torch.ones(2, device="vkml"),
        )


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_embedding_max_norm(dtype, gen, fallback):
    """embedding(max_norm=...) renormalises the looked-up rows in place (embedding_renorm_)."""
    w = randn((8, 5), dtype, gen, scale=2)
    idx = torch.tensor([[1, 3, 3], [7, 0, 1]])
    for norm_type in [2.0, 1.0]:
        wv, wr = w.to("vkml"), w.double()
        with only_native():
            out = F.embedding(idx.to("vkml"), wv, max_norm=1.5, norm_type=norm_type)
        ref = F.embedding(idx, wr, max_norm=1.5, norm_type=norm_type)
        assert_close_to_ref(out, ref, scale=4)
        assert_close_to_ref(wv, wr, scale=4)  # rows 1, 3, 7, 0 renormalised, others untouched
