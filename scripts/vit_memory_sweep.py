"""ViT-Base/16 training at growing batch sizes until torch.OutOfMemoryError, then recovery.

Run on a real GPU (the H200): one timed AdamW step at batch 256, then the batch doubles until
allocation fails, is refined between the last size that fit and the first that did not, and a
step at the largest size that fit runs again after the error. Prints one line per attempt and a
summary; exits non-zero if the step at 256 fails, if no OOM is reached, or if recovery fails.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch_vkml  # noqa: E402
from bench import model_defs as md  # noqa: E402


def step(model, opt, batch: int) -> float:
    x = torch.randn(batch, 3, 224, 224, device="vkml")
    y = torch.randint(0, 1000, (batch,), device="vkml")
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def attempt(model, opt, batch: int) -> tuple[bool, float, str]:
    t0 = time.perf_counter()
    try:
        loss = step(model, opt, batch)
        return True, time.perf_counter() - t0, f"loss {loss:.3f}"
    except torch.OutOfMemoryError as e:
        gc.collect()
        torch_vkml.empty_cache()
        return False, time.perf_counter() - t0, str(e).splitlines()[0][:160]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--start", type=int, default=256)
    ap.add_argument("--max-batch", type=int, default=16384)
    ap.add_argument("--refine", type=int, default=3, help="bisection steps after the first OOM")
    args = ap.parse_args()

    torch.manual_seed(0)
    model = md.ViT().to("vkml")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    torch_vkml.reset_fallback_stats()

    ok, secs, msg = attempt(model, opt, args.start)  # first step: pipelines get created
    if ok:  # time the second
        ok, secs, msg = attempt(model, opt, args.start)
    print(f"batch {args.start}: {'ok' if ok else 'FAILED'} {secs * 1e3:.0f} ms/step ({msg})", flush=True)
    if not ok:
        return 1

    fits, fails = args.start, None
    batch = args.start * 2
    while batch <= args.max_batch:
        ok, secs, msg = attempt(model, opt, batch)
        print(f"batch {batch}: {'ok' if ok else 'OOM'} {secs:.1f} s ({msg})", flush=True)
        if not ok:
            fails = batch
            break
        fits, batch = batch, batch * 2
    if fails is None:
        print(f"no OOM up to batch {args.max_batch}")
        return 1
    oom_message = msg
    for _ in range(args.refine):
        mid = (fits + fails) // 2
        ok, secs, msg = attempt(model, opt, mid)
        print(f"batch {mid}: {'ok' if ok else 'OOM'} {secs:.1f} s ({msg})", flush=True)
        fits, fails = (mid, fails) if ok else (fits, mid)

    ok, secs, msg = attempt(model, opt, fits)
    stats = torch_vkml.memory_stats()
    print(f"recovery at batch {fits}: {'ok' if ok else 'FAILED'} {secs:.1f} s ({msg})")
    print(f"largest batch that fits: {fits} (first OOM at {fails}); num_ooms {stats['num_ooms']}; "
          f"peak reserved {torch_vkml.max_memory_reserved() / 2**30:.1f} GiB; "
          f"fallbacks {torch_vkml.fallback_stats()}")
    print(f"OOM message: {oom_message}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
