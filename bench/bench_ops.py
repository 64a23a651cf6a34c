"""Op benchmarks: bandwidth, GEMM, convolution, softmax, layer norm, attention, host overhead;
vkml against CUDA on the same GPU (or the CPU where there is no CUDA).

    PYTHONPATH=. python bench/bench_ops.py [--small] [--only copy,gemm] [--json out.json]

Rates: GB/s counts bytes read plus written once; TFLOP/s counts 2 flops per multiply-add.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

from bench import timing
from bench.timing import (
    Result,
    add_timing_args,
    apply_timing_args,
    compare,
    cpu_device,
    header,
    reference_device,
    save,
    sync_for,
)

GB = 1e9
TFLOP = 1e12


def randn(shape, dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(dtype).to(device)


def bandwidth(small: bool, ref: str) -> list[Result]:
    n = (1 << 20) if small else (1 << 28)  # 4 MiB / 1 GiB of fp32
    out = []

    def copy(dev):
        x, y = randn(n, torch.float32, dev), torch.empty(n, device=dev)
        return lambda: y.copy_(x)

    out.append(compare("memory", "copy fp32", "GB", 2 * 4 * n / GB, copy, ref, inner=4))

    def add(dev):
        a, b = randn(n, torch.float32, dev, 1), randn(n, torch.float32, dev, 2)
        c = torch.empty_like(a)
        return lambda: torch.add(a, b, out=c)

    out.append(compare("memory", "add fp32", "GB", 3 * 4 * n / GB, add, ref, inner=4))

    def mul_half(dev):
        a, b = randn(n, torch.float16, dev, 1), randn(n, torch.float16, dev, 2)
        c = torch.empty_like(a)
        return lambda: torch.mul(a, b, out=c)

    out.append(compare("memory", "mul fp16", "GB", 3 * 2 * n / GB, mul_half, ref, inner=4))

    def add_bf16(dev):
        a, b = randn(n, torch.bfloat16, dev, 1), randn(n, torch.bfloat16, dev, 2)
        c = torch.empty_like(a)
        return lambda: torch.add(a, b, out=c)

    out.append(compare("memory", "add bf16", "GB", 3 * 2 * n / GB, add_bf16, ref, inner=4))

    def scale(dev):  # a tensor and a scalar operand
        a = randn(n, torch.float32, dev, 1)
        c = torch.empty_like(a)
        return lambda: torch.mul(a, 2.5, out=c)

    out.append(compare("memory", "mul fp32 by scalar", "GB", 2 * 4 * n / GB, scale, ref, inner=4))

    def sigmoid_half(dev):  # a unary op with real arithmetic per element
        a = randn(n, torch.float16, dev, 1)
        c = torch.empty_like(a)
        return lambda: torch.sigmoid(a, out=c)

    out.append(compare("memory", "sigmoid fp16", "GB", 2 * 2 * n / GB, sigmoid_half, ref,
                       inner=4))

    def total(dev):
        x = randn(n, torch.float32, dev, 3)
        return lambda: x.sum()

    out.append(compare("reduce", "sum fp32 (all)", "GB", 4 * n / GB, total, ref, inner=4))
    rows = 4096 if not small else 256
    cols = n // rows

    def rowsum(dev):
        x = randn((rows, cols), torch.float32, dev, 4)
        return lambda: x.sum(dim=1)

    out.append(compare("reduce", f"sum dim=1 {rows}x{cols}", "GB", 4 * n / GB, rowsum, ref,
                       inner=4))

    def colmax(dev):
        x = randn((rows, cols), torch.float32, dev, 5)
        return lambda: x.amax(dim=0)

    out.append(compare("reduce", f"amax dim=0 {rows}x{cols}", "GB", 4 * n / GB, colmax, ref,
                       inner=4))

    def tall_colsum(dev):  # channels-last statistics: many rows, few contiguous columns
        x = randn((n // 64, 64), torch.float32, dev, 6)
        return lambda: x.sum(dim=0)

    out.append(compare("reduce", f"sum dim=0 {n // 64}x64", "GB", 4 * n / GB, tall_colsum, ref,
                       inner=4))
    return out


def activations(small: bool, ref: str) -> list[Result]:
    """Activations with real arithmetic per element, fp32, at ViT-B/16's MLP size (batch 64):
    memory-bound on CUDA, so GB/s shows how far the math keeps a kernel from bandwidth."""
    n = (1 << 16) if small else 64 * 197 * 3072
    out = []
    # relu and neg: controls with no math, so the gap of the others is their arithmetic.
    unary = {"relu": torch.relu, "neg": torch.neg, "gelu": F.gelu,
             "gelu tanh": lambda a: F.gelu(a, approximate="tanh"),
             "erf": torch.erf, "exp": torch.exp, "silu": F.silu, "tanh": torch.tanh}
    for name, fn in unary.items():
        def make(dev, fn=fn):
            a = randn(n, torch.float32, dev, 7)
            return lambda: fn(a)

        out.append(compare("activation", f"{name} fp32", "GB", 2 * 4 * n / GB, make, ref, inner=4))

    def gelu_backward(dev):
        g, a = randn(n, torch.float32, dev, 8), randn(n, torch.float32, dev, 9)
        return lambda: torch.ops.aten.gelu_backward(g, a)

    out.append(compare("activation", "gelu backward fp32", "GB", 3 * 4 * n / GB, gelu_backward,
                       ref, inner=4))
    return out


def gemm(small: bool, ref: str) -> list[Result]:
    sizes = [256, 512] if small else [1024, 4096, 8192]
    out = []
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for s in sizes:
            def mm(dev, s=s, dtype=dtype):
                a, b = randn((s, s), dtype, dev, 1), randn((s, s), dtype, dev, 2)
                return lambda: torch.mm(a, b)

            name = f"mm {str(dtype).split('.')[1]} {s}^3"
            out.append(compare("gemm", name, "TFLOP", 2 * s**3 / TFLOP, mm, ref, inner=2))
    # Shapes of the models: a GPT-2 MLP (tokens x 768 x 3072) and a ViT-B attention projection.
    tokens = 64 if small else 4096
    for (m, k, n) in ((tokens, 768, 3072), (tokens, 3072, 768), (tokens, 768, 2304)):
        def linear(dev, m=m, k=k, n=n):
            x, w = randn((m, k), torch.float16, dev, 1), randn((n, k), torch.float16, dev, 2)
            return lambda: F.linear(x, w)

        out.append(compare("gemm", f"linear fp16 {m}x{k}x{n}", "TFLOP", 2 * m * k * n / TFLOP,
                           linear, ref, inner=2))
    return out


# ResNet-50's distinct convolution layers: (Cin, Cout, kernel, stride, input size).
RESNET50_CONVS = [(3, 64, 7, 2, 224), (64, 64, 1, 1, 56), (64, 64, 3, 1, 56), (64, 256, 1, 1, 56),
                  (128, 128, 3, 1, 28), (256, 256, 3, 1, 14), (512, 512, 3, 1, 7),
                  (1024, 256, 1, 1, 14)]


def conv(small: bool, ref: str) -> list[Result]:
    batch = 2 if small else 32
    out = []
    layers = RESNET50_CONVS[1:4] if small else RESNET50_CONVS
    for cin, cout, k, s, hw in layers:
        if small:
            hw = min(hw, 16)
        ho = (hw + 2 * (k // 2) - k) // s + 1
        flops = 2 * batch * cout * ho * ho * cin * k * k
        for dtype in (torch.float32, torch.float16):
            tag = f"{cin}->{cout} k{k}s{s} @{hw} {str(dtype).split('.')[1]}"

            def fwd(dev, dtype=dtype, cin=cin, cout=cout, k=k, s=s, hw=hw):
                x = randn((batch, cin, hw, hw), dtype, dev, 1)
                w = randn((cout, cin, k, k), dtype, dev, 2) * 0.05
                return lambda: F.conv2d(x, w, stride=s, padding=k // 2)

            out.append(compare("conv", "fwd " + tag, "TFLOP", flops / TFLOP, fwd, ref, inner=2))

            def fwd_bwd(dev, dtype=dtype, cin=cin, cout=cout, k=k, s=s, hw=hw):
                x = randn((batch, cin, hw, hw), dtype, dev, 1).requires_grad_()
                w = (randn((cout, cin, k, k), dtype, dev, 2) * 0.05).requires_grad_()

                def run():
                    y = F.conv2d(x, w, stride=s, padding=k // 2)
                    return torch.autograd.grad(y, (x, w), torch.ones_like(y))

                return run

            name = "fwd+bwd " + tag
            out.append(compare("conv", name, "TFLOP", 3 * flops / TFLOP, fwd_bwd, ref, inner=1,
                               ref_ms=CHILD_REF_MS.get(name)))
    return out


# CUDA backward passes fail PyTorch's autograd stream assertion in a process where a PrivateUse1
# backend is registered (pytorch/pytorch#161129), so the conv gradients' CUDA times come from a
# child process that never loads vkml.
CHILD_REF_MS: dict[str, float] = {}


def child_reference(args, ref: str) -> dict[str, float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [sys.executable, __file__, "--only", "conv", "--reference-only", f.name]
        if args.small:
            cmd.append("--small")
        if args.warmup_seconds is not None:
            cmd += ["--warmup-seconds", str(args.warmup_seconds)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.load(open(f.name))


def nn_ops(small: bool, ref: str) -> list[Result]:
    out = []
    rows, cols = (256, 1024) if small else (8192, 4096)
    for dtype in (torch.float32, torch.float16):
        es = 4 if dtype == torch.float32 else 2
        tag = str(dtype).split(".")[1]

        def softmax(dev, dtype=dtype):
            x = randn((rows, cols), dtype, dev, 1)
            return lambda: torch.softmax(x, dim=-1)

        out.append(compare("nn", f"softmax {rows}x{cols} {tag}", "GB", 2 * es * rows * cols / GB,
                           softmax, ref, inner=4))

        def layernorm(dev, dtype=dtype):
            x = randn((rows, cols), dtype, dev, 1)
            w, b = randn(cols, dtype, dev, 2), randn(cols, dtype, dev, 3)
            return lambda: F.layer_norm(x, (cols,), w, b)

        out.append(compare("nn", f"layer_norm {rows}x{cols} {tag}", "GB",
                           2 * es * rows * cols / GB, layernorm, ref, inner=4))
    b, h, seq, e = (1, 2, 128, 64) if small else (8, 16, 1024, 64)
    for dtype in (torch.float16, torch.bfloat16):
        for causal in (False, True):
            flops = 4 * b * h * seq * seq * e * (0.5 if causal else 1.0)
            tag = f"sdpa {b}x{h}x{seq}x{e} {str(dtype).split('.')[1]}" + (" causal" if causal else "")

            def sdpa(dev, dtype=dtype, causal=causal):
                q, k, v = (randn((b, h, seq, e), dtype, dev, i) for i in range(3))
                return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)

            out.append(compare("attn", "fwd " + tag, "TFLOP", flops / TFLOP, sdpa, ref, inner=2))

            def sdpa_bwd(dev, dtype=dtype, causal=causal):
                q, k, v = (randn((b, h, seq, e), dtype, dev, i).requires_grad_() for i in range(3))

                def run():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    return torch.autograd.grad(o, (q, k, v), torch.ones_like(o))

                return run

            out.append(compare("attn", "fwd+bwd " + tag, "TFLOP", 3.5 * flops / TFLOP, sdpa_bwd,
                               ref))
    # LLM decoding: one query token per sequence against a KV cache; memory-bound on K and V.
    b, h, keys, e = (1, 2, 256, 64) if small else (1, 32, 4096, 128)
    for dtype in (torch.float16, torch.float32):
        es = 4 if dtype == torch.float32 else 2

        def decode(dev, dtype=dtype):
            q = randn((b, h, 1, e), dtype, dev, 0)
            k, v = (randn((b, h, keys, e), dtype, dev, i) for i in (1, 2))
            return lambda: F.scaled_dot_product_attention(q, k, v)

        out.append(compare("attn", f"decode {b}x{h}x1x{e} over {keys} keys "
                           f"{str(dtype).split('.')[1]}", "GB", 2 * es * b * h * keys * e / GB,
                           decode, ref, inner=4))
    # Grouped-query decoding (32 query heads over 8 key/value heads), batch 4: K and V read once.
    b, h, hkv = (1, 4, 2) if small else (4, 32, 8)

    def decode_gqa(dev):
        q = randn((b, h, 1, e), torch.float16, dev, 0)
        k, v = (randn((b, hkv, keys, e), torch.float16, dev, i) for i in (1, 2))
        return lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    out.append(compare("attn", f"decode {b}x{h}/{hkv}x1x{e} over {keys} fp16", "GB",
                       2 * 2 * b * hkv * keys * e / GB, decode_gqa, ref, inner=4))
    return out


def host_overhead(ref: str) -> list[Result]:
    """Host time per op on tiny tensors: many adds queued, one synchronisation at the end."""
    out = []
    calls = 2000

    def per_op_us(dev: str) -> float:
        a, b = torch.ones(4, device=dev), torch.ones(4, device=dev)
        c = torch.empty_like(a)
        sync = sync_for(dev)
        for _ in range(200):
            torch.add(a, b, out=c)
        sync()
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(calls):
                torch.add(a, b, out=c)
            t1 = time.perf_counter()  # host time: the loop returns before the device finishes
            sync()
            best = min(best, (t1 - t0) / calls * 1e6)
        return best

    vk = per_op_us("vkml")
    rf = per_op_us(ref)
    r = Result("host", "add 4 elements, host us/op", "", 0.0, vk / 1e3, rf / 1e3, ref,
               {"vkml_us": vk, "ref_us": rf})
    print(f"{'host':>8} {'add(4 elems) host time per op':<34} vkml {vk:.2f} us, {ref} {rf:.2f} us",
          flush=True)
    out.append(r)
    return out


def fft_ops(small: bool, ref: str) -> list[Result]:
    """FFTs against cuFFT: batched 1-D complex64 transforms, a 2-D real transform and stft.
    Rates count 5 N log2(N) flops per complex transform of N points (2.5 for real ones)."""
    import math
    out = []
    cases = [((1 << 20,), 1), ((4096, 1024), 1)] if not small else [((1 << 14,), 1),
                                                                   ((64, 1024), 1)]
    for shape, _ in cases:
        def c2c(dev, shape=shape):
            g = torch.Generator().manual_seed(3)
            x = torch.randn(shape, generator=g, dtype=torch.complex64).to(dev)
            return lambda: torch.fft.fft(x)

        n, batch = shape[-1], math.prod(shape[:-1])
        out.append(compare("fft", f"fft c64 {'x'.join(map(str, shape))}", "TFLOP",
                           5 * batch * n * math.log2(n) / TFLOP, c2c, ref, inner=2))
    side = 256 if small else 1024

    def rfft2(dev):
        x = randn((side, side), torch.float32, dev, 4)
        return lambda: torch.fft.rfft2(x)

    out.append(compare("fft", f"rfft2 fp32 {side}x{side}", "TFLOP",
                       2.5 * side * side * math.log2(side * side) / TFLOP, rfft2, ref, inner=2))
    batch, seconds = (2, 2) if small else (16, 30)

    def stft(dev):
        x = randn((batch, 16000 * seconds), torch.float32, dev, 5)
        window = torch.hann_window(400, device=dev)
        return lambda: torch.stft(x, 400, 160, window=window, return_complex=True)

    frames = 16000 * seconds // 160 + 1
    out.append(compare("fft", f"stft b{batch} {seconds}s 16kHz n400 hop160", "TFLOP",
                       2.5 * batch * frames * 400 * math.log2(400) / TFLOP, stft, ref, inner=2))
    return out


GROUPS = {"memory": bandwidth, "activation": activations, "gemm": gemm, "conv": conv,
          "nn": nn_ops, "fft": fft_ops}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--small", action="store_true", help="reduced sizes (CPU-only machines)")
    ap.add_argument("--only", default="", help="comma-separated groups: " + ",".join(GROUPS) +
                    ",host")
    ap.add_argument("--json", default="")
    ap.add_argument("--reference-only", default="", metavar="JSON",
                    help="time the reference backend alone, without loading vkml, into JSON "
                    "(the child process this script starts for CUDA's gradients)")
    add_timing_args(ap)
    args = ap.parse_args()
    apply_timing_args(args)
    timing.set_reference_only(bool(args.reference_only))
    args.small = args.small or cpu_device()
    ref = reference_device()
    only = [g for g in args.only.split(",") if g]
    if args.reference_only:
        rows = [r for name, fn in GROUPS.items() if name in only for r in fn(args.small, ref)]
        json.dump({r.name: r.ref_ms for r in rows}, open(args.reference_only, "w"))
        return
    if ref == "cuda" and (not only or "conv" in only):
        CHILD_REF_MS.update(child_reference(args, ref))
    import torch_vkml
    print(f"ops on {torch_vkml.device_name()} against {ref}")
    print(header(ref))
    results: list[Result] = []
    for name, fn in GROUPS.items():
        if not only or name in only:
            results += fn(args.small, ref)
    if not only or "host" in only:
        results += host_overhead(ref)
    print(f"CPU fallbacks: {torch_vkml.fallback_stats()}")
    if args.json:
        save(args.json, results)


if __name__ == "__main__":
    main()
