"""Mixed precision on vkml: the ViT of train_vit.py trained in fp32, under autocast fp16 with
torch.amp.GradScaler("vkml"), and under autocast bf16 - same initial weights, same batches.

How closely two runs can agree is limited by the training itself: a chaotic optimisation turns one
rounding difference into a different trajectory after enough steps. So a fourth run, fp32 from
starting weights moved by one ulp ("fp32 spread"), measures that limit on the same device. The checks:
- step by step, over the first --compare-steps steps, but only while the fp32 spread stays under
  --horizon (relative): every fp16/bf16 loss within --fp16-tolerance / --bf16-tolerance of fp32
  (half precision rounds activations to 11 (fp16) or 8 (bf16) significant bits);
- on runs longer than 40 steps, the mean loss of the last 20 steps within --final-tolerance of
  fp32's, or within twice the fp32 spread run's own gap when that is larger (stated in the output).
Then the time per step (the speed gain where the device has fast half-precision math). The learning
rate warms up linearly over the first tenth of the steps, as ViT recipes do.

    python examples/amp_training.py --steps 30 --batch-size 256
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import example_utils as eu  # noqa: E402
import fashion_mnist  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from train_vit import ViT  # noqa: E402

import torch_vkml  # noqa: E402

MODES = ("fp32", "fp16", "bf16")


def train(model: torch.nn.Module, batches, mode: str, dev: torch.device, lr: float):
    """Trains in one precision mode; returns (losses, seconds per step after the warm-up steps)."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    warmup = max(1, len(batches) // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup))
    scaler = torch.amp.GradScaler("vkml", enabled=mode == "fp16")
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(mode)
    losses, times = [], []
    for xb, yb in batches:
        t0 = time.perf_counter()
        with torch.autocast("vkml", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = F.cross_entropy(model(xb.to(dev)), yb.to(dev))
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        sched.step()
        losses.append(loss.item())  # syncs: the step's time is complete
        times.append(time.perf_counter() - t0)
    warm = times[2:] or times  # the first steps compile pipelines
    return losses, sum(warm) / len(warm)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    gpu = eu.on_gpu()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    eu.add_device_arg(ap)
    ap.add_argument("--steps", type=int, default=30 if gpu else 8)
    ap.add_argument("--batch-size", type=int, default=256 if gpu else 64)
    # On a GPU the model is wide enough for its matrix products to dominate (where fp16/bf16 pay).
    ap.add_argument("--dim", type=int, default=384 if gpu else 64)
    ap.add_argument("--depth", type=int, default=6 if gpu else 2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument(
        "--fp16-tolerance",
        type=float,
        default=0.02,
        help="largest relative loss deviation of the fp16 run from fp32",
    )
    ap.add_argument(
        "--bf16-tolerance",
        type=float,
        default=0.05,
        help="largest relative loss deviation of the bf16 run from fp32",
    )
    ap.add_argument("--compare-steps", type=int, default=30, help="steps compared one by one")
    ap.add_argument(
        "--horizon",
        type=float,
        default=1e-2,
        help="steps are compared one by one while the fp32 spread run stays within this of fp32",
    )
    ap.add_argument(
        "--final-tolerance",
        type=float,
        default=0.05,
        help="relative difference of the last 20 steps' mean loss from fp32 (runs > 40 steps)",
    )
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    dev = eu.get_device(args.device)
    x, y = fashion_mnist.load("train", args.steps * args.batch_size)
    batches = [
        (x[i : i + args.batch_size], y[i : i + args.batch_size])
        for i in range(0, args.steps * args.batch_size, args.batch_size)
    ]
    torch.manual_seed(args.seed)
    init = ViT(dim=args.dim, depth=args.depth, heads=args.heads)
    print(
        f"ViT dim {args.dim}, depth {args.depth}: {args.steps} steps of batch {args.batch_size}; "
        f"bf16 supported natively: {torch_vkml.is_bf16_supported()}"
    )

    losses, step_time = {}, {}
    for mode in MODES:
        losses[mode], step_time[mode] = train(
            copy.deepcopy(init).to(dev), batches, mode, dev, args.lr
        )
    moved = eu.move_by_one_ulp_(copy.deepcopy(init), args.seed + 1)
    spread, _ = train(moved.to(dev), batches, "fp32", dev, args.lr)
    rel_spread = [abs(a - b) / abs(b) for a, b in zip(spread, losses["fp32"], strict=True)]

    print(f"\n{'step':>5} " + " ".join(f"{m:>10}" for m in MODES) + f" {'fp32 spread':>12}")
    for s in range(args.steps):
        print(f"{s:>5} " + " ".join(f"{losses[m][s]:>10.5f}" for m in MODES)
              + f" {rel_spread[s]:>12.1e}")
    # The compared steps: the first --compare-steps, cut where the fp32 spread passes --horizon.
    horizon = next((s for s, r in enumerate(rel_spread) if r > args.horizon), args.steps)
    compared = max(1, min(args.compare_steps, horizon))
    print(f"\nfp32 spread: fp32 from starting weights moved by one ulp, relative to fp32; it passes "
          f"{args.horizon:.0e} at step {horizon if horizon < args.steps else 'never'}")
    ok = True
    deviation = {}
    for mode, tol in (("fp16", args.fp16_tolerance), ("bf16", args.bf16_tolerance)):
        first = list(zip(losses[mode], losses["fp32"], strict=True))[:compared]
        deviation[mode] = max(abs(a - b) / abs(b) for a, b in first)
        ok &= eu.check(
            deviation[mode] <= tol,
            f"{mode}: max relative loss deviation from fp32 over steps 0-{compared - 1} "
            f"{deviation[mode]:.2e} (tolerance {tol:.0e}; fp32 spread there "
            f"{max(rel_spread[:compared]):.1e})",
        )
        if args.steps > 40:
            ref_level = sum(losses["fp32"][-20:]) / 20
            level = sum(losses[mode][-20:]) / 20
            gap = abs(level - ref_level) / ref_level
            spread_gap = abs(sum(spread[-20:]) / 20 - ref_level) / ref_level
            tol_final = max(args.final_tolerance, 2 * spread_gap)
            ok &= eu.check(
                gap <= tol_final,
                f"{mode}: mean loss of the last 20 steps {level:.4f} vs fp32 {ref_level:.4f}, "
                f"relative {gap:.2e} (tolerance {tol_final:.1e}: the larger of "
                f"{args.final_tolerance:.0e} and twice the fp32 spread run's {spread_gap:.1e})",
            )
    print("\ntime per step (after 2 warm-up steps):")
    for mode in MODES:
        print(
            f"  {mode}: {step_time[mode] * 1e3:8.1f} ms  "
            f"({step_time['fp32'] / step_time[mode]:.2f}x fp32)"
        )
    fallbacks = eu.report_fallbacks()
    return {
        "ok": ok and not fallbacks,
        "losses": losses,
        "deviation": deviation,
        "step_time": step_time,
        "spread": rel_spread,
        "fallbacks": fallbacks,
    }


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)
