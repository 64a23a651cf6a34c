"""torch.compile on vkml: training steps, dynamic shapes, recompilation, graph breaks, compile
errors and the disk cache of compiled kernels."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_vkml
from torch_vkml._inductor import runtime

DEV = "vkml"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


class Block(nn.Module):
    """A pre-norm transformer block with a GELU MLP: the shape of GPT-2's and ViT's layers."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.proj(y.transpose(1, 2).reshape(b, t, c)))
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh")))


class TinyGPT(nn.Module):
    def __init__(self, vocab=50, dim=32, length=16):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(length, dim)
        self.blocks = nn.Sequential(Block(dim), Block(dim))
        self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.blocks(self.tok(idx) + self.pos(pos))
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


class TinyConvNet(nn.Module):
    """Conv, batch norm, ReLU, residual, pooling: the shape of ResNet's blocks."""

    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.c2, self.b2 = nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 10)

    def forward(self, x, y):
        h = F.relu(self.b1(self.c1(x)))
        h = F.relu(h + self.b2(self.c2(h)))
        return F.cross_entropy(self.fc(F.adaptive_avg_pool2d(h, 1).flatten(1)), y)


def train_losses(model, batches, compile_it, steps=3):
    model = model.to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    fn = torch.compile(model) if compile_it else model
    losses = []
    for i in range(steps):
        torch.vkml.manual_seed(i)
        loss = fn(*[b.to(DEV) for b in batches])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("name", ["gpt", "conv"])
def test_training_steps_match_eager(name, fallback):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    if name == "gpt":
        make = TinyGPT
        batches = [torch.randint(0, 50, (4, 16), generator=g), torch.randint(0, 50, (4, 16), generator=g)]
    else:
        make = TinyConvNet
        batches = [torch.randn(4, 3, 12, 12, generator=g), torch.randint(0, 10, (4,), generator=g)]
    torch.manual_seed(0)
    eager = train_losses(make(), batches, compile_it=False)
    torch.manual_seed(0)
    before = runtime.VkmlKernelLauncher.created
    compiled = train_losses(make(), batches, compile_it=True)
    assert runtime.VkmlKernelLauncher.created - before >= 5  # forward and backward kernels
    assert torch_vkml.fallback_stats() == {}
    torch.testing.assert_close(torch.tensor(compiled), torch.tensor(eager), rtol=1e-4, atol=1e-4)
    assert compiled[-1] < compiled[0]


def test_dynamic_shapes():
    def f(x):
        return torch.softmax(x * 2, dim=-1).sum(0)

    cf = torch.compile(f, dynamic=True)
    for n, m in ((3, 7), (5, 33), (9, 300)):
        x = torch.randn(n, m, device=DEV)
        torch.testing.assert_close(cf(x).cpu(), f(x.cpu()), rtol=1e-5, atol=1e-6)


def test_recompiles_on_dtype_change():
    from torch._dynamo.utils import counters

    counters.clear()
    cf = torch.compile(lambda x: F.silu(x) * 3)
    for dtype in (torch.float32, torch.float16, torch.float32):
        x = torch.randn(10, 10, device=DEV, dtype=dtype)
        torch.testing.assert_close(cf(x).cpu().float(), (F.silu(x.cpu().float()) * 3),
                                   rtol=2e-3 if dtype == torch.float16 else 1e-5, atol=2e-3)
    assert counters["stats"]["unique_graphs"] == 2


def test_graph_break():
    def f(x):
        y = torch.relu(x) + 1
        if y.sum().item() > 0:  # data-dependent branch: Dynamo splits the graph here
            y = y * 2
        return y.exp()

    x = torch.randn(8, 8, device=DEV)
    torch.testing.assert_close(torch.compile(f)(x).cpu(), f(x.cpu()), rtol=1e-5, atol=1e-6)


def test_compile_error_carries_source():
    source = "#version 460\nlayout(local_size_x_id = 0) in;\nvoid main() { undefined_fn(); }\n"
    with pytest.raises(runtime.VkmlCompileError) as info:
        runtime._compile("inductor_bad_kernel", source, 64, 0)
    assert "undefined_fn" in str(info.value) and "3: void main()" in str(info.value)


def test_second_process_compiles_nothing(tmp_path):
    script = textwrap.dedent("""
        import torch, torch_vkml
        from torch_vkml._inductor import runtime
        x = torch.randn(64, 64, device="vkml")
        y = torch.compile(lambda t: (torch.tanh(t) * 2).sum(1))(x)
        torch.testing.assert_close(y.cpu(), (torch.tanh(x.cpu()) * 2).sum(1), rtol=1e-5, atol=1e-5)
        s = runtime.compile_stats()
        print("STATS", s["compiles"], s["disk_hits"])
    """)
    env = dict(os.environ, VKML_CACHE_DIR=str(tmp_path / "vkml"),
               TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"), PYTHONPATH=ROOT)
    stats = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        line = [ln for ln in out.stdout.splitlines() if ln.startswith("STATS")][0]
        stats.append(tuple(int(v) for v in line.split()[1:]))
    assert stats[0][0] >= 1
    assert stats[1] == (0, stats[0][0])


def test_backward_of_split_and_transpose():
    """The gradient of q, k, v split from one projection is a masked concatenation: index
    comparisons against constants (the case LLVM 15 folds wrongly after a sign extension)."""
    b, t, h, e = 2, 8, 4, 8
    g = torch.Generator().manual_seed(3)
    x_cpu = torch.randn(b, t, 3 * h * e, generator=g, dtype=torch.float64)
    w_cpu = torch.randn(b, t, h * e, generator=g, dtype=torch.float64)

    def f(x, w):
        q, k, v = x.split(h * e, dim=2)
        q, k, v = (z.view(b, t, h, e).transpose(1, 2) for z in (q, k, v))
        y = q * 2 + k * v
        return (y.transpose(1, 2).reshape(b, t, h * e) * w).sum()

    x = x_cpu.float().to(DEV).requires_grad_()
    (grad,) = torch.autograd.grad(torch.compile(f)(x, w_cpu.float().to(DEV)), x)
    xr = x_cpu.clone().requires_grad_()
    (ref,) = torch.autograd.grad(f(xr, w_cpu), xr)
    torch.testing.assert_close(grad.cpu().double(), ref, rtol=1e-5, atol=1e-5)
