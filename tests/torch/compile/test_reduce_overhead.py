"""torch.compile(mode="reduce-overhead") on vkml: compiled graphs captured once per input shape
and replayed (torch_vkml/_inductor/replay.py), equal to eager across calls with new input
values, a shape change (a second capture) and a training step."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_vkml._inductor import replay

DEV = "vkml"


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    replay.reset_replay_stats()
    yield
    torch._dynamo.reset()


class MLP(nn.Module):
    def __init__(self, dim=24):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.ln = nn.LayerNorm(dim)

    def forward(self, x):
        return self.ln(x + self.fc2(F.gelu(self.fc1(x))))


def close(got, ref):
    torch.testing.assert_close(got.detach().cpu().double(), ref.detach().double(),
                               rtol=1e-4, atol=1e-4)


def test_inference_replays_with_new_values_and_recaptures_on_a_new_shape():
    torch.manual_seed(0)
    ref = MLP().eval()
    model = MLP().to(DEV).eval()
    model.load_state_dict(ref.state_dict())
    compiled = torch.compile(model, mode="reduce-overhead")
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for shape in [(4, 24), (4, 24), (4, 24), (4, 24), (7, 24), (7, 24), (7, 24)]:
            x = torch.randn(*shape, generator=gen)
            out = compiled(x.to(DEV)).clone()  # the next replay overwrites the output
            close(out, ref.double()(x.double()))
    stats = replay.replay_stats()
    assert stats.get("captures", 0) >= 2, stats  # one per shape
    assert stats.get("replays", 0) >= 4, stats
    assert not any(k.startswith("fallback") for k in stats), stats
    # Parameters are read in place: a replay copies the one input, x.
    assert stats["input copies"] == stats["replays"], stats


def test_outputs_of_earlier_calls_are_overwritten_like_cuda_graphs():
    f = torch.compile(lambda x: x * 2 + 1, mode="reduce-overhead")
    outs = []
    for v in (1.0, 2.0, 3.0, 4.0):
        outs.append(f(torch.full((5,), v, device=DEV)))
    assert torch.equal(outs[-1].cpu(), torch.full((5,), 9.0))
    assert replay.replay_stats().get("replays", 0) >= 2


def test_mutated_input_is_written_back():
    def f(x, y):
        x.add_(y)
        return x * 2

    compiled = torch.compile(f, mode="reduce-overhead")
    for i in range(4):
        x = torch.full((6,), float(i), device=DEV)
        y = torch.ones(6, device=DEV)
        out = compiled(x, y)
        assert torch.equal(x.cpu(), torch.full((6,), i + 1.0))
        assert torch.equal(out.cpu(), torch.full((6,), 2 * (i + 1.0)))


def test_training_steps_equal_eager():
    torch.manual_seed(0)
    ref = MLP()
    model = MLP().to(DEV)
    model.load_state_dict(ref.state_dict())
    compiled = torch.compile(model, mode="reduce-overhead")
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.05)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(5)
    for _ in range(4):
        x, y = torch.randn(8, 24, generator=gen), torch.randn(8, 24, generator=gen)
        loss_ref = F.mse_loss(ref(x), y)
        opt_ref.zero_grad()
        loss_ref.backward()
        opt_ref.step()
        loss = F.mse_loss(compiled(x.to(DEV)), y.to(DEV))
        opt.zero_grad()
        loss.backward()
        opt.step()
        close(loss, loss_ref)
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q)
    assert replay.replay_stats().get("replays", 0) >= 2


def test_a_graph_that_reads_the_host_runs_plainly_with_a_reason():
    def f(x):
        return x[x > 0].sum() * 2  # a data-dependent size: a host read

    compiled = torch.compile(f, mode="reduce-overhead")
    for v in (1.0, -1.0, 2.0):
        x = torch.tensor([v, 3.0, -2.0]).to(DEV)
        assert torch.equal(compiled(x).cpu(), f(x.cpu()))


def test_a_capture_that_reads_the_host_runs_plainly_with_a_counted_reason():
    def model(args):  # a boxed compiled graph that reads a value back to the host
        (x,) = args
        args.clear()
        return [x * float(x.sum().item())]

    graph = replay.ReplayedGraph(model, (), (), clone_outputs=False)
    for v in (1.0, 2.0, 3.0):
        out = graph([torch.full((3,), v, device=DEV)])[0]
        assert torch.equal(out.cpu(), torch.full((3,), v * 3 * v))
    stats = replay.replay_stats()
    reasons = [k for k in stats if k.startswith("fallback: capture refused")]
    assert len(reasons) == 1 and stats[reasons[0]] == 2, stats
    assert "captures" not in stats and "replays" not in stats


def test_cpu_scalar_inputs_are_part_of_the_key():
    def model(args):  # a boxed graph that reads a 0-dimensional CPU tensor on the host
        x, s = args
        args.clear()
        return [x * float(s) + 1]

    graph = replay.ReplayedGraph(model, (), (), clone_outputs=False)
    for v in (2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 2.0):
        out = graph([torch.ones(4, device=DEV), torch.tensor(v)])[0]
        assert torch.equal(out.cpu(), torch.full((4,), v + 1))
    stats = replay.replay_stats()
    assert stats["captures"] == 2 and stats["replays"] == 5, stats
