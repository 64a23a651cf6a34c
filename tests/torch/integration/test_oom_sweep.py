"""Out of memory in a training loop: under a reduced memory budget, a batch-size sweep grows until
torch.OutOfMemoryError, then shrinks and trains again. After the error, device memory in use must
be exactly what live tensors hold (the failed step's activations and graph are released), and the
message must say what was requested, allocated, reserved and free, with a hint."""

import gc

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_vkml

BUDGET = 32 << 20  # bytes the sweep may reserve beyond what is reserved when it starts
FEATURES, HIDDEN, CLASSES = 16, 512, 10


def make_model():
    """Wide activations and little arithmetic: memory runs out long before lavapipe slows down."""
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(FEATURES, HIDDEN), nn.GELU(), nn.Tanh(), nn.Sigmoid(), nn.Linear(HIDDEN, CLASSES),
    ).to("vkml")


def train_step(model, opt, batch_size, gen):
    x = torch.randn(batch_size, FEATURES, generator=gen).to("vkml")
    y = torch.randint(0, CLASSES, (batch_size,), generator=gen).to("vkml")
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def live_bytes(model, opt) -> int:
    """Bytes requested by the tensors the loop keeps: parameters, gradients, optimizer state
    (each storage once)."""
    tensors = list(model.parameters())
    tensors += [p.grad for p in model.parameters() if p.grad is not None]
    tensors += [v for state in opt.state.values() for v in state.values()
                if isinstance(v, torch.Tensor) and v.device.type == "vkml"]
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
    return sum(storages.values())


def requested_bytes() -> int:
    return torch_vkml.memory_stats()["requested_bytes.all.current"]


@pytest.fixture
def memory_budget():
    """Caps reserved device memory at what is reserved now plus BUDGET, lifted afterwards."""
    gc.collect()
    torch_vkml.synchronize()
    torch_vkml.empty_cache()
    torch_vkml.set_memory_limit(torch_vkml.memory_reserved() + BUDGET)
    try:
        yield
    finally:
        torch_vkml.set_memory_limit(0)
        torch_vkml.empty_cache()


def test_batch_sweep_grows_to_oom_then_trains_smaller(memory_budget):
    base = requested_bytes()
    ooms_before = torch_vkml.memory_stats()["num_ooms"]
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator().manual_seed(0)
    torch_vkml.reset_fallback_stats()

    batch, largest_ok, message = 64, None, None
    while message is None:
        assert batch <= 1 << 20, "the sweep never ran out of memory"
        try:
            train_step(model, opt, batch, gen)
            largest_ok, batch = batch, batch * 2
        except torch.OutOfMemoryError as e:
            message = str(e)
    assert largest_ok is not None, f"even batch {batch} ran out of memory: {message}"
    assert torch_vkml.memory_stats()["num_ooms"] > ooms_before

    # The message: what was asked for, what is in use, what is left, what to do.
    for needle in ("tried to allocate", "Allocated", "reserved", "free", "MiB",
                   "smaller batch", "empty_cache"):
        assert needle in message, f"{needle!r} missing from: {message}"

    # The failed step's activations and autograd graph are gone: only live tensors hold memory.
    gc.collect()
    assert requested_bytes() - base == live_bytes(model, opt)

    # Shrink and train again, several steps, at the largest size that worked and below.
    losses = [train_step(model, opt, b, gen) for b in (largest_ok, largest_ok // 2, largest_ok)]
    assert all(torch.isfinite(torch.tensor(losses)))
    assert torch_vkml.fallback_stats() == {}
    gc.collect()
    assert requested_bytes() - base == live_bytes(model, opt)

    # Everything released: back to where the test started.
    opt.state.clear()
    del model, opt
    gc.collect()
    assert requested_bytes() == base


def test_oom_in_a_subprocess_with_env_limit(tmp_path):
    """VKML_MEMORY_LIMIT set before import gives the same typed, recoverable error."""
    import os
    import subprocess
    import sys

    script = tmp_path / "oom.py"
    script.write_text(
        "import torch, torch_vkml\n"
        "keep = torch.empty(1 << 20, device='vkml')\n"
        "try:\n"
        "    torch.empty(16 << 20, device='vkml')\n"
        "    print('NO-OOM')\n"
        "except torch.OutOfMemoryError as e:\n"
        "    print('OOM', 'VKML_MEMORY_LIMIT' in str(e))\n"
        "x = torch.ones(1 << 20, device='vkml')\n"
        "print('OK', x.sum().item(), torch_vkml._C.validation_message_count())\n"
    )
    env = dict(os.environ, VKML_MEMORY_LIMIT="32M", VKML_FALLBACK="error",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # this process's imports
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0] == "OOM True", out.stdout
    assert lines[1] == f"OK {float(1 << 20)} 0", out.stdout
