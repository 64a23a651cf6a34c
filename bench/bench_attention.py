"""F.scaled_dot_product_attention timings: vkml against CUDA where present.

    PYTHONPATH=. .venv/bin/python bench/bench_attention.py [--dtype float16] [--backward]
        [--shapes 4x16x1024x64,...] [--causal] [--path auto,gemm,flash] [--sdpa-coopmat 0]
        [--flash-qblocks 2] [--queries 1 --kv-heads 8]

Each shape is BxHxLxE (self-attention, S = L, Ev = E). FLOPs count 4*B*H*L*S*E for the forward
(halved when causal) and 3.5x that for forward + backward. --queries N gives N queries per head
against the shape's L keys (decoding; GB/s then counts the K and V bytes read once), --kv-heads
fewer key/value heads than query heads (grouped-query attention). --path lists vkml's attention paths
(VKML_ATTENTION), each timed in its own columns; --sdpa-coopmat 0 times the portable fused kernel
on devices where the cooperative-matrix forward would run (VKML_SDPA_COOPMAT); --flash-qblocks
sets the flash forward's query blocks per subgroup (VKML_ATTENTION_FLASH_QBLOCKS). CUDA's times come from a child process
that never loads vkml (see bench/timing.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

from bench import timing
from bench.timing import add_timing_args, apply_timing_args, sync_for, warm_up

DEFAULT_SHAPES = "1x8x512x64,4x16x1024x64,2x16x2048x128,1x32x4096x128"
PATHS = ["auto", "fused", "gemm", "gemm-backward", "decode", "flash", "flash-forward"]


def time_device(fn, sync, warmup: int, repeat: int) -> float:
    """Median seconds of one call, each sample synchronised."""
    warm_up(fn, sync, warmup)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def time_shape(text: str, device: str, args) -> float:
    """Median seconds of one SDPA call (forward, or forward + backward) at shape BxHxLxE."""
    b, h, n, e = (int(v) for v in text.split("x"))
    dtype = getattr(torch, args.dtype)
    g = torch.Generator().manual_seed(0)
    hkv = args.kv_heads or h
    q = torch.randn(b, h, args.queries or n, e, generator=g).to(dtype).to(device)
    k, v = (torch.randn(b, hkv, n, e, generator=g).to(dtype).to(device) for _ in range(2))
    gqa = {"enable_gqa": hkv != h}
    if args.backward:
        for t in (q, k, v):
            t.requires_grad_()
        dout = torch.randn_like(q)

        def step():
            out = F.scaled_dot_product_attention(q, k, v, is_causal=args.causal, **gqa)
            torch.autograd.grad(out, (q, k, v), dout)
    else:

        def step():
            with torch.no_grad():
                F.scaled_dot_product_attention(q, k, v, is_causal=args.causal, **gqa)

    return time_device(step, sync_for(device), args.warmup, args.repeat)


def cuda_times(args) -> dict[str, float]:
    """Seconds per shape on CUDA, from this script in a child process without vkml."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [sys.executable, __file__, "--reference-only", f.name, "--shapes", args.shapes,
               "--dtype", args.dtype, "--warmup", str(args.warmup), "--repeat", str(args.repeat)]
        cmd += ["--causal"] * args.causal + ["--backward"] * args.backward
        cmd += ["--queries", str(args.queries), "--kv-heads", str(args.kv_heads)]
        if args.warmup_seconds is not None:
            cmd += ["--warmup-seconds", str(args.warmup_seconds)]
        subprocess.run(cmd, check=True)
        return json.load(open(f.name))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--dtype", default="float16", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--backward", action="store_true", help="time forward + backward")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--queries", type=int, default=0, metavar="N",
                    help="queries per head (default: L, self-attention)")
    ap.add_argument("--kv-heads", type=int, default=0, metavar="N",
                    help="key/value heads (default: H)")
    ap.add_argument("--path", default="auto",
                    help="comma-separated attention paths of vkml (VKML_ATTENTION): "
                    + ", ".join(PATHS))
    ap.add_argument("--sdpa-coopmat", default="auto", choices=["auto", "0", "1"],
                    help="fused fp16/bf16 attention on cooperative matrices (VKML_SDPA_COOPMAT)")
    ap.add_argument("--flash-qblocks", default="auto", choices=["auto", "1", "2"],
                    help="query blocks per subgroup of the flash forward "
                    "(VKML_ATTENTION_FLASH_QBLOCKS)")
    ap.add_argument("--reference-only", default="", metavar="JSON",
                    help="time CUDA alone, without loading vkml, into JSON (the child process)")
    add_timing_args(ap)
    args = ap.parse_args()
    apply_timing_args(args)
    shapes = args.shapes.split(",")
    paths = args.path.split(",")
    if unknown := [p for p in paths if p not in PATHS]:
        ap.error(f"--path: unknown {unknown}; choose from {', '.join(PATHS)}")
    if args.reference_only:
        timing.set_reference_only(True)
        with open(args.reference_only, "w") as f:
            json.dump({s: time_shape(s, "cuda", args) for s in shapes}, f)
        return
    cuda = cuda_times(args) if torch.cuda.is_available() else {}
    import torch_vkml

    what = "fwd+bwd" if args.backward else "fwd"
    print(f"sdpa {what} {args.dtype} causal={args.causal} flash_qblocks={args.flash_qblocks}; "
          f"device: {torch_vkml.device_name()}")
    names = paths + (["cuda"] if cuda else [])
    rate = "GB/s" if args.queries else "TFLOP/s"
    print(f"{'BxHxLxE':>18} " + " ".join(f"{n + ' ms':>16} {rate:>8}" for n in names))
    for text in shapes:
        b, h, n, e = (int(v) for v in text.split("x"))
        flops = 4.0 * b * h * (args.queries or n) * n * e * (0.5 if args.causal else 1.0)
        flops *= 3.5 if args.backward else 1.0
        work, per = flops, 1e12
        if args.queries:  # bytes moved: K and V read once
            esize = torch.finfo(getattr(torch, args.dtype)).bits // 8
            work, per = 2.0 * b * (args.kv_heads or h) * n * e * esize, 1e9
        seconds = []
        for path in paths:
            settings = {"VKML_ATTENTION": path, "VKML_SDPA_COOPMAT": args.sdpa_coopmat,
                        "VKML_ATTENTION_FLASH_QBLOCKS": args.flash_qblocks}
            with torch_vkml.config.override(**settings):
                seconds.append(time_shape(text, "vkml", args))
        if cuda:
            seconds.append(cuda[text])
        print(f"{text:>18} " + " ".join(f"{s * 1e3:>16.3f} {work / s / per:>8.2f}"
                                        for s in seconds), flush=True)


if __name__ == "__main__":
    main()
