"""torch.fft on vkml (_fft_c2c, _fft_r2c, _fft_c2r): accuracy against a float64 reference next to
the CPU's float32 pocketfft, every norm, n with padding and cropping, any dim, batched and
strided inputs, backward, and the helpers (fftshift, fftfreq)."""

import pytest
import torch

import torch_vkml

NORMS = [None, "forward", "ortho"]


def crandn(shape, dtype, gen):
    real = torch.randn(shape, generator=gen, dtype=torch.float64)
    return torch.complex(real, torch.randn(shape, generator=gen, dtype=torch.float64)).to(dtype)


def rel_err(got, ref):
    """Relative L2 error of each row (last dim) against the float64 reference; the worst row."""
    got, ref = got.cpu().to(ref.dtype), ref
    num = (got - ref).abs().pow(2).sum(-1).sqrt()
    den = ref.abs().pow(2).sum(-1).sqrt().clamp_min(1e-300)
    return (num / den).max().item() if got.numel() else 0.0


def check_accuracy(fn, x, **kw):
    """vkml's float32 result is no worse than the CPU's float32 one (with slack for rounding)."""
    ref = fn(x.to(torch.complex128 if x.is_complex() else torch.float64), **kw)
    got = fn(x.to("vkml"), **kw)
    assert got.device.type == "vkml"
    cpu = fn(x, **kw)
    assert got.dtype == cpu.dtype and got.shape == cpu.shape
    e_got, e_cpu = rel_err(got, ref), rel_err(cpu, ref)
    assert e_got <= 2.0 * e_cpu + 3e-7, (e_got, e_cpu)


@pytest.mark.parametrize("lo,hi", [(1, 100), (100, 200), (200, 301)])
def test_c2c_sizes(lo, hi, gen):
    for n in range(lo, hi):
        x = crandn((3, n), torch.complex64, gen)
        check_accuracy(torch.fft.fft, x)
        check_accuracy(torch.fft.ifft, x)


@pytest.mark.parametrize("lo,hi", [(1, 150), (150, 301)])
def test_real_sizes(lo, hi, gen):
    for n in range(lo, hi):
        x = torch.randn(2, n, generator=gen)
        check_accuracy(torch.fft.rfft, x)
        check_accuracy(torch.fft.ihfft, x)
        h = crandn((2, n // 2 + 1), torch.complex64, gen)
        check_accuracy(torch.fft.irfft, h, n=n)
        check_accuracy(torch.fft.hfft, h, n=n)


@pytest.mark.parametrize("n", [4096, 2**16, 10007, 65521, 2 * 3 * 5 * 7 * 11 * 13, 17 * 19])
def test_large_sizes(n, gen):
    x = crandn((n,), torch.complex64, gen)
    check_accuracy(torch.fft.fft, x)
    check_accuracy(torch.fft.ifft, x)
    check_accuracy(torch.fft.rfft, x.real.contiguous())


@pytest.mark.parametrize("n", [2**20, 99991])
def test_largest_sizes(n, gen):
    x = crandn((n,), torch.complex64, gen)
    check_accuracy(torch.fft.fft, x)


@pytest.mark.parametrize("norm", NORMS)
def test_norms_n_and_dims(norm, gen):
    x = crandn((4, 6, 10), torch.complex64, gen)
    for dim in [0, 1, -1]:
        for n in [None, 3, 8, 13]:
            check_accuracy(torch.fft.fft, x, n=n, dim=dim, norm=norm)
            check_accuracy(torch.fft.ifft, x, n=n, dim=dim, norm=norm)
            check_accuracy(torch.fft.rfft, x.real, n=n, dim=dim, norm=norm)
            check_accuracy(torch.fft.irfft, x, n=n, dim=dim, norm=norm)
            check_accuracy(torch.fft.hfft, x, n=n, dim=dim, norm=norm)
            check_accuracy(torch.fft.ihfft, x.real, n=n, dim=dim, norm=norm)
    check_accuracy(torch.fft.fft2, x, norm=norm)
    check_accuracy(torch.fft.ifft2, x, s=(5, 12), norm=norm)
    check_accuracy(torch.fft.fftn, x, norm=norm)
    check_accuracy(torch.fft.ifftn, x, dim=(0, 2), norm=norm)
    check_accuracy(torch.fft.rfft2, x.real, norm=norm)
    check_accuracy(torch.fft.irfft2, x, norm=norm)
    check_accuracy(torch.fft.rfftn, x.real, s=(3, 7, 9), norm=norm)
    check_accuracy(torch.fft.irfftn, x, s=(4, 5, 7), norm=norm)
    check_accuracy(torch.fft.hfft2, x, norm=norm)
    check_accuracy(torch.fft.ihfft2, x.real, norm=norm)


def test_strided_and_batched_inputs(gen):
    x = crandn((7, 9, 12), torch.complex64, gen)
    for view in [
        lambda t: t.transpose(0, 2),
        lambda t: t[::2, 1::2, ::3],
        lambda t: t.permute(1, 2, 0)[:, :5],
        lambda t: t.expand(2, 7, 9, 12),
    ]:
        check_accuracy(lambda t, v=view: torch.fft.fft(v(t), dim=1), x)
        check_accuracy(lambda t, v=view: torch.fft.fft(v(t)), x)
        check_accuracy(lambda t, v=view: torch.fft.rfft(v(t.real)), x)
    check_accuracy(lambda t: torch.fft.fft(t.conj()), x)
    check_accuracy(lambda t: torch.fft.fft(t.imag), x)
    e = torch.empty(0, 8, dtype=torch.complex64)
    assert torch.fft.fft(e.to("vkml")).shape == (0, 8)


@pytest.mark.skipif(not torch_vkml.has_float64_support(),
                    reason="float64 and complex128 tensors need fp64 arithmetic")
def test_float64(gen):
    x = crandn((3, 97), torch.complex128, gen)
    got = torch.fft.fft(x.to("vkml"))
    torch.testing.assert_close(got.cpu(), torch.fft.fft(x), rtol=1e-12, atol=1e-12)
    r = torch.randn(3, 30, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(
        torch.fft.irfft(torch.fft.rfft(r.to("vkml"))).cpu(), r, rtol=1e-12, atol=1e-12
    )


def test_out_variants(gen):
    x = crandn((4, 16), torch.complex64, gen)
    out = torch.empty(0, dtype=torch.complex64, device="vkml")
    torch.fft.fft(x.to("vkml"), out=out)
    torch.testing.assert_close(out.cpu(), torch.fft.fft(x), rtol=1e-5, atol=1e-5)
    outr = torch.empty(0, device="vkml")
    torch.fft.irfft(x.to("vkml"), out=outr)
    torch.testing.assert_close(outr.cpu(), torch.fft.irfft(x), rtol=1e-5, atol=1e-5)
    outc = torch.empty(0, dtype=torch.complex64, device="vkml")
    torch.fft.rfft(x.real.to("vkml"), out=outc)
    torch.testing.assert_close(outc.cpu(), torch.fft.rfft(x.real), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "fn", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "rfftn", "irfftn"]
)
def test_backward(fn, gen):
    f = getattr(torch.fft, fn)
    real_in = fn in ("rfft", "ihfft", "rfftn")
    x = torch.randn(5, 12, generator=gen) if real_in else crandn((5, 12), torch.complex64, gen)
    grads = []
    for device in ["cpu", "vkml"]:
        t = x.detach().to(device).requires_grad_()
        y = f(t, norm="ortho")
        w = torch.ones_like(y) * torch.linspace(0.5, 2.0, y.shape[-1], device=device)
        (y * w).abs().sum().backward()
        grads.append(t.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-5)


def test_shift_and_freq_without_fallback(fallback, gen):
    x = crandn((6, 9), torch.complex64, gen)
    d = x.to("vkml")
    torch.testing.assert_close(torch.fft.fftshift(d).cpu(), torch.fft.fftshift(x), rtol=0, atol=0)
    torch.testing.assert_close(
        torch.fft.ifftshift(d, dim=1).cpu(), torch.fft.ifftshift(x, dim=1), rtol=0, atol=0
    )
    torch.testing.assert_close(
        torch.fft.fftfreq(10, 0.1, device="vkml").cpu(), torch.fft.fftfreq(10, 0.1)
    )
    torch.testing.assert_close(torch.fft.rfftfreq(11, device="vkml").cpu(), torch.fft.rfftfreq(11))
    spec = torch.fft.rfft(torch.randn(4, 64, generator=gen).to("vkml"))
    (spec.abs() ** 2).sum().item()
    assert torch_vkml.fallback_stats() == {}
