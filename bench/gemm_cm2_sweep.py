"""torch.mm under GEMM kernel settings, in one process (for sweeps on a GPU).

    python3 bench/gemm_cm2_sweep.py --configs "cm1:;cm2:VKML_GEMM_CM2_GROUP=8" [--json out.json]

Each config is NAME:VAR=VALUE,VAR=VALUE... (VKML_COOPMAT2=1 is implied unless the name starts
with cm1). The tuning variables are read per plan, so one process serves every config. Each
result is the median of timed samples after warm-up (bench_gemm.time_device), beside PyTorch CUDA
on the same operands when present, and checked against CUDA's product (max error relative to the
largest output), so a fast but wrong setting shows as such.
"""

from __future__ import annotations

import argparse
import json
import os

import torch

import torch_vkml  # noqa: F401  (registers the vkml device)
from bench.bench_gemm import operands, parse_shape, time_device


def parse_configs(text: str) -> list[tuple[str, dict[str, str]]]:
    configs = []
    for item in filter(None, (c.strip() for c in text.split(";"))):
        name, _, settings = item.partition(":")
        env = {"VKML_COOPMAT2": "0" if name.startswith("cm1") else "1"}
        for pair in filter(None, settings.split(",")):
            key, _, value = pair.partition("=")
            env[key] = value
        configs.append((name, env))
    return configs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--configs", required=True)
    ap.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192,8192x8192x8192t")
    ap.add_argument("--dtypes", default="float16")
    ap.add_argument("--json")
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 against fp32, as the issue asks
    results = []
    touched = set()
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        for text in args.shapes.split(","):
            m, k, n, transposed = parse_shape(text)
            flops = 2.0 * m * n * k
            a, b = operands(m, k, n, transposed, dtype, "vkml")
            ref = cuda_rate = None
            if cuda:
                ca, cb = operands(m, k, n, transposed, dtype, "cuda")
                ref = torch.mm(ca, cb).float().cpu()
                cuda_rate = flops / time_device(lambda: torch.mm(ca, cb), torch.cuda.synchronize,
                                                3, 10, 0.5, 4)
            for name, env in parse_configs(args.configs):
                for key in touched - set(env):
                    os.environ.pop(key, None)
                os.environ.update(env)
                touched |= set(env)
                out = torch.mm(a, b).float().cpu()
                err = None
                if ref is not None:
                    err = float((out - ref).abs().max() / ref.abs().max())
                rate = flops / time_device(lambda: torch.mm(a, b), torch.vkml.synchronize,
                                           3, 10, 0.5, 4)
                ratio = f"{rate / cuda_rate:.2f}" if cuda_rate else "-"
                cuda_text = f"{cuda_rate / 1e12:.1f}" if cuda_rate else "-"
                print(f"{dtype_name:9} {text:>16} {name:24} {rate / 1e12:7.1f} TFLOP/s  "
                      f"cuda {cuda_text:>6}  ratio {ratio:>5}  err {err}", flush=True)
                results.append({"dtype": dtype_name, "shape": text, "config": name, "env": env,
                                "tflops": rate / 1e12, "cuda_tflops": cuda_rate and cuda_rate / 1e12,
                                "max_rel_err": err})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
