"""Advanced indexing and mask ops on vkml against the CPU: x[idx] with tensor/bool/broadcast
indices (device or CPU), index_put_ (accumulate), masked_fill_, masked_scatter_,
masked_select, nonzero and where (broadcasting, type promotion, CPU scalars)."""

import pytest
import torch

from nn_helpers import ALL_DTYPES, WIDE_FLOAT, rand_any as rand, assert_same as same

import torch_vkml

V = "vkml"


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_index_tensor_every_dtype(dtype, gen):
    x = rand((5, 6, 7), dtype, gen)
    xv = x.to(V)
    i = torch.randint(-5, 5, (3, 2), generator=gen)
    j = torch.randint(0, 7, (2,), generator=gen, dtype=torch.int32)
    for key in [
        (i,),
        (slice(None), j),
        (i, slice(None), j.long()),
        (Ellipsis, j),
        (slice(1, 4), i.clamp(0, 5)),
        (i, 2),
    ]:
        dev_key = tuple(k.to(V) if isinstance(k, torch.Tensor) else k for k in key)
        same(xv[dev_key], x[key])
        same(xv[key], x[key])  # CPU index tensors are checked on the CPU and uploaded
    mask = rand((5, 6), torch.bool, gen)
    same(xv[mask.to(V)], x[mask])
    same(xv.transpose(0, 2)[j.long().to(V), :, 1:3], x.transpose(0, 2)[j.long(), :, 1:3])
    out = torch.empty(0, dtype=dtype, device=V)
    torch.ops.aten.index.Tensor_out(xv, [i.to(V)], out=out)
    same(out, x[i])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_index_put_every_dtype(dtype, gen):
    x = rand((6, 5), dtype, gen)
    v = rand((3, 5), dtype, gen)
    i = torch.tensor([4, 0, 2])
    y = x.to(V)
    y[i.to(V)] = v.to(V)
    ref = x.clone()
    ref[i] = v
    same(y, ref)
    y[:, torch.tensor([1, 3]).to(V)] = torch.tensor(1, dtype=dtype).to(V)  # 0-dim device value
    ref[:, torch.tensor([1, 3])] = torch.tensor(1, dtype=dtype)
    same(y, ref)
    mask = rand((6, 5), torch.bool, gen)
    y[mask.to(V)] = torch.tensor(0, dtype=dtype)  # single mask + CPU scalar: masked_fill_
    ref[mask] = 0
    same(y, ref)
    vals = rand((int(mask.sum()),), dtype, gen)
    y[mask.to(V)] = vals.to(V)
    ref[mask] = vals
    same(y, ref)
    if dtype != torch.bool:
        ones = torch.ones(7, dtype=dtype)
        dup = torch.tensor([0, 1, 0, 0, 5, 1, -1])
        ref = x.index_put((dup, dup.clamp(0, 4)), ones, accumulate=True)
        got = x.to(V).index_put((dup.to(V), dup.clamp(0, 4).to(V)), ones.to(V), accumulate=True)
        same(got, ref)


def test_index_put_accumulate_strided_and_deterministic(gen):
    x = torch.randn(8, 3, 4, generator=gen)
    idx = torch.randint(0, 4, (50,), generator=gen)
    vals = torch.randn(8, 50, 3, generator=gen)
    y = x.to(V).transpose(1, 2)  # strided self: an (8, 4, 3) view
    r = x.clone().transpose(1, 2)
    torch.ops.aten.index_put_(y, [None, idx.to(V)], vals.to(V), accumulate=True)
    torch.ops.aten.index_put_(r, [None, idx], vals, accumulate=True)
    torch.testing.assert_close(y.cpu(), r)
    # non-adjacent indices: the index dims go first; values broadcast from (50, 1)
    j = torch.randint(0, 8, (50,), generator=gen)
    v2 = torch.randn(50, 1, generator=gen)
    runs = [
        torch.ops.aten.index_put(x.to(V), [j.to(V), None, idx.to(V)], v2.to(V), True).cpu()
        for _ in range(2)
    ]
    assert torch.equal(runs[0], runs[1])  # accumulation in index order: bit-identical repeats
    torch.testing.assert_close(runs[0], torch.ops.aten.index_put(x, [j, None, idx], v2, True))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_masked_ops_every_dtype(dtype, gen):
    x = rand((4, 9), dtype, gen)
    mask = rand((4, 9), torch.bool, gen)
    row = rand((9,), torch.bool, gen)
    xv = x.to(V)
    same(xv.masked_fill(mask.to(V), 3), x.masked_fill(mask, 3))
    same(xv.masked_fill(row.to(V), torch.tensor(1.5)), x.masked_fill(row, torch.tensor(1.5)))
    val = rand((), dtype, gen)
    same(xv.masked_fill(mask.to(V), val.to(V)), x.masked_fill(mask, val))
    y = xv.t()
    y.masked_fill_(mask.t().to(V), 0)
    same(xv, x.masked_fill(mask, 0))  # in place through a transposed view
    src = rand((40,), dtype, gen)
    same(x.to(V).masked_scatter(row.to(V), src.to(V)), x.masked_scatter(row, src))
    z = x.to(V)
    z.t().masked_scatter_(mask.t().to(V), src.reshape(8, 5).to(V))
    same(z, x.t().masked_scatter(mask.t(), src.reshape(8, 5)).t())
    same(x.to(V).masked_select(mask.to(V)), x.masked_select(mask))
    m3 = rand((2, 1, 4), torch.bool, gen)  # broadcasts self (9, 4) as well as the mask
    same(x.to(V).t().masked_select(m3.to(V)), x.t().masked_select(m3))
    out = torch.empty(0, dtype=dtype, device=V)
    torch.masked_select(x.to(V), row.to(V), out=out)
    same(out, x.masked_select(row))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nonzero_every_dtype(dtype, gen):
    x = rand((3, 4, 5), dtype, gen)
    if dtype.is_floating_point:
        x[0, 0, :3] = torch.tensor([-0.0, float("nan"), 0.0], dtype=dtype)
    same(torch.nonzero(x.to(V)), torch.nonzero(x))
    same(torch.nonzero(x.to(V).permute(2, 0, 1)), torch.nonzero(x.permute(2, 0, 1)))
    nz = torch.nonzero(x.to(V), as_tuple=True)
    for a, b in zip(nz, torch.nonzero(x, as_tuple=True), strict=True):
        same(a, b)
    n = torch.nonzero(x[1]).shape[0]
    out = torch.empty(n, 4, dtype=torch.long, device=V)[:, ::2]  # strided out of the right size
    torch.nonzero(x.to(V)[1], out=out)
    same(out, torch.nonzero(x[1]))
    same(
        torch.nonzero(torch.zeros(0, 3, dtype=dtype).to(V)),
        torch.nonzero(torch.zeros(0, 3, dtype=dtype)),
    )
    same(
        torch.nonzero(torch.ones((), dtype=dtype).to(V)), torch.nonzero(torch.ones((), dtype=dtype))
    )


def test_nonzero_many_blocks(gen):
    x = torch.rand(3000, 7, generator=gen) > 0.7
    same(torch.nonzero(x.to(V)), torch.nonzero(x))
    same(x.to(V).t()[x.t().to(V)], x.t()[x.t()])


@pytest.mark.parametrize(
    "a,b",
    [
        (torch.float32, torch.float32),
        (torch.int32, torch.float16),
        (torch.bool, torch.int8),
        (torch.bfloat16, WIDE_FLOAT),
        (torch.uint8, torch.int64),
    ],
)
def test_where_promotes_and_broadcasts(a, b, gen):
    cond = rand((3, 1, 5), torch.bool, gen)
    x = rand((4, 5), a, gen)
    y = rand((3, 4, 1), b, gen)
    same(torch.where(cond.to(V), x.to(V), y.to(V)), torch.where(cond, x, y))
    same(torch.where(cond.to(V), x.to(V), 2.5), torch.where(cond, x, 2.5))
    same(torch.where(cond.to(V), 7, y.to(V)), torch.where(cond, 7, y))
    same(
        torch.where(cond.to(V), x.to(V).t().t(), torch.tensor(3)),
        torch.where(cond, x, torch.tensor(3)),
    )
    same(torch.where(torch.tensor(True), x.to(V), y.to(V)), torch.where(torch.tensor(True), x, y))
    rt = torch.result_type(x, y)
    out = torch.empty(0, dtype=rt, device=V)
    torch.where(cond.to(V), x.to(V), y.to(V), out=out)
    same(out, torch.where(cond, x, y))


def test_gradients_match_cpu(gen):
    x = torch.randn(5, 6, generator=gen, dtype=WIDE_FLOAT)
    mask = torch.rand(5, 6, generator=gen) > 0.5
    i = torch.tensor([0, 3, 0, 4])
    for fn in [
        lambda t, m, k: t[k],
        lambda t, m, k: t[:, k[:2]],
        lambda t, m, k: t[m],
        lambda t, m, k: t.masked_fill(m, 0.0),
        lambda t, m, k: torch.where(m, t, 0.5),
        lambda t, m, k: t.masked_select(m),
    ]:
        xc = x.clone().requires_grad_()
        xv = x.to(V).requires_grad_()
        yc, yv = fn(xc, mask, i), fn(xv, mask.to(V), i.to(V))
        g = torch.randn(yc.shape, generator=gen, dtype=WIDE_FLOAT)
        yc.backward(g)
        yv.backward(g.to(V))
        torch.testing.assert_close(xv.grad.cpu(), xc.grad)


def test_runs_natively(fallback, gen):
    x = torch.randn(4, 5, generator=gen).to(V)
    m = (torch.rand(4, 5, generator=gen) > 0.5).to(V)
    i = torch.tensor([1, 3, 1]).to(V)
    x[i]
    x[m]
    x[i] = x[:3].clone()
    x.index_put_((i,), x[:3].clone(), accumulate=True)
    x.masked_fill_(m, 2.0)
    x.masked_scatter_(m, x.clone())
    x.masked_select(m)
    torch.nonzero(m)
    torch.where(m, x, 0.0)
    assert torch_vkml.fallback_stats() == {}


def test_bad_input_raises_like_cpu(gen):
    x = torch.randn(3, 4, generator=gen)

    def dev(t, d):
        return t.to(d) if isinstance(t, torch.Tensor) else t

    cases = [
        (lambda t, d: t[dev(torch.tensor([3]), d)], IndexError),
        (lambda t, d: t[:, dev(torch.tensor([-5]), d)], IndexError),
        (lambda t, d: t[torch.tensor([3])], IndexError),  # CPU index, vkml self
        (lambda t, d: t[dev(torch.tensor([0, 1]), d), dev(torch.tensor([0, 1, 2]), d)], IndexError),
        (lambda t, d: t[dev(torch.ones(2, dtype=torch.bool), d)], IndexError),
        (lambda t, d: t[dev(torch.tensor([0.0]), d)], IndexError),
        (lambda t, d: t[0, 0, dev(torch.tensor([0]), d)], IndexError),
        (
            lambda t, d: t.clone().index_put_(
                (dev(torch.tensor([0]), d),), dev(torch.ones(4, dtype=torch.float16), d)
            ),
            RuntimeError,
        ),
        (
            lambda t, d: t.clone().index_put_(
                (dev(torch.tensor([0, 2]), d),), dev(torch.ones(3), d)
            ),
            RuntimeError,
        ),
        (
            lambda t, d: t.clone().index_put_(
                (dev(torch.tensor([7]), d),), dev(torch.ones(4), d), accumulate=True
            ),
            IndexError,
        ),
        (
            lambda t, d: t.clone().masked_fill_(dev(torch.ones(3, 4, dtype=torch.long), d), 1.0),
            RuntimeError,
        ),
        (
            lambda t, d: t.clone().masked_fill_(
                dev(torch.ones(3, 4, dtype=torch.bool), d), dev(torch.ones(2), d)
            ),
            RuntimeError,
        ),
        (
            lambda t, d: t.clone().masked_scatter_(
                dev(torch.ones(3, 4, dtype=torch.bool), d), dev(torch.ones(5), d)
            ),
            RuntimeError,
        ),
        (lambda t, d: t.masked_select(dev(torch.ones(3, 4), d)), RuntimeError),
        (lambda t, d: torch.where(dev(torch.ones(3, 4), d), t, t), RuntimeError),
        (lambda t, d: torch.where(dev(torch.ones(3, 5, dtype=torch.bool), d), t, t), RuntimeError),
    ]
    for n, (fn, exc) in enumerate(cases):
        with pytest.raises(exc):
            fn(x, "cpu")
        with pytest.raises(exc):
            fn(x.to(V), V)
        assert n >= 0
