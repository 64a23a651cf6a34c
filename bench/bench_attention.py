"""F.scaled_dot_product_attention timings: vkml (fused kernels) against CUDA where present.

    PYTHONPATH=. .venv/bin/python bench/bench_attention.py [--dtype float16] [--backward]
        [--shapes 4x16x1024x64,...] [--causal]

Each shape is BxHxLxE (self-attention, S = L, Ev = E). FLOPs count 4*B*H*L*S*E for the forward
(halved when causal) and 2.5x that for forward + backward. VKML_SDPA_COOPMAT=0 times the portable
kernel on devices where the cooperative-matrix forward would run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import torch_vkml  # noqa: F401  (registers the vkml device)

from bench.timing import warm_up

DEFAULT_SHAPES = "1x8x512x64,4x16x1024x64,2x16x2048x128,1x32x4096x128"


def time_device(fn, sync, warmup: int, repeat: int) -> float:
    """Median seconds of one call, each sample synchronised."""
    warm_up(fn, sync, warmup)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--dtype", default="float16", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--backward", action="store_true", help="time forward + backward")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    backends = [("vkml", torch.vkml.synchronize)]
    if torch.cuda.is_available():
        backends.append(("cuda", torch.cuda.synchronize))
    what = "fwd+bwd" if args.backward else "fwd"
    print(f"sdpa {what} {args.dtype} causal={args.causal}; device: {torch_vkml.device_name()}")
    print(f"{'BxHxLxE':>18} " + " ".join(f"{n + ' ms':>10} {'TFLOP/s':>8}" for n, _ in backends))
    for text in args.shapes.split(","):
        b, h, n, e = (int(v) for v in text.split("x"))
        flops = 4.0 * b * h * n * n * e * (0.5 if args.causal else 1.0)
        flops *= 3.5 if args.backward else 1.0
        row = f"{text:>18} "
        for name, sync in backends:
            g = torch.Generator().manual_seed(0)
            q, k, v = (torch.randn(b, h, n, e, generator=g).to(dtype).to(name) for _ in range(3))
            if args.backward:
                for t in (q, k, v):
                    t.requires_grad_()
                dout = torch.randn_like(q)

                def step(q=q, k=k, v=v, dout=dout):
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
                    torch.autograd.grad(out, (q, k, v), dout)
            else:

                def step(q=q, k=k, v=v):
                    with torch.no_grad():
                        F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)

            seconds = time_device(step, sync, args.warmup, args.repeat)
            row += f"{seconds * 1e3:>10.3f} {flops / seconds / 1e12:>8.2f} "
        print(row, flush=True)


if __name__ == "__main__":
    main()
