"""A lost GPU (VK_ERROR_DEVICE_LOST): the call that sees the loss raises a RuntimeError that says
the GPU was reset and to restart the process, every later call on the device raises the same
error at once, and the process neither hangs nor crashes, also on exit. The loss is injected by
a test-only operator in a subprocess, so that this suite's device stays usable."""

import os
import subprocess
import sys

SCRIPT = r"""
import time

import torch
import torch_vkml

x = torch.randn(64, 64).to("vkml")
y = (x @ x).relu()
ops = torch.ops.vkml_testing
ops.inject_device_loss(0)
assert not ops.device_lost(0)  # the next wait reports it
try:
    y.cpu()
except RuntimeError as e:
    first = e
else:
    raise SystemExit("the wait raised nothing")
assert ops.device_lost(0)
print("FIRST", type(first).__name__, str(first).splitlines()[0])
calls = {
    "elementwise": lambda: x + 1,
    "matmul": lambda: x @ x,
    "in place": lambda: x.mul_(2),
    "download": lambda: y.cpu(),
    "upload": lambda: torch.ones(4).to("vkml"),
    "empty": lambda: torch.empty(4, device="vkml"),
    "item": lambda: y.sum().item(),
    "synchronize": lambda: torch.vkml.synchronize(),
}
t0 = time.monotonic()
for name, fn in calls.items():
    try:
        fn()
    except RuntimeError as e:
        same = str(e).splitlines()[0] == str(first).splitlines()[0]
        print("LATER", name, type(e).__name__, "same" if same else "DIFFERENT: " + str(e))
    else:
        raise SystemExit(name + " raised nothing")
print("SECONDS", time.monotonic() - t0)
print("VALIDATION", torch_vkml._C.validation_message_count())
del x, y
"""


def run_script():
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", os.getcwd())
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300, env=env)


def test_lost_device_raises_a_clear_error_then_every_call_raises_at_once():
    r = run_script()
    assert r.returncode == 0, f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    lines = r.stdout.splitlines()
    first = next(line for line in lines if line.startswith("FIRST"))
    # torch.AcceleratorError (a RuntimeError subclass) where the bridge translates the error.
    assert first.split()[1] in ("AcceleratorError", "RuntimeError"), first
    for words in ("was lost", "VK_ERROR_DEVICE_LOST", "reset", "restart the process"):
        assert words in first, first
    later = [line for line in lines if line.startswith("LATER")]
    assert len(later) == 8 and all(line.endswith("same") for line in later), later
    seconds = float(next(line for line in lines if line.startswith("SECONDS")).split()[1])
    assert seconds < 5, f"later calls took {seconds:.1f} s: they must fail at once"
    assert "VALIDATION 0" in lines, r.stdout + r.stderr
    for crash in ("Segmentation fault", "Fatal Python error", "terminate called", "Aborted"):
        assert crash not in r.stderr, r.stderr
