"""Data-parallel training on vkml: `torchrun --nproc_per_node=2 examples/ddp_train.py`.

Each rank trains the same MLP with DistributedDataParallel on its shard of every global batch;
gradients are averaged by the "vkml" torch.distributed backend (host staging + Gloo). Ranks
share the machine's vkml devices round-robin (two ranks on one GPU is fine). At the end the
ranks compare parameters (they must be identical); with --check rank 0 also trains the model on
the global batches in one process and prints PASS or FAIL against it, then samples/s.
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
from torch import nn

import torch_vkml


def make_model(width: int, depth: int, features: int, classes: int) -> nn.Module:
    torch.manual_seed(0)  # the same initial parameters on every rank and in the reference
    layers: list[nn.Module] = [nn.Linear(features, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, classes))


def global_batch(
    step: int, size: int, features: int, classes: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """A synthetic, learnable batch: labels from a fixed random linear map of the inputs."""
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(size, features, generator=g)
    w = torch.randn(features, classes, generator=torch.Generator().manual_seed(7))
    return x, (x @ w).argmax(1)


def train(
    model: nn.Module, args: argparse.Namespace, rank: int, world: int, device: torch.device
) -> tuple[list[float], float]:
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    losses, start = [], 0.0
    for step in range(args.steps):
        if step == 1:  # the first step compiles pipelines; time the rest
            torch_vkml.synchronize()
            start = time.perf_counter()
        x, y = global_batch(step, args.batch, args.features, args.classes)
        n = args.batch // world
        x, y = x[rank * n : (rank + 1) * n].to(device), y[rank * n : (rank + 1) * n].to(device)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    torch_vkml.synchronize()
    elapsed = time.perf_counter() - start
    return losses, (args.steps - 1) * args.batch / elapsed if args.steps > 1 else 0.0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=64, help="global batch (split over the ranks)")
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--features", type=int, default=32)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--lr", type=float, default=0.2)
    p.add_argument("--check", action="store_true", help="compare with single-process training")
    p.add_argument("--tol", type=float, default=1e-5)
    args = p.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("vkml", local_rank % torch_vkml.device_count())
    torch_vkml.set_device(device)
    # "vkml" handles CPU tensors too. backend=None picks it as well where vkml is the machine's
    # accelerator, but picks NCCL on a machine that also has CUDA.
    dist.init_process_group("vkml")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert args.batch % world == 0, "--batch must divide by the number of ranks"

    model = make_model(args.width, args.depth, args.features, args.classes).to(device)
    ddp = nn.parallel.DistributedDataParallel(model)
    losses, rate = train(ddp, args, rank, world, device)

    flat = torch.cat([q.detach().reshape(-1) for q in model.parameters()])
    everyone = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(everyone, flat)
    agree = all(torch.equal(everyone[0].cpu(), e.cpu()) for e in everyone)
    if rank == 0:
        print(
            f"backend {dist.get_backend_config()}, {world} ranks on "
            f"{torch_vkml.device_name(device)}"
        )
        print(
            f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {args.steps} steps, "
            f"{rate:.0f} samples/s across ranks"
        )
        print("ranks agree" if agree else "RANKS DISAGREE")
    ok = agree
    if args.check and rank == 0:
        ref = make_model(args.width, args.depth, args.features, args.classes).to(device)
        _, ref_rate = train(ref, args, 0, 1, device)
        ref_flat = torch.cat([q.detach().reshape(-1) for q in ref.parameters()]).cpu()
        err = (ref_flat - flat.cpu()).abs().max().item()
        ok = agree and err <= args.tol
        print(f"single process: {ref_rate:.0f} samples/s; max |param difference| {err:.2e}")
        print("PASS" if ok else "FAIL")
    dist.destroy_process_group()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
