"""complex64 indexing on vkml against the CPU: gather, scatter and its reductions, index_*,
advanced indexing and index_put, take and put_, the mask ops and nonzero. Random values,
non-contiguous operands, broadcast, zero-size and odd sizes, duplicate indices where values
accumulate, negative indices and the CPU's errors for bad input."""

import math

import pytest
import torch

import torch_vkml  # noqa: F401
from nn_helpers import HAS_FLOAT64

V = "vkml"
C64 = torch.complex64


def crand(shape, gen):
    return torch.complex(torch.randn(shape, generator=gen), torch.randn(shape, generator=gen))


def check(got, ref, exact=True):
    """Element moves match bit for bit; sums and products within float rounding."""
    assert got.device.type == V
    got = got.cpu()
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, got.shape, ref.shape)
    if exact:
        torch.testing.assert_close(got, ref, rtol=0, atol=0, equal_nan=True)
    else:
        torch.testing.assert_close(got, ref, rtol=2e-6, atol=1e-6, equal_nan=True)


def test_gather_and_index_select(gen):
    x = crand((7, 9), gen)
    xv = x.to(V)
    idx = torch.randint(0, 9, (7, 5), generator=gen)
    check(xv.gather(1, idx.to(V)), x.gather(1, idx))
    # transposed self, int32 index, strided out
    idx0 = torch.randint(0, 7, (4, 9), generator=gen, dtype=torch.int32)
    check(xv.t().gather(1, idx0.t().to(V)), x.t().gather(1, idx0.t()))
    out = torch.empty(7, 10, dtype=C64, device=V)[:, ::2]
    torch.gather(xv, 1, idx.to(V), out=out)
    check(out, x.gather(1, idx))
    check(xv.gather(0, torch.empty(0, 9, dtype=torch.long, device=V)),
          x.gather(0, torch.empty(0, 9, dtype=torch.long)))
    check(torch.take_along_dim(xv, idx.to(V), 1), torch.take_along_dim(x, idx, 1))
    sel = torch.tensor([8, 0, 3, 3])
    check(xv.index_select(1, sel.to(V)), x.index_select(1, sel))
    check(xv.t().index_select(0, sel.to(V)), x.t().index_select(0, sel))
    s = torch.tensor(1 - 2j, dtype=C64)
    zero = torch.tensor([0])
    check(s.to(V).index_select(0, zero.to(V)), s.index_select(0, zero))
    with pytest.raises(RuntimeError, match="out of bounds"):
        xv.gather(1, torch.tensor([[9]], device=V))
    with pytest.raises(IndexError):
        xv.index_select(0, torch.tensor([7], device=V))


@pytest.mark.filterwarnings("ignore:The reduce argument")
def test_scatter_forms(gen):
    x, src = crand((5, 7), gen), crand((6, 7), gen)
    idx = torch.argsort(torch.rand(5, 7, generator=gen), dim=0)[:3]  # no duplicates per column
    xv, sv, iv = x.to(V), src.to(V), idx.to(V)
    check(xv.scatter(0, iv, sv), x.scatter(0, idx, src))
    check(xv.scatter(0, iv, 1.5 - 2j), x.scatter(0, idx, 1.5 - 2j))
    check(xv.scatter(0, iv, 3), x.scatter(0, idx, 3))
    y = xv.t().clone().t()  # column-major self, in place
    y.scatter_(0, iv, sv.t().contiguous().t())  # column-major src
    check(y, x.scatter(0, idx, src))
    out = torch.empty(5, 7, dtype=C64, device=V)
    torch.scatter(xv, 0, iv, sv, out=out)
    check(out, x.scatter(0, idx, src))
    dup = torch.randint(0, 5, (9, 7), generator=gen)  # duplicates accumulate in index order
    s9 = crand((9, 7), gen)
    check(xv.scatter_add(0, dup.to(V), s9.to(V)), x.scatter_add(0, dup, s9), exact=False)
    check(xv.scatter(0, dup.to(V), s9.to(V), reduce="add"), x.scatter(0, dup, s9, reduce="add"),
          exact=False)
    check(xv.scatter(0, dup.to(V), s9.to(V), reduce="multiply"),
          x.scatter(0, dup, s9, reduce="multiply"), exact=False)
    with pytest.raises(RuntimeError, match="out of bounds"):
        xv.scatter_add(0, torch.full((1, 7), 5, device=V), sv)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_and_index_reduce(reduce, include_self, gen):
    x, src = crand((4, 6), gen), crand((10, 6), gen)
    idx = torch.randint(0, 4, (10, 6), generator=gen)
    got = x.to(V).scatter_reduce(0, idx.to(V), src.to(V), reduce, include_self=include_self)
    check(got, x.scatter_reduce(0, idx, src, reduce, include_self=include_self), exact=False)
    idx1 = torch.randint(0, 4, (10,), generator=gen)
    if reduce == "sum":  # index_reduce has no sum (index_add is one), on the CPU as well
        with pytest.raises(RuntimeError, match="Expected reduce"):
            x.to(V).index_reduce(0, idx1.to(V), src.to(V), reduce, include_self=include_self)
        return
    if not include_self:  # the CPU has no complex kernel for it: neither has vkml
        for t, i, s in [(x, idx1, src), (x.to(V), idx1.to(V), src.to(V))]:
            with pytest.raises(NotImplementedError, match="ComplexFloat"):
                t.index_reduce(0, i, s, reduce, include_self=False)
        return
    got = x.to(V).index_reduce(0, idx1.to(V), src.to(V), reduce, include_self=include_self)
    check(got, x.index_reduce(0, idx1, src, reduce, include_self=include_self), exact=False)


def test_ordered_reductions_raise():
    x = torch.zeros(3, dtype=C64, device=V)
    i = torch.tensor([0, 1], device=V)
    for reduce in ["amax", "amin"]:
        with pytest.raises(NotImplementedError, match="ComplexFloat"):
            x.scatter_reduce(0, i, x[:2], reduce)


@pytest.mark.parametrize("alpha", [1, -0.5, 2 - 1j])
def test_index_add(alpha, gen):
    x, src = crand((5, 8), gen), crand((5, 11), gen)
    idx = torch.randint(0, 8, (11,), generator=gen)  # duplicates
    got = x.to(V).index_add(1, idx.to(V), src.to(V), alpha=alpha)
    check(got, x.index_add(1, idx, src, alpha=alpha), exact=False)
    # non-contiguous self (in place) and source
    y = x.t().contiguous().to(V).t()
    srct = src.t().contiguous().to(V).t()
    y.index_add_(1, idx.to(V), srct, alpha=alpha)
    check(y, x.index_add(1, idx, src, alpha=alpha), exact=False)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.to(V).index_add(1, torch.tensor([8] * 11, device=V), src.to(V))


def test_index_add_non_finite():
    x = torch.zeros(3, dtype=C64)
    src = torch.tensor([complex(math.inf, 0), complex(1, math.nan), complex(-math.inf, 2)],
                       dtype=C64)
    idx = torch.tensor([0, 1, 2])
    check(x.to(V).index_add(0, idx.to(V), src.to(V)), x.index_add(0, idx, src))


def test_index_copy_and_fill(gen):
    x, src = crand((6, 5), gen), crand((3, 5), gen)
    idx = torch.tensor([4, 0, 2])
    check(x.to(V).index_copy(0, idx.to(V), src.to(V)), x.index_copy(0, idx, src))
    y = x.to(V)
    y.t().index_copy_(1, idx.to(V), src.t().to(V))
    check(y, x.index_copy(0, idx, src))
    with pytest.raises(IndexError):
        x.to(V).index_copy(0, torch.tensor([6, 0, 1], device=V), src.to(V))
    neg = torch.tensor([-1, 1, -3])
    check(x.to(V).index_fill(1, neg.to(V), 2 + 3j), x.index_fill(1, neg, 2 + 3j))
    check(x.to(V).index_fill(1, neg.to(V), -4), x.index_fill(1, neg, -4))
    value = torch.tensor(-1 + 0.5j, dtype=C64)
    check(x.to(V).index_fill(0, neg.to(V), value.to(V)), x.index_fill(0, neg, value))
    check(x.to(V).index_fill(0, neg.to(V), value), x.index_fill(0, neg, value))
    with pytest.raises(IndexError):
        x.to(V).index_fill(0, torch.tensor([6], device=V), 1j)


def test_advanced_index_and_index_put(gen):
    x = crand((5, 6, 7), gen)
    xv = x.to(V)
    i = torch.tensor([[4, -1], [0, 2]])
    j = torch.tensor([6, 0])
    check(xv[i.to(V), :, j.to(V)], x[i, :, j])
    check(xv[:, 1:5:2][:, :, j.to(V)], x[:, 1:5:2][:, :, j])
    mask = torch.rand(5, 6, generator=gen) > 0.5
    check(xv[mask.to(V)], x[mask])
    v = crand((2, 6), gen)
    ref = x.clone()
    ref[i, :, j] = v
    got = xv.clone()
    got[i.to(V), :, j.to(V)] = v.to(V)  # broadcast over i's rows
    check(got, ref)
    dup = torch.randint(-5, 5, (12,), generator=gen)  # duplicate rows accumulate
    vals = crand((12, 6, 7), gen)
    ref = x.index_put((dup,), vals, accumulate=True)
    check(xv.index_put((dup.to(V),), vals.to(V), accumulate=True), ref, exact=False)
    check(xv.index_put((dup.to(V),), torch.tensor(1 - 1j).to(V), accumulate=True),
          x.index_put((dup,), torch.tensor(1 - 1j), accumulate=True), exact=False)
    ref = x.clone()
    ref[mask] = 0.5j
    got = xv.clone()
    got[mask.to(V)] = 0.5j
    check(got, ref)
    with pytest.raises(IndexError):
        xv[torch.tensor([5], device=V)]
    with pytest.raises(IndexError):
        xv.index_put_((torch.tensor([-6], device=V),), torch.ones((), dtype=C64, device=V))


def test_unsafe_masked_index(gen):
    x = crand((4, 5), gen)
    mask = torch.rand(3, 5, generator=gen) > 0.4
    i = torch.randint(0, 4, (3, 1), generator=gen)
    j = torch.randint(0, 5, (3, 5), generator=gen)
    ref = torch.ops.aten._unsafe_masked_index(x, mask, [i, j], 1 + 1j)
    got = torch.ops.aten._unsafe_masked_index(x.to(V), mask.to(V), [i.to(V), j.to(V)], 1 + 1j)
    check(got, ref)
    vals = crand((3, 5), gen)
    ref = torch.ops.aten._unsafe_masked_index_put_accumulate(x, mask, [i, j], vals)
    got = torch.ops.aten._unsafe_masked_index_put_accumulate(x.to(V), mask.to(V),
                                                             [i.to(V), j.to(V)], vals.to(V))
    check(got, ref, exact=False)


def test_take_and_put(gen):
    x = crand((4, 7), gen)
    xt = x.t()  # non-contiguous: flat positions follow the view's row-major order
    idx = torch.tensor([[0, -1, 26], [5, 6, -27]])  # distinct positions
    check(xt.to(V).take(idx.to(V)), xt.take(idx))
    check(x.to(V).take(torch.empty(0, dtype=torch.long, device=V)),
          x.take(torch.empty(0, dtype=torch.long)))
    src = crand((2, 3), gen)
    check(x.to(V).put(idx.to(V), src.to(V)), x.put(idx, src))
    dup = torch.randint(-28, 28, (40,), generator=gen)
    s40 = crand((40,), gen)
    check(x.to(V).put(dup.to(V), s40.to(V), accumulate=True), x.put(dup, s40, accumulate=True),
          exact=False)
    y = xt.contiguous().to(V).t()
    y.put_(dup.to(V), s40.to(V), accumulate=True)
    check(y, x.put(dup, s40, accumulate=True), exact=False)
    with pytest.raises(IndexError, match="out of range"):
        x.to(V).take(torch.tensor([28], device=V))
    with pytest.raises(IndexError, match="out of range"):
        x.to(V).put_(torch.tensor([-29], device=V), src[0, :1].to(V))


def test_masked_fill_scatter_select(gen):
    x = crand((3, 4, 5), gen)
    mask = torch.rand(4, 1, generator=gen) > 0.5  # broadcast over dims 0 and 2
    xv = x.to(V)
    check(xv.masked_fill(mask.to(V), 2 - 7j), x.masked_fill(mask, 2 - 7j))
    check(xv.masked_fill(mask.to(V), 3.5), x.masked_fill(mask, 3.5))
    value = torch.tensor(-1j, dtype=C64)
    check(xv.masked_fill(mask.to(V), value.to(V)), x.masked_fill(mask, value))
    y = xv.transpose(0, 2)  # in place through a non-contiguous view
    y.masked_fill_(mask.to(V), 1j)
    check(xv, x.transpose(0, 2).masked_fill(mask, 1j).transpose(0, 2))
    x = crand((3, 4, 5), gen)
    src = crand((70,), gen)
    full = torch.rand(3, 4, 5, generator=gen) > 0.5
    check(x.to(V).masked_scatter(full.to(V), src.to(V)), x.masked_scatter(full, src))
    check(x.to(V).masked_select(mask.to(V)), x.masked_select(mask))
    check(x.to(V)[:, ::2].masked_select(full[:, ::2].to(V)), x[:, ::2].masked_select(full[:, ::2]))
    e = torch.empty(0, 5, dtype=C64)
    check(e.to(V).masked_select(torch.ones(5, dtype=torch.bool, device=V)),
          e.masked_select(torch.ones(5, dtype=torch.bool)))


def test_nonzero_and_argwhere(gen):
    parts = torch.tensor([0.0, -0.0, 1.0, math.nan, math.inf, 1e-45])
    special = torch.complex(parts.repeat_interleave(6), parts.repeat(6)).reshape(4, 9)
    for x in [special, special.t(), crand((3, 5), gen) * (torch.rand(3, 5, generator=gen) > 0.5),
              torch.zeros(2, 0, 3, dtype=C64), torch.tensor(0j), torch.tensor(1 + 0j)]:
        check(x.to(V).nonzero(), x.nonzero())
        check(torch.argwhere(x.to(V)), torch.argwhere(x))


def test_complex128_stays_not_implemented():
    if not HAS_FLOAT64:
        with pytest.raises(TypeError):
            torch.zeros(3, dtype=torch.complex128, device=V)
        return
    x = torch.zeros(3, dtype=torch.complex128, device=V)
    with pytest.raises(NotImplementedError):
        x.gather(0, torch.tensor([0], device=V))


def test_conjugate_and_negative_views(gen):
    # PyTorch resolves the conjugate and negative bits ahead of the kernels, in place included.
    x = crand((4, 5), gen)
    m = torch.rand(4, 5, generator=gen) > 0.5
    i = torch.tensor([[0, 1, 2, 3, 0]])

    def results(t, d):
        return [
            t.conj().gather(0, i.to(d)),
            t.conj().masked_fill(m.to(d), 1j),
            (-t.conj()).scatter_add(0, i.to(d), t[:1].conj()),
            t.conj().index_add(0, torch.tensor([1, 1, 0, 0]).to(d), t.conj(), alpha=1j),
            t.clone().conj().put_(torch.tensor([3, 7]).to(d), t[0, :2]),
            t.clone().conj().triu_(1),
        ]

    for got, ref in zip(results(x.to(V), V), results(x, "cpu")):
        assert got.is_conj() == ref.is_conj()
        check(got.resolve_conj(), ref.resolve_conj(), exact=False)
