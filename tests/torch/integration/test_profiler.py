"""torch.profiler on vkml: kernels with device time in key_averages() and in the exported Chrome
trace, linked to the CPU ops that launched them, and device memory events."""

import json

import pytest
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import torch_vkml  # noqa: F401

_release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
pytestmark = pytest.mark.skipif(
    _release < (2, 12), reason="torch before 2.12 has no PrivateUse1 activity-profiler registry")

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


def _train_step():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(33, 24), torch.nn.ReLU(), torch.nn.Linear(24, 5))
    net.to("vkml")
    x = torch.randn(17, 33).to("vkml")
    torch.vkml.synchronize()
    return net, x


def _profiled(net, x, **kwargs):
    net.zero_grad(set_to_none=True)
    with profile(activities=ACTIVITIES, record_shapes=True, **kwargs) as prof:
        net(x).square().mean().backward()
        torch.vkml.synchronize()
    return prof


def test_kernels_in_key_averages():
    net, x = _train_step()
    prof = _profiled(net, x)
    rows = {e.key: e for e in prof.key_averages()}
    kernels = {k: e for k, e in rows.items() if k.startswith("vkml ")}
    assert "vkml aten::addmm" in kernels and "vkml aten::mm" in kernels, sorted(rows)
    for k, e in kernels.items():
        assert e.device_type == DeviceType.PrivateUse1, k
        assert e.self_device_time_total > 0, k
    # The CPU op that launched a kernel carries its device time.
    assert rows["aten::addmm"].device_time_total > 0
    assert rows["aten::mm"].device_time_total > 0
    # Ops that launch nothing have no device time.
    assert rows["aten::t"].device_time_total == 0


def test_kernels_in_chrome_trace(tmp_path):
    net, x = _train_step()
    prof = _profiled(net, x)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    ops = {e["args"]["External id"]: e for e in events
           if e.get("cat") == "cpu_op" and "External id" in e.get("args", {})}
    assert kernels, "no kernel events in the trace"
    names = {k["name"] for k in kernels}
    assert {"vkml aten::addmm", "vkml aten::mm"} <= names, names
    for k in kernels:
        assert k["dur"] > 0, k
        op = ops[k["args"]["External id"]]
        assert k["name"] == "vkml " + op["name"], (k, op)
        assert k["ts"] >= op["ts"], (k, op)  # a kernel starts after the op that launched it


def test_memory_events():
    net, x = _train_step()
    prof = _profiled(net, x, profile_memory=True)
    rows = {e.key: e for e in prof.key_averages()}
    assert rows["aten::addmm"].device_memory_usage > 0
    assert any(e.self_device_memory_usage != 0 for e in rows.values())


def test_two_profiles_in_a_row():
    net, x = _train_step()
    first = _profiled(net, x).key_averages()
    second = _profiled(net, x).key_averages()
    count = {e.key: e.count for e in first if e.key.startswith("vkml ")}
    assert count and count == {e.key: e.count for e in second if e.key.startswith("vkml ")}


def test_cpu_only_trace_has_no_device_events():
    net, x = _train_step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        net(x).square().mean().backward()
        torch.vkml.synchronize()
    keys = [e.key for e in prof.key_averages()]
    assert "aten::addmm" in keys
    assert not [k for k in keys if k.startswith("vkml ")], keys
