"""Graph capture and replay (torch_vkml.graphs): replays equal eager runs on the values the
inputs hold at replay time, one submission per replay, forbidden work raises while capturing,
and make_graphed_callables trains like eager."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_vkml

DEV = "vkml"


def randn(*shape, gen, dtype=torch.float32):
    return torch.randn(*shape, generator=gen, dtype=dtype)


def close(got, ref, dtype=torch.float32):
    tol = {torch.float32: (2e-5, 2e-5), torch.float16: (2e-3, 2e-3)}[dtype]
    torch.testing.assert_close(got.cpu(), ref, rtol=tol[0], atol=tol[1])


def capture(fn, *static):
    fn(*static)  # warm-up: pipelines and lazy state outside the capture
    g = torch_vkml.VkmlGraph()
    with torch_vkml.graph(g):
        out = fn(*static)
    return g, out


def pointwise_chain(x, y):
    z = torch.sigmoid(x * 1.5 + y) - torch.tanh(y)
    return (z * z).clamp(-0.5, 0.75) + x.exp().neg()


def strided_chain(x, y):  # non-contiguous and broadcast operands, odd sizes
    return pointwise_chain(x.t(), y[:, :1])


@pytest.mark.parametrize("fn,shapes", [
    (pointwise_chain, [(37, 19), (37, 19)]),
    (strided_chain, [(19, 37), (37, 5)]),
    (lambda a, b: a @ b + 1.0, [(33, 70), (70, 17)]),
    (lambda a, b: torch.bmm(a, b).relu(), [(3, 9, 40), (3, 40, 11)]),
    (lambda x, w: F.conv2d(x, w, padding=1, stride=2), [(2, 3, 15, 13), (5, 3, 3, 3)]),
])
def test_replay_recomputes_from_new_input_values(fn, shapes, gen):
    static = [randn(*s, gen=gen).to(DEV) for s in shapes]
    g, out = capture(fn, *static)
    assert g.commands > 0
    for _ in range(3):
        fresh = [randn(*s, gen=gen) for s in shapes]
        for st, f in zip(static, fresh):
            st.copy_(f)  # changed in place, as a static input is
        g.replay()
        close(out, fn(*[f.double() for f in fresh]).float())


def test_zero_size_inputs_capture_and_replay(gen):
    x = torch.empty(0, 7, device=DEV)
    g, out = capture(lambda t: t * 2 + 1, x)
    g.replay()
    assert out.shape == (0, 7)


def test_small_model_forward(gen):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(128, 10),
                          nn.LayerNorm(10), nn.Softmax(-1)).eval()
    model_vkml = copy.deepcopy(model).to(DEV)
    ref_model = model.double()
    x = randn(4, 3, 16, 16, gen=gen).to(DEV)
    with torch.no_grad():
        g, out = capture(model_vkml, x)
        for _ in range(2):
            new = randn(4, 3, 16, 16, gen=gen)
            x.copy_(new)
            g.replay()
            close(out, ref_model(new.double()).float())


def test_one_submission_per_replay_whatever_the_kernel_count(gen):
    x = randn(64, gen=gen).to(DEV)
    for n_ops in (2, 60):
        def many(t, n=n_ops):
            for i in range(n):
                t = t * 0.99 + i * 1e-3
            return t
        g, out = capture(many, x)
        assert g.commands >= n_ops
        torch_vkml.synchronize()
        before = torch_vkml._C.stream_stats(0)["submissions"]
        g.replay()
        assert torch_vkml._C.stream_stats(0)["submissions"] - before == 1
        close(out, many(x.cpu().double()).float())


@pytest.mark.parametrize("work", [
    lambda x: x.sum().item(),
    lambda x: x.cpu(),
    lambda x: torch.vkml.synchronize(),
    lambda x: torch.ones(3).to(DEV),
    lambda x: print(x),
    lambda x: torch.nonzero(x),
])
def test_host_work_while_capturing_raises(work):
    x = torch.ones(8, device=DEV)
    g = torch_vkml.VkmlGraph()
    with pytest.raises(RuntimeError, match="not permitted when stream is capturing"):
        with torch_vkml.graph(g):
            y = x * 2
            work(y)
    assert not torch_vkml.is_current_stream_capturing()
    assert g.commands == 0
    assert torch.equal((x + 1).cpu(), torch.full((8,), 2.0))  # the stream runs again


def test_graph_memory_stays_reserved_until_reset(gen):
    x = randn(1 << 14, gen=gen).to(DEV)
    base = torch.vkml.memory_allocated()
    g, out = capture(lambda t: (t * 2).exp() + 1, x)
    held = torch.vkml.memory_allocated()
    assert held > base
    del out
    assert torch.vkml.memory_allocated() == held  # the graph's pool keeps its blocks
    g.reset()
    assert torch.vkml.memory_allocated() == base


def test_shared_pool_between_graphs(gen):
    x = randn(100, gen=gen).to(DEV)
    g1, a = capture(lambda t: t + 1, x)
    g2 = torch_vkml.VkmlGraph()
    with torch_vkml.graph(g2, pool=g1.pool()):
        b = a * 3
    x.copy_(torch.arange(100.0))
    g1.replay()
    g2.replay()
    close(b, (torch.arange(100.0) + 1) * 3)


def test_graphed_module_trains_like_eager(gen):
    torch.manual_seed(0)
    ref = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 5))
    model = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 5)).to(DEV)
    model.load_state_dict(ref.state_dict())
    sample = randn(8, 12, gen=gen).to(DEV)
    graphed = torch_vkml.make_graphed_callables(model, (sample,))
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(4):
        x, y = randn(8, 12, gen=gen), randn(8, 5, gen=gen)
        loss_ref = F.mse_loss(ref(x), y)
        opt_ref.zero_grad()
        loss_ref.backward()
        opt_ref.step()
        loss = F.mse_loss(graphed(x.to(DEV)), y.to(DEV))
        opt.zero_grad()
        loss.backward()
        opt.step()
        close(loss.detach(), loss_ref.detach())
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p.detach(), q.detach(), torch.float32)


def test_graphed_function_gradients_for_inputs(gen):
    def fn(a, b):
        return (a * b).sin(), a.exp()
    a = randn(6, 7, gen=gen).to(DEV).requires_grad_()
    b = randn(6, 7, gen=gen).to(DEV).requires_grad_()
    graphed = torch_vkml.make_graphed_callables(fn, (a, b))
    a2, b2 = randn(6, 7, gen=gen), randn(6, 7, gen=gen)
    x, y = graphed(a2.to(DEV).requires_grad_(), b2.to(DEV).requires_grad_())
    ra, rb = a2.double().requires_grad_(), b2.double().requires_grad_()
    rx, ry = fn(ra, rb)
    close(x.detach(), rx.detach().float())
    close(y.detach(), ry.detach().float())


def test_whole_training_step_captured(gen):
    """Forward, backward and an SGD step in one graph, as CUDA's whole-network capture."""
    torch.manual_seed(1)
    ref = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 1))
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 1)).to(DEV)
    model.load_state_dict(ref.state_dict())
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.05)
    sx, sy = torch.zeros(16, 10, device=DEV), torch.zeros(16, 1, device=DEV)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(sx), sy)
        loss.backward()
        opt.step()
        return loss

    x0, y0 = randn(16, 10, gen=gen), randn(16, 1, gen=gen)
    sx.copy_(x0), sy.copy_(y0)
    step()  # warm-up (the optimizer's state, the grads' first allocation)
    opt_ref.zero_grad()
    F.mse_loss(ref(x0), y0).backward()
    opt_ref.step()
    g = torch_vkml.VkmlGraph()
    with torch_vkml.graph(g):
        static_loss = step()
    for _ in range(3):
        x, y = randn(16, 10, gen=gen), randn(16, 1, gen=gen)
        sx.copy_(x), sy.copy_(y)
        g.replay()
        opt_ref.zero_grad()
        loss_ref = F.mse_loss(ref(x), y)
        loss_ref.backward()
        opt_ref.step()
        close(static_loss.detach(), loss_ref.detach())
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p.detach(), q.detach())


def test_torch_vkml_module_mirrors_torch_cuda_graphs():
    assert torch.vkml.graphs is torch_vkml.graphs
    for name in ("VkmlGraph", "graph", "graph_pool_handle", "make_graphed_callables",
                 "is_current_stream_capturing"):
        assert getattr(torch.vkml, name) is getattr(torch_vkml, name)
