"""The LLM workload of bench/bench_models.py (a Llama-style decoder with a static KV cache): its
small size runs through the benchmark on this machine with every op native, and the model's
prefill and decode logits on vkml in float16 match the CPU's in float64."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from nn_helpers import only_native

import torch_vkml

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench import model_defs as md  # noqa: E402


def test_bench_models_llm_small_runs_native():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["VKML_FALLBACK"] = "error"
    env.setdefault("VKML_VALIDATION", "1")
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_models.py"),
            "--small",
            "--only",
            "llm",
            "--repeat",
            "2",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert any("llm_prefill_64_fp16" in ln for ln in lines), result.stdout
    assert any("llm_decode_8_after_72_fp16" in ln for ln in lines), result.stdout
    rates = [ln for ln in lines if "tokens/s vkml" in ln]
    assert len(rates) == 2 and all(float(ln.split()[2].rstrip(",")) > 0 for ln in rates), rates
    assert "CPU fallbacks during the model benchmarks: 0 " in result.stdout, result.stdout


def test_llm_logits_match_the_cpu(fallback):
    """Prefill of 70 tokens, then 6 decode steps fed the CPU's greedy tokens (so that a near tie
    cannot send the two devices down different paths): float16 on vkml against float64 on the CPU,
    within 1% of the largest logit (float16 rounds each of the two blocks' products at about
    0.05%). The steps attend to 71-76 cached keys: the decode attention kernels."""
    torch.manual_seed(0)
    model = md.Llama(md.LLM_SMALL_CONFIG).eval()
    ref = md.Llama(md.LLM_SMALL_CONFIG).eval()
    ref.load_state_dict(model.state_dict())
    ref = ref.double()
    vk = model.to(device="vkml", dtype=torch.float16)
    ref.reset_cache(2)
    vk.reset_cache(2)
    idx = torch.randint(
        0, md.LLM_SMALL_CONFIG["vocab"], (2, 70), generator=torch.Generator().manual_seed(1)
    )
    with torch.no_grad(), only_native():
        want = ref(idx)
        got = vk(idx.to("vkml"))
        steps = [(got, want)]
        with torch_vkml.profiler.profile() as prof:
            for i in range(6):
                tok = want.argmax(-1, keepdim=True)
                want = ref(tok, 70 + i)
                got = vk(tok.to("vkml"), 70 + i)
                steps.append((got, want))
            torch_vkml.synchronize()
    # The split-KV decode kernels need subgroup arithmetic; without it the fused kernels attend.
    decode = torch_vkml.get_device_properties().subgroup_arithmetic
    assert ("attention_decode_split_sg" in prof.times) == decode
    scale = max(w.abs().max().item() for _, w in steps)
    for i, (g, w) in enumerate(steps):
        assert g.dtype == torch.float16 and g.shape == w.shape
        err = (g.cpu().double() - w).abs().max().item()
        assert err <= 1e-2 * scale, f"step {i}: max error {err:.3g}, logits up to {scale:.3g}"


@pytest.mark.parametrize("new", [1, 5])
def test_greedy_decode_stays_on_the_device(new, fallback):
    torch.manual_seed(0)
    vk = md.Llama(md.LLM_SMALL_CONFIG).to(device="vkml", dtype=torch.float16).eval()
    vk.reset_cache(1)
    with torch.no_grad(), only_native():
        first = vk(torch.arange(8, device="vkml")[None]).argmax(-1, keepdim=True)
        out = md.greedy_decode(vk, first, 8, new)
    assert out.device.type == "vkml" and out.shape == (1, new)
