"""torch.mm timings: vkml against the CPU (and CUDA where present), medians after warm-up.

    PYTHONPATH=. .venv/bin/python bench/bench_gemm.py [--dtype float16] [--shapes 512x512x512,...]

Each shape is MxKxN (C[M,N] = A[M,K] @ B[K,N]). A variant ending in 't' (e.g. 512x512x512t)
multiplies by a transposed B view, as nn.Linear does.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import torch_vkml  # noqa: F401  (registers the vkml device)

from bench.timing import warm_up

DEFAULT_SHAPES = "128x128x128,256x256x256,512x512x512,1024x1024x1024,64x4096x1024t,4096x4096x1"


def parse_shape(text: str) -> tuple[int, int, int, bool]:
    transposed = text.endswith("t")
    m, k, n = (int(v) for v in text.rstrip("t").split("x"))
    return m, k, n, transposed


def time_device(fn, sync, warmup: int, repeat: int, min_seconds: float, inner: int = 1) -> float:
    """Median seconds of one call; each sample is `inner` calls then a synchronisation."""
    warm_up(fn, sync, warmup)
    samples = []
    start = time.perf_counter()
    while len(samples) < repeat or (
        time.perf_counter() - start < min_seconds and len(samples) < 50
    ):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def operands(m: int, k: int, n: int, transposed: bool, dtype, device):
    """A (m x k) and B (k x n); with `transposed`, B is the transposed view of an (n x k) weight."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).to(dtype).to(device)
    if transposed:
        return a, torch.randn(n, k, generator=g).to(dtype).to(device).t()
    return a, torch.randn(k, n, generator=g).to(dtype).to(device)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--inner", type=int, default=4, help="calls per synchronised sample")
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU reference")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    backends = [("vkml", torch.vkml.synchronize)]
    if not args.no_cpu:
        backends.append(("cpu", lambda: None))
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 against fp32, as the issue asks
        backends.append(("cuda", torch.cuda.synchronize))
    print(f"torch.mm {args.dtype}; device: {torch_vkml.device_name()}")
    print(
        f"{'shape (MxKxN)':>18} "
        + " ".join(f"{name + ' ms':>10} {'GFLOP/s':>9}" for name, _ in backends)
        + f" {'vkml/' + backends[-1][0]:>10}"
    )
    for text in args.shapes.split(","):
        m, k, n, transposed = parse_shape(text)
        flops = 2.0 * m * n * k
        row = f"{text:>18} "
        rates = []
        for name, sync in backends:
            a, b = operands(m, k, n, transposed, dtype, name)
            seconds = time_device(
                lambda a=a, b=b: torch.mm(a, b), sync, args.warmup, args.repeat, args.min_seconds,
                args.inner if name != "cpu" else 1,
            )
            rates.append(flops / seconds)
            row += f"{seconds * 1e3:>10.3f} {flops / seconds / 1e9:>9.1f} "
        if len(rates) > 1:
            row += f"{rates[0] / rates[-1]:>10.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
