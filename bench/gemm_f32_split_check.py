"""fp32 torch.mm three ways on one GPU: cuBLAS (TF32 off), vkml's SIMT kernel, and vkml's split
into fp16 tensor-core products (VKML_GEMM_F32_SPLIT=1). Each gets its TFLOP/s (median after
warm-up) and its error against an fp64 product of the same fp32 operands, relative to |A| |B|
(the scale of fp32's own rounding bound), as max and mean.

    PYTHONPATH=. python bench/gemm_f32_split_check.py [--shapes 8192x8192x8192,...] [--json out]
        [--kchunks 0,1024] [--profile]

Shapes are MxKxN, with a trailing t for B as the transposed view of an (N x K) weight (x @ W.T).
--kchunks times the split once per VKML_GEMM_F32_SPLIT_KCHUNK value (unset: the default);
--profile prints the split's kernels, each timed alone (torch_vkml.profiler), per shape.
"""

from __future__ import annotations

import argparse
import json
import os

import torch

import torch_vkml  # registers the vkml device
import torch_vkml.profiler
from bench.bench_gemm import parse_shape, time_device


def errors(out: torch.Tensor, ref: torch.Tensor, scale: torch.Tensor) -> tuple[float, float]:
    rel = (out.double() - ref).abs() / scale
    return rel.max().item(), rel.mean().item()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shapes", default="8192x8192x8192,4096x4096x4096,12608x3072x768,"
                                        "262144x576x64,4096x3072x768")
    ap.add_argument("--json", default="")
    ap.add_argument("--kchunks", default="", help="comma-separated VKML_GEMM_F32_SPLIT_KCHUNK values")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    ref_device = "cuda" if cuda else "cpu"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for text in args.shapes.split(","):
        m, k, n, transposed = parse_shape(text)
        g = torch.Generator().manual_seed(0)
        a = torch.randn(m, k, generator=g)
        b = torch.randn(n, k, generator=g).t() if transposed else torch.randn(k, n, generator=g)
        ra, rb = a.to(ref_device), b.to(ref_device)
        ref = ra.double() @ rb.double()
        scale = (ra.double().abs() @ rb.double().abs()).clamp_min(1e-300)
        flops = 2.0 * m * n * k
        row = dict(shape=text)
        if cuda:
            row["cublas_tflops"] = flops / time_device(lambda: torch.mm(ra, rb),
                                                       torch.cuda.synchronize, 3, 10, 0.5) / 1e12
            row["cublas_err"] = errors(torch.mm(ra, rb), ref, scale)
        va, vb = a.to("vkml"), b.to("vkml")
        variants = [("simt", "0", None)]
        chunks = args.kchunks.split(",") if args.kchunks else [None]
        variants += [("split" if c is None else f"split{c}", "1", c) for c in chunks]
        for name, setting, chunk in variants:
            os.environ["VKML_GEMM_F32_SPLIT"] = setting
            if chunk is not None:
                os.environ["VKML_GEMM_F32_SPLIT_KCHUNK"] = chunk
            row[f"{name}_tflops"] = flops / time_device(lambda: torch.mm(va, vb),
                                                        torch.vkml.synchronize, 3, 10, 0.5) / 1e12
            row[f"{name}_err"] = errors(torch.mm(va, vb).to(ref_device), ref, scale)
            if args.profile and name.startswith("split"):
                with torch_vkml.profiler.profile() as prof:
                    torch.mm(va, vb)
                    torch.vkml.synchronize()
                print(f"{text} {name}:\n{prof.table(8)}", flush=True)
            os.environ.pop("VKML_GEMM_F32_SPLIT_KCHUNK", None)
        os.environ.pop("VKML_GEMM_F32_SPLIT", None)
        rows.append(row)
        line = f"{text:18}"
        for name in ["cublas"] + [v[0] for v in variants]:
            if f"{name}_tflops" in row:
                mx, mean = row[f"{name}_err"]
                line += f" | {name} {row[name + '_tflops']:6.1f} TFLOP/s err max {mx:.1e} mean {mean:.1e}"
        if cuda:
            best = max(row[f"{v[0]}_tflops"] for v in variants[1:])
            line += f" | best split/cuBLAS {best / row['cublas_tflops']:.2f}"
        print(line, flush=True)
        del ra, rb, ref, scale, va, vb
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch_vkml.device_name(), rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
