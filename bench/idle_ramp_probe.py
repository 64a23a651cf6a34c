"""How fast the GPU runs in the first second after an idle spell, on vkml and on CUDA.

On the H200 the first 0.1-0.3 s of vkml work after about a second of idleness ran 3-5x slower,
in GPU timestamps too (bench/variance_probe.py --idle). This runs the same fp16 matmul on each
device: busy for a second, idle for --idle seconds, then synchronised calls for a second; it prints
the median time per call in windows of elapsed time since the idle spell ended, against the
steady state. If CUDA ramps up the same way, it is the GPU's power management, not vkml.

    PYTHONPATH=. python bench/idle_ramp_probe.py [--size 4096] [--idle 2]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import torch_vkml  # noqa: F401  (registers the vkml device)

WINDOWS_MS = [(0, 25), (25, 50), (50, 100), (100, 200), (200, 400), (400, 1000)]


def ramp(device: str, size: int, idle: float) -> str:
    sync = torch.vkml.synchronize if device == "vkml" else torch.cuda.synchronize
    g = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=g).half().to(device)
    b = torch.randn(size, size, generator=g).half().to(device)
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:  # steady state first
        torch.mm(a, b)
        sync()
    steady = []
    for _ in range(20):
        t0 = time.perf_counter()
        torch.mm(a, b)
        sync()
        steady.append(time.perf_counter() - t0)
    time.sleep(idle)
    calls = []  # (ms since the idle spell ended, ms of this call)
    begin = time.perf_counter()
    while time.perf_counter() - begin < 1.0:
        t0 = time.perf_counter()
        torch.mm(a, b)
        sync()
        t1 = time.perf_counter()
        calls.append(((t0 - begin) * 1e3, (t1 - t0) * 1e3))
    base = statistics.median(steady) * 1e3
    cells = []
    for lo, hi in WINDOWS_MS:
        inside = [ms for at, ms in calls if lo <= at < hi]
        cells.append(f"{lo}-{hi} ms: {statistics.median(inside) / base:4.2f}x" if inside else
                     f"{lo}-{hi} ms: -")
    return f"{device:5} steady {base:6.3f} ms/call | " + " | ".join(cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--idle", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    devices = ["vkml"] + (["cuda"] if torch.cuda.is_available() else [])
    print(f"fp16 matmul {args.size}^3, {args.idle} s idle; time per call relative to steady state")
    for _ in range(args.repeat):
        for device in devices:
            print(ramp(device, args.size, args.idle), flush=True)


if __name__ == "__main__":
    main()
