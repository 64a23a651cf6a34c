"""Soak: a small CNN trains for many steps and nothing grows. Device memory in use must be flat
after warm-up (a leaked tensor, cached graph or optimizer buffer per step shows here), the
allocator's cache must stop growing once the step's shapes are known, and host memory (staging
buffers, parameter chunks, pipeline objects, Python objects) must stay bounded.

`make test` runs 200 steps; `make soak` runs 2,000 (VKML_SOAK_STEPS)."""

import gc
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_vkml

STEPS = int(os.environ.get("VKML_SOAK_STEPS", "200"))
WARMUP = 10
RSS_GROWTH_LIMIT = 50 << 20


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def host_rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def test_training_loop_memory_is_flat():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    # A fixed pool of batches on the device: new uploads each step would be a different test.
    data = [(torch.randn(8, 1, 8, 8, generator=gen).to("vkml"),
             torch.randint(0, 10, (8,), generator=gen).to("vkml")) for _ in range(4)]
    model = SmallCNN().to("vkml")
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    torch_vkml.reset_fallback_stats()
    allocated, losses = [], []
    rss_warm = reserved_warm = None
    for step in range(STEPS):
        x, y = data[step % len(data)]
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            losses.append(loss.item())  # a host read now and then, as a training loop logs
        del loss
        if step == WARMUP:
            torch_vkml.synchronize()
            gc.collect()
            rss_warm, reserved_warm = host_rss_bytes(), torch_vkml.memory_reserved()
        if step >= WARMUP:
            allocated.append(torch_vkml.memory_allocated())
    torch_vkml.synchronize()
    gc.collect()
    assert torch_vkml.fallback_stats() == {}
    assert all(torch.isfinite(torch.tensor(losses)))
    assert losses[-1] < losses[0], f"did not train: {losses[0]} -> {losses[-1]}"
    low, high = min(allocated), max(allocated)
    assert high - low <= 0.01 * low, f"memory_allocated drifted from {low} to {high} bytes"
    assert torch_vkml.memory_reserved() <= reserved_warm, "the allocator cache kept growing"
    growth = host_rss_bytes() - rss_warm
    assert growth < RSS_GROWTH_LIMIT, f"host RSS grew by {growth / 2**20:.1f} MiB in {STEPS} steps"
