"""torch.stft / torch.istft on vkml against the CPU (windows, center, pad modes, onesided,
normalized, return_complex), and a log-mel spectrogram computed without CPU fallbacks."""

import math

import pytest
import torch

import torch_vkml


def close(got, ref, rtol=2e-5, atol=2e-5):
    assert got.device.type == "vkml"
    torch.testing.assert_close(got.cpu(), ref, rtol=rtol, atol=atol)


@pytest.mark.parametrize(
    "n_fft,hop,win", [(16, 4, None), (400, 160, 400), (64, 16, 48), (31, 7, 31)]
)
@pytest.mark.parametrize(
    "center,pad_mode", [(True, "reflect"), (True, "constant"), (False, "reflect")]
)
def test_stft_matches_cpu(n_fft, hop, win, center, pad_mode, gen):
    x = torch.randn(3, 1200, generator=gen)
    window = torch.hann_window(win) if win else None
    for normalized in (False, True):
        for onesided in (True, False):
            kw = dict(
                n_fft=n_fft,
                hop_length=hop,
                win_length=win,
                center=center,
                pad_mode=pad_mode,
                normalized=normalized,
                onesided=onesided,
                return_complex=True,
            )
            ref = torch.stft(x, window=window, **kw)
            got = torch.stft(
                x.to("vkml"), window=None if window is None else window.to("vkml"), **kw
            )
            close(got, ref)
    kw = dict(n_fft=n_fft, hop_length=hop, win_length=win, center=center, return_complex=False)
    real = torch.stft(x.to("vkml"), window=None if window is None else window.to("vkml"), **kw)
    close(real, torch.stft(x, window=window, **kw))


@pytest.mark.parametrize("n_fft,hop", [(16, 4), (400, 160), (30, 10)])
def test_istft_round_trip(n_fft, hop, gen):
    x = torch.randn(2, 1600, generator=gen)
    window = torch.hann_window(n_fft)
    spec = torch.stft(x, n_fft, hop, window=window, return_complex=True)
    ref = torch.istft(spec, n_fft, hop, window=window, length=1600)
    got = torch.istft(spec.to("vkml"), n_fft, hop, window=window.to("vkml"), length=1600)
    close(got, ref, rtol=1e-4, atol=1e-5)


def mel_filters(n_mels, n_fft, sample_rate):
    """Triangular filters on the HTK mel scale, [n_mels, n_fft // 2 + 1]."""

    def mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)

    freqs = torch.linspace(0, sample_rate / 2, n_fft // 2 + 1, dtype=torch.float64)
    pts = torch.linspace(mel(0.0), mel(sample_rate / 2), n_mels + 2, dtype=torch.float64)
    hz = 700.0 * (10 ** (pts / 2595.0) - 1.0)
    lo, mid, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    up = (freqs - lo) / (mid - lo)
    down = (hi - freqs) / (hi - mid)
    return torch.clamp(torch.minimum(up, down), min=0).float()


def log_mel(audio, filters, n_fft=400, hop=160):
    window = torch.hann_window(n_fft, device=audio.device)
    spec = torch.stft(audio, n_fft, hop, window=window, return_complex=True)
    power = spec[..., :-1].abs() ** 2
    mel = filters.to(audio.device) @ power
    log_spec = mel.clamp(min=1e-10).log10()
    return torch.maximum(log_spec, log_spec.amax(dim=(-2, -1), keepdim=True) - 8.0) / 4.0 + 1.0


def test_log_mel_spectrogram_without_fallback(fallback, gen):
    t = torch.arange(16000 * 2) / 16000.0
    audio = (
        (torch.sin(2 * math.pi * 440 * t) * 0.3 + torch.randn(t.shape, generator=gen) * 0.05)
        .unsqueeze(0)
        .repeat(2, 1)
    )
    filters = mel_filters(80, 400, 16000)
    ref = log_mel(audio, filters)
    got = log_mel(audio.to("vkml"), filters)
    close(got, ref, rtol=1e-4, atol=1e-4)
    assert torch_vkml.fallback_stats() == {}
