"""Resampling on vkml against float64 CPU: interpolate (nearest, nearest-exact, linear, bilinear,
bicubic, trilinear; sizes and scale factors, align_corners both ways, up and down), reflection and
replication padding, unfold/fold and channel_shuffle; forward and backward, channels_last and
strided inputs/outputs, integer, bool and complex64 copies exact (complex64 stft too), errors as
on the CPU."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, only_native, randn


def run_with_grad(fn, x, dtype, gen, layout=None):
    """(output, grad of x) on vkml and on float64 CPU for a random grad_output; `layout` turns the
    vkml input into a strided/channels_last view of the same values."""
    xv = x.to("vkml")
    if layout is not None:
        xv = layout(xv)
    xv = xv.detach().requires_grad_()
    xr = x.double().requires_grad_()
    with only_native():
        out = fn(xv)
    ref = fn(xr)
    g = randn(ref.shape, dtype, gen)
    with only_native():
        (gx,) = torch.autograd.grad(out, xv, g.to("vkml"))
    (rgx,) = torch.autograd.grad(ref, xr, g.double())
    return out, ref, gx, rgx


def channels_last(t):
    return t.contiguous(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)


def transposed_hw(t):
    """The same values stored with the last two dims swapped in memory (a non-contiguous view)."""
    return t.transpose(-1, -2).contiguous().transpose(-1, -2)


INTERP = [
    # (input shape, interpolate kwargs)
    ((2, 3, 7), dict(size=12, mode="nearest")),
    ((2, 3, 9), dict(scale_factor=0.6, mode="nearest")),
    ((2, 3, 5, 6), dict(scale_factor=2, mode="nearest")),
    ((2, 3, 5, 6), dict(size=(7, 13), mode="nearest")),
    ((1, 2, 3, 4, 5), dict(scale_factor=(1.5, 2, 0.5), mode="nearest")),
    ((2, 3, 7), dict(size=10, mode="nearest-exact")),
    ((2, 3, 6, 5), dict(scale_factor=1.7, mode="nearest-exact", recompute_scale_factor=False)),
    ((1, 2, 3, 4, 5), dict(size=(5, 3, 8), mode="nearest-exact")),
    ((2, 3, 7), dict(size=12, mode="linear")),
    ((2, 3, 7), dict(size=4, mode="linear", align_corners=True)),
    ((2, 3, 5, 6), dict(size=(9, 11), mode="bilinear")),
    ((2, 3, 5, 6), dict(size=(9, 4), mode="bilinear", align_corners=True)),
    ((2, 3, 6, 5), dict(scale_factor=(1.5, 2.3), mode="bilinear", recompute_scale_factor=False)),
    ((2, 3, 12, 10), dict(scale_factor=0.4, mode="bilinear")),
    ((2, 3, 5, 6), dict(size=(9, 11), mode="bicubic")),
    ((2, 3, 5, 6), dict(size=(4, 13), mode="bicubic", align_corners=True)),
    ((2, 2, 7, 6), dict(scale_factor=(0.6, 1.7), mode="bicubic", recompute_scale_factor=False)),
    ((1, 2, 3, 4, 5), dict(size=(5, 6, 3), mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(size=(5, 6, 3), mode="trilinear", align_corners=True)),
    ((2, 3, 5, 6), dict(size=(5, 6), mode="bilinear")),  # same size: the CPU's identity case
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_interpolate(dtype, gen, fallback):
    for shape, kw in INTERP:
        x = randn(shape, dtype, gen)
        out, ref, gx, rgx = run_with_grad(lambda t, kw=kw: F.interpolate(t, **kw), x, dtype, gen)
        assert out.shape == ref.shape, kw
        # float32 source indices (as the CPU's float kernels) against a float64 reference
        assert_close_to_ref(out, ref, scale=16)
        assert_close_to_ref(gx, rgx, scale=16)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_layouts_and_large(mode, gen, fallback):
    """channels_last and transposed inputs, outputs larger than a workgroup, and the
    channels_last output the CPU gives."""
    x = randn((2, 3, 17, 19), torch.float32, gen)
    for layout in [channels_last, transposed_hw]:
        out, ref, gx, rgx = run_with_grad(
            lambda t: F.interpolate(t, size=(33, 40), mode=mode), x, torch.float32, gen, layout
        )
        assert_close_to_ref(out, ref, scale=16)
        assert_close_to_ref(gx, rgx, scale=16)
    with only_native():
        out = F.interpolate(channels_last(x.to("vkml")), scale_factor=2, mode=mode)
    assert out.is_contiguous(memory_format=torch.channels_last)
    x3 = randn((1, 2, 4, 5, 6), torch.float32, gen)
    if mode == "nearest":
        out, ref, gx, rgx = run_with_grad(
            lambda t: F.interpolate(t, size=(7, 9, 5), mode="nearest"), x3, torch.float32, gen,
            channels_last,
        )
        assert_close_to_ref(out, ref)
        assert_close_to_ref(gx, rgx, scale=8)


def test_interpolate_uint8_out_and_nan(fallback, gen):
    x = torch.randint(0, 256, (2, 3, 5, 7), generator=gen, dtype=torch.uint8)
    with only_native():
        got = F.interpolate(x.to("vkml"), size=(8, 9), mode="nearest")
        exact = F.interpolate(x.to("vkml"), size=(3, 11), mode="nearest-exact")
    assert torch.equal(got.cpu(), F.interpolate(x, size=(8, 9), mode="nearest"))
    assert torch.equal(exact.cpu(), F.interpolate(x, size=(3, 11), mode="nearest-exact"))
    # out= into a strided (transposed) view
    y = randn((2, 3, 4, 5), torch.float32, gen)
    y[0, 1, 2, 3] = float("nan")
    out = torch.empty(2, 3, 9, 7, device="vkml").transpose(-1, -2)
    with only_native():
        torch.ops.aten.upsample_bilinear2d.out(y.to("vkml"), [7, 9], False, None, None, out=out)
    ref = torch.ops.aten.upsample_bilinear2d(y, [7, 9], False, None, None)
    torch.testing.assert_close(out.cpu(), ref, equal_nan=True)
    assert out.cpu().isnan().any()


def test_interpolate_errors(fallback):
    x = torch.randn(1, 2, 3, 4, device="vkml")
    with pytest.raises(RuntimeError, match="greater than 0"):
        torch.ops.aten.upsample_nearest2d(x, [0, 3])
    with pytest.raises(RuntimeError, match="output_size"):
        torch.ops.aten.upsample_bilinear2d(x, [3], False)
    with pytest.raises(NotImplementedError):
        torch.ops.aten.upsample_bilinear2d(x.to(torch.int32), [3, 3], False)


PADS = [
    ((2, 3, 6), (2, 3)),
    ((3, 7), (0, 4)),
    ((2, 3, 5, 6), (1, 2, 3, 0)),
    ((2, 4, 5), (2, 2, 1, 3)),
    ((1, 2, 3, 4, 5), (1, 2, 2, 1, 0, 2)),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad(dtype, mode, gen, fallback):
    for shape, pad in PADS:
        x = randn(shape, dtype, gen)
        out, ref, gx, rgx = run_with_grad(lambda t, p=pad: F.pad(t, p, mode=mode), x, dtype, gen)
        assert_close_to_ref(out, ref)
        assert_close_to_ref(gx, rgx, scale=4)
    x = randn((2, 3, 6, 7), dtype, gen)
    for layout in [channels_last, transposed_hw]:
        out, ref, gx, rgx = run_with_grad(
            lambda t: F.pad(t, (3, 2, 1, 4), mode=mode), x, dtype, gen, layout
        )
        assert_close_to_ref(out, ref)
        assert_close_to_ref(gx, rgx, scale=4)


def test_pad_negative_ints_and_errors(gen, fallback):
    x = randn((2, 3, 6, 7), torch.float32, gen)
    out, ref, gx, rgx = run_with_grad(
        lambda t: F.pad(t, (-2, 3, 1, -1), mode="replicate"), x, torch.float32, gen
    )
    assert_close_to_ref(out, ref)
    assert_close_to_ref(gx, rgx)
    for dtype in [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]:
        xi = torch.randint(-100, 100, (2, 3, 9), generator=gen).to(dtype)
        for mode in ["reflect", "replicate"]:
            with only_native():
                got = F.pad(xi.to("vkml"), (3, 4), mode=mode)
            assert torch.equal(got.cpu(), F.pad(xi, (3, 4), mode=mode))
    with pytest.raises(RuntimeError, match="Padding size should be less"):
        F.pad(torch.randn(1, 2, 3, device="vkml"), (3, 0), mode="reflect")
    with pytest.raises(NotImplementedError):
        F.pad(torch.ones(1, 2, 3, dtype=torch.bool, device="vkml"), (1, 1), mode="replicate")


def crandn(shape, gen):
    return torch.complex(torch.randn(shape, generator=gen), torch.randn(shape, generator=gen))


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_complex64(mode, gen, fallback):
    # Padding copies elements: complex64 results match the CPU bit for bit.
    # Negative sizes crop; only replication padding takes them (as on the CPU).
    negative = [((2, 3, 9), (-2, 3)), ((2, 3, 6, 7), (-1, 2, 3, -2))]
    for shape, pad in PADS + (negative if mode == "replicate" else []):
        x = crandn(shape, gen)
        with only_native():
            got = F.pad(x.to("vkml"), pad, mode=mode)
        assert torch.equal(got.cpu(), F.pad(x, pad, mode=mode))
    x = crandn((2, 3, 7, 6), gen).transpose(2, 3)
    with only_native():
        got = F.pad(x.to("vkml"), (2, 1, 0, 3), mode=mode)
    assert torch.equal(got.cpu(), F.pad(x, (2, 1, 0, 3), mode=mode))


def test_unfold_and_stft_complex64(gen, fallback):
    for shape, kw in [((2, 3, 6, 7), dict(kernel_size=2)),
                      ((3, 5, 5), dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=2))]:
        x = crandn(shape, gen)
        with only_native():
            got = F.unfold(x.to("vkml"), **kw)
        assert torch.equal(got.cpu(), F.unfold(x, **kw))
    x = crandn((2, 3, 7, 6), gen).transpose(2, 3)
    with only_native():
        got = F.unfold(x.to("vkml"), 3, padding=1)
    assert torch.equal(got.cpu(), F.unfold(x, 3, padding=1))
    # stft of a complex signal pads by reflection, then transforms frames.
    sig = crandn((2, 50), gen)
    window = torch.hann_window(16)
    kw = dict(n_fft=16, hop_length=5, return_complex=True)
    with only_native():
        got = torch.stft(sig.to("vkml"), window=window.to("vkml"), **kw)
    torch.testing.assert_close(got.cpu(), torch.stft(sig, window=window, **kw),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unfold_fold(dtype, gen, fallback):
    for shape, kw in [
        ((2, 3, 6, 7), dict(kernel_size=2)),
        ((2, 3, 9, 8), dict(kernel_size=(3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1))),
        ((3, 5, 5), dict(kernel_size=3, padding=1)),
    ]:
        x = randn(shape, dtype, gen)
        out, ref, gx, rgx = run_with_grad(lambda t, kw=kw: F.unfold(t, **kw), x, dtype, gen)
        assert_close_to_ref(out, ref)
        assert_close_to_ref(gx, rgx, scale=4)
        osize = shape[-2:]
        c = randn(ref.shape, dtype, gen)
        out, ref, gc, rgc = run_with_grad(
            lambda t, kw=kw, o=osize: F.fold(t, o, **kw), c, dtype, gen, transposed_hw
        )
        assert_close_to_ref(out, ref, scale=4)
        assert_close_to_ref(gc, rgc)


def test_unfold_fold_bool_and_strided(gen, fallback):
    b = torch.rand(2, 3, 5, 6, generator=gen) > 0.5
    with only_native():
        got = F.unfold(b.to("vkml"), 2, padding=1)
    assert torch.equal(got.cpu(), F.unfold(b, 2, padding=1))
    cols = torch.rand(2, 12, 42, generator=gen) > 0.7
    with only_native():
        folded = F.fold(cols.to("vkml"), (5, 6), 2, padding=1)
    assert torch.equal(folded.cpu(), F.fold(cols, (5, 6), 2, padding=1))
    x = randn((2, 3, 6, 7), torch.float32, gen)
    out, ref, gx, rgx = run_with_grad(lambda t: F.unfold(t, 3, stride=2), x, torch.float32, gen,
                                      channels_last)
    assert_close_to_ref(out, ref)
    assert_close_to_ref(gx, rgx)


def test_channel_shuffle(gen, fallback):
    for dtype in [torch.float32, torch.int64, torch.bool]:
        x = randn((2, 6, 3, 4), torch.float32, gen).to(dtype)
        with only_native():
            got = F.channel_shuffle(x.to("vkml"), 3)
        assert torch.equal(got.cpu(), F.channel_shuffle(x, 3))
    x = randn((2, 6, 5), torch.float32, gen)
    out, ref, gx, rgx = run_with_grad(lambda t: F.channel_shuffle(t, 2), x, torch.float32, gen)
    assert_close_to_ref(out, ref)
    assert_close_to_ref(gx, rgx)
