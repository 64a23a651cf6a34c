"""Data-parallel scaling: vkml on 1 and 2 GPUs beside CUDA on 1 GPU and NCCL on 2, one command.

    PYTHONPATH=. python bench/bench_ddp.py [--small] [--only resnet50,vit,gpt2] [--gpus 2]
        [--steps 10] [--check-steps 20] [--json out.json]

Workloads, per GPU (the global batch grows with the number of GPUs):
- ResNet-50 training, batch 128 at 224x224, SGD, DistributedDataParallel;
- ViT-B/16 training, batch 64 at 224x224, AdamW, DistributedDataParallel;
- GPT-2-small-sized decoder training, batch 8 x 512 tokens, AdamW, FSDP2 (fully_shard per block).
Each run is `torch.distributed.run --standalone --nproc_per_node=N` of this file in worker mode:
one rank per device (`vkml:LOCAL_RANK` / `cuda:LOCAL_RANK`), the "vkml" backend (host staging +
Gloo) or NCCL. CUDA runs in processes that never import vkml. Throughput is samples per second
over --steps steps after --warmup steps; scaling efficiency is throughput on N GPUs / (N x
throughput on 1).

The correctness check trains a small ViT (LayerNorm only, so the statistics of a shard and of the
global batch agree) for --check-steps steps with DDP on N ranks and, on rank 0, on the global
batch in one process, and compares the parameters within float32 summation tolerance.

--small shrinks every model for lavapipe. With one GPU, VKML_DEVICE_ORDER=0,0 gives vkml two
logical devices on it, which exercises the same code (the timings then mean nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import model_defs as md  # noqa: E402

MODELS = ("resnet50", "vit", "gpt2")


def build(name: str, small: bool):
    """(model, per-GPU batch maker(step, rank) -> (x, y), loss, optimizer name)."""
    torch.manual_seed(0)  # identical initial parameters on every rank
    if name == "resnet50":
        model = md.resnet50(10, 16, [1, 1, 1, 1]) if small else md.resnet50()
        b, res, classes = (4, 32, 10) if small else (128, 224, 1000)
        return model, images(b, res, classes), F.cross_entropy, "sgd"
    if name == "vit":
        model = md.ViT(32, 8, 64, 2, 4, 10) if small else md.ViT()
        b, res, classes = (4, 32, 10) if small else (64, 224, 1000)
        return model, images(b, res, classes), F.cross_entropy, "adamw"
    if name == "gpt2":
        model = md.GPT(512, 128, 64, 2, 4) if small else md.GPT()
        b, t, vocab = (2, 64, 512) if small else (8, 512, 50257)

        def lm_loss(logits, y):
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

        return model, tokens(b, t, vocab), lm_loss, "adamw"
    raise SystemExit(f"unknown model {name!r}; choose from {', '.join(MODELS)}")


def images(b: int, res: int, classes: int):
    def make(step: int, rank: int):
        g = torch.Generator().manual_seed(10_000 * step + rank)
        x = torch.randn(b, 3, res, res, generator=g)
        return x, torch.randint(0, classes, (b,), generator=g)

    return make


def tokens(b: int, t: int, vocab: int):
    def make(step: int, rank: int):
        g = torch.Generator().manual_seed(10_000 * step + rank)
        seq = torch.randint(0, vocab, (b, t + 1), generator=g)
        return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()

    return make


def optimizer(name: str, params):
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    return torch.optim.AdamW(params, lr=1e-4)


# ---- worker: one rank --------------------------------------------------------------------------

def setup(device_type: str) -> tuple[torch.device, int, int]:
    local = int(os.environ.get("LOCAL_RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if device_type == "vkml":
        import torch_vkml

        torch_vkml.set_device(local)
    else:
        torch.cuda.set_device(local)
    if world > 1:
        dist.init_process_group("vkml" if device_type == "vkml" else "nccl")
    return torch.device(device_type, local), int(os.environ.get("RANK", "0")), world


def synchronize(device: torch.device) -> None:
    if device.type == "vkml":
        import torch_vkml

        torch_vkml.synchronize()
    else:
        torch.cuda.synchronize()


def wrap(name: str, model: torch.nn.Module, world: int) -> torch.nn.Module:
    if world == 1:
        return model
    if name == "gpt2":
        from torch.distributed.fsdp import fully_shard

        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        return model
    return torch.nn.parallel.DistributedDataParallel(model)


def throughput(args) -> dict:
    device, rank, world = setup(args.device)
    model, batch, loss_fn, opt_name = build(args.model, args.small)
    model = wrap(args.model, model.to(device), world)
    opt = optimizer(opt_name, model.parameters())
    data = [tuple(t.to(device) for t in batch(s, rank)) for s in range(2)]

    def step(i: int) -> torch.Tensor:
        x, y = data[i % len(data)]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for i in range(args.warmup):
        step(i)
    synchronize(device)
    if world > 1:
        dist.barrier()
    start = time.perf_counter()
    for i in range(args.steps):
        last = step(i)
    final = last.item()
    synchronize(device)
    elapsed = time.perf_counter() - start
    per_gpu = data[0][0].shape[0]
    return {"samples_per_s": args.steps * per_gpu * world / elapsed,
            "step_ms": elapsed / args.steps * 1e3, "loss": final}


def check(args) -> dict:
    """DDP on `world` ranks against the global batch in one process, for --check-steps steps."""
    device, rank, world = setup(args.device)

    def fresh():
        torch.manual_seed(0)
        return md.ViT(32, 8, 64, 2, 4, 10).to(device)

    make = images(4, 32, 10)
    ddp = torch.nn.parallel.DistributedDataParallel(fresh()) if world > 1 else fresh()
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    for s in range(args.check_steps):
        x, y = make(s, rank)
        opt.zero_grad()
        F.cross_entropy(ddp(x.to(device)), y.to(device)).backward()
        opt.step()
    model = ddp.module if world > 1 else ddp
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).cpu()
    if rank != 0:
        return {}
    ref = fresh()
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    for s in range(args.check_steps):
        parts = [make(s, r) for r in range(world)]
        x, y = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
        ref_opt.zero_grad()
        F.cross_entropy(ref(x.to(device)), y.to(device)).backward()
        ref_opt.step()
    ref_flat = torch.cat([p.detach().reshape(-1) for p in ref.parameters()]).cpu()
    diff = (flat - ref_flat).abs().max().item()
    scale = ref_flat.abs().max().item()
    return {"max_abs_diff": diff, "max_abs_param": scale, "ok": diff <= 1e-4 * max(scale, 1.0)}


def worker(args) -> None:
    result = check(args) if args.check else throughput(args)
    if int(os.environ.get("RANK", "0")) == 0:
        Path(args.result).write_text(json.dumps(result))
    if dist.is_initialized():
        dist.destroy_process_group()


# ---- driver ------------------------------------------------------------------------------------

def child_env() -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path)


def launch(args, device: str, gpus: int, model: str, check_mode: bool = False) -> dict | None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc_per_node={gpus}", __file__, "--worker", "--device", device,
               "--model", model, "--result", str(out), "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--check-steps", str(args.check_steps)]
        cmd += ["--small"] * args.small + ["--check"] * check_mode
        proc = subprocess.run(cmd, env=child_env(), capture_output=True, text=True,
                              timeout=args.timeout)
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stdout + proc.stderr)[-2000:]
            print(f"  {device} x{gpus} {model}: failed ({proc.returncode})\n{tail}", flush=True)
            return None
        return json.loads(out.read_text())


def vkml_devices() -> int:
    code = "import torch_vkml; print(torch_vkml.device_count())"
    proc = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True,
                          text=True)
    return int(proc.stdout.strip() or 0) if proc.returncode == 0 else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--small", action="store_true", help="reduced sizes (lavapipe)")
    ap.add_argument("--only", default=",".join(MODELS), help="comma-separated: " + ",".join(MODELS))
    ap.add_argument("--gpus", type=int, default=2, help="GPUs of the multi-GPU runs")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--check-steps", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=900, help="seconds per launched run")
    ap.add_argument("--json", default="", help="write the results here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--check", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--device", default="vkml", help=argparse.SUPPRESS)
    ap.add_argument("--model", default="vit", help=argparse.SUPPRESS)
    ap.add_argument("--result", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return

    devices = [("vkml", vkml_devices())]
    if torch.cuda.is_available():
        devices.append(("cuda", torch.cuda.device_count()))
    results: dict = {"gpus": args.gpus, "small": args.small, "runs": {}, "check": {}}
    print(f"{'model':<10}{'device':<7}{'1 GPU /s':>12}{f'{args.gpus} GPUs /s':>12}{'scaling':>9}")
    for model in args.only.split(","):
        for device, count in devices:
            one = launch(args, device, 1, model)
            many = launch(args, device, args.gpus, model) if count >= args.gpus else None
            eff = None
            if one and many:
                eff = many["samples_per_s"] / (args.gpus * one["samples_per_s"])
            results["runs"][f"{model}/{device}"] = {"1": one, str(args.gpus): many, "scaling": eff}
            fmt = lambda r: f"{r['samples_per_s']:12.1f}" if r else f"{'-':>12}"  # noqa: E731
            print(f"{model:<10}{device:<7}{fmt(one)}{fmt(many)}"
                  f"{(f'{eff:9.2f}' if eff is not None else f'{chr(45):>9}')}", flush=True)
    for device, count in devices:
        if count >= args.gpus:
            results["check"][device] = launch(args, device, args.gpus, "vit", check_mode=True)
            print(f"check {device} x{args.gpus} vs 1 process on the global batch, "
                  f"{args.check_steps} steps: {results['check'][device]}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    failed = [k for k, v in results["check"].items() if not (v and v.get("ok"))]
    if failed:
        raise SystemExit(f"correctness check failed on: {', '.join(failed)}")


if __name__ == "__main__":
    main()
