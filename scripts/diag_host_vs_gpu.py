"""Where a model step's wall time goes on vkml: the host's time to record the step (no sync),
the wall time with the sync, and the GPU time summed by the kernel profiler, medians of repeats.
A wall time far above the kernel sum with a recording time close to it means the host is the
limit; far above both means the GPU idles for another reason.

    PYTHONPATH=. python scripts/diag_host_vs_gpu.py [--only resnet50_infer_b64_float16]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch_vkml

from bench import bench_models


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="resnet50_infer_b64_float16")
    ap.add_argument("--repeat", type=int, default=8)
    args = ap.parse_args()
    small = "llvmpipe" in torch_vkml.device_name().lower()
    for name, make, _kind in bench_models.workloads(small):
        if not any(name.startswith(p) for p in args.only.split(",")):
            continue
        step = make("vkml")
        for _ in range(3):
            step()
        torch.vkml.synchronize()
        record, wall = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            step()
            t1 = time.perf_counter()
            torch.vkml.synchronize()
            t2 = time.perf_counter()
            record.append((t1 - t0) * 1e3)
            wall.append((t2 - t0) * 1e3)
        with torch_vkml.profiler.profile() as prof:
            step()
            torch.vkml.synchronize()
        gpu = sum(ns for _, ns in prof.times.values()) / 1e6
        print(f"{name}: record {statistics.median(record):.2f} ms, wall {statistics.median(wall):.2f} ms,"
              f" kernels {gpu:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
