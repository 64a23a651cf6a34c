"""ResNet-50's 1x1 convolutions (forward, batch 64) per sample as now, and folded over the batch
(VKML_CONV_FOLD=1), against the reference backend (CUDA where present, else the CPU). Each
folded result is checked against the default one first. Medians of timed repeats after warm-up.

    PYTHONPATH=. python bench/bench_conv_fold.py [--dtype float16] [--batch 64]
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.nn.functional as F
import torch_vkml  # noqa: F401  (registers the vkml device)

from bench.timing import cpu_device, median_seconds, reference_device

# (C_in, C_out, stride, input size): the 1x1 layers of ResNet-50 whose output planes are
# under 1,024 positions (where the fold applies), and one 56x56 layer where it does not.
LAYERS = [(256, 128, 1, 56), (512, 128, 1, 28), (128, 512, 1, 28), (256, 512, 2, 56),
          (512, 256, 1, 28), (1024, 256, 1, 14), (256, 1024, 1, 14), (512, 1024, 2, 28),
          (1024, 512, 1, 14), (2048, 512, 1, 7), (512, 2048, 1, 7), (1024, 2048, 2, 14)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dtype", default="float16", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--batch", type=int, default=2 if cpu_device() else 64)
    args = ap.parse_args()
    dtype, ref = getattr(torch, args.dtype), reference_device()
    print(f"1x1 convolutions, {args.dtype}, batch {args.batch}; ms per forward")
    print(f"{'layer':>22} {'per sample':>11} {'folded':>9} {ref:>9} {'fold gain':>10}")
    gen = torch.Generator().manual_seed(0)
    for cin, cout, stride, hw in LAYERS:
        x = torch.randn(args.batch, cin, hw, hw, generator=gen).to(dtype)
        w = (torch.randn(cout, cin, 1, 1, generator=gen) * cin**-0.5).to(dtype)
        b = torch.randn(cout, generator=gen).to(dtype)
        xv, wv, bv = x.to("vkml"), w.to("vkml"), b.to("vkml")
        times = {}
        for fold in ("0", "1"):
            os.environ["VKML_CONV_FOLD"] = fold
            times[fold] = median_seconds(lambda: F.conv2d(xv, wv, bv, stride=stride), "vkml") * 1e3
            out = F.conv2d(xv, wv, bv, stride=stride).cpu().float()
            if fold == "0":
                base = out
            else:
                err = ((out - base).abs().max() / base.abs().max()).item()
                assert err < 1e-2, f"folded result differs by {err:.2e}"
        os.environ.pop("VKML_CONV_FOLD")
        xr, wr, br = x.to(ref), w.to(ref), b.to(ref)
        if ref == "cpu":  # the CPU's half convolutions are slow or missing: fp32 there
            xr, wr, br = xr.float(), wr.float(), br.float()
        ref_ms = median_seconds(lambda: F.conv2d(xr, wr, br, stride=stride), ref) * 1e3
        name = f"{cin}->{cout} /{stride} @{hw}"
        print(f"{name:>22} {times['0']:>11.3f} {times['1']:>9.3f} {ref_ms:>9.3f} "
              f"{times['0'] / times['1']:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
