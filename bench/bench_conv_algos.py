"""The convolution algorithms side by side on one vkml device, in one process: im2col + GEMM
against the implicit GEMMs (VKML_CONV), Winograd F(m x m, 3x3) (VKML_CONV_WINOGRAD=1) and the
default choice, forward and forward + both gradients (and each gradient apart), per layer of
ResNet-18 (32x32 inputs, batch 256) and ResNet-50 (224x224, batch 32). Medians of timed repeats
after warm-up; the ratio > 1 means the implicit path is faster. On CPU devices the sizes shrink.

    PYTHONPATH=. python bench/bench_conv_algos.py [--dtype float16] [--json out.json]
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F

import torch_vkml
from bench.timing import add_timing_args, apply_timing_args, cpu_device, median_seconds

# (Cin, Cout, kernel, stride, input size, batch)
RESNET18 = [(64, 64, 3, 1, 32, 256), (64, 128, 3, 2, 32, 256), (64, 128, 1, 2, 32, 256),
            (128, 128, 3, 1, 16, 256), (256, 256, 3, 1, 8, 256), (512, 512, 3, 1, 4, 256)]
RESNET50 = [(3, 64, 7, 2, 224, 32), (64, 64, 3, 1, 56, 32), (256, 64, 1, 1, 56, 32),
            (128, 128, 3, 1, 28, 32), (256, 256, 3, 1, 14, 32), (512, 512, 3, 1, 7, 32),
            (1024, 256, 1, 1, 14, 32)]


def layer_runs(cin, cout, k, s, hw, batch, dtype):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, cin, hw, hw, generator=gen).to(dtype).to("vkml").requires_grad_()
    w = (torch.randn(cout, cin, k, k, generator=gen) * 0.05).to(dtype).to("vkml").requires_grad_()

    def fwd():
        return F.conv2d(x, w, stride=s, padding=k // 2)

    g = torch.ones_like(fwd())

    def grads(*wrt):
        return lambda: torch.autograd.grad(F.conv2d(x, w, stride=s, padding=k // 2), wrt, g)

    # fwd+dx and fwd+dw apart show which gradient a slow fwd+bwd row spends its time in.
    return [("fwd", fwd), ("fwd+bwd", grads(x, w)), ("fwd+dx", grads(x)), ("fwd+dw", grads(w))]


def algorithm_settings(mode: str) -> dict[str, str]:
    """The settings that select one algorithm. default: the policy's choice; winograd (winograd2,
    winograd4: that output tile): Winograd where it applies, the implicit GEMMs elsewhere;
    im2col / implicit: that algorithm with Winograd off."""
    if mode == "default":
        return {"VKML_CONV": "auto", "VKML_CONV_WINOGRAD": "auto"}
    if mode.startswith("winograd"):
        tile = mode[len("winograd"):]
        return {"VKML_CONV": "auto", "VKML_CONV_WINOGRAD": "1", **(
            {"VKML_CONV_WINOGRAD_TILE": tile} if tile else {})}
    if mode in ("im2col", "implicit"):
        return {"VKML_CONV": mode, "VKML_CONV_WINOGRAD": "0"}
    raise SystemExit(f"unknown algorithm {mode!r}: im2col, implicit, winograd[2|4], default")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--json", default="")
    ap.add_argument("--passes", default="fwd,fwd+bwd,fwd+dx,fwd+dw", help="comma-separated")
    ap.add_argument("--algos", default="im2col,implicit,default",
                    help="comma-separated: im2col, implicit, winograd[2|4], default")
    add_timing_args(ap)
    args = ap.parse_args()
    apply_timing_args(args)
    dtype = getattr(torch, args.dtype)
    small = cpu_device()
    layers = RESNET18 + RESNET50
    if small:  # lavapipe: a few samples of the smaller layers
        layers = [(ci, co, k, s, min(hw, 16), 4) for ci, co, k, s, hw, _ in RESNET18[:4]]
    algos = args.algos.split(",")
    settings = {mode: algorithm_settings(mode) for mode in algos}
    rows = []
    print(f"{'layer':34} {'pass':9} " + " ".join(f"{a + ' ms':>12}" for a in algos) +
          f" {'im2col/impl':>11}")
    for cin, cout, k, s, hw, batch in layers:
        tag = f"{cin}->{cout} k{k}s{s} @{hw} b{batch}"
        for name, fn in layer_runs(cin, cout, k, s, hw, batch, dtype):
            if name not in args.passes.split(","):
                continue
            ms = {a: float("nan") for a in ("im2col", "implicit", "winograd", "default", *algos)}
            for mode in algos:
                with torch_vkml.config.override(**settings[mode]):
                    ms[mode] = median_seconds(fn, "vkml", repeat=5 if small else 10) * 1e3
            ratio = ms["im2col"] / ms["implicit"]
            rows.append(dict(layer=tag, pass_=name, ratio=ratio,
                             **{f"{a}_ms": t for a, t in ms.items()}))
            print(f"{tag:34} {name:9} " + " ".join(f"{ms[a]:12.3f}" for a in algos) +
                  f" {ratio:11.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch_vkml.device_name(), dtype=args.dtype, rows=rows), f,
                      indent=1)


if __name__ == "__main__":
    main()
