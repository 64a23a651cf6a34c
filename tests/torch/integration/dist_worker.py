"""One rank of a test_distributed.py scenario:
`python dist_worker.py SCENARIO RANK WORLD STORE OUT`.

Each rank joins the "vkml" process group through a FileStore, runs the scenario's checks (every
collective against values computed here in float64 from all ranks' seeded data), saves what the
parent compares across ranks to OUT/rank<RANK>.pt, and exits non-zero on any failure or
Vulkan validation message. Models and data shared with the parent's single-process references
live here too.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist
from torch import nn

import torch_vkml

DEV = "vkml"


# ---- shared models and data (the parent builds its references from these) ----------------------
def make_mlp() -> nn.Module:
    torch.manual_seed(7)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


def make_cnn() -> nn.Module:
    torch.manual_seed(8)
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 25, 3)
    )


def make_transformer() -> nn.Module:
    torch.manual_seed(9)
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def batches(kind: str, global_batch: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed({"mlp": 1, "cnn": 2, "transformer": 3}[kind])
    shape = {"mlp": (6,), "cnn": (2, 5, 5), "transformer": (5, 16)}[kind]
    x = torch.randn(global_batch, *shape, generator=g)
    y = torch.randn(global_batch, *((5, 16) if kind == "transformer" else (3,)), generator=g)
    return x, y


def shard(t: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    n = t.shape[0] // world
    return t[rank * n : (rank + 1) * n]


def sgd_steps(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int) -> list[float]:
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


# ---- collective checks ---------------------------------------------------------------------
def rank_data(r: int, shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Rank r's input of a check: the same on every rank, so each can compute the expectation."""
    g = torch.Generator().manual_seed(1000 * seed + r)
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 2).to(dtype)
    return torch.randint(-20, 20, shape, generator=g, dtype=dtype)


def close(actual: torch.Tensor, expected: torch.Tensor, what: str) -> None:
    assert actual.device.type == DEV, f"{what}: result on {actual.device}"
    a, e = actual.cpu(), expected.to(actual.dtype)
    tol = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}.get(a.dtype, 1e-6)
    if a.dtype.is_floating_point:
        torch.testing.assert_close(a, e, rtol=tol, atol=tol, msg=lambda m: f"{what}: {m}")
    else:
        assert torch.equal(a, e), f"{what}: {a} != {e}"


REDUCE = {
    dist.ReduceOp.SUM: lambda xs: torch.stack(xs).sum(0),
    dist.ReduceOp.AVG: lambda xs: torch.stack(xs).mean(0),
    dist.ReduceOp.MAX: lambda xs: torch.stack(xs).amax(0),
    dist.ReduceOp.MIN: lambda xs: torch.stack(xs).amin(0),
    dist.ReduceOp.PRODUCT: lambda xs: torch.stack(xs).prod(0),
}


def expected_reduce(op, shape, dtype, seed, world):
    xs = [rank_data(r, shape, dtype, seed).to(torch.float64) for r in range(world)]
    return REDUCE[op](xs)


def check_allreduce(rank: int, world: int) -> None:
    seed = 0
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int64):
        for op in REDUCE:
            if op == dist.ReduceOp.AVG and not dtype.is_floating_point:
                continue
            seed += 1
            shape = (37, 29)  # larger than a workgroup, odd sizes
            t = rank_data(rank, shape, dtype, seed).to(DEV)
            dist.all_reduce(t, op=op)
            close(t, expected_reduce(op, shape, dtype, seed, world), f"all_reduce {op} {dtype}")
    # Strided in-place: a column slice of a transposed tensor; the other columns stay untouched.
    seed += 1
    base_cpu = rank_data(rank, (9, 12), torch.float32, seed)
    base = base_cpu.to(DEV)
    view = base.t()[::2]
    dist.all_reduce(view)
    want = base_cpu.clone()
    want.t()[::2] = (
        torch.stack([rank_data(r, (9, 12), torch.float32, seed) for r in range(world)])
        .sum(0)
        .t()[::2]
    )
    close(base, want, "all_reduce strided view")
    # Async: the future's value is the caller's tensor, finished.
    seed += 1
    t = rank_data(rank, (1000,), torch.float32, seed).to(DEV)
    work = dist.all_reduce(t, async_op=True)
    value = work.get_future().wait()
    work.wait()
    assert value[0].data_ptr() == t.data_ptr(), "future value is not the reduced tensor"
    close(t, expected_reduce(dist.ReduceOp.SUM, (1000,), torch.float32, seed, world), "async")
    empty = torch.empty(0, 3, device=DEV)
    dist.all_reduce(empty)
    assert empty.shape == (0, 3)
    # Coalesced: several tensors (one strided) packed into one transfer.
    seeds = [seed + 1, seed + 2, seed + 3]
    shapes = [(4, 6), (33,), (6, 4)]
    ts = [rank_data(rank, s, torch.float32, k).to(DEV) for s, k in zip(shapes, seeds, strict=False)]
    ts[2] = ts[2].t()
    dist.all_reduce_coalesced(ts)
    for t, s, k in zip(ts, shapes, seeds, strict=False):
        exp = expected_reduce(dist.ReduceOp.SUM, s, torch.float32, k, world)
        close(t, exp.t() if s == (6, 4) else exp, "all_reduce_coalesced")


def check_broadcast_gather(rank: int, world: int) -> None:
    for dtype in (torch.float32, torch.float16, torch.int64):
        src = rank_data(1, (8, 10), dtype, 50)
        t = rank_data(rank, (10, 8), dtype, 51).to(DEV).t()  # strided destination
        if rank == 1:
            t.copy_(src.to(DEV))
        dist.broadcast(t, src=1)
        close(t, src, f"broadcast {dtype}")

        outs = [torch.full((6, 5), 7, dtype=dtype, device=DEV) for _ in range(world)]
        outs[0] = torch.zeros(5, 6, dtype=dtype, device=DEV).t()
        dist.all_gather(outs, rank_data(rank, (5, 6), dtype, 52).to(DEV).t())
        for r in range(world):
            close(outs[r], rank_data(r, (5, 6), dtype, 52).t(), f"all_gather {dtype}")

        flat = torch.empty(world * 21, dtype=dtype, device=DEV)
        dist.all_gather_into_tensor(flat, rank_data(rank, (3, 7), dtype, 53).to(DEV))
        close(
            flat,
            torch.cat([rank_data(r, (3, 7), dtype, 53).flatten() for r in range(world)]),
            f"all_gather_into_tensor {dtype}",
        )
    stacked = torch.empty(world, 4, 3, device=DEV)
    dist.all_gather_into_tensor(stacked, rank_data(rank, (4, 3), torch.float32, 54).to(DEV))
    close(
        stacked,
        torch.stack([rank_data(r, (4, 3), torch.float32, 54) for r in range(world)]),
        "all_gather_into_tensor stacked",
    )
    group = dist.distributed_c10d._get_default_group()
    outs = [torch.empty(world * 5, device=DEV), torch.empty(world * 2, 3, device=DEV)]
    ins = [
        rank_data(rank, (5,), torch.float32, 55).to(DEV),
        rank_data(rank, (2, 3), torch.float32, 56).to(DEV),
    ]
    group.all_gather_single_coalesced(outs, ins).wait()
    close(
        outs[0],
        torch.cat([rank_data(r, (5,), torch.float32, 55) for r in range(world)]),
        "ag coalesced",
    )
    close(
        outs[1],
        torch.cat([rank_data(r, (2, 3), torch.float32, 56) for r in range(world)]),
        "ag coalesced",
    )

    gathered = [torch.empty(4, device=DEV) for _ in range(world)] if rank == 1 else None
    dist.gather(rank_data(rank, (4,), torch.float32, 57).to(DEV), gathered, dst=1)
    if rank == 1:
        for r in range(world):
            close(gathered[r], rank_data(r, (4,), torch.float32, 57), "gather")
    scattered = torch.empty(3, 2, device=DEV)
    pieces = (
        [rank_data(r, (3, 2), torch.float32, 58).to(DEV) for r in range(world)]
        if rank == 0
        else None
    )
    dist.scatter(scattered, pieces, src=0)
    close(scattered, rank_data(rank, (3, 2), torch.float32, 58), "scatter")
    t = rank_data(rank, (7,), torch.float32, 59).to(DEV)
    dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    if rank == 0:
        close(t, expected_reduce(dist.ReduceOp.MAX, (7,), torch.float32, 59, world), "reduce")
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank})
    assert objs == [{"rank": r} for r in range(world)], objs


def check_reduce_scatter_alltoall(rank: int, world: int) -> None:
    for dtype, op in (
        (torch.float32, dist.ReduceOp.SUM),
        (torch.float16, dist.ReduceOp.SUM),
        (torch.int64, dist.ReduceOp.MAX),
        (torch.float32, dist.ReduceOp.AVG),
    ):
        full = expected_reduce(op, (world * 6, 5), dtype, 60, world)
        out = torch.empty(5, 6, dtype=dtype, device=DEV).t()  # strided output
        dist.reduce_scatter_tensor(out, rank_data(rank, (world * 6, 5), dtype, 60).to(DEV), op=op)
        close(out, full[rank * 6 : (rank + 1) * 6], f"reduce_scatter_tensor {op} {dtype}")
    ins = [rank_data(rank, (4, 3), torch.float32, 61 + j).to(DEV) for j in range(world)]
    out = torch.empty(4, 3, device=DEV)
    dist.reduce_scatter(out, ins)
    close(
        out,
        expected_reduce(dist.ReduceOp.SUM, (4, 3), torch.float32, 61 + rank, world),
        "reduce_scatter",
    )
    group = dist.distributed_c10d._get_default_group()
    outs = [torch.empty(3, device=DEV), torch.empty(2, 2, device=DEV)]
    ins = [
        rank_data(rank, (world * 3,), torch.float32, 65).to(DEV),
        rank_data(rank, (world * 2, 2), torch.float32, 66).to(DEV),
    ]
    group.reduce_scatter_single_coalesced(outs, ins).wait()
    close(
        outs[0],
        expected_reduce(dist.ReduceOp.SUM, (world * 3,), torch.float32, 65, world)[
            rank * 3 : rank * 3 + 3
        ],
        "rs coalesced",
    )
    close(
        outs[1],
        expected_reduce(dist.ReduceOp.SUM, (world * 2, 2), torch.float32, 66, world)[
            rank * 2 : rank * 2 + 2
        ],
        "rs coalesced",
    )

    sends = [[1, 3], [2, 4]]  # sends[r][j]: rows rank r sends to rank j (uneven)
    inp = rank_data(rank, (sum(sends[rank]), 3), torch.float32, 67).to(DEV)
    out = torch.empty(sum(sends[r][rank] for r in range(world)), 3, device=DEV)
    dist.all_to_all_single(out, inp, [sends[r][rank] for r in range(world)], sends[rank])
    pieces = []
    for r in range(world):
        src = rank_data(r, (sum(sends[r]), 3), torch.float32, 67)
        pieces.append(src[sum(sends[r][:rank]) : sum(sends[r][: rank + 1])])
    close(out, torch.cat(pieces), "all_to_all_single")
    outs = [torch.empty(2, dtype=torch.int64, device=DEV) for _ in range(world)]
    dist.all_to_all(
        outs, [rank_data(rank, (2,), torch.int64, 68 + j).to(DEV) for j in range(world)]
    )
    for r in range(world):
        close(outs[r], rank_data(r, (2,), torch.int64, 68 + rank), "all_to_all")


def check_point_to_point(rank: int, world: int) -> None:
    peer = 1 - rank
    if rank == 0:
        dist.send(rank_data(0, (6, 4), torch.float32, 70).to(DEV).t(), dst=1)
        got = torch.empty(5, dtype=torch.int64, device=DEV)
        dist.recv(got, src=1)
        close(got, rank_data(1, (5,), torch.int64, 71), "recv")
    else:
        got = torch.zeros(6, 4, device=DEV).t()
        dist.recv(got, src=0)
        close(got, rank_data(0, (6, 4), torch.float32, 70).t(), "recv strided")
        dist.send(rank_data(1, (5,), torch.int64, 71).to(DEV), dst=0)
    out = torch.empty(9, device=DEV)
    reqs = [
        dist.isend(rank_data(rank, (9,), torch.float32, 72).to(DEV), dst=peer),
        dist.irecv(out, src=peer),
    ]
    for req in reqs:
        req.wait()
    close(out, rank_data(peer, (9,), torch.float32, 72), "isend/irecv")
    if rank == 0:
        dist.send(rank_data(0, (3,), torch.float32, 73).to(DEV), dst=1)
    else:
        got = torch.empty(3, device=DEV)
        assert dist.recv(got) == 0, "recv from any source: wrong source"
        close(got, rank_data(0, (3,), torch.float32, 73), "recv any source")
    dist.barrier()


def check_functional(rank: int, world: int) -> None:
    """torch.distributed._functional_collectives (DTensor's path) through the same group."""
    import torch.distributed._functional_collectives as fc

    group = dist.group.WORLD
    x = rank_data(rank, (world * 3, 2), torch.float32, 80).to(DEV)
    close(
        fc.all_reduce(x, "sum", group),
        expected_reduce(dist.ReduceOp.SUM, x.shape, torch.float32, 80, world),
        "functional all_reduce",
    )
    close(
        fc.all_gather_tensor(x, 0, group),
        torch.cat([rank_data(r, x.shape, torch.float32, 80) for r in range(world)]),
        "functional all_gather",
    )
    close(
        fc.reduce_scatter_tensor(x, "sum", 0, group),
        expected_reduce(dist.ReduceOp.SUM, x.shape, torch.float32, 80, world)[
            rank * 3 : rank * 3 + 3
        ],
        "functional reduce_scatter",
    )


def scenario_collectives(rank: int, world: int) -> dict:
    check_functional(rank, world)
    check_allreduce(rank, world)
    check_broadcast_gather(rank, world)
    check_reduce_scatter_alltoall(rank, world)
    check_point_to_point(rank, world)
    return {"ok": True}


def scenario_ddp(rank: int, world: int) -> dict:
    out = {}
    for kind, make, kwargs in (
        ("mlp", make_mlp, {}),
        ("mlp_bucket_view", make_mlp, {"gradient_as_bucket_view": True}),
        ("cnn", make_cnn, {"bucket_cap_mb": 1e-4}),
    ):  # one bucket per param
        model = make().to(DEV)
        ddp = nn.parallel.DistributedDataParallel(model, **kwargs)
        x, y = batches(kind.split("_")[0])
        losses = sgd_steps(ddp, shard(x, rank, world).to(DEV), shard(y, rank, world).to(DEV), 5)
        out[kind] = {"losses": losses, "params": [p.detach().cpu() for p in model.parameters()]}
    return out


def scenario_fsdp(rank: int, world: int) -> dict:
    from torch.distributed.fsdp import fully_shard

    model = make_transformer().to(DEV)
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    x, y = batches("transformer")
    losses = sgd_steps(model, shard(x, rank, world).to(DEV), shard(y, rank, world).to(DEV), 3)
    return {"losses": losses}


def main() -> None:
    scenario, rank, world, store, out_dir = sys.argv[1:6]
    rank, world = int(rank), int(world)
    dist.init_process_group("vkml", init_method=f"file://{store}", rank=rank, world_size=world)
    torch.empty(1, device=DEV)  # opens the device: a missing validation layer counts once there
    before = torch_vkml._C.validation_message_count()
    try:
        result = globals()[f"scenario_{scenario}"](rank, world)
        torch_vkml.synchronize()
        messages = torch_vkml._C.validation_message_count() - before
        assert messages == 0, f"{messages} Vulkan validation message(s)"
        torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
