"""`import torch_vkml` at any point of a process's life: after CPU autograd has run (a notebook),
with torch's backend autoload off, and in DataLoader workers. Each case runs in a fresh process,
since this one imported torch_vkml first (conftest)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def run_script(tmp_path, code, **env_extra):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


# An MLP's gradients on vkml after the engine's device threads were started without vkml:
# compared with the float64 CPU gradients, from the main thread and from a second thread.
LATE_IMPORT = """
    import threading
    import torch

    torch.manual_seed(0)
    a = torch.randn(5, 3, requires_grad=True)
    (a.sin() * 2).sum().backward()          # starts autograd's engine with no vkml device

    import torch_vkml

    def grads(device, dtype):
        torch.manual_seed(1)
        net = torch.nn.Sequential(torch.nn.Linear(7, 13), torch.nn.Tanh(), torch.nn.Linear(13, 3))
        net = net.to(device=device, dtype=dtype)
        x = torch.randn(9, 7).to(device=device, dtype=dtype)
        net(x).square().mean().backward()
        return [p.grad.cpu().double() for p in net.parameters()]

    ref = grads("cpu", torch.float64)
    out = {}
    out["main"] = grads("vkml", torch.float32)
    t = threading.Thread(target=lambda: out.__setitem__("thread", grads("vkml", torch.float32)))
    t.start(); t.join()
    for name, got in out.items():
        for g, r in zip(got, ref):
            torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-5)
    assert torch_vkml.fallback_stats() == {}, torch_vkml.fallback_stats()
    print("ok", len(out))
"""


def test_import_after_cpu_backward(tmp_path):
    assert run_script(tmp_path, LATE_IMPORT).strip() == "ok 2"


def test_import_after_cpu_backward_autoload_off(tmp_path):
    out = run_script(tmp_path, LATE_IMPORT, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert out.strip() == "ok 2"


# DataLoader workers: a fork worker of a process that uses vkml imports torch_vkml (the dataset's
# module does) and makes CPU batches; a spawn worker imports it first and computes on vkml.
WORKERS = """
    import sys
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Data(Dataset):
        def __init__(self, on_vkml):
            self.on_vkml = on_vkml
        def __len__(self):
            return 6
        def __getitem__(self, i):
            import torch_vkml  # noqa: F401
            x = torch.arange(4, dtype=torch.float32) + i
            if self.on_vkml:
                return (x.to("vkml") * 3 + 1).cpu()
            return x * 3 + 1

    if __name__ == "__main__":
        context, on_vkml = sys.argv[1], sys.argv[2] == "vkml"
        if context == "fork":
            import torch_vkml
            torch.ones(2, device="vkml").sum().item()
        loader = DataLoader(Data(on_vkml), batch_size=2, num_workers=2,
                            multiprocessing_context=context, timeout=120)
        got = torch.cat(list(loader))
        want = (torch.arange(4.0) + torch.arange(6.0)[:, None]) * 3 + 1
        assert torch.equal(got, want), got
        import torch_vkml
        w = torch.ones(4, device="vkml", requires_grad=True)
        (w * got.to("vkml")).sum().backward()
        assert torch.equal(w.grad.cpu(), want.sum(0)), w.grad
        print("ok")
"""


@pytest.mark.parametrize("context,where", [("fork", "cpu"), ("spawn", "vkml")])
def test_import_in_dataloader_worker(tmp_path, context, where):
    script = tmp_path / "workers.py"
    script.write_text(textwrap.dedent(WORKERS))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(script), context, where], env=env, capture_output=True,
                       text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
