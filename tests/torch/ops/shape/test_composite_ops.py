"""equal, linalg.cross, unfold's backward, repeat_interleave and nonzero_static on vkml against
the CPU: strided and broadcast operands, aliasing outputs, empty and 0-dim tensors, NaN, integer
dtypes, the errors the CPU raises, and gradients."""

import pytest
import torch
from nn_helpers import device_dtypes

import torch_vkml  # noqa: F401


def vk(t):
    return t.to("vkml")


def test_equal():
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(7, 9, generator=gen)
    assert torch.equal(vk(a), vk(a.clone()))
    b = a.clone()
    b[3, 4] += 1e-6
    assert not torch.equal(vk(a), vk(b))
    assert torch.equal(vk(a).t(), vk(a.t().contiguous()))  # strided against dense
    assert not torch.equal(vk(a), vk(a[:, :8]))  # shapes differ
    assert torch.equal(vk(torch.empty(0, 3)), vk(torch.empty(0, 3)))
    n = torch.tensor([1.0, float("nan")])
    assert torch.equal(vk(n), vk(n).clone()) == torch.equal(n, n.clone())  # NaN != NaN
    nv = vk(n)
    assert torch.equal(nv, nv) == torch.equal(n, n)  # the same view with a NaN: not equal
    i = torch.randint(-5, 5, (4, 5), generator=gen)
    assert torch.equal(vk(i), vk(i.clone())) and not torch.equal(vk(i), vk(i + 1))
    with pytest.raises(RuntimeError):
        torch.equal(vk(a), vk(a.half()))


@pytest.mark.parametrize(
    "dtype", device_dtypes(torch.float32, torch.float64, torch.int64, torch.float16))
def test_linalg_cross(dtype):
    gen = torch.Generator().manual_seed(1)
    a = (torch.randn(5, 3, 4, generator=gen) * 10).to(dtype)
    b = (torch.randn(1, 3, 4, generator=gen) * 10).to(dtype)  # broadcast over dim 0
    torch.testing.assert_close(torch.linalg.cross(vk(a), vk(b), dim=1).cpu(),
                               torch.linalg.cross(a, b, dim=1))
    at, bt = a.transpose(1, 2), b.transpose(1, 2)  # strided, dim -1
    torch.testing.assert_close(torch.linalg.cross(vk(at), vk(bt)).cpu(), torch.linalg.cross(at, bt))
    out = torch.zeros(4, 5, 3, dtype=dtype, device="vkml").transpose(0, 1)  # strided out
    torch.linalg.cross(vk(at), vk(bt), out=out)
    torch.testing.assert_close(out.cpu(), torch.linalg.cross(at, bt))
    x = vk(at).clone()  # out aliasing an input
    torch.linalg.cross(x, vk(bt).expand_as(x), out=x)
    torch.testing.assert_close(x.cpu(), torch.linalg.cross(at, bt.expand_as(at)))
    assert torch.linalg.cross(vk(a[:0]), vk(b[:0]), dim=1).shape == (0, 3, 4)
    with pytest.raises(RuntimeError):
        torch.linalg.cross(vk(a), vk(b), dim=2)
    with pytest.raises(RuntimeError):
        torch.linalg.cross(vk(a), vk(b[0]), dim=1)


def test_linalg_cross_gradient():
    gen = torch.Generator().manual_seed(2)
    a, b = torch.randn(6, 3, generator=gen), torch.randn(6, 3, generator=gen)
    g = torch.randn(6, 3, generator=gen)
    grads = []
    for dev in ("cpu", "vkml"):
        x, y = a.clone().to(dev).requires_grad_(), b.clone().to(dev).requires_grad_()
        torch.linalg.cross(x, y).backward(g.to(dev))
        grads.append((x.grad.cpu(), y.grad.cpu()))
    torch.testing.assert_close(grads[1], grads[0])


@pytest.mark.parametrize("size,step", [(3, 1), (2, 2), (2, 3), (4, 2), (1, 1)])
def test_unfold_backward(size, step):
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(5, 11, 3, generator=gen)
    g = torch.randn(x.unfold(1, size, step).shape, generator=gen)
    results = []
    for dev in ("cpu", "vkml"):
        t = x.to(dev).transpose(0, 2).requires_grad_()  # strided input, dim 1 unchanged
        t.unfold(1, size, step).backward(g.transpose(0, 2).to(dev))
        results.append(t.grad.cpu())
    torch.testing.assert_close(results[1], results[0])
    s = torch.tensor(2.5, requires_grad=True)
    sv = vk(s.detach()).requires_grad_()
    s.unfold(0, 1, 1).sum().backward()
    sv.unfold(0, 1, 1).sum().backward()
    torch.testing.assert_close(sv.grad.cpu(), s.grad)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_repeat_interleave(dtype):
    r = torch.tensor([2, 0, 3, 1, 0, 5], dtype=dtype)
    got = torch.repeat_interleave(vk(r))
    assert got.dtype == dtype
    torch.testing.assert_close(got.cpu(), torch.repeat_interleave(r))
    torch.testing.assert_close(torch.repeat_interleave(vk(r), output_size=11).cpu(),
                               torch.repeat_interleave(r, output_size=11))
    x = torch.arange(12.0).reshape(6, 2)
    torch.testing.assert_close(torch.repeat_interleave(vk(x), vk(r), dim=0).cpu(),
                               torch.repeat_interleave(x, r, dim=0))
    big = torch.randint(0, 4, (300,), generator=torch.Generator().manual_seed(4)).to(dtype)
    torch.testing.assert_close(torch.repeat_interleave(vk(big)).cpu(), torch.repeat_interleave(big))
    assert torch.repeat_interleave(vk(r[:0])).shape == (0,)
    with pytest.raises(RuntimeError):
        torch.repeat_interleave(vk(torch.tensor([1, -1], dtype=dtype)))
    with pytest.raises(RuntimeError):
        torch.repeat_interleave(vk(r.reshape(2, 3)))


@pytest.mark.parametrize("size", [0, 3, 7, 40])
def test_nonzero_static(size):
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(4, 6, generator=gen)
    x[x.abs() < 0.7] = 0
    xt = x.t()  # strided input
    for t in (x, xt, x.int(), x > 0):
        torch.testing.assert_close(torch.nonzero_static(vk(t), size=size).cpu(),
                                   torch.nonzero_static(t, size=size))
    torch.testing.assert_close(torch.nonzero_static(vk(x), size=size, fill_value=7).cpu(),
                               torch.nonzero_static(x, size=size, fill_value=7))
    for t in (torch.tensor(3.0), torch.tensor(0.0), torch.empty(0, 2), torch.zeros(3, 1)):
        torch.testing.assert_close(torch.nonzero_static(vk(t), size=size).cpu(),
                                   torch.nonzero_static(t, size=size))
    with pytest.raises(RuntimeError):
        torch.nonzero_static(vk(x), size=-1)


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64))
def test_histogram(dtype):
    gen = torch.Generator().manual_seed(6)
    x = (torch.randn(40, 30, generator=gen) * 3).to(dtype)
    w = torch.rand(30, 40, generator=gen).to(dtype).t()  # strided weights
    xt = x.t().contiguous().t()
    cases = [dict(bins=7), dict(bins=1), dict(bins=13, range=(-2.0, 5.0)),
             dict(bins=9, weight=w), dict(bins=6, density=True),
             dict(bins=5, range=(-1.0, 1.0), weight=w, density=True)]
    for kw in cases:
        kv = {k: (vk(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        hist, edges = torch.histogram(vk(xt), **kv)
        eh, ee = torch.histogram(xt, **kw)
        torch.testing.assert_close(edges.cpu(), ee)
        torch.testing.assert_close(hist.cpu(), eh)
    edges = torch.tensor([-4.0, -1.0, 0.0, 0.5, 3.0, 9.0], dtype=dtype)  # uneven edges
    for kw in (dict(), dict(weight=w), dict(density=True)):
        kv = {k: (vk(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        got = torch.histogram(vk(x), vk(edges), **kv)
        exp = torch.histogram(x, edges, **kw)
        torch.testing.assert_close(got[0].cpu(), exp[0])
        torch.testing.assert_close(got[1].cpu(), exp[1])
    same = torch.full((5,), 2.0, dtype=dtype)  # min == max widens the range by 1/2 each side
    torch.testing.assert_close(torch.histogram(vk(same), 4)[1].cpu(), torch.histogram(same, 4)[1])
    empty = torch.empty(0, dtype=dtype)
    torch.testing.assert_close(torch.histogram(vk(empty), 3, range=(0.0, 1.0))[0].cpu(),
                               torch.histogram(empty, 3, range=(0.0, 1.0))[0])
    with pytest.raises(RuntimeError):
        torch.histogram(vk(x), 0)
    with pytest.raises(RuntimeError):
        torch.histogram(vk(x), 3, range=(2.0, 1.0))
    with pytest.raises(NotImplementedError):
        torch.histogram(vk(x.half()), 3)


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64, torch.float16,
                                                torch.int64, torch.bool, torch.uint8))
def test_angle(dtype):
    x = torch.tensor([[-2.5, 0.0, -0.0, 3.0, float("nan"), float("-inf")],
                      [float("inf"), -1e-30, 7.0, -7.0, 1.0, -1.0]])
    x = x.nan_to_num(0.0).to(dtype) if not dtype.is_floating_point else x.to(dtype)
    xt = x.t()  # strided
    torch.testing.assert_close(torch.angle(vk(xt)).cpu(), torch.angle(xt), equal_nan=True)
    out = torch.empty(2, 6, dtype=torch.angle(x).dtype, device="vkml").t()
    torch.angle(vk(xt), out=out)
    torch.testing.assert_close(out.cpu(), torch.angle(xt), equal_nan=True)
    if dtype == torch.float32:
        a, b = x.clone().requires_grad_(), vk(x).requires_grad_()
        torch.angle(a).sum().backward()
        torch.angle(b).sum().backward()
        torch.testing.assert_close(b.grad.cpu(), a.grad)
