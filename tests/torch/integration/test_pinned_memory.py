"""Pinned host memory: tensor.pin_memory(), torch.empty(pin_memory=True) and the DataLoader's
pin_memory=True give pinned tensors; non_blocking copies from and into them are recorded on the
stream (no staging copy, no host wait) and give the same bits as blocking copies."""

import json
import os
import subprocess
import sys
import warnings

import pytest
import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.data import DataLoader, Dataset, TensorDataset

import torch_vkml

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8,
          torch.bool]
SHAPES = [(1,), (13, 7), (257, 33), (3, 5, 129)]


def _random(shape, dtype, gen):
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    hi = 255 if dtype == torch.uint8 else 1 << 20
    return torch.randint(0, hi, shape, generator=gen, dtype=dtype)


_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(t):
    """The tensor's bytes as integers (contiguous), so that equality is bit for bit."""
    t = t.contiguous()
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    return t.view(_INT_OF_SIZE[t.element_size()])


def _views(pinned):
    """Views of a pinned tensor: itself, strided, transposed, offset and broadcast."""
    views = [pinned]
    if pinned.dim() >= 2:
        views += [pinned.t() if pinned.dim() == 2 else pinned.transpose(0, 2), pinned[1:, ::2]]
    views.append(pinned.reshape(-1)[3::5] if pinned.numel() > 3 else pinned)
    views.append(pinned.reshape(-1)[:1].expand(4, 6))  # stride 0
    return views


def test_pin_memory_is_pinned():
    t = torch.randn(37, 5)
    assert not t.is_pinned()
    p = t.pin_memory()
    assert p.is_pinned()
    assert p.device.type == "cpu"
    assert torch.equal(p, t)
    assert p.pin_memory() is p  # already pinned: the same tensor
    assert p[3:, 1].is_pinned()  # a view of pinned memory is pinned
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the device argument is deprecated
        q = t.pin_memory("vkml")
    assert q.is_pinned()
    assert torch.equal(q, t)


def test_empty_with_pin_memory_is_pinned():
    for make in (lambda: torch.empty(1000, pin_memory=True),
                 lambda: torch.zeros(3, 7, dtype=torch.float16, pin_memory=True),
                 lambda: torch.randn(11, pin_memory=True)):
        t = make()
        assert t.is_pinned() and t.device.type == "cpu"
    z = torch.zeros(3, 7, pin_memory=True)
    assert torch.count_nonzero(z) == 0


def test_host_memory_stats_and_empty_host_cache():
    torch_vkml.empty_host_cache()
    base = torch_vkml.host_memory_stats()
    p = torch.empty(5000, dtype=torch.uint8).pin_memory()
    s = torch_vkml.host_memory_stats()
    assert s["allocated_bytes"] - base["allocated_bytes"] == 8192  # a power of two
    assert s["num_alloc"] == base["num_alloc"] + 1
    del p
    assert torch_vkml.host_memory_stats()["allocated_bytes"] == base["allocated_bytes"]
    torch_vkml.empty_host_cache()
    assert torch_vkml.host_memory_stats()["reserved_bytes"] == base["reserved_bytes"]


class _Samples(Dataset):
    def __init__(self, n):
        gen = torch.Generator().manual_seed(5)
        self.x = torch.randn(n, 3, 9, generator=gen)
        self.y = torch.randint(0, 4, (n,), generator=gen)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i]}


@pytest.mark.parametrize("num_workers", [0, 1])
def test_dataloader_batches_are_pinned(num_workers):
    ds = _Samples(21)
    loader = DataLoader(ds, batch_size=4, pin_memory=True, num_workers=num_workers)
    batches = list(loader)
    assert len(batches) == 6
    for i, b in enumerate(batches):
        assert b["x"].is_pinned() and b["y"].is_pinned()
        assert torch.equal(b["x"], ds.x[4 * i:4 * i + 4])
        assert torch.equal(b["y"], ds.y[4 * i:4 * i + 4])


def test_dataloader_pin_memory_device_is_pinned():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pin_memory_device is deprecated for the accelerator
        loader = DataLoader(TensorDataset(torch.arange(10.0)), batch_size=3, pin_memory=True,
                            pin_memory_device="vkml")
        assert all(b.is_pinned() for (b,) in loader)


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_blocking_upload_equals_blocking(dtype, gen):
    before = torch_vkml.host_memory_stats()["copies"]
    for shape in SHAPES:
        pinned = _random(shape, dtype, gen).pin_memory()
        for src in _views(pinned):
            assert src.is_pinned()
            blocking = src.to("vkml")
            fast = src.to("vkml", non_blocking=True)
            torch_vkml.synchronize()
            assert torch.equal(_bits(fast.cpu()), _bits(blocking.cpu())), (shape, src.stride())
            assert torch.equal(_bits(fast.cpu()), _bits(src))
    # Into an existing tensor with a cast, and broadcast into a larger one.
    src = _random((9, 17), dtype, gen).pin_memory()
    dst = torch.empty(9, 17, dtype=torch.float32, device="vkml")
    dst.copy_(src, non_blocking=True)
    wide = torch.empty(4, 9, 17, dtype=dtype, device="vkml")
    wide.copy_(src, non_blocking=True)
    torch_vkml.synchronize()
    assert torch.equal(dst.cpu(), src.to(torch.float32))
    assert torch.equal(_bits(wide.cpu()), _bits(src.expand(4, 9, 17)))
    # The copies from pinned memory went through the pinned path.
    assert torch_vkml.host_memory_stats()["copies"] > before


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_blocking_download_equals_blocking(dtype, gen):
    before = torch_vkml.host_memory_stats()["copies"]
    for shape in SHAPES:
        dev = _random(shape, dtype, gen).to("vkml")
        sources = [dev, dev.transpose(0, -1), dev.reshape(-1)[1::3]]
        for s in sources:
            blocking = s.to("cpu")
            fast = s.to("cpu", non_blocking=True)  # pageable: torch pins this only for CUDA
            into = torch.empty(s.shape, dtype=dtype, pin_memory=True)
            into.copy_(s, non_blocking=True)
            torch_vkml.synchronize()
            assert torch.equal(_bits(fast), _bits(blocking)), (shape, s.stride())
            assert torch.equal(_bits(into), _bits(blocking))
    # With a cast, and into a non-contiguous pinned tensor (a blocking download).
    dev = _random((33, 8), dtype, gen).to("vkml")
    cast = torch.empty(33, 8, dtype=torch.float64, pin_memory=True)
    cast.copy_(dev, non_blocking=True)
    strided = torch.empty(8, 33, dtype=dtype, pin_memory=True).t()
    strided.copy_(dev, non_blocking=True)
    torch_vkml.synchronize()
    assert torch.equal(cast, dev.cpu().to(torch.float64))
    assert torch.equal(_bits(strided), _bits(dev.cpu()))
    assert torch_vkml.host_memory_stats()["copies"] > before


def test_zero_size_non_blocking_copies():
    src = torch.empty(0, 5, pin_memory=True)
    dev = src.to("vkml", non_blocking=True)
    back = dev.to("cpu", non_blocking=True)
    torch_vkml.synchronize()
    assert dev.shape == (0, 5) and back.shape == (0, 5)


def test_freed_pinned_block_waits_for_its_copy(gen):
    n = 1 << 18
    src = torch.randn(n, generator=gen).pin_memory()
    expected = src.clone()
    torch_vkml.synchronize()
    dev = src.to("vkml", non_blocking=True)  # recorded; the stream has not run it yet
    freed = src.data_ptr()
    del src
    # Same size: the freed block would be handed out now if its pending copy were ignored.
    other = torch.empty(n, pin_memory=True)
    assert other.data_ptr() != freed
    other.fill_(-1.0)
    torch_vkml.synchronize()
    assert torch.equal(dev.cpu(), expected)
    # Once the copy has completed, the block is reused without a new host allocation.
    allocs = torch_vkml.host_memory_stats()["num_host_alloc"]
    again = torch.empty(n, pin_memory=True)
    assert again.data_ptr() == freed
    assert torch_vkml.host_memory_stats()["num_host_alloc"] == allocs


def test_pinned_dst_freed_before_its_download_completes(gen):
    dev = torch.randn(1 << 16, generator=gen, device="cpu").to("vkml")
    expected = dev.cpu()
    out = torch.empty(1 << 16, pin_memory=True)
    out.copy_(dev, non_blocking=True)
    freed = out.data_ptr()
    del out
    reuse = torch.empty(1 << 16, pin_memory=True)
    assert reuse.data_ptr() != freed  # the pending download still writes the freed block
    reuse.copy_(expected)
    torch_vkml.synchronize()
    assert torch.equal(reuse, expected)


def _train(non_blocking, steps_data):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(27, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    net.to("vkml")
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    loader = DataLoader(steps_data, batch_size=16, shuffle=True, pin_memory=True,
                        generator=torch.Generator().manual_seed(3))
    losses = []
    for _epoch in range(2):
        for batch in loader:
            assert batch["x"].is_pinned()
            x = batch["x"].to("vkml", non_blocking=non_blocking).flatten(1)
            y = batch["y"].to("vkml", non_blocking=non_blocking)
            loss = torch.nn.functional.cross_entropy(net(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
    return torch.stack(losses).cpu(), [p.detach().cpu() for p in net.parameters()]


def test_dataloader_training_loop_matches_blocking_copies():
    data = _Samples(75)
    blocking_losses, blocking_params = _train(False, data)
    fast_losses, fast_params = _train(True, data)
    assert blocking_losses.numel() == 10
    assert torch.equal(_bits(fast_losses), _bits(blocking_losses))
    for a, b in zip(fast_params, blocking_params, strict=True):
        assert torch.equal(_bits(a), _bits(b))


_release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


@pytest.mark.skipif(_release < (2, 12), reason="no PrivateUse1 activity-profiler registry")
def test_profiler_timeline_shows_the_host_returning_before_the_copy(tmp_path):
    # lavapipe runs one queue, so the device runs the copy after the matmul, never beside it;
    # what the timeline shows is that the host's copy call returned while the GPU still ran the
    # matmul, and that the copy's own device event follows.
    a = torch.randn(768, 768).to("vkml")
    host = torch.randn(1 << 20).pin_memory()
    torch_vkml.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        c = a @ a  # large enough to be submitted at once
        d = host.to("vkml", non_blocking=True)
        torch_vkml.synchronize()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    mm = [k for k in kernels if k["name"] == "vkml aten::mm"]
    copy = [k for k in kernels if "copy" in k["name"]]
    assert mm and copy, sorted({k["name"] for k in kernels})
    ops = {e["args"]["External id"]: e for e in events
           if e.get("cat") == "cpu_op" and "External id" in e.get("args", {})}
    copy_op = ops[copy[0]["args"]["External id"]]
    mm_end = mm[0]["ts"] + mm[0]["dur"]
    assert copy_op["ts"] + copy_op["dur"] < mm_end, (copy_op, mm[0])  # host returned first
    assert copy[0]["ts"] + copy[0]["dur"] >= mm_end, (copy[0], mm[0])  # ran after the matmul
    assert torch.equal(d.cpu(), host)
    del c


def test_pinned_memory_of_another_device_goes_through_staging():
    """Two logical devices: a block belongs to the device current when it was pinned; copies
    between it and the other device are staged, and still right."""
    code = """
import torch, torch_vkml
assert torch_vkml.device_count() == 2
host = torch.randn(1000).pin_memory()  # vkml:0's
before = [torch_vkml.host_memory_stats(i)["copies"] for i in range(2)]
d1 = host.to("vkml:1", non_blocking=True)
back = torch.empty(1000, pin_memory=True)
back.copy_(d1, non_blocking=True)
torch_vkml.synchronize(0); torch_vkml.synchronize(1)
assert torch.equal(back, host)
assert [torch_vkml.host_memory_stats(i)["copies"] for i in range(2)] == before
torch_vkml.set_device(1)
own = torch.randn(1000).pin_memory()  # vkml:1's
d = own.to("vkml:1", non_blocking=True)
torch_vkml.synchronize(1)
assert torch.equal(d.cpu(), own)
assert torch_vkml.host_memory_stats(1)["copies"] == before[1] + 1
print("ok")
"""
    env = dict(os.environ, VKML_DEVICE_ORDER="0,0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32])
def test_non_blocking_download_to_cpu_lands_in_pinned_memory(dtype):
    """`x.to("cpu", non_blocking=True)` returns pinned memory that the stream fills, as on CUDA;
    after a synchronize it holds the same bits as a blocking download, with or without a cast."""
    if dtype == torch.float64 and not torch_vkml.has_float64_support():
        pytest.skip("the device has no fp64 arithmetic")
    gen = torch.Generator().manual_seed(7)
    x = _random((257, 33), torch.float32, gen).to("vkml")
    src = x.t()[3:, ::2]  # a strided view
    out = src.to("cpu", dtype, non_blocking=True)
    assert out.is_pinned()
    torch.vkml.synchronize()
    assert torch.equal(_bits(out), _bits(src.to("cpu").to(dtype)))
