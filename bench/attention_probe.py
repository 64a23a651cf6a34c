"""SDPA forward + backward at the models' shapes, with q, k and v as views of one fused qkv
projection (B, L, 3, H, E), the way bench/model_defs.Block and torchvision's ViT feed it.

    PYTHONPATH=. python bench/attention_probe.py [--device vkml|cuda] [--shapes 64x12x197x64,...]
        [--causal-shapes 8x12x512x64] [--profile N]

Prints the median ms of one forward + backward after warm-up and the TFLOP/s it implies
(FLOPs 3.5 x 4*B*H*L*S*E, halved when causal). On vkml a diagnostic line follows (wall, host
and GPU time per call: bench/timing.diagnose_round); --profile N adds the step's N most expensive
kernels, each timed alone; with VKML_PROFILE=2 each is named with its op's shape.
--device cuda (or cpu) never loads vkml: run it as its own process (a CUDA backward fails in a
process that has loaded vkml).
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.nn.functional as F


def make_step(device: str, b: int, h: int, n: int, e: int, causal: bool):
    g = torch.Generator().manual_seed(0)
    qkv = torch.randn(b, n, 3 * h * e, generator=g).to(device).requires_grad_()
    dout = torch.randn(b, h, n, e, generator=g).to(device)

    def step():
        q, k, v = qkv.view(b, n, 3, h, e).unbind(2)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                             v.transpose(1, 2), is_causal=causal)
        torch.autograd.grad(out, qkv, dout)

    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--device", default="vkml")
    ap.add_argument("--shapes", default="64x12x197x64", help="BxHxLxE, not causal (ViT-B/16)")
    ap.add_argument("--causal-shapes", default="8x12x512x64", help="BxHxLxE, causal (GPT-2)")
    ap.add_argument("--profile", type=int, default=0, metavar="N")
    args = ap.parse_args()
    if args.device == "vkml":
        import torch_vkml  # noqa: F401  (registers the vkml device)
    else:  # bench.timing must not load vkml here either
        os.environ["VKML_BENCH_REFERENCE_ONLY"] = "1"
    from bench.timing import diagnose_round, median_seconds  # warm-up: at least 1 s on GPUs
    label = os.environ.get("PROBE_LABEL", "")
    cases = [(s, False) for s in args.shapes.split(",") if s]
    cases += [(s, True) for s in args.causal_shapes.split(",") if s]
    for text, causal in cases:
        b, h, n, e = (int(v) for v in text.split("x"))
        step = make_step(args.device, b, h, n, e, causal)
        ms = median_seconds(step, args.device) * 1e3
        flops = 3.5 * 4.0 * b * h * n * n * e * (0.5 if causal else 1.0)
        print(f"{label}{args.device} {text}{' causal' if causal else ''}: fwd+bwd {ms:.3f} ms "
              f"{flops / ms / 1e9:.1f} TFLOP/s", flush=True)
        if args.device == "vkml":  # wall, host and GPU time of one call; its kernels
            print(diagnose_round(step, 10, top=args.profile), flush=True)


if __name__ == "__main__":
    main()
