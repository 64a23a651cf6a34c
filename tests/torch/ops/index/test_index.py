"""Indexing along a dim on vkml against the CPU: gather, scatter (+ reductions), scatter_add,
scatter_reduce, index_select/add/copy/fill/reduce, embedding; every dtype, strided inputs and
outputs, in-place and out= forms, gradients and bad input."""

import pytest
import torch
import torch.nn.functional as F

from nn_helpers import ALL_DTYPES, HAS_FLOAT64, WIDE_FLOAT, rand_any as rand

import torch_vkml

NUMERIC = [t for t in ALL_DTYPES if t != torch.bool]
V = "vkml"


def small_ints(shape, dtype, gen):
    """Values whose sums and products stay exact in every dtype (order-independent)."""
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    return torch.randint(1, 4, shape, generator=gen).to(dtype)


def assert_same(got, ref, exact=True):
    assert got.device.type == V
    got = got.cpu()
    assert got.dtype == ref.dtype and got.shape == ref.shape
    if exact:
        assert torch.equal(got, ref) or torch.allclose(got, ref, equal_nan=True, rtol=0, atol=0)
    else:
        torch.testing.assert_close(got, ref)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_and_index_select_every_dtype(dtype, gen):
    x = rand((6, 9), dtype, gen)
    xv = x.to(V)
    idx = torch.randint(0, 9, (6, 5), generator=gen)
    assert_same(xv.gather(1, idx.to(V)), x.gather(1, idx))
    # transposed self, int32 index, strided out
    idx0 = torch.randint(0, 9, (4, 6), generator=gen, dtype=torch.int32)
    assert_same(xv.t().gather(0, idx0.to(V)), x.t().gather(0, idx0))
    out = torch.empty(6, 10, dtype=dtype, device=V)[:, ::2]
    torch.gather(xv, 1, idx.to(V), out=out)
    assert torch.equal(out.cpu(), x.gather(1, idx))
    sel = torch.tensor([8, 0, 3, 3], dtype=torch.int32)
    assert_same(xv.index_select(1, sel.to(V)), x.index_select(1, sel))
    assert_same(xv.t().index_select(0, sel.long().to(V)), x.t().index_select(0, sel.long()))
    out2 = torch.empty(0, dtype=dtype, device=V)
    torch.index_select(xv, 0, torch.tensor([5, 1]).to(V), out=out2)
    assert torch.equal(out2.cpu(), x.index_select(0, torch.tensor([5, 1])))


@pytest.mark.filterwarnings("ignore:The reduce argument")
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scatter_forms_every_dtype(dtype, gen):
    x = rand((5, 7), dtype, gen)
    src = rand((5, 7), dtype, gen)
    # a permutation per column: no duplicate targets, so plain scatter is well defined
    idx = torch.argsort(torch.rand(5, 7, generator=gen), dim=0)[:3]
    xv, sv, iv = x.to(V), src.to(V), idx.to(V)
    assert_same(xv.scatter(0, iv, sv), x.scatter(0, idx, src))
    assert_same(xv.scatter(0, iv, 3), x.scatter(0, idx, 3))
    y = xv.clone()
    y.scatter_(0, iv, sv)
    assert torch.equal(y.cpu(), x.scatter(0, idx, src))
    out = torch.empty(5, 7, dtype=dtype, device=V)
    torch.scatter(xv, 0, iv, sv, out=out)
    assert torch.equal(out.cpu(), x.scatter(0, idx, src))
    if dtype != torch.bool:
        a, s = small_ints((5, 7), dtype, gen), small_ints((8, 7), dtype, gen)
        dup = torch.randint(0, 5, (8, 7), generator=gen)  # duplicates accumulate
        assert_same(a.to(V).scatter_add(0, dup.to(V), s.to(V)), a.scatter_add(0, dup, s))
        got = a.to(V).scatter(0, dup.to(V), s.to(V), reduce="multiply")
        assert_same(got, a.scatter(0, dup, s, reduce="multiply"))


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float16, torch.bfloat16]
    + ([torch.float64] if HAS_FLOAT64 else [])
    + [torch.int32, torch.int64, torch.uint8],
)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce(dtype, reduce, gen):
    x = small_ints((4, 6), dtype, gen)
    src = small_ints((9, 6), dtype, gen)
    idx = torch.randint(0, 4, (9, 6), generator=gen)
    idx[:, 0] = 1  # row 0 never written in column 0: include_self=False leaves it alone
    for include_self in (True, False):
        ref = x.scatter_reduce(0, idx, src, reduce, include_self=include_self)
        got = x.to(V).scatter_reduce(0, idx.to(V), src.to(V), reduce, include_self=include_self)
        assert_same(got, ref, exact=not dtype.is_floating_point or reduce != "mean")
    y = x.to(V)
    y.t().scatter_reduce_(1, idx.t().to(V)[:, :5], src.t().to(V), reduce)
    assert_same(
        y,
        x.t().scatter_reduce(1, idx.t()[:, :5], src.t(), reduce).t(),
        exact=not dtype.is_floating_point or reduce != "mean",
    )


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64])
def test_integer_mean_floors_negative_values(dtype, gen):
    # scatter_reduce/index_reduce 'mean' on integers is a floor division, as on the CPU.
    x = torch.randint(-9, 9, (5, 4), generator=gen).to(dtype)
    src = torch.randint(-9, 9, (7, 4), generator=gen).to(dtype)
    idx = torch.randint(0, 5, (7, 4), generator=gen)
    for include_self in (True, False):
        ref = x.scatter_reduce(0, idx, src, "mean", include_self=include_self)
        got = x.to(V).scatter_reduce(0, idx.to(V), src.to(V), "mean", include_self=include_self)
        assert_same(got, ref)
        ref = x.index_reduce(0, idx[:, 0], src, "mean", include_self=include_self)
        got = x.to(V).index_reduce(0, idx[:, 0].to(V), src.to(V), "mean",
                                   include_self=include_self)
        assert_same(got, ref)


def test_scatter_add_float_duplicates_deterministic(gen):
    x = torch.zeros(3, 50)
    src = torch.randn(400, 50, generator=gen)
    idx = torch.randint(0, 3, (400, 50), generator=gen)
    a = x.to(V).scatter_add(0, idx.to(V), src.to(V)).cpu()
    b = x.to(V).scatter_add(0, idx.to(V), src.to(V)).cpu()
    assert torch.equal(a, b)  # accumulation runs in index order: bit-identical on repeats
    torch.testing.assert_close(a, x.double().scatter_add(0, idx, src.double()).float())


@pytest.mark.parametrize("dtype", NUMERIC)
def test_index_add_copy_fill(dtype, gen):
    x = small_ints((6, 5), dtype, gen)
    src = small_ints((6, 4), dtype, gen)
    idx = torch.tensor([4, 0, 4, 2])
    ref = x.index_add(1, idx, src, alpha=2)
    assert_same(x.to(V).index_add(1, idx.to(V), src.to(V), alpha=2), ref)
    y = x.to(V).t()  # in place through a transposed view
    y.index_add_(0, idx.to(V), src.to(V).t())
    assert_same(y.t(), x.index_add(1, idx, src))
    out = torch.empty(6, 5, dtype=dtype, device=V)
    torch.index_add(x.to(V), 1, idx.to(V), src.to(V), out=out)
    assert torch.equal(out.cpu(), x.index_add(1, idx, src))
    cidx = torch.tensor([3, 0, 1])
    csrc = rand((3, 5), dtype, gen)
    assert_same(x.to(V).index_copy(0, cidx.to(V), csrc.to(V)), x.index_copy(0, cidx, csrc))
    z = x.to(V)
    z.index_copy_(0, cidx.to(V), csrc.to(V))
    assert torch.equal(z.cpu(), x.index_copy(0, cidx, csrc))
    fidx = torch.tensor([-1, 1])
    assert_same(x.to(V).index_fill(1, fidx.to(V), 3), x.index_fill(1, fidx, 3))
    w = x.to(V)
    w.index_fill_(0, fidx.to(V), torch.tensor(2, dtype=dtype).to(V))  # device 0-dim value
    assert torch.equal(w.cpu(), x.index_fill(0, fidx, 2))
    w.index_fill_(1, fidx.to(V), torch.tensor(1))  # CPU 0-dim value
    assert torch.equal(w.cpu(), x.index_fill(0, fidx, 2).index_fill(1, fidx, 1))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(reduce, gen):
    x = small_ints((5, 4), torch.float32, gen)
    src = small_ints((5, 6), torch.float32, gen)
    idx = torch.tensor([0, 3, 3, 1, 0, 3])
    for include_self in (True, False):
        ref = x.index_reduce(1, idx, src, reduce, include_self=include_self)
        got = x.to(V).index_reduce(1, idx.to(V), src.to(V), reduce, include_self=include_self)
        assert_same(got, ref, exact=False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int8, torch.bool])
def test_take_and_put(dtype, gen):
    x = rand((4, 6), dtype, gen)
    idx = torch.randint(-24, 24, (3, 5), generator=gen)
    # flat positions walk the logical (row-major) order of a transposed, strided self
    assert_same(x.to(V).t().take(idx.to(V)), x.t().take(idx))
    out = torch.empty(3, 10, dtype=dtype, device=V)[:, ::2]
    torch.take(x.to(V)[:, 1:], idx.clamp(-20, 19).to(V), out=out)
    assert torch.equal(out.cpu(), x[:, 1:].take(idx.clamp(-20, 19)))
    src = rand((15,), dtype, gen)
    perm = torch.randperm(24, generator=gen)[:15].reshape(3, 5)
    y = x.to(V).t()
    y.put_(perm.to(V), src.to(V))
    assert torch.equal(y.cpu(), x.t().clone().put_(perm, src))
    if dtype != torch.bool:
        ones = small_ints((15,), dtype, gen)
        dup = torch.randint(-3, 3, (15,), generator=gen)
        ref = x.clone().put_(dup, ones, accumulate=True)
        assert_same(x.to(V).put_(dup.to(V), ones.to(V), accumulate=True), ref)
    with pytest.raises(IndexError):
        x.to(V).take(torch.tensor([24]).to(V))
    with pytest.raises(IndexError):
        x.to(V).put_(torch.tensor([-25]).to(V), src[:1].to(V))


def test_owner_threads_match_the_plain_walk(vkml_config, gen):
    # GPUs accumulate with one thread per destination when few threads would run otherwise;
    # lavapipe never picks it, so force both ways and compare bit for bit.
    x = torch.randn(3, 7, generator=gen).half()
    src = torch.randn(64, 7, generator=gen).half()
    idx = torch.randint(0, 3, (64, 7), generator=gen)
    tok = torch.randint(0, 6, (40,), generator=gen)
    g = torch.randn(40, 4, generator=gen)
    runs = []
    for mode in ("0", "1"):
        vkml_config.set("VKML_INDEX_OWNER", mode)
        a = x.to(V).scatter_add(0, idx.to(V), src.to(V)).cpu()
        b = torch.ops.aten.index_put(x.to(V), [idx[:, 0].to(V)], src.to(V), True).cpu()
        c = x.to(V).scatter_reduce(0, idx.to(V), src.to(V), "amax", include_self=False).cpu()
        e = torch.ops.aten.embedding_dense_backward(g.to(V), tok.to(V), 6, -1, True).cpu()
        runs.append((a, b, c, e))
    for p, q in zip(*runs, strict=True):
        assert torch.equal(p, q)
    assert torch.equal(runs[0][2], x.scatter_reduce(0, idx, src, "amax", include_self=False))
    torch.testing.assert_close(
        runs[0][3], torch.ops.aten.embedding_dense_backward(g, tok, 6, -1, True)
    )


def test_zero_size_and_odd_shapes(gen):
    x = torch.randn(3, 0, 4, generator=gen)
    idx = torch.zeros(3, 0, 2, dtype=torch.long)
    assert x.to(V).gather(2, idx.to(V)).shape == (3, 0, 2)
    e = torch.empty(0, dtype=torch.long)
    y = torch.randn(7, 3, generator=gen)
    assert_same(y.to(V).index_select(0, e.to(V)), y.index_select(0, e))
    assert_same(y.to(V).index_add(0, e.to(V), torch.empty(0, 3).to(V)), y)
    s = torch.randn((), generator=gen)
    assert_same(s.to(V).gather(0, torch.tensor(0).to(V)), s.gather(0, torch.tensor(0)))
    assert_same(
        s.to(V).index_select(0, torch.tensor([0]).to(V)), s.index_select(0, torch.tensor([0]))
    )
    with pytest.raises(RuntimeError, match="only 1 value"):
        s.to(V).index_select(0, torch.tensor([0, 0]).to(V))
    big = torch.randn(1031, 3, generator=gen)
    idx = torch.randint(0, 1031, (517,), generator=gen)
    assert_same(big.to(V).index_select(0, idx.to(V)), big.index_select(0, idx))


def test_embedding_forward_and_backward(gen):
    w = torch.randn(11, 6, generator=gen, dtype=WIDE_FLOAT)
    idx = torch.randint(0, 11, (3, 5), generator=gen)
    idx[0, :3] = 2  # duplicates and the padding row
    for padding_idx, scale in [(None, False), (2, False), (2, True), (-1, True)]:
        wc, wv = w.clone().requires_grad_(), w.to(V).requires_grad_()
        yc = F.embedding(idx, wc, padding_idx=padding_idx, scale_grad_by_freq=scale)
        yv = F.embedding(idx.to(V), wv, padding_idx=padding_idx, scale_grad_by_freq=scale)
        assert_same(yv, yc.detach())
        g = torch.randn(3, 5, 6, generator=gen, dtype=WIDE_FLOAT)
        yc.backward(g)
        yv.backward(g.to(V))
        torch.testing.assert_close(wv.grad.cpu(), wc.grad)
    # f16/bf16 weights, int32 indices
    for dtype in (torch.float16, torch.bfloat16):
        wd = w.to(dtype)
        i32 = idx.int()
        assert_same(F.embedding(i32.to(V), wd.to(V)), F.embedding(i32, wd))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_embedding_backward_runs_of_equal_indices(dtype, gen):
    """The backward sorts the indices and sums each run of equal ones in position order: long
    runs (a few frequent tokens), int32 and int64 indices, a strided 1-D index view (sorted too),
    and a transposed 2-D one (the index kernel's walk), against float64 on the CPU."""
    w = torch.randn(40, 24, generator=gen, dtype=torch.float64)
    frequent = torch.tensor([3, 17, 39])
    idx = torch.where(torch.rand(8, 50, generator=gen) < 0.6,
                      frequent[torch.randint(0, 3, (8, 50), generator=gen)],
                      torch.randint(0, 40, (8, 50), generator=gen))
    tol = {torch.float32: 1e-5, torch.float16: 2e-2, torch.bfloat16: 1.5e-1}[dtype]
    for view, padding_idx in [(idx, None), (idx.int(), 17), (idx.reshape(-1)[::3], None),
                              (idx.t(), 3)]:
        g = torch.randn(*view.shape, 24, generator=gen, dtype=torch.float64)
        ref = torch.ops.aten.embedding_dense_backward(g, view.long(), 40,
                                                      -1 if padding_idx is None else padding_idx,
                                                      False)
        torch_vkml.profiler.enable()
        try:
            got = torch.ops.aten.embedding_dense_backward(
                g.to(dtype).to(V), view.to(V), 40, -1 if padding_idx is None else padding_idx,
                False)
            torch_vkml.synchronize()
            ran = torch_vkml.profiler.kernel_times(reset=True)
        finally:
            torch_vkml.profiler.disable()
        sorted_path = view.dim() == 1 or view.is_contiguous()
        assert any(k.startswith("embedding_bwd_") for k in ran) == sorted_path, ran
        assert got.dtype == dtype
        torch.testing.assert_close(got.cpu().double(), ref, rtol=tol, atol=tol * 4)


def test_gradients_match_cpu(gen):
    x = torch.randn(5, 6, generator=gen, dtype=WIDE_FLOAT)
    idx = torch.randint(0, 6, (5, 8), generator=gen)
    sel = torch.tensor([4, 0, 4, 1])
    src = torch.randn(5, 8, generator=gen, dtype=WIDE_FLOAT)
    for fn in [
        lambda t, s, i, j: t.gather(1, i),
        lambda t, s, i, j: t.index_select(1, j),
        lambda t, s, i, j: t.scatter_add(1, i, s),
        lambda t, s, i, j: t.index_add(1, j, s[:, :4]),
    ]:
        xc, sc = x.clone().requires_grad_(), src.clone().requires_grad_()
        xv, sv = x.to(V).requires_grad_(), src.to(V).requires_grad_()
        yc = fn(xc, sc, idx, sel)
        yv = fn(xv, sv, idx.to(V), sel.to(V))
        g = torch.randn(yc.shape, generator=gen, dtype=WIDE_FLOAT)
        yc.backward(g)
        yv.backward(g.to(V))
        torch.testing.assert_close(xv.grad.cpu(), xc.grad)
        if sc.grad is not None:
            torch.testing.assert_close(sv.grad.cpu(), sc.grad)


def test_unchecked_bad_indices_stay_in_bounds(vkml_config, gen):
    # VKML_CHECK_INDICES=0 skips the host sync that raises IndexError; kernels still never
    # touch memory for a bad index: gathers leave 0, scatters skip the element.
    vkml_config.set("VKML_CHECK_INDICES", "0")
    x = torch.randn(4, 3, generator=gen)
    got = x.to(V).index_select(0, torch.tensor([1, 99, -7, 3]).to(V)).cpu()
    assert torch.equal(got[0], x[1]) and torch.equal(got[3], x[3])
    assert torch.equal(got[1:3], torch.zeros(2, 3))
    y = x.to(V).scatter_add(0, torch.tensor([[0, 50, 1]]).to(V), torch.ones(1, 3).to(V)).cpu()
    assert torch.equal(y, x + torch.tensor([[1.0, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]))


def test_runs_natively(fallback, gen):
    x = torch.randn(4, 5, generator=gen).to(V)
    i = torch.tensor([[0, 1, 2, 3, 0]]).to(V)
    x.gather(0, i)
    x.scatter_add(0, i, x[:1])
    x.scatter_reduce(0, i, x[:1], "mean", include_self=False)
    x.index_select(1, torch.tensor([1, 1]).to(V))
    x.index_add_(0, torch.tensor([2]).to(V), x[:1])
    x.index_fill_(1, torch.tensor([0]).to(V), 1.5)
    F.embedding(torch.tensor([[1, 2]]).to(V), x)
    assert torch_vkml.fallback_stats() == {}


def test_bad_input_raises_like_cpu(gen):
    x = torch.randn(3, 4, generator=gen)
    xv = x.to(V)
    cases = [
        (lambda t, d: t.index_select(0, torch.tensor([3], device=d)), IndexError),
        (lambda t, d: t.index_select(0, torch.tensor([-1], device=d)), IndexError),
        (lambda t, d: t.gather(0, torch.tensor([[3, 0, 0, 0]], device=d)), RuntimeError),
        (lambda t, d: t.gather(0, torch.tensor([[0.0]], device=d)), RuntimeError),
        (lambda t, d: t.gather(0, torch.zeros(1, 5, dtype=torch.long, device=d)), RuntimeError),
        (lambda t, d: t.clone().scatter_(0, torch.tensor([[-1]], device=d), 1.0), RuntimeError),
        (
            lambda t, d: t.clone().scatter_add_(
                0, torch.tensor([[0]], device=d), torch.ones(1, 1, dtype=torch.float16, device=d)
            ),
            RuntimeError,
        ),
        (
            lambda t, d: t.clone().index_add_(
                0, torch.tensor([5], device=d), torch.ones(1, 4, device=d)
            ),
            RuntimeError,
        ),
        (
            lambda t, d: t.clone().index_add_(
                0, torch.tensor([0], device=d), torch.ones(2, 4, device=d)
            ),
            RuntimeError,
        ),
        (
            lambda t, d: t.clone().index_copy_(
                0, torch.tensor([3], device=d), torch.ones(1, 4, device=d)
            ),
            IndexError,
        ),
        (lambda t, d: t.clone().index_fill_(0, torch.tensor([3], device=d), 1.0), IndexError),
        (
            lambda t, d: t.clone().index_fill_(
                0, torch.tensor([0], dtype=torch.int32, device=d), 1.0
            ),
            IndexError,
        ),
        (
            lambda t, d: t.scatter_reduce(
                0, torch.tensor([[0]], device=d), torch.ones(1, 1, device=d), "maximum"
            ),
            RuntimeError,
        ),
        (lambda t, d: F.embedding(torch.tensor([11], device=d), t), IndexError),
    ]
    for fn, exc in cases:
        with pytest.raises(exc):
            fn(x, "cpu")
        with pytest.raises(exc):
            fn(xv, V)
    # The record of a bad index does not leak into the next op.
    assert_same(xv.index_select(0, torch.tensor([2]).to(V)), x.index_select(0, torch.tensor([2])))
    with pytest.raises(RuntimeError, match="same device"):
        xv.gather(0, torch.tensor([[0]]))
