"""Why the same workload times 1x one moment and 2-4x the next (a diagnostic for GPUs).

For a few convolution layers (fwd + both gradients), several rounds of individually synchronised
calls: per round the min / median / max wall time, the device allocations, submissions and
dispatches per call, then the GPU kernel time of one call (profiler; kernels timed alone) and the
wall time of back-to-back calls with one synchronisation at the end (no per-call wait). A round
far above its neighbours with new device allocations points at the allocator; one whose GPU time
is also high, at the GPU; one with the same GPU time but a high wall time, at the host or the wait.

    PYTHONPATH=. python bench/variance_probe.py [--dtype float16] [--rounds 6]
                                                [--model resnet50]

--model resnet50 probes ResNet-50 inference at batch 64, 224x224 (bench_models' workload), whose
fp16 timing read 36.5 ms in two device calls and 12.6-12.8 ms in the others.
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.nn.functional as F

import torch_vkml
from torch_vkml import profiler

from bench.timing import diagnose_round

LAYERS = [(64, 128, 1, 2, 32, 256), (64, 64, 3, 1, 32, 256), (512, 512, 3, 1, 4, 256),
          (128, 128, 3, 1, 16, 256)]


def conv_step(cin, cout, k, s, hw, batch, dtype):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, cin, hw, hw, generator=gen).to(dtype).to("vkml").requires_grad_()
    w = (torch.randn(cout, cin, k, k, generator=gen) * 0.05).to(dtype).to("vkml").requires_grad_()
    g = torch.randn_like(F.conv2d(x, w, stride=s, padding=k // 2))
    return lambda: torch.autograd.grad(F.conv2d(x, w, stride=s, padding=k // 2), (x, w), g)


def resnet50_inference(dtype, small: bool):
    from bench import model_defs as md

    model = md.resnet50().to("vkml", dtype).eval()
    batch, hw = (2, 64) if small else (64, 224)
    x = torch.randn(batch, 3, hw, hw, generator=torch.Generator().manual_seed(0))
    x = x.to("vkml", dtype)

    @torch.no_grad()
    def fn():
        return model(x)

    return fn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--model", default="", choices=["", "resnet50"],
                    help="a whole model's inference instead of the convolution layers")
    ap.add_argument("--idle", type=float, default=0.0,
                    help="seconds of GPU idleness before each round (clock and power states)")
    args = ap.parse_args()
    small = "llvmpipe" in torch_vkml.device_name().lower()
    layers = [(ci, co, k, s, min(hw, 8), 2) for ci, co, k, s, hw, _ in LAYERS] if small else LAYERS
    # Built one at a time, each freed before the next (as bench_models runs its models); with
    # --model, --dtype may list several (float32,float16: bench_models' order).
    if args.model:
        work = [(f"resnet50 inference {name}",
                 lambda name=name: resnet50_inference(getattr(torch, name), small))
                for name in args.dtype.split(",")]
    else:
        dtype = getattr(torch, args.dtype)
        work = [(f"{ci}->{co} k{k}s{s} @{hw} b{b}",
                 lambda layer=(ci, co, k, s, hw, b): conv_step(*layer, dtype))
                for ci, co, k, s, hw, b in layers]
    print(f"device {torch_vkml.device_name()}, dtype {args.dtype}, "
          f"VKML_CONV_WINOGRAD={os.environ.get('VKML_CONV_WINOGRAD')}, idle {args.idle} s, "
          f"cache {os.environ.get('VKML_CACHE_DIR')}")
    for name, make in work:
        fn = make()
        for _ in range(3):  # pipelines; deliberately no time-based warm-up (round 0 shows the rest)
            fn()
        torch.vkml.synchronize()
        print(name, flush=True)
        for r in range(args.rounds):
            time.sleep(args.idle)
            print(f"  round {r}: {diagnose_round(fn, args.calls)}", flush=True)
        if args.model:  # where a slow state's time goes, kernel by kernel
            with profiler.profile() as prof:
                fn()
                torch.vkml.synchronize()
            print(prof.table(8), flush=True)
        del fn


if __name__ == "__main__":
    main()
