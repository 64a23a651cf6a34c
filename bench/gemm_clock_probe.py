"""SM clock and power while vkml's GEMM runs, against cuBLAS on the same operands (NVIDIA only).

Every fp16 GEMM setting of vkml lands at the same ~265 TFLOP/s on the H200. If the GPU ran it at a
lower clock than cuBLAS (a power or throttle state), that would be the common ceiling. Each phase
runs torch.mm back to back for --seconds while nvidia-smi samples the clock, the power and the
throttle reasons every 100 ms; the summary gives each phase's rate and mean readings.

    PYTHONPATH=. python bench/gemm_clock_probe.py [--size 8192] [--seconds 4]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import threading
import time

import torch

import torch_vkml  # noqa: F401  (registers the vkml device)


class Sampler:
    """nvidia-smi in the background; each sample is (host time, SM MHz, watts, throttle reasons)."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float, float, str]] = []
        self.proc = None
        if shutil.which("nvidia-smi") is None:  # elsewhere the phases still give their rates
            return
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=clocks.sm,power.draw,clocks_throttle_reasons.active",
             "--format=csv,noheader,nounits", "-lms", "100"],
            stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                self.samples.append((time.perf_counter(), float(parts[0]), float(parts[1]), parts[2]))
            except (ValueError, IndexError):
                pass

    def between(self, t0: float, t1: float) -> str:
        s = [x for x in self.samples if t0 <= x[0] <= t1]
        if not s:
            return "no samples"
        reasons = sorted({x[3] for x in s})
        return (f"SM {statistics.mean(x[1] for x in s):6.0f} MHz (min {min(x[1] for x in s):.0f}), "
                f"{statistics.mean(x[2] for x in s):5.0f} W, reasons {','.join(reasons)}, {len(s)} samples")

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()


def phase(name: str, a, b, sync, seconds: float, sampler: Sampler, flops: float) -> None:
    for _ in range(3):
        torch.mm(a, b)
    sync()
    t0 = time.perf_counter()
    calls = 0
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            torch.mm(a, b)
        sync()
        calls += 10
    t1 = time.perf_counter()
    rate = flops * calls / (t1 - t0) / 1e12
    print(f"{name:14} {rate:7.1f} TFLOP/s | {sampler.between(t0 + 0.3, t1)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--dtypes", default="float16,float32")
    args = ap.parse_args()
    n = args.size
    sampler = Sampler()
    time.sleep(1.0)
    t_idle = time.perf_counter()
    print(f"{'idle':14} {'':7} {'':8} | {sampler.between(t_idle - 1.0, t_idle)}")
    torch.backends.cuda.matmul.allow_tf32 = False
    for name in args.dtypes.split(","):
        dtype = getattr(torch, name)
        g = torch.Generator().manual_seed(0)
        a = torch.randn(n, n, generator=g).to(dtype)
        b = torch.randn(n, n, generator=g).to(dtype)
        flops = 2.0 * n ** 3
        phase(f"vkml {name}", a.to("vkml"), b.to("vkml"), torch.vkml.synchronize, args.seconds,
              sampler, flops)
        if torch.cuda.is_available():
            phase(f"cuda {name}", a.cuda(), b.cuda(), torch.cuda.synchronize, args.seconds, sampler,
                  flops)
    sampler.stop()


if __name__ == "__main__":
    main()
