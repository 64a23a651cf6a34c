"""Where a mixed-precision training step goes: the ViT of examples/amp_training.py (dim 384, depth 6,
batch 256 by default) in fp32, fp16 and bf16 autocast. With --device vkml: step times, then one
profiled step per mode (kernels timed alone, top N). With --device cuda: step times only. Run both in
separate processes (CUDA's autograd and vkml do not share a process well).

    PYTHONPATH=. python scripts/diag_amp_profile.py --device vkml --top 15
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
if "--device" in sys.argv and sys.argv[sys.argv.index("--device") + 1] == "cuda":
    # CUDA's autograd and vkml must not share a process: keep example_utils (which loads
    # torch_vkml) out; train_vit only uses it inside functions this script does not call.
    import types
    sys.modules["example_utils"] = types.ModuleType("example_utils")
from train_vit import ViT  # noqa: E402


def make_step(model, opt, scaler, dtype, dev, x, y):
    def step():
        with torch.autocast(dev.type, dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss
    return step


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="vkml")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    if args.device == "vkml":
        import torch_vkml  # noqa: F401
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else __import__("torch_vkml").synchronize
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(args.batch, 1, 28, 28, generator=gen).to(dev)
    y = torch.randint(0, 10, (args.batch,), generator=gen).to(dev)
    for mode, dtype in (("fp32", None), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
        torch.manual_seed(0)
        model = ViT(dim=args.dim, depth=args.depth, heads=args.heads).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        scaler = torch.amp.GradScaler(dev.type, enabled=mode == "fp16")
        step = make_step(model, opt, scaler, dtype, dev, x, y)
        for _ in range(3):
            step()
        sync()
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            step()
            sync()
            times.append(time.perf_counter() - t0)
        print(f"{args.device} {mode}: {statistics.median(times) * 1e3:.1f} ms/step", flush=True)
        if args.device == "vkml" and args.top:
            import torch_vkml
            with torch_vkml.profiler.profile() as prof:
                step()
                sync()
            print(prof.table(args.top), flush=True)


if __name__ == "__main__":
    main()
