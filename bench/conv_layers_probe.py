"""Where a model's convolution time goes, layer by layer, on vkml beside CUDA: every distinct
conv2d of ResNet-50 inference (224x224, NCHW; found by forward hooks on bench.model_defs) timed
alone, forward only, as median ms per call after warm-up, times the number of such layers in
the model, with the kernels each one ran (torch_vkml.profiler). The sum shows which layers hold
a model's gap to CUDA.

    PYTHONPATH=. python bench/conv_layers_probe.py [--batch 64] [--dtype float32]
"""

from __future__ import annotations

import argparse
from collections import Counter

import torch
import torch.nn.functional as F

import torch_vkml  # noqa: F401  (registers the vkml device)
import torch_vkml.profiler
from bench.model_defs import resnet50
from bench.timing import median_seconds


def conv_layers(batch: int) -> Counter:
    """(cin, cout, kernel, stride, padding, input hw, batch) -> how many such layers."""
    found: Counter = Counter()
    model = resnet50()

    def hook(mod, inputs, _out):
        x = inputs[0]
        found[(mod.in_channels, mod.out_channels, mod.kernel_size[0], mod.stride[0],
               mod.padding[0], x.shape[-1], batch)] += 1

    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            m.register_forward_hook(hook)
    with torch.no_grad():
        model(torch.randn(1, 3, 224, 224))
    return found


def layer_fn(key, dtype, dev):
    cin, cout, k, s, p, hw, n = key
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, hw, hw, generator=g).to(dtype).to(dev)
    w = (torch.randn(cout, cin, k, k, generator=g) * 0.05).to(dtype).to(dev)
    return lambda: F.conv2d(x, w, stride=s, padding=p)


def kernels(fn) -> str:
    fn()
    torch.vkml.synchronize()
    with torch_vkml.profiler.profile() as prof:
        fn()
        torch.vkml.synchronize()
    return ",".join(f"{name}x{count}" for name, (count, _) in sorted(prof.times.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--dtype", default="float32")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    cuda = torch.cuda.is_available()
    layers = conv_layers(args.batch)
    print(f"ResNet-50 conv2d layers, batch {args.batch}, {args.dtype}; ms per call, x count")
    print(f"{'cin':>5} {'cout':>5} {'k':>2} {'s':>2} {'hw':>4} {'n':>3} {'vkml':>8} {'cuda':>8} "
          f"{'ratio':>6} {'sum vk':>8} {'sum cu':>8}  kernels")
    tot_vk = tot_cu = 0.0
    with torch.no_grad():
        for key, count in layers.items():
            fn = layer_fn(key, dtype, "vkml")
            vk = median_seconds(fn, "vkml", warmup=3, repeat=10, min_seconds=0.2) * 1e3
            cu = float("nan")
            if cuda:
                cu = median_seconds(layer_fn(key, dtype, "cuda"), "cuda", warmup=3, repeat=10,
                                    min_seconds=0.2) * 1e3
            tot_vk += vk * count
            tot_cu += cu * count
            cin, cout, k, s, _p, hw, n = key
            print(f"{cin:5d} {cout:5d} {k:2d} {s:2d} {hw:4d} {n:3d} {vk:8.3f} {cu:8.3f} "
                  f"{cu / vk:6.2f} {vk * count:8.3f} {cu * count:8.3f}  {kernels(fn)}", flush=True)
    print(f"total over {sum(layers.values())} layers: vkml {tot_vk:.3f} ms, cuda {tot_cu:.3f} ms")


if __name__ == "__main__":
    if torch.cuda.is_available():
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = False
    main()
