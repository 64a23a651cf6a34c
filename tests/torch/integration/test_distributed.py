"""torch.distributed on vkml: the "vkml" backend (host staging + Gloo) across two processes on this
machine's Vulkan device, DDP and FSDP2 against single-process training, torchrun, and what
nn.DataParallel does with two logical devices. Ranks run tests/torch/integration/dist_worker.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import dist_worker as w
import pytest
import torch
import torch.distributed as dist

import torch_vkml

ROOT = Path(__file__).resolve().parents[3]
WORKER = Path(__file__).with_name("dist_worker.py")
WORLD = 2

pytestmark = pytest.mark.skipif(
    not dist.is_available() or not torch_vkml.is_available(),
    reason="needs torch.distributed and a vkml device",
)


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["VKML_FALLBACK"] = "error"
    env.setdefault("VKML_VALIDATION", "1")
    env.update(extra)
    return env


def run_ranks(scenario: str, tmp_path: Path, timeout: float = 120) -> list[dict]:
    store = tmp_path / "store"
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), scenario, str(r), str(WORLD), str(store), str(tmp_path)],
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for r in range(WORLD)
    ]
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=timeout)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for r, (p, text) in enumerate(zip(procs, outputs, strict=False)):
        assert p.returncode == 0, f"rank {r} exited with {p.returncode}:\n{text[-4000:]}"
    return [torch.load(tmp_path / f"rank{r}.pt") for r in range(WORLD)]


def test_backend_registered():
    assert "vkml" in dist.Backend.backend_list
    assert dist.Backend.default_device_backend_map["vkml"] == "vkml"
    assert dist.Backend.default_device_backend_map["cpu"] == "gloo"  # left to Gloo


@pytest.mark.parametrize("backend", ["vkml", None, "cpu:gloo,vkml:vkml"])
def test_init_process_group_backend_strings(tmp_path, backend):
    """Each spelling gives a group that reduces vkml and CPU tensors (one rank: values unchanged,
    but the tensors make the round trip through host staging and Gloo)."""
    if backend is None and torch._C._get_accelerator().type != "vkml":
        pytest.skip("backend=None picks the machine's accelerator, which is not vkml here")
    dist.init_process_group(
        backend, init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1
    )
    try:
        src = torch.randn(5, 6)
        t = src.to("vkml").t()
        c = src.clone()
        dist.all_reduce(t)
        dist.all_reduce(c, op=dist.ReduceOp.MAX)
        assert torch.equal(t.cpu(), src.t()) and torch.equal(c, src)
        work = dist.all_reduce(t, async_op=True)
        assert work.get_future().wait()[0] is t
    finally:
        dist.destroy_process_group()


def gloo_workers() -> int:
    """Gloo's worker threads in this process (two per group, named by PyTorch)."""
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            names.append(Path(f"/proc/self/task/{task}/comm").read_text().strip())
        except OSError:  # the thread ended meanwhile
            pass
    return names.count("pt_gloo_runloop")


def test_destroy_joins_gloo_threads(tmp_path):
    """destroy_process_group() joins Gloo's worker threads at once. Left to interpreter exit, a
    worker still releasing a Python callback after finalisation began aborted the process
    ("terminate called without an active exception", 1 torchrun exit in ~30 on 2 cores)."""
    base = gloo_workers()  # threads of groups other tests left alive, if any
    dist.init_process_group(
        "vkml", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1
    )
    group = dist.group.WORLD
    t = torch.randn(7, device="vkml")
    dist.all_reduce(t)
    # A worker names itself once it runs: wait for both of the group's (one may not have yet).
    deadline = time.monotonic() + 30
    while gloo_workers() < base + 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    before = gloo_workers()
    # Gloo's reduce-scatter Work has no future: a Python thread waits on it, left unwaited here.
    src = torch.randn(6, generator=torch.Generator().manual_seed(3))
    out = torch.empty(6, device="vkml")
    # reduce_scatter_single is torch 2.13's name; the GPU machine's torch 2.11 has only the other.
    reduce_scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    reduce_scatter(out, src.to("vkml"), async_op=True)
    dist.destroy_process_group()
    # Joined threads leave /proc a moment after the join returns; left unjoined they would stay
    # until the interpreter exits.
    deadline = time.monotonic() + 30
    while gloo_workers() > base and time.monotonic() < deadline:
        time.sleep(0.01)
    assert before == base + 2 and gloo_workers() == base, "Gloo's workers outlived destroy"
    assert not [w for w in threading.enumerate() if w.name == "vkml-dist-wait"]
    assert torch.equal(out.cpu(), src)  # one rank: the sum is the input
    with pytest.raises(RuntimeError, match="after destroy_process_group"):
        group.allreduce([t])


def test_collectives_two_ranks(tmp_path):
    """Every collective, several dtypes, strided inputs and outputs; checks run inside the ranks."""
    assert all(r["ok"] for r in run_ranks("collectives", tmp_path))


def test_ddp_matches_single_process(tmp_path):
    ranks = run_ranks("ddp", tmp_path)
    for kind in ("mlp", "mlp_bucket_view", "cnn"):
        for a, b in zip(ranks[0][kind]["params"], ranks[1][kind]["params"], strict=False):
            assert torch.equal(a, b), f"{kind}: parameters differ across ranks"
        base = kind.split("_")[0]
        model = (w.make_mlp if base == "mlp" else w.make_cnn)().to("vkml")
        x, y = w.batches(base)
        w.sgd_steps(model, x.to("vkml"), y.to("vkml"), 5)  # the global batch in one process
        for got, want in zip(ranks[0][kind]["params"], model.parameters(), strict=False):
            torch.testing.assert_close(got, want.detach().cpu(), rtol=1e-5, atol=1e-5)


def test_fsdp2_matches_single_process(tmp_path):
    ranks = run_ranks("fsdp", tmp_path)
    model = w.make_transformer().to("vkml")
    x, y = w.batches("transformer")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        opt.zero_grad()
        # The global-batch loss is the mean of the equal-sized shards' losses; so is its gradient.
        shard_losses = [
            torch.nn.functional.mse_loss(
                model(w.shard(x, r, WORLD).to("vkml")), w.shard(y, r, WORLD).to("vkml")
            )
            for r in range(WORLD)
        ]
        (sum(shard_losses) / WORLD).backward()
        opt.step()
        for r in range(WORLD):
            assert abs(ranks[r]["losses"][step] - shard_losses[r].item()) < 1e-4, (step, r)


def test_torchrun_example(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            str(ROOT / "examples" / "ddp_train.py"),
            "--steps",
            "3",
        ],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "ranks agree" in result.stdout, result.stdout[-3000:]


def test_data_parallel_two_logical_devices():
    """nn.DataParallel replicates through torch.cuda.comm (CUDA-only collectives): it refuses a
    vkml module. Recorded here so a PyTorch that lifts this shows up."""
    code = (
        "import torch, torch_vkml\n"
        "assert torch.vkml.device_count() == 2\n"
        "m = torch.nn.Linear(4, 2).to('vkml:0')\n"
        "try:\n"
        "    x = torch.randn(6, 4, device='vkml:0')\n"
        "    out = torch.nn.DataParallel(m, device_ids=[0, 1])(x)\n"
        "    torch.testing.assert_close(out.cpu(), m(x).cpu())\n"
        "    print('RAN', tuple(out.shape))\n"
        "except Exception as e:\n"
        "    print('REFUSED', type(e).__name__, e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=child_env(VKML_DEVICE_ORDER="0,0"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # torch 2.13 lacks torch._C._scatter without CUDA (AttributeError); 2.11 with CUDA refuses the
    # non-CUDA device ids (AssertionError "Invalid device id").
    refused = ("REFUSED AttributeError", "REFUSED AssertionError Invalid device id")
    assert any(r in result.stdout for r in refused) or "RAN (6, 2)" in result.stdout, result.stdout


def test_bench_ddp_two_logical_devices(tmp_path):
    """bench/bench_ddp.py, the multi-GPU benchmark, on two logical devices of this machine's GPU:
    one rank per device (vkml:LOCAL_RANK) under torchrun, and its correctness check (DDP on two
    ranks equals one process on the global batch)."""
    out = tmp_path / "ddp.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_ddp.py"), "--small", "--only", "vit",
         "--steps", "1", "--warmup", "1", "--check-steps", "3", "--json", str(out)],
        env=child_env(VKML_DEVICE_ORDER="0,0"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(out.read_text())
    runs = report["runs"]["vit/vkml"]
    assert runs["1"]["samples_per_s"] > 0 and runs["2"]["samples_per_s"] > 0, runs
    check = report["check"]["vkml"]
    assert check["ok"] and check["max_abs_diff"] <= 1e-4 * max(check["max_abs_param"], 1.0), check
