"""Why the same workload times 1x one moment and 2-4x the next (a diagnostic for GPUs).

For a few convolution layers (fwd + both gradients), several rounds of individually synchronised
calls: per round the min / median / max wall time, the device allocations, submissions and
dispatches per call, then the GPU kernel time of one call (profiler; kernels timed alone) and the
wall time of back-to-back calls with one synchronisation at the end (no per-call wait). A round
far above its neighbours with new device allocations points at the allocator; one whose GPU time
is also high, at the GPU; one with the same GPU time but a high wall time, at the host or the wait.

    PYTHONPATH=. python bench/variance_probe.py [--dtype float16] [--rounds 6]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
import torch.nn.functional as F

import torch_vkml
from torch_vkml import _C
from torch_vkml import profiler

LAYERS = [(64, 128, 1, 2, 32, 256), (64, 64, 3, 1, 32, 256), (512, 512, 3, 1, 4, 256),
          (128, 128, 3, 1, 16, 256)]


def conv_step(cin, cout, k, s, hw, batch, dtype):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, cin, hw, hw, generator=gen).to(dtype).to("vkml").requires_grad_()
    w = (torch.randn(cout, cin, k, k, generator=gen) * 0.05).to(dtype).to("vkml").requires_grad_()
    g = torch.randn_like(F.conv2d(x, w, stride=s, padding=k // 2))
    return lambda: torch.autograd.grad(F.conv2d(x, w, stride=s, padding=k // 2), (x, w), g)


def counters() -> tuple[int, int, int]:
    st = _C.stream_stats(0)
    return torch.vkml.memory_stats()["num_device_alloc"], st["submissions"], st["dispatches"]


def one_round(fn, calls: int) -> str:
    a0, s0, d0 = counters()
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        torch.vkml.synchronize()
        samples.append((time.perf_counter() - t0) * 1e3)
    a1, s1, d1 = counters()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.vkml.synchronize()
    batched = (time.perf_counter() - t0) * 1e3 / calls
    with profiler.profile() as prof:
        fn()
        torch.vkml.synchronize()
    gpu = sum(ns for _, ns in prof.times.values()) / 1e6
    return (f"wall min {min(samples):7.3f} med {statistics.median(samples):7.3f} "
            f"max {max(samples):7.3f} | batched {batched:7.3f} | gpu {gpu:7.3f} | "
            f"allocs {a1 - a0:3d} submits/call {(s1 - s0) / calls:5.1f} "
            f"dispatches/call {(d1 - d0) / calls:5.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--idle", type=float, default=0.0,
                    help="seconds of GPU idleness before each round (clock and power states)")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    small = "llvmpipe" in torch_vkml.device_name().lower()
    layers = [(ci, co, k, s, min(hw, 8), 2) for ci, co, k, s, hw, _ in LAYERS] if small else LAYERS
    print(f"device {torch_vkml.device_name()}, dtype {args.dtype}, "
          f"VKML_CONV_WINOGRAD={os.environ.get('VKML_CONV_WINOGRAD')}, idle {args.idle} s, "
          f"cache {os.environ.get('VKML_CACHE_DIR')}")
    for layer in layers:
        fn = conv_step(*layer, dtype)
        for _ in range(3):  # pipelines; deliberately no time-based warm-up (round 0 shows the rest)
            fn()
        torch.vkml.synchronize()
        print(f"{layer[0]}->{layer[1]} k{layer[2]}s{layer[3]} @{layer[4]} b{layer[5]}", flush=True)
        for r in range(args.rounds):
            time.sleep(args.idle)
            print(f"  round {r}: {one_round(fn, args.calls)}", flush=True)


if __name__ == "__main__":
    main()
