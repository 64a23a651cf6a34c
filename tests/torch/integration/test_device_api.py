"""The Python device API: torch.vkml, torch_vkml's torch-directml style functions, accelerator."""

import math

import pytest
import torch

import torch_vkml


def test_availability_and_naming():
    assert torch_vkml.is_available() and torch.vkml.is_available()
    n = torch_vkml.device_count()
    assert n >= 1 and torch.vkml.device_count() == n
    assert torch_vkml.device() == torch.device("vkml", 0)
    assert torch_vkml.device(0).type == "vkml"
    assert torch_vkml.default_device() == 0
    assert isinstance(torch_vkml.device_name(0), str) and torch_vkml.device_name(0)
    assert torch_vkml.current_device() == 0
    torch_vkml.set_device(0)
    torch_vkml.synchronize()
    torch.vkml.synchronize("vkml:0")


def test_device_properties():
    p = torch_vkml.get_device_properties(0)
    assert p.name == torch_vkml.device_name(0)
    assert p.total_memory > 0
    assert p.subgroup_size > 0
    assert isinstance(p.fp64, bool) and torch_vkml.has_float64_support(0) == p.fp64
    assert torch_vkml.is_bf16_supported()
    assert "vkml" not in repr(p) or p.name in repr(p)


def test_bad_device_index_is_a_clear_error():
    n = torch_vkml.device_count()
    with pytest.raises(IndexError, match="invalid device index"):
        torch_vkml.device(n)
    with pytest.raises(IndexError, match="invalid device index"):
        torch.empty(3, device=f"vkml:{n}")
    with pytest.raises(IndexError):
        torch_vkml.set_device(n + 3)
    with pytest.raises(IndexError):
        torch.zeros(2).to(f"vkml:{n}")


def test_generated_methods():
    x = torch.arange(6, dtype=torch.float32)
    y = x.vkml()
    assert y.is_vkml and not x.is_vkml
    assert y.device == torch.device("vkml", 0)
    m = torch.nn.Linear(3, 2).vkml()
    assert all(p.is_vkml for p in m.parameters())
    s = x.untyped_storage().vkml()
    assert s.device.type == "vkml" and s.nbytes() == x.untyped_storage().nbytes()


def test_accelerator_api():
    if not hasattr(torch, "accelerator"):
        pytest.skip("this torch has no torch.accelerator")
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator().type == "vkml"
    assert torch.accelerator.device_count() == torch_vkml.device_count()
    torch.accelerator.synchronize()
    x = torch.ones(1000, device="vkml")
    assert torch.accelerator.memory_allocated() >= x.numel() * 4
    stream = torch.accelerator.current_stream()
    assert stream.device.type == "vkml"
    event = torch.Event(device="vkml")
    event.record()
    event.synchronize()
    assert event.query()


def test_streams_and_events_order_work():
    a = torch.randn(1000)
    x = a.to("vkml")
    s = torch.Stream(device="vkml")
    with torch.accelerator.device_index(0):
        e = torch.Event(device="vkml")
        x.fill_(2.5)
        e.record(s)
        e.synchronize()
    assert torch.all(x.cpu() == 2.5)


def test_directml_style_tutorial_code():
    import torch_vkml as torch_directml

    dml = torch_directml.device(torch_directml.default_device())
    a = torch.randn(1000, 1)
    b = a.to(dtype=torch.float32, device=dml)
    assert torch_directml.device_name(0)
    assert torch_directml.is_available()
    assert torch_directml.device_count() >= 1
    assert torch_directml.gpu_memory(0)[0] >= 0
    assert torch.equal(b.cpu(), a)


def test_kernel_profiler_counts_and_times_each_kernel():
    x = torch.randn(33, 17, device="vkml")
    w = torch.randn(17, 9, device="vkml")
    with torch_vkml.profiler.profile() as prof:
        for _ in range(3):
            y = (x @ w).relu()
        total = y.sum().item()
    assert math.isfinite(total)
    times = prof.times
    assert sum(c for c, _ in times.values()) >= 7  # 3 GEMMs, 3 relus, the sum
    assert any(name.startswith("gemm") and c == 3 for name, (c, _) in times.items()), times
    assert all(ns >= 0 for _, ns in times.values())
    assert "all kernels" in prof.table(5)
    # Off again: nothing more is recorded.
    (x + 1).sum().item()
    assert torch_vkml.profiler.kernel_times() == {}


def test_profile_names_kernels_by_op_shape():
    """VKML_PROFILE=2 (read once per process, hence the child): each GEMM's and convolution's
    kernels carry the op's shape; other kernels keep their plain names."""
    import os
    import subprocess
    import sys
    code = """
import torch, torch_vkml
a, b = torch.randn(37, 29, device="vkml"), torch.randn(29, 11, device="vkml")
x, w = torch.randn(2, 3, 9, 9, device="vkml"), torch.randn(5, 3, 3, 3, device="vkml")
with torch_vkml.profiler.profile() as prof:
    y = (a @ b).relu()
    z = torch.nn.functional.conv2d(x, w, stride=2)
    torch.vkml.synchronize()
torch.testing.assert_close(y.cpu(), (a.cpu() @ b.cpu()).relu(), rtol=1e-5, atol=1e-5)
torch.testing.assert_close(z.cpu(), torch.nn.functional.conv2d(x.cpu(), w.cpu(), stride=2),
                           rtol=1e-5, atol=1e-5)
names = list(prof.times)
assert any(n.startswith("gemm") and "[mm 37x11x29 f32 A(29,1) B(11,1)]" in n for n in names), names
assert any("[conv fwd 2x3x9x9 -> 5 k3x3 s2 f32]" in n for n in names), names
assert any(n.startswith("ew_") and "[" not in n for n in names), names
assert torch_vkml._C.validation_message_count() == 0
print("ok")
"""
    env = dict(os.environ, VKML_PROFILE="2")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def test_pipelines_built_on_threads_while_recording_goes_on(tmp_path):
    """VKML_PIPELINE_THREADS=3 with an empty pipeline cache: every pipeline of a small training
    step is new and built on a worker while its dispatch is held; the step must still match the
    CPU, and the recording must have waited for some of those builds."""
    import os
    import subprocess
    import sys
    code = """
import torch, torch_vkml
torch.manual_seed(0)
# The widest float the device has: float64 agrees with the CPU to 1e-9, float32 to 1e-5.
wide = torch.float64 if torch_vkml.has_float64_support() else torch.float32
tol = 1e-9 if wide == torch.float64 else 1e-5
net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.GELU(),
                          torch.nn.Flatten(), torch.nn.Linear(8 * 36, 5)).to(wide)
x, y = torch.randn(4, 3, 6, 6, dtype=wide), torch.randint(0, 5, (4,))
grads = []
for dev in ("cpu", "vkml"):
    m = __import__("copy").deepcopy(net).to(dev)
    loss = torch.nn.functional.cross_entropy(m(x.to(dev)), y.to(dev))
    loss.backward()
    grads.append([loss.detach().cpu()] + [p.grad.cpu() for p in m.parameters()])
for c, v in zip(*grads):
    torch.testing.assert_close(v, c, rtol=tol, atol=tol)
st = torch_vkml._C.stream_stats(0)
assert st["pipelines_created"] > 5 and st["pipeline_wait_ns"] > 0, st
assert torch_vkml.fallback_stats() == {}, torch_vkml.fallback_stats()
assert torch_vkml._C.validation_message_count() == 0
print("ok")
"""
    env = dict(os.environ, VKML_PIPELINE_THREADS="3", VKML_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]
