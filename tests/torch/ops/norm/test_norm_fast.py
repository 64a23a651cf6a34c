"""The norm fast paths against float64 CPU: batch norm over dense NCHW / channels_last activations
(norm_bn_*) and layer / RMS norm over contiguous rows (norm_rows_*). Which kernels ran is read
from the kernel profiler, so a layout that should take (or leave) a fast path is checked too."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import assert_close_to_ref, only_native, randn

import torch_vkml

HALF_AND_FLOAT = [torch.float32, torch.float16, torch.bfloat16]


def kernels_of(fn):
    """fn's result and the names of the kernels it ran."""
    with torch_vkml.profiler.profile() as prof:
        result = fn()
        torch.vkml.synchronize()
    return result, set(prof.times)


def batch_norm_step(x, g, w, b, rm, rv, training):
    """Output and (x, w, b) gradients of F.batch_norm; running stats updated in place."""
    leaves = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    out = F.batch_norm(leaves[0], rm, rv, leaves[1], leaves[2], training, 0.1, 1e-5)
    return out, torch.autograd.grad(out, leaves, g)


def to_layout(t, channels_last):
    if not channels_last:
        return t
    fmt = torch.channels_last if t.dim() == 4 else torch.preserve_format
    return t.contiguous(memory_format=fmt)


def check_batch_norm(shape, dtype, training, channels_last, gen, expect_fast=True, scale=1):
    x = randn(shape, dtype, gen, scale=2) + 0.5
    g = randn(shape, dtype, gen)
    c = shape[1]
    w, b = randn((c,), dtype, gen), randn((c,), dtype, gen)
    rm = randn((c,), torch.float32, gen)
    rv = randn((c,), torch.float32, gen).abs() + 0.5
    rm_v, rv_v, rm_r, rv_r = rm.to("vkml"), rv.to("vkml"), rm.double(), rv.double()
    xv, gv = to_layout(x.to("vkml"), channels_last), to_layout(g.to("vkml"), channels_last)
    with only_native():
        (out, grads), names = kernels_of(
            lambda: batch_norm_step(xv, gv, w.to("vkml"), b.to("vkml"), rm_v, rv_v, training)
        )
    ref, rgrads = batch_norm_step(
        x.double(), g.double(), w.double(), b.double(), rm_r, rv_r, training
    )
    assert ("norm_bn_apply" in names) == expect_fast, names
    assert out.dtype == dtype
    if channels_last and expect_fast:
        assert out.is_contiguous(memory_format=torch.channels_last) or out.dim() != 4
    n = x.numel() // c
    assert_close_to_ref(out, ref, scale=4 * scale)
    for got, want, s in zip(grads, rgrads, (8, 4 * n, 2 * n), strict=True):
        assert_close_to_ref(got, want, scale=s * scale)
    torch.testing.assert_close(rm_v.cpu().double(), rm_r, rtol=2e-6, atol=2e-6)
    torch.testing.assert_close(rv_v.cpu().double(), rv_r, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("dtype", HALF_AND_FLOAT)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("channels_last", [False, True])
def test_batch_norm_fast_layouts(dtype, training, channels_last, gen, fallback):
    # HW a multiple of 4 (vector loads), odd HW (scalar), C a multiple of 4 or not, C = 1, N = 1
    for shape in [(3, 8, 4, 6), (4, 6, 7, 9), (2, 5, 3, 3), (1, 1, 5, 4), (1, 3, 1, 2)]:
        check_batch_norm(shape, dtype, training, channels_last, gen)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_fast_1d_and_3d(training, gen, fallback):
    for shape in [(16, 12), (7, 5), (4, 3, 10), (2, 4, 3, 2, 5)]:
        check_batch_norm(shape, torch.float32, training, False, gen)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_fast_many_chunks(training, gen, fallback):
    # 3 channels of 8 * 48 * 48 elements: many partial workgroups per channel, many apply groups
    for channels_last in (False, True):
        check_batch_norm((8, 3, 48, 48), torch.float32, training, channels_last, gen, scale=4)
    # channels innermost with C % 4 == 0: row-wise partial sums over many chunks of rows
    check_batch_norm((4, 12, 20, 20), torch.float32, training, True, gen, scale=4)
    check_batch_norm((4, 12, 20, 20), torch.float16, training, True, gen, scale=4)
    check_batch_norm((3000, 8), torch.float32, training, False, gen, scale=4)


def test_batch_norm_strided_input_takes_the_general_path(gen, fallback):
    base = randn((6, 4, 5, 8), torch.float32, gen, scale=2)
    for view in (lambda t: t.transpose(2, 3), lambda t: t[:, :, :, ::2], lambda t: t[1:, 1:]):
        x = view(base.to("vkml"))
        w, b = randn((x.shape[1],), torch.float32, gen), randn((x.shape[1],), torch.float32, gen)
        with only_native():
            out, names = kernels_of(
                lambda x=x, w=w, b=b: F.batch_norm(x, None, None, w.to("vkml"), b.to("vkml"), True)
            )
        assert "norm_bn_apply" not in names
        ref = F.batch_norm(view(base.double()), None, None, w.double(), b.double(), True)
        assert_close_to_ref(out, ref, scale=4)


@pytest.mark.parametrize("channels_last", [False, True])
def test_batch_norm_fast_is_deterministic(channels_last, gen, fallback):
    x = to_layout(
        (randn((4, 8, 40, 40), torch.float32, gen, scale=3) + 1).to("vkml"), channels_last
    )
    g = to_layout(randn((4, 8, 40, 40), torch.float32, gen).to("vkml"), channels_last)
    w, b = torch.ones(8, device="vkml"), torch.zeros(8, device="vkml")
    runs = []
    for _ in range(2):
        rm, rv = torch.zeros(8, device="vkml"), torch.ones(8, device="vkml")
        out, grads = batch_norm_step(x, g, w, b, rm, rv, True)
        runs.append([t.cpu() for t in (out, *grads, rm, rv)])
    for a, b_ in zip(*runs, strict=True):
        assert torch.equal(a, b_)


def test_batch_norm_fast_propagates_nan(gen, fallback):
    x = randn((2, 4, 4, 4), torch.float32, gen)
    x[1, 2, 3, 1] = float("nan")
    out = F.batch_norm(x.to("vkml"), None, None, training=True).cpu()
    assert out[:, 2].isnan().all() and not out[:, [0, 1, 3]].isnan().any()


def layer_norm_step(x, g, w, b, norm, rms):
    leaves = [t.detach().clone().requires_grad_() for t in (x, w, b) if t is not None]
    if rms:
        out = F.rms_norm(leaves[0], norm, leaves[1], 1e-5)
    else:
        out = F.layer_norm(leaves[0], norm, leaves[1], leaves[2] if b is not None else None, 1e-5)
    return out, torch.autograd.grad(out, leaves, g)


@pytest.mark.parametrize("dtype", HALF_AND_FLOAT)
@pytest.mark.parametrize("rms", [False, True])
def test_row_norm_fast(dtype, rms, gen, fallback):
    # rows fewer and more than a parameter-gradient chunk (16), short and 4096-long rows
    for shape, norm in [
        ((37, 128), (128,)),
        ((2, 3, 4, 16), (4, 16)),
        ((3, 4096), (4096,)),
        ((1, 4), (4,)),
    ]:
        x = randn(shape, dtype, gen, scale=2) + 0.25
        g = randn(shape, dtype, gen)
        w, b = randn(norm, dtype, gen), randn(norm, dtype, gen)
        b = None if rms else b
        args = [t.to("vkml") if t is not None else None for t in (x, g, w, b)]
        with only_native():
            (out, grads), names = kernels_of(
                lambda args=args, norm=norm: layer_norm_step(*args, norm, rms)
            )
        ref, rgrads = layer_norm_step(
            x.double(), g.double(), w.double(), None if rms else b.double(), norm, rms
        )
        assert {"norm_rows_pg_partial", "norm_rows_pg_combine"} <= names, names
        assert "norm_fwd" not in names and "norm_fwd_sg" not in names
        rows = x.numel() // w.numel()
        assert_close_to_ref(out, ref, scale=4)
        for got, want, s in zip(grads, rgrads, (16, 2 * rows, rows), strict=False):
            assert_close_to_ref(got, want, scale=s)


def test_row_norm_other_layouts_take_the_general_path(gen, fallback):
    # a transposed input, a row length not a multiple of 4, rows past the register budget
    cases = [
        (randn((24, 8), torch.float32, gen).to("vkml").t(), (24,)),
        (randn((5, 30), torch.float32, gen).to("vkml"), (30,)),
        (randn((2, 4104), torch.float32, gen).to("vkml"), (4104,)),
    ]
    for x, norm in cases:
        g = torch.randn(x.shape, generator=gen).to("vkml")
        w, b = torch.randn(norm, generator=gen), torch.randn(norm, generator=gen)
        with only_native():
            (out, grads), names = kernels_of(
                lambda x=x, g=g, w=w, b=b, norm=norm: layer_norm_step(
                    x, g, w.to("vkml"), b.to("vkml"), norm, False
                )
            )
        assert not any(n.startswith("norm_rows") for n in names), names
        ref, rgrads = layer_norm_step(
            x.cpu().double(), g.cpu().double(), w.double(), b.double(), norm, False
        )
        assert_close_to_ref(out, ref, scale=4)
        rows = x.numel() // w.numel()
        for got, want, s in zip(grads, rgrads, (16, 2 * rows, rows), strict=True):
            assert_close_to_ref(got, want, scale=s)


def test_row_norm_fast_is_deterministic(gen, fallback):
    x = randn((300, 256), torch.float32, gen, scale=3).to("vkml")
    g = randn((300, 256), torch.float32, gen).to("vkml")
    w, b = torch.randn(256, generator=gen).to("vkml"), torch.randn(256, generator=gen).to("vkml")
    runs = [
        [t.cpu() for t in (o, *gr)]
        for o, gr in (layer_norm_step(x, g, w, b, (256,), False) for _ in range(2))
    ]
    for a, b_ in zip(*runs, strict=True):
        assert torch.equal(a, b_)
