"""Where a memory-bound elementwise op's time goes on vkml, beside CUDA: for each case the wall
time per call (median of samples of `inner` back-to-back calls and one wait, for two values of
inner) and the kernels' own GPU time per call (torch_vkml.profiler: each kernel timed alone).
A gap in wall time with equal kernel time is per-op overhead between kernels; a gap in kernel
time is the kernel itself.

    PYTHONPATH=. python bench/unary_probe.py [--numel N] [--only "neg out=,add out="]
"""

from __future__ import annotations

import argparse

import torch

import torch_vkml  # noqa: F401  (registers the vkml device)
import torch_vkml.profiler
from bench.timing import median_seconds


def cases(n: int, dev: str) -> dict:
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, generator=g).to(dev)
    b = torch.randn(n, generator=g).to(dev)
    c = torch.empty_like(a)
    return {
        "copy_ out=": lambda: c.copy_(a),
        "add out=": lambda: torch.add(a, b, out=c),
        "mul scalar out=": lambda: torch.mul(a, 2.5, out=c),
        "mul scalar new": lambda: a * 2.5,
        "neg out=": lambda: torch.neg(a, out=c),
        "neg new": lambda: torch.neg(a),
        "relu new": lambda: torch.relu(a),
        "abs out=": lambda: torch.abs(a, out=c),
        "exp out=": lambda: torch.exp(a, out=c),
        "exp new": lambda: torch.exp(a),
    }


def kernel_ms(fn, calls: int = 8) -> tuple[float, str]:
    fn()
    torch.vkml.synchronize()
    with torch_vkml.profiler.profile() as prof:
        for _ in range(calls):
            fn()
        torch.vkml.synchronize()
    names = ",".join(sorted(prof.times))
    return sum(ns for _, ns in prof.times.values()) / 1e6 / calls, names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--numel", type=int, default=64 * 197 * 3072)
    ap.add_argument("--only", default="", help="comma-separated case names (default: all)")
    args = ap.parse_args()
    n = args.numel
    vk = cases(n, "vkml")
    if args.only:
        vk = {k: v for k, v in vk.items() if k in args.only.split(",")}
    ref = cases(n, "cuda") if torch.cuda.is_available() else None
    print(f"numel {n}; ms per call; GB/s from wall inner=16 (read + write {8 * n / 1e9:.3f} GB)")
    print(f"{'case':18s} {'vk in=4':>8s} {'vk in=16':>8s} {'vk kern':>8s} {'cu in=4':>8s} "
          f"{'cu in=16':>8s} {'vk/cu 16':>8s}  kernels")
    for name, fn in vk.items():
        w4 = median_seconds(fn, "vkml", inner=4) * 1e3
        w16 = median_seconds(fn, "vkml", inner=16) * 1e3
        kern, names = kernel_ms(fn)
        c4 = c16 = float("nan")
        if ref:
            c4 = median_seconds(ref[name], "cuda", inner=4) * 1e3
            c16 = median_seconds(ref[name], "cuda", inner=16) * 1e3
        print(f"{name:18s} {w4:8.4f} {w16:8.4f} {kern:8.4f} {c4:8.4f} {c16:8.4f} "
              f"{c16 / w16:8.2f}  {names}", flush=True)


if __name__ == "__main__":
    main()
