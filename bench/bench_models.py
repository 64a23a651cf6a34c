"""Model benchmarks: training steps and inference, vkml against CUDA (or the CPU without CUDA).

    PYTHONPATH=. python bench/bench_models.py [--small] [--only resnet18,vit] [--json out.json]

Workloads (full size, the issue's list):
- ResNet-18 training step, 32x32 inputs, batch 256, SGD with momentum;
- ResNet-50 inference, 224x224, batch 64, fp32 and fp16, and fp16 in channels_last;
- ViT-B/16 training step, batch 64, AdamW, in fp32 and under bf16 autocast;
- GPT-2-small-sized decoder training step, sequence 512, batch 8, AdamW;
- LLM (llm_*): a Llama-style decoder of Qwen2.5-0.5B's shape with random weights, fp16: prefill of
  2,048 tokens (logits of the last one, as generation takes them), and 128 greedy decode steps
  with a static KV cache after a 512-token prompt; both also as tokens/s;
- UNet (unet_*): a Stable-Diffusion-style UNet block stack (ResNet blocks, GroupNorm, self- and
  cross-attention at 32x32 and 16x16), one fp16 denoising step at batch 4 on a 64x64 latent.
--small shrinks every model (widths, depths, batch, resolution) for lavapipe on two cores.
Each model starts from the same weights on both devices; the first step's losses are compared so
that a fast wrong answer cannot pass for a result.
--compile also times every model under torch.compile (default backend) on vkml and on CUDA, with
the first call's compile time from empty caches (cold) and again from the caches on disk after
torch._dynamo.reset() (warm).
--replay times torch.compile(mode="reduce-overhead") (graph replay) too: with --compile every
model, and always the decode steps of GPT-2-small and SmolLM2-135M (random weights from their
configurations; batch 1, a static key/value cache): host time per call, ms per call and greedy
decoding tokens/s, eager, compiled and replayed, on vkml and CUDA.
--dataloader times a data-fed loop instead: ResNet-18 training fed by a DataLoader (two workers),
with blocking copies of pageable batches against pinned batches (pin_memory=True) copied with
non_blocking=True, on vkml and CUDA in the same run; each device's losses from the two ways must
match bit for bit.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

from bench import model_defs as md
from bench import timing
from bench.timing import (
    Result,
    add_timing_args,
    apply_timing_args,
    cpu_device,
    diagnose_round,
    header,
    median_seconds,
    reference_device,
    save,
    sync_for,
)


COMPILE = False  # --compile: factories wrap the model in torch.compile
COMPILE_MODE = None  # torch.compile's mode ("reduce-overhead": graph replay)


def maybe_compiled(m: torch.nn.Module):
    return torch.compile(m, mode=COMPILE_MODE) if COMPILE else m


def train_step_factory(model: torch.nn.Module, make_batch, loss_fn, opt_name: str,
                       autocast: torch.dtype | None = None):
    """make(device) -> a closure running one optimizer step on that device; with `autocast`, the
    forward pass and the loss run under torch.autocast in that dtype (fp32 weights)."""

    def make(device: str):
        m = copy.deepcopy(model).to(device)
        m.train()
        opt = (torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9) if opt_name == "sgd"
               else torch.optim.AdamW(m.parameters(), lr=1e-4))
        x, y = (t.to(device) for t in make_batch())
        fwd = maybe_compiled(m)
        amp = torch.autocast(device.split(":")[0], autocast, enabled=autocast is not None)

        def step():
            opt.zero_grad(set_to_none=True)
            with amp:
                loss = loss_fn(fwd(x), y)
            loss.backward()
            opt.step()
            return loss

        return step

    return make


def inference_factory(model: torch.nn.Module, make_input, dtype,
                      memory_format: torch.memory_format = torch.preserve_format):
    """make(device) -> a closure running the model in `dtype` on make_input()'s tensor (or tuple
    of tensors: floating ones take `dtype`, 4-D ones and the weights `memory_format`)."""

    def make(device: str):
        m = copy.deepcopy(model).to(device=device, dtype=dtype, memory_format=memory_format).eval()
        inputs = make_input()
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        xs = [x.to(device=device, dtype=dtype if x.is_floating_point() else x.dtype,
                   memory_format=memory_format if x.dim() == 4 else torch.preserve_format)
              for x in inputs]
        fwd = maybe_compiled(m)

        @torch.no_grad()
        def run():
            return fwd(*xs)

        return run

    return make


def first_loss(make, device: str) -> float:
    return float(make(device)().detach())


def images(b: int, res: int, classes: int):
    """The same random batch every call (both devices train on identical data)."""
    g = torch.Generator().manual_seed(1)
    return torch.randn(b, 3, res, res, generator=g), torch.randint(0, classes, (b,), generator=g)


def tokens(b: int, t: int, vocab: int):
    g = torch.Generator().manual_seed(2)
    return (torch.randint(0, vocab, (b, t), generator=g),
            torch.randint(0, vocab, (b, t), generator=g))


def workloads(small: bool):
    out = []
    # ResNet-18, CIFAR-sized input.
    b, w = (16, 16) if small else (256, 64)
    torch.manual_seed(0)
    r18 = md.resnet18(10, True, w)
    out.append(("resnet18_train_b%d" % b, train_step_factory(
        r18, lambda b=b: images(b, 32, 10), F.cross_entropy, "sgd"), "train"))
    # ResNet-50 inference at 224 (small: 64x64, narrow, one block per stage).
    b, res = (4, 64) if small else (64, 224)
    torch.manual_seed(0)
    r50 = md.resnet50(1000, 16, [1, 1, 1, 1]) if small else md.resnet50()
    for dtype in (torch.float32, torch.float16):
        name = "resnet50_infer_b%d_%s" % (b, str(dtype).split(".")[1])
        out.append((name, inference_factory(
            r50, lambda b=b, res=res: images(b, res, 1000)[0], dtype), "infer"))
    # fp16 in channels_last, the layout users pick for half-precision CNNs.
    out.append(("resnet50_infer_b%d_float16_channels_last" % b, inference_factory(
        r50, lambda b=b, res=res: images(b, res, 1000)[0], torch.float16, torch.channels_last),
        "infer"))
    # ViT-B/16 training (small: 32x32, dim 64, depth 2).
    b = 8 if small else 64
    torch.manual_seed(0)
    vit = (md.ViT(32, 8, 64, 2, 4, 10) if small else md.ViT())
    res, classes = (32, 10) if small else (224, 1000)
    for amp in (None, torch.bfloat16):
        out.append(("%svit_b16_train_b%d%s" % ("amp_" if amp else "", b, "_bf16" if amp else ""),
                    train_step_factory(vit, lambda b=b, res=res, classes=classes:
                                       images(b, res, classes), F.cross_entropy, "adamw", amp),
                    "train"))
    # GPT-2-small-sized decoder (small: vocab 512, dim 64, depth 2, seq 64).
    b, t = (2, 64) if small else (8, 512)
    torch.manual_seed(0)
    gpt = md.GPT(512, 128, 64, 2, 4) if small else md.GPT()
    vocab = 512 if small else 50257

    def lm_loss(logits, y):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    out.append(("gpt2s_train_seq%d_b%d" % (t, b), train_step_factory(
        gpt, lambda b=b, t=t, vocab=vocab: tokens(b, t, vocab), lm_loss, "adamw"), "train"))
    out += llm_workloads(small)
    # Stable-Diffusion-style UNet denoising step, fp16, batch 4, a 64x64 latent and 77 text tokens
    # (small: widths 32/64/64, a 16x16 latent, 8 tokens of 32).
    b, lat, ctx_len, widths, ctx_dim = ((1, 16, 8, (32, 64, 64), 32) if small
                                        else (4, 64, 77, (320, 640, 1280), 768))
    torch.manual_seed(0)
    unet = md.UNetStack(widths, 4, ctx_dim)

    def unet_inputs(b=b, lat=lat, ctx_len=ctx_len, ctx_dim=ctx_dim):
        g = torch.Generator().manual_seed(5)
        return (torch.randn(b, 4, lat, lat, generator=g), torch.randint(0, 1000, (b,), generator=g),
                torch.randn(b, ctx_len, ctx_dim, generator=g))

    out.append(("unet_infer_b%d_%dpx_fp16" % (b, lat), inference_factory(
        unet, unet_inputs, torch.float16), "infer"))
    return out


# Tokens one call of an LLM workload processes: its tokens/s is this over the call's time.
LLM_TOKENS: dict[str, int] = {}


def llm_factory(model: md.Llama, prompt: int, new_tokens: int):
    """make(device) -> a closure: with new_tokens == 0, the prefill of a prompt of `prompt` tokens
    (its last logits); else new_tokens greedy steps after that prompt (prefilled once, in make)."""

    def make(device: str):
        m = copy.deepcopy(model).to(device=device, dtype=torch.float16).eval()
        m.reset_cache(1)
        idx = tokens(1, prompt, m.cfg["vocab"])[0].to(device)

        @torch.no_grad()
        def prefill():
            return m(idx)

        if new_tokens == 0:
            return prefill
        first = prefill().argmax(-1, keepdim=True)

        @torch.no_grad()
        def decode():
            return md.greedy_decode(m, first, prompt, new_tokens)

        return decode

    return make


def llm_workloads(small: bool):
    torch.manual_seed(0)
    model = md.Llama(md.LLM_SMALL_CONFIG if small else md.LLM_CONFIG)
    # small: a prompt of 72 tokens, so that decoding attends to 64 keys or more as on GPUs.
    prefill, prompt, new = (64, 72, 8) if small else (2048, 512, 128)
    out = [("llm_prefill_%d_fp16" % prefill, llm_factory(model, prefill, 0), "infer"),
           ("llm_decode_%d_after_%d_fp16" % (new, prompt), llm_factory(model, prompt, new),
            "infer")]
    LLM_TOKENS.update({out[0][0]: prefill, out[1][0]: new})
    return out


def data_fed_loop(device: str, pinned: bool, small: bool, epochs: int) -> tuple[float, list, int]:
    """Median ms per step of a ResNet-18 training epoch fed by a DataLoader, the last epoch's
    losses, and how many of its batches were pinned (on vkml: how many of its copies read vkml's
    pinned memory directly). pinned: pin_memory=True batches copied with non_blocking=True; else
    pageable batches and blocking copies. One untimed epoch first (pipelines, worker start)."""
    from torch.utils.data import DataLoader, TensorDataset

    b, res, width, steps = (8, 32, 8, 4) if small else (256, 64, 32, 20)
    g = torch.Generator().manual_seed(4)
    data = TensorDataset(torch.randn(b * steps, 3, res, res, generator=g),
                         torch.randint(0, 10, (b * steps,), generator=g))
    torch.manual_seed(0)
    model = md.resnet18(10, True, width).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = DataLoader(data, batch_size=b, num_workers=2, pin_memory=pinned,
                        persistent_workers=True)
    sync = sync_for(device)

    pinned_count = 0

    def pinned_copies() -> int:
        if not device.startswith("vkml"):
            return 0
        import torch_vkml

        return torch_vkml.host_memory_stats()["copies"]

    def epoch():
        nonlocal pinned_count
        losses = []
        pinned_count = -pinned_copies()
        for x, y in loader:
            if not device.startswith("vkml"):
                pinned_count += int(x.is_pinned())
            x, y = x.to(device, non_blocking=pinned), y.to(device, non_blocking=pinned)
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        pinned_count += pinned_copies()
        return torch.stack(losses)

    epoch()
    sync()
    samples = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        losses = epoch()
        sync()
        samples.append((time.perf_counter() - t0) * 1e3 / steps)
    return sorted(samples)[len(samples) // 2], losses.cpu().tolist(), pinned_count


def data_fed_timings(device: str, small: bool, epochs: int) -> dict:
    return {"blocking": data_fed_loop(device, False, small, epochs),
            "pinned": data_fed_loop(device, True, small, epochs)}


def report_data_fed(vk: dict, ref: dict, ref_name: str, small: bool) -> list:
    """One row per way of copying (vkml beside the reference), the pinned speed-up on each, and
    whether each device's losses match bit for bit between the two ways."""
    name = "resnet18_dataloader_b8" if small else "resnet18_dataloader_b256_64px"
    results = []
    for way in ("blocking", "pinned"):
        ref_ms = ref[way][0] if ref else None
        r = Result("data", f"{name}_{way}", "", 0.0, vk[way][0], ref_ms, ref_name)
        print(r.line(), flush=True)
        results.append(r)
    for dev, t in (("vkml", vk), (ref_name, ref)):
        if t:
            same = t["blocking"][1] == t["pinned"][1]
            print(f"{'':>8} {dev}: pinned + non_blocking {t['blocking'][0] / t['pinned'][0]:.2f}x "
                  f"the blocking loop's speed ({t['pinned'][2]} of an epoch's "
                  f"{'copies from pinned memory' if dev == 'vkml' else 'batches pinned'}); "
                  f"losses bit-identical: {same}")
            results[1].extra[f"losses_identical_{'vkml' if dev == 'vkml' else 'ref'}"] = same
    return results


def run_reference_child(args, *flags: str) -> None:
    """This script again, for the reference backend, in a child process that never loads vkml
    (see bench/timing.py), with the parent's model selection and warm-up."""
    cmd = [sys.executable, __file__, *flags]
    if args.only:
        cmd += ["--only", args.only]
    if args.small:
        cmd.append("--small")
    if args.cuda_no_tf32:
        cmd.append("--cuda-no-tf32")
    if args.compile:
        cmd.append("--compile")
    if args.replay:
        cmd.append("--replay")
    if args.dataloader:
        cmd.append("--dataloader")
    if args.warmup_seconds is not None:
        cmd += ["--warmup-seconds", str(args.warmup_seconds)]
    subprocess.run(cmd, check=True)


def reference_timings(args, ref: str) -> dict:
    """CUDA timings from a child process."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        run_reference_child(args, "--reference-only", f.name, "--repeat", str(args.repeat))
        return json.load(open(f.name))


def selected(args):
    for name, make, kind in workloads(args.small):
        if not args.only or any(name.startswith(p) for p in args.only.split(",")):
            yield name, make, kind


def first_use_counters() -> tuple[int, float, float, int, float]:
    """vkml's pipelines built, ms spent building them (summed over build threads) and ms the
    recording waited for them; driver allocations and their ms."""
    import torch_vkml

    st, mem = torch_vkml._C.stream_stats(0), torch_vkml.memory_stats()
    return (st["pipelines_created"], st["pipeline_build_ns"] / 1e6, st["pipeline_wait_ns"] / 1e6,
            mem["num_device_alloc"], mem["device_alloc_ns"] / 1e6)


def time_one(make, device: str, kind: str, repeat: int, diagnose: str = "",
             first_detail: list | None = None) -> tuple[float, float | None, float]:
    """(median ms, first-step loss, first-call ms). The first call (the model put on the device
    and run once: pipelines, caches) is timed apart. diagnose (vkml; the workload's name): the
    timing window's UTC stamps and a diagnose_round line after it, so that a slow state can be
    placed on the GPU or the host and matched against nvidia-smi's samples."""
    before = first_use_counters() if first_detail is not None else None
    t0 = time.perf_counter()
    loss = first_loss(make, device) if kind == "train" else None
    fn = make(device)
    if kind != "train":
        fn()
        sync_for(device)()
    first_ms = (time.perf_counter() - t0) * 1e3
    if before is not None:  # where the first call's time went
        first_detail[:] = [b - a for a, b in zip(before, first_use_counters())]
    t_start = time.time()
    ms = median_seconds(fn, device, warmup=2, repeat=repeat, min_seconds=0.0) * 1e3
    if diagnose:
        stamp = lambda t: time.strftime("%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e3):03d}"
        print(f"diagnose {diagnose} timed {stamp(t_start)}-{stamp(time.time())} UTC, first call "
              f"{first_ms:.0f} ms\n{'':>8} {diagnose_round(fn, 10, top=5)}", flush=True)
    return ms, loss, first_ms


def time_compiled(make, device: str, kind: str, repeat: int, mode: str | None = None) -> dict:
    """The workload under torch.compile: median ms, first-step loss, and the first call's ms from
    empty caches (cold) and from the caches on disk after torch._dynamo.reset() (warm)."""
    global COMPILE, COMPILE_MODE
    COMPILE, COMPILE_MODE = True, mode
    try:
        ms, loss, cold = time_one(make, device, kind, repeat)
        torch._dynamo.reset()
        t0 = time.perf_counter()
        fn = make(device)
        fn()
        sync_for(device)()
        warm = (time.perf_counter() - t0) * 1e3
    finally:
        COMPILE, COMPILE_MODE = False, None
        torch._dynamo.reset()
    return {"ms": ms, "loss": loss, "cold_ms": cold, "warm_ms": warm}


def use_fresh_compile_caches() -> None:
    """Empty Inductor and vkml caches for this run (cold compile times); set before either loads."""
    root = tempfile.mkdtemp(prefix="bench-compile-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(root, "inductor")
    os.environ["VKML_CACHE_DIR"] = os.path.join(root, "vkml")


def decoders(small: bool) -> dict:
    """Decode-step models (forward(idx (batch, 1), pos (1,)) -> logits, static key/value cache),
    batch 1, with their cache length and timed steps: GPT-2-small and SmolLM2-135M's Llama
    configuration (small: narrow two-layer versions), random weights."""
    torch.manual_seed(0)
    if small:
        return {"gpt2s_small": (md.GPTDecode(md.GPT(512, 128, 64, 2, 4), 1, 128), 60),
                "smollm2_small": (md.llama_decoder(md.SMOLLM2_SMALL_CONFIG, 1), 60)}
    return {"gpt2s": (md.GPTDecode(md.GPT(), 1, 1024), 200),
            "smollm2_135m": (md.llama_decoder(md.SMOLLM2_135M_CONFIG, 1), 200)}


def decode_timings(device: str, small: bool) -> dict:
    """Per decode-step model (decoders()) and mode (eager, compiled, replay = reduce-overhead):
    host us per call (until the call returns, no synchronisation), ms per call (synchronised at
    the end), tokens/s of greedy decoding that stays on the device (argmax fed back, position
    advanced on the device), and the largest difference of the first logits from eager's, so
    that a fast wrong answer shows."""
    out = {}
    for name, (model, steps) in decoders(small).items():
        out[name] = decode_modes(model, device, steps)
    if device == "vkml":
        from torch_vkml._inductor.replay import replay_stats

        out["replay_stats"] = replay_stats()
    return out


def decode_modes(model: torch.nn.Module, device: str, steps: int) -> dict:
    sync = sync_for(device)
    out = {}
    for mode in ("eager", "compiled", "replay"):
        dec = copy.deepcopy(model).to(device).eval()
        fn = dec if mode == "eager" else torch.compile(
            dec, mode="reduce-overhead" if mode == "replay" else None)
        idx = torch.zeros(1, 1, dtype=torch.long, device=device)
        pos = torch.zeros(1, dtype=torch.long, device=device)
        with torch.no_grad():
            for _ in range(4):  # compile, warm-up, capture
                logits = fn(idx, pos)
            logits = logits.float().cpu()  # position 0 after each call: the same logits
            if mode == "eager":
                eager_logits = logits
            host = 0.0
            t0 = time.perf_counter()
            for _ in range(steps):
                h0 = time.perf_counter()
                fn(idx, pos)
                host += time.perf_counter() - h0
            sync()
            total = time.perf_counter() - t0
            pos.zero_()
            sync()
            t0 = time.perf_counter()
            for _ in range(steps):
                idx.copy_(fn(idx, pos).argmax(-1, keepdim=True))
                pos.add_(1)
            sync()
            tps = steps / (time.perf_counter() - t0)
        out[mode] = {"host_us": host / steps * 1e6, "ms": total / steps * 1e3, "tokens_s": tps,
                     "max_diff": float((logits - eager_logits).abs().max())}
        torch._dynamo.reset()
    return out


def report_decode(small: bool, refs: dict, ref: str, results: list) -> None:
    vk = decode_timings("vkml", small)
    rf = refs.get("decode", {})
    nan = {"ms": float("nan"), "host_us": float("nan"), "tokens_s": float("nan")}
    for name in decoders(small):
        print(f"decode step {name}, batch 1: host us per call / ms per call / greedy tokens per s")
        for mode in ("eager", "compiled", "replay"):
            for dev, t in (("vkml", vk[name][mode]), (ref, rf.get(name, {}).get(mode))):
                if t:
                    print(f"  {dev:5s} {mode:9s} {t['host_us']:9.1f} us {t['ms']:8.3f} ms "
                          f"{t['tokens_s']:9.1f} tok/s  logits vs eager {t['max_diff']:.2g}",
                          flush=True)
            r = rf.get(name, {}).get(mode, nan)
            results.append(Result("decode", f"{name}_decode_{mode}", "", 0.0, vk[name][mode]["ms"],
                                  r["ms"], ref, {"host_us_vkml": vk[name][mode]["host_us"],
                                                 "host_us_ref": r["host_us"],
                                                 "tokens_s_vkml": vk[name][mode]["tokens_s"],
                                                 "tokens_s_ref": r["tokens_s"]}))
    print(f"  vkml replay counters: {vk.get('replay_stats')}")


def report_compiled(chosen, timed, refs, ref: str, repeat: int, results: list,
                    replay: bool = False) -> None:
    """One line per model: vkml compiled and eager beside the reference's eager and compiled."""
    print(f"torch.compile: {'model':34s} {'vkml comp':>10s} {'vkml eager':>10s} "
          f"{ref + ' eager':>11s} {ref + ' comp':>10s}  compile cold/warm s (vkml; {ref})")
    for (name, make, kind), (vk_ms, _loss, _first) in zip(chosen, timed):
        c = time_compiled(make, "vkml", kind, repeat)
        r = refs.get(name + ":compiled", {"ms": float("nan"), "cold_ms": float("nan"),
                                          "warm_ms": float("nan"), "loss": None})
        r_eager = refs[name][0] if name in refs else float("nan")
        print(f"torch.compile: {name:34s} {c['ms']:10.2f} {vk_ms:10.2f} {r_eager:11.2f} "
              f"{r['ms']:10.2f}  {c['cold_ms'] / 1e3:.1f}/{c['warm_ms'] / 1e3:.1f}; "
              f"{r['cold_ms'] / 1e3:.1f}/{r['warm_ms'] / 1e3:.1f}", flush=True)
        if kind == "train":
            print(f"{'':>15} first-step loss compiled vkml {c['loss']:.5f}, {ref} {r['loss']}")
        extra = {"vkml_eager_ms": vk_ms, "ref_eager_ms": r_eager,
                 "compile_cold_ms_vkml": c["cold_ms"], "compile_warm_ms_vkml": c["warm_ms"],
                 "compile_cold_ms_ref": r["cold_ms"], "compile_warm_ms_ref": r["warm_ms"],
                 "loss_vkml": c["loss"], "loss_ref": r["loss"]}
        results.append(Result("model_compiled", name, "", 0.0, c["ms"], r["ms"], ref, extra))
        if replay:
            c = time_compiled(make, "vkml", kind, repeat, "reduce-overhead")
            r = refs.get(name + ":replay", {"ms": float("nan")})
            print(f"torch.compile reduce-overhead: {name:34s} vkml {c['ms']:10.2f} ms, "
                  f"{ref} {r['ms']:10.2f} ms", flush=True)
            results.append(Result("model_replay", name, "", 0.0, c["ms"], r["ms"], ref, {}))


def profile_kernels(args) -> None:
    """Where each model's step goes on vkml: kernels timed alone (serialised), top N by GPU time;
    with CUDA present, then the same steps' top N CUDA kernels (torch.profiler), from a child
    process that never loads vkml (see bench/timing.py)."""
    import torch_vkml

    for name, make, _kind in selected(args):
        step = make("vkml")
        step()  # pipelines and caches
        torch_vkml.synchronize()
        with torch_vkml.profiler.profile() as prof:
            step()
            torch_vkml.synchronize()
        print(f"== {name}\n{prof.table(args.profile)}", flush=True)
    if torch.cuda.is_available():
        run_reference_child(args, "--profile", str(args.profile), "--profile-reference")


def cuda_kernel_table(make, top: int) -> str:
    """One step's CUDA kernels by total GPU time (torch.profiler), in profile_kernels' layout."""
    from torch.profiler import ProfilerActivity, profile

    step = make("cuda")
    for _ in range(3):  # cuDNN/cuBLAS heuristics and caches
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    times: dict[str, list[float]] = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            t = times.setdefault(e.name, [0, 0.0])
            t[0] += 1
            t[1] += e.device_time_total
    total = sum(us for _, us in times.values()) or 1.0
    lines = [f"{'calls':>7s} {'total ms':>10s} {'share':>6s} kernel"]
    for kname, (count, us) in sorted(times.items(), key=lambda kv: -kv[1][1])[:top]:
        for noise in ("void ", "at::native::", "(anonymous namespace)::", "cutlass::"):
            kname = kname.replace(noise, "")
        lines.append(f"{count:7d} {us / 1e3:10.3f} {100 * us / total:5.1f}% {kname[:110]}")
    lines.append(f"{sum(c for c, _ in times.values()):7d} {total / 1e3:10.3f}        all kernels")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--small", action="store_true", help="reduced sizes (CPU-only machines)")
    ap.add_argument("--only", default="", help="comma-separated name prefixes")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--json", default="")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="only profile: one step per model, its N most expensive kernels")
    ap.add_argument("--vkml-only", action="store_true", help="time vkml alone (no reference)")
    ap.add_argument("--reference-last", action="store_true",
                    help="run the CUDA reference child after vkml's timings, not before")
    ap.add_argument("--no-diagnose", action="store_true",
                    help="skip the per-model diagnostic round on GPUs "
                    "(bench/timing.diagnose_round)")
    ap.add_argument("--reference-only", default="", metavar="JSON",
                    help="time the reference backend alone, without loading vkml, into JSON "
                    "(the child process this script starts for CUDA)")
    ap.add_argument("--profile-reference", action="store_true",
                    help="with --profile: the reference backend's kernel tables alone, without "
                    "loading vkml")
    ap.add_argument("--compile", action="store_true",
                    help="also time each model under torch.compile, with cold and warm compile "
                    "times, on vkml and the reference")
    ap.add_argument("--replay", action="store_true",
                    help="also time torch.compile(mode=\"reduce-overhead\") (graph replay): every "
                    "model with --compile, and the decode steps of GPT-2-small and SmolLM2-135M "
                    "(host time per call, tokens/s)")
    ap.add_argument("--dataloader", action="store_true",
                    help="only the data-fed loop: blocking copies against pinned batches and "
                    "non_blocking copies, on vkml and the reference")
    ap.add_argument("--cuda-no-tf32", action="store_true",
                    help="CUDA convolutions in full fp32 (cuDNN uses TF32 by default; vkml never)")
    add_timing_args(ap)
    args = ap.parse_args()
    apply_timing_args(args)
    if args.compile and not args.reference_only:
        use_fresh_compile_caches()  # the reference child inherits the variables
    timing.set_reference_only(bool(args.reference_only or args.profile_reference))
    ref = reference_device()
    if args.cuda_no_tf32:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    if args.profile_reference:  # child: the reference backend's kernel tables
        for name, make, _kind in selected(args):
            print(f"== {name} on {ref}\n{cuda_kernel_table(make, args.profile)}", flush=True)
        return
    if args.reference_only and args.dataloader:  # child: the reference's data-fed loop
        json.dump(data_fed_timings(ref, args.small, args.repeat), open(args.reference_only, "w"))
        return
    if args.reference_only:  # child: time the reference backend alone
        out = {name: time_one(make, ref, kind, args.repeat) for name, make, kind in selected(args)}
        if args.compile:
            for name, make, kind in selected(args):
                out[name + ":compiled"] = time_compiled(make, ref, kind, args.repeat)
                if args.replay:
                    out[name + ":replay"] = time_compiled(make, ref, kind, args.repeat,
                                                          "reduce-overhead")
        if args.replay:
            out["decode"] = decode_timings(ref, args.small)
        json.dump(out, open(args.reference_only, "w"))
        return
    import torch_vkml

    args.small = args.small or cpu_device()
    if args.profile:
        return profile_kernels(args)
    want_refs = ref == "cuda" and not args.vkml_only
    if args.dataloader:
        print(f"data-fed loop on {torch_vkml.device_name()} against {ref}\n{header(ref)}")
        refs = reference_timings(args, ref) if want_refs else {}
        results = report_data_fed(data_fed_timings("vkml", args.small, args.repeat), refs, ref,
                                  args.small)
        if args.json:
            save(args.json, results)
        return
    refs = reference_timings(args, ref) if want_refs and not args.reference_last else {}
    diagnose = not args.small and not args.no_diagnose
    print(f"models on {torch_vkml.device_name()} against {ref}")
    print(header(ref))
    results: list[Result] = []
    before = sum(torch_vkml.fallback_stats().values())
    chosen = list(selected(args))  # builds every model on the CPU: once
    details = [[] for _ in chosen]
    timed = [time_one(make, "vkml", kind, args.repeat, name if diagnose else "", detail)
             for (name, make, kind), detail in zip(chosen, details)]
    if want_refs and args.reference_last:
        refs = reference_timings(args, ref)
    for (name, make, kind), (vk_ms, vk_loss, vk_first), detail in zip(chosen, timed, details):
        if args.vkml_only:
            ref_ms, ref_loss, ref_first = float("nan"), float("nan"), float("nan")
        else:
            ref_ms, ref_loss, ref_first = (refs[name] if name in refs
                                           else time_one(make, ref, kind, args.repeat))
        extra = {"loss_vkml": vk_loss, "loss_ref": ref_loss} if kind == "train" else {}
        extra.update(first_call_ms_vkml=vk_first, first_call_ms_ref=ref_first,
                     first_call_pipelines=detail[0], first_call_pipeline_ms=detail[1],
                     first_call_pipeline_wait_ms=detail[2], first_call_driver_allocs=detail[3],
                     first_call_driver_alloc_ms=detail[4])
        r = Result("model", name, "", 0.0, vk_ms, ref_ms, ref, extra)
        if name in LLM_TOKENS:  # the rate column gives tokens/s
            r = Result("model", name, "tok", LLM_TOKENS[name], vk_ms, ref_ms, ref, extra)
        print(r.line(), flush=True)
        if kind == "train":
            print(f"{'':>8} first-step loss vkml {vk_loss:.5f} vs {ref} {ref_loss:.5f}")
        if name in LLM_TOKENS:
            print(f"{'':>8} tokens/s vkml {r.rate(vk_ms):.1f}, {ref} {r.rate(ref_ms) or 0:.1f}")
        print(f"{'':>8} first call (model to the device, pipelines, one run): vkml "
              f"{vk_first:.0f} ms, {ref} {ref_first:.0f} ms")
        print(f"{'':>8} vkml's first call: {detail[0]} pipelines built in {detail[1]:.0f} ms "
              f"(threads' sum; recording waited {detail[2]:.0f} ms for them), {detail[3]} driver "
              f"allocations in {detail[4]:.0f} ms")
        results.append(r)
    if args.compile:
        report_compiled(chosen, timed, {} if args.vkml_only else refs, ref, args.repeat, results,
                        args.replay)
    if args.replay:
        report_decode(args.small, {} if args.vkml_only else refs, ref, results)
    fallbacks = sum(torch_vkml.fallback_stats().values()) - before
    print(f"CPU fallbacks during the model benchmarks: {fallbacks} {torch_vkml.fallback_stats()}")
    if args.json:
        save(args.json, results)


if __name__ == "__main__":
    main()
