"""Why examples/demo.py's vkml and CPU losses drift apart after some steps: trains the demo's CNN
on its batches on vkml, on the CPU in float32 and on the CPU in float64, and prints per step the
relative loss differences, the parameter whose gradient differs most (vkml vs CPU float32, next to
CPU float32 vs float64), the largest relative weight difference after the step, and every max-pool
choice that differs between the vkml and CPU float32 runs, with the two values it chose between.

A flip between values within a rounding error of each other (a near tie) sends a gradient to another
position: that is float32 arithmetic, not a semantic difference; a flip between clearly different
values would be a bug.

    python scripts/demo_divergence.py [--steps 20] [--lr 0.05]
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import fashion_mnist  # noqa: E402
from demo import SmallCNN  # noqa: E402

import torch_vkml  # noqa: E402


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.detach().cpu().double(), b.detach().cpu().double()
    return ((a - b).norm() / b.norm().clamp_min(1e-300)).item()


def pool_choices(model, xb) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(ReLU output, max-pool indices) of both pooling layers, as the model's forward has them."""
    with torch.no_grad():
        r1 = F.relu(model.conv1(xb))
        p1, i1 = F.max_pool2d(r1, 2, return_indices=True)
        r2 = F.relu(model.conv2(p1))
        _, i2 = F.max_pool2d(r2, 2, return_indices=True)
    return [(r1.cpu(), i1.cpu()), (r2.cpu(), i2.cpu())]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--train-size", type=int, default=1536)
    args = ap.parse_args(argv)

    x, y = fashion_mnist.load("train", args.train_size)
    torch.manual_seed(0)  # as demo.py: same initial weights and batch order
    init = SmallCNN()
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(1))
    dev = torch_vkml.device()
    runs = {"vkml": (dev, torch.float32), "cpu32": ("cpu", torch.float32),
            "cpu64": ("cpu", torch.float64)}
    models = {k: copy.deepcopy(init).to(device=d, dtype=t) for k, (d, t) in runs.items()}
    opts = {k: torch.optim.SGD(m.parameters(), lr=args.lr, momentum=0.9)
            for k, m in models.items()}

    print(f"{'step':>4} {'loss':>8} {'rel loss diff':>13} {'(cpu32-64)':>10} | "
          f"{'largest gradient difference':>30} {'(cpu32-64)':>10} | weights {'(cpu32-64)':>10}")
    for s in range(args.steps):
        idx = order[s * args.batch_size:(s + 1) * args.batch_size]
        xb, yb = x[idx], y[idx]
        choices = {k: pool_choices(models[k], xb.to(runs[k][0])) for k in ("vkml", "cpu32")}
        loss, grad, weight = {}, {}, {}
        for k, (d, t) in runs.items():
            out = F.cross_entropy(models[k](xb.to(device=d, dtype=t)), yb.to(d))
            opts[k].zero_grad()
            out.backward()
            grad[k] = {n: p.grad.detach().cpu() for n, p in models[k].named_parameters()}
            opts[k].step()
            weight[k] = {n: p.detach().cpu() for n, p in models[k].named_parameters()}
            loss[k] = out.item()
        g_vkml = {n: rel(grad["vkml"][n], grad["cpu32"][n]) for n in grad["vkml"]}
        g_cpu = {n: rel(grad["cpu32"][n], grad["cpu64"][n]) for n in grad["vkml"]}
        worst = max(g_vkml, key=g_vkml.get)
        w_vkml = max(rel(weight["vkml"][n], weight["cpu32"][n]) for n in g_vkml)
        w_cpu = max(rel(weight["cpu32"][n], weight["cpu64"][n]) for n in g_vkml)
        print(f"{s:>4} {loss['cpu32']:>8.5f} {abs(loss['vkml'] / loss['cpu32'] - 1):>13.1e} "
              f"{abs(loss['cpu32'] / loss['cpu64'] - 1):>10.1e} | {worst:>12} "
              f"{g_vkml[worst]:>17.1e} {g_cpu[worst]:>10.1e} | {w_vkml:>7.1e} {w_cpu:>10.1e}")
        for layer, ((rv, iv), (rc, ic)) in enumerate(zip(choices["vkml"], choices["cpu32"],
                                                          strict=True)):
            for n, c in sorted({(n, c) for n, c, *_ in (iv != ic).nonzero().tolist()}):
                for a, b in zip(ic[n, c].flatten().tolist(), iv[n, c].flatten().tolist(),
                                strict=True):
                    if a == b:
                        continue
                    vc, vv = rc[n, c].flatten(), rv[n, c].flatten()
                    print(f"       pool{layer + 1} flip (image {n}, channel {c}): CPU picks {a} "
                          f"({vc[a]:.9g} vs {vc[b]:.9g}), vkml picks {b} "
                          f"({vv[a]:.9g} vs {vv[b]:.9g})")


if __name__ == "__main__":
    main()
