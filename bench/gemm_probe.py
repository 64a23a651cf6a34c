"""Which part of the GEMM K loop bounds its rate: torch.mm at one size under VKML_GEMM_PROBE
0 (the real kernel), 1 (no global loads after the first K tile), 2 (nor shared stores) and 3 (nor
barriers). Probes 1-3 compute wrong results on purpose; only their times mean anything. Each probe
runs in its own process (the plan reads the variable once).

    PYTHONPATH=. python bench/gemm_probe.py [--size 8192] [--dtypes float16,bfloat16,float32]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import torch


def child(size: int, dtypes: list[str]) -> None:
    from bench.timing import median_seconds

    gen = torch.Generator().manual_seed(0)
    for name in dtypes:
        dt = getattr(torch, name)
        a = torch.randn(size, size, generator=gen).to(dt).to("vkml")
        b = torch.randn(size, size, generator=gen).to(dt).to("vkml")
        s = median_seconds(lambda: torch.mm(a, b), "vkml", warmup=3, repeat=10)
        print(f"{name} {2 * size**3 / s / 1e12:.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--dtypes", default="float16,bfloat16,float32")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    dtypes = args.dtypes.split(",")
    if args.child:
        return child(args.size, dtypes)
    rows: dict[str, list[str]] = {d: [] for d in dtypes}
    for probe in range(4):
        env = dict(os.environ, VKML_GEMM_PROBE=str(probe))
        out = subprocess.run([sys.executable, __file__, "--child", "--size", str(args.size),
                              "--dtypes", args.dtypes], env=env, capture_output=True, text=True,
                             timeout=120)
        got = dict(line.split() for line in out.stdout.splitlines() if line.count(" ") == 1)
        for d in dtypes:
            rows[d].append(got.get(d, "err"))
        if out.returncode:
            print(out.stderr[-600:], file=sys.stderr)
    print(f"GEMM {args.size}^3, TFLOP/s by probe (0 real; 1 no global loads; 2 nor shared stores;"
          " 3 nor barriers)")
    for d in dtypes:
        print(f"{d:9} " + " ".join(f"{x:>7}" for x in rows[d]))


if __name__ == "__main__":
    main()
