"""Sort family on vkml against torch CPU: sort (stable indices must match exactly), argsort, msort,
topk, kthvalue, median; every dtype, NaN/inf, duplicates, strided inputs, out= and bad input."""

import pytest
import torch
from nn_helpers import ALL_DTYPES, device_dtypes

import torch_vkml

DTYPES = ALL_DTYPES
FLOATS = {torch.float32, torch.float16, torch.bfloat16, torch.float64}


def make(shape, dtype, seed=0, special=True):
    """Random data with many duplicates; floats also get fractions, +-0, +-inf and NaN."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype in FLOATS:
        x = torch.randint(-6, 6, shape, generator=g).double()
        x += torch.where(torch.rand(shape, generator=g) < 0.3, torch.rand(shape, generator=g), 0)
        flat = x.view(-1)
        if special and flat.numel() >= 8:
            pick = torch.randperm(flat.numel(), generator=g)[: max(6, flat.numel() // 10)]
            nan, inf = float("nan"), float("inf")
            vals = torch.tensor([nan, inf, -inf, -0.0, 0.0, nan])
            flat[pick] = vals.repeat(len(pick) // 6 + 1)[: len(pick)].double()
        return x.to(dtype)
    lo, hi = (0, 200) if dtype == torch.uint8 else (-100, 100)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def same(actual, expected):
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_cpu_stable(dtype, descending):
    for shape, dim in [((7, 37), 1), ((5, 300), -1), ((3000,), 0), ((9, 6, 5), 1), ((1,), 0)]:
        x = make(shape, dtype, seed=len(shape) + shape[0])
        ev, ei = torch.sort(x, dim=dim, descending=descending, stable=True)
        for stable in (True, False):
            v, i = torch.sort(x.to("vkml"), dim=dim, descending=descending, stable=stable)
            same(v, ev)
            same(i, ei)  # always stable, like CUDA's


def test_sort_long_lines_cross_blocks(vkml_config):
    # Lines longer than one shared-memory block (2048) take the bitonic global merge steps.
    vkml_config.set("VKML_SORT_RADIX_MIN", str(1 << 40))
    for n in (2049, 5000, 8192):
        x = make((2, n), torch.float32, seed=n)
        for desc in (False, True):
            ev, ei = torch.sort(x, dim=1, descending=desc, stable=True)
            v, i = torch.sort(x.to("vkml"), dim=1, descending=desc)
            same(v, ev)
            same(i, ei)


def test_sort_strided_and_out(fallback):
    base = make((12, 40), torch.float32, seed=3)
    xv = base.to("vkml")
    for view_cpu, view_v in [(base.t(), xv.t()), (base[::2, 3:30:3], xv[::2, 3:30:3])]:
        for dim in (0, 1):
            ev, ei = torch.sort(view_cpu, dim=dim, stable=True)
            v, i = torch.sort(view_v, dim=dim)
            same(v, ev)
            same(i, ei)
            ov = torch.empty(0, device="vkml")
            oi = torch.empty(0, dtype=torch.long, device="vkml")
            torch.sort(view_v, dim=dim, stable=True, out=(ov, oi))
            same(ov, ev)
            same(oi, ei)
            # Non-contiguous outputs.
            ov2 = torch.empty(ev.shape[::-1], device="vkml").t()
            oi2 = torch.empty(ev.shape[::-1], dtype=torch.long, device="vkml").t()
            torch.sort(view_v, dim=dim, descending=True, out=(ov2, oi2))
            ev2, ei2 = torch.sort(view_cpu, dim=dim, descending=True, stable=True)
            same(ov2, ev2)
            same(oi2, ei2)
    # Sorting into the input itself.
    y = xv.clone()
    idx = torch.empty(0, dtype=torch.long, device="vkml")
    torch.sort(y, dim=1, out=(y, idx))
    same(y, torch.sort(base, dim=1)[0])
    assert torch_vkml.fallback_stats() == {}


def test_sort_zero_size_and_scalar():
    for shape, dim in [((0,), 0), ((3, 0), 1), ((0, 4), 1), ((), 0)]:
        x = torch.randn(shape)
        ev, ei = torch.sort(x, dim=dim)
        v, i = torch.sort(x.to("vkml"), dim=dim)
        assert v.shape == ev.shape and i.shape == ei.shape and i.dtype == torch.long
        same(v, ev)
        same(i, ei)


def test_argsort_msort():
    x = make((6, 50), torch.float32, seed=11)
    xv = x.to("vkml")
    same(torch.argsort(xv, dim=1, stable=True), torch.argsort(x, dim=1, stable=True))
    same(
        torch.argsort(xv, dim=0, descending=True, stable=True),
        torch.argsort(x, dim=0, descending=True, stable=True),
    )
    same(torch.msort(xv), torch.msort(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.uint8])
def test_topk(dtype):
    x = make((6, 45), dtype, seed=5, special=False)
    xv = x.to("vkml")
    for k, largest in [(1, True), (7, True), (45, False), (0, True), (10, False)]:
        ev, _ = torch.topk(x, k, dim=1, largest=largest)
        v, i = torch.topk(xv, k, dim=1, largest=largest)
        same(v, ev)
        same(torch.gather(x, 1, i.cpu()), ev)  # the indices point at the values
    ev, _ = torch.topk(x.t(), 3, dim=0)
    v, i = torch.topk(xv.t(), 3, dim=0)
    same(v, ev)
    ov, oi = (
        torch.empty(0, dtype=dtype, device="vkml"),
        torch.empty(0, dtype=torch.long, device="vkml"),
    )
    torch.topk(xv, 4, out=(ov, oi))
    same(ov, torch.topk(x, 4)[0])


def test_topk_nan_is_largest():
    x = make((4, 60), torch.float32, seed=8)
    ev, ei = torch.topk(x, 9, dim=1)
    v, i = torch.topk(x.to("vkml"), 9, dim=1)
    same(v, ev)
    same(torch.gather(x, 1, i.cpu()), ev)


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64, torch.int64,
                                                 torch.int16))
def test_kthvalue_median(dtype):
    x = make((5, 31), dtype, seed=9, special=False)
    xv = x.to("vkml")
    for k in (1, 16, 31):
        for keepdim in (False, True):
            ev, ei = torch.kthvalue(x, k, dim=1, keepdim=keepdim)
            v, i = torch.kthvalue(xv, k, dim=1, keepdim=keepdim)
            same(v, ev)
            same(torch.gather(x, 1, i.cpu().view(5, 1)).view(ev.shape), ev)
    for xc, dim in [(x, 1), (x, 0), (x[:, :30], 1), (x.t(), 0)]:
        ev, ei = torch.median(xc, dim=dim)
        v, i = torch.median(xc.to("vkml"), dim=dim)
        same(v, ev)
        same(xc.gather(dim, i.cpu().unsqueeze(dim)).squeeze(dim), ev)
    ov, oi = (
        torch.empty(0, dtype=dtype, device="vkml"),
        torch.empty(0, dtype=torch.long, device="vkml"),
    )
    torch.median(xv, 1, keepdim=True, out=(ov, oi))
    same(ov, torch.median(x, 1, keepdim=True)[0])


def test_median_nan_propagates():
    x = torch.randn(4, 9)
    x[1, 5] = float("nan")
    x[1, 2] = float("nan")
    x[3, 0] = float("nan")
    ev, ei = torch.median(x, dim=1)
    v, i = torch.median(x.to("vkml"), dim=1)
    same(v, ev)
    same(i, ei)


def test_bad_input_errors():
    x = torch.randn(3, 4)
    xv = x.to("vkml")
    cases = [
        lambda t: torch.sort(t, dim=2),
        lambda t: torch.sort(t, dim=-3),
        lambda t: torch.topk(t, 5, dim=1),
        lambda t: torch.topk(t, 2, dim=3),
        lambda t: torch.kthvalue(t, 0, dim=1),
        lambda t: torch.kthvalue(t, 5, dim=1),
        lambda t: torch.median(t[:, :0], dim=1),
    ]
    for case in cases:
        with pytest.raises(Exception) as cpu_err:
            case(x)
        with pytest.raises(cpu_err.type):
            case(xv)
    with pytest.raises(RuntimeError):
        torch.sort(
            xv,
            out=(
                torch.empty(0, dtype=torch.int32, device="vkml"),
                torch.empty(0, dtype=torch.long, device="vkml"),
            ),
        )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8])
def test_searchsorted_bucketize(dtype, fallback):
    g = torch.Generator().manual_seed(21)
    bnd = torch.sort(torch.randint(0, 50, (40,), generator=g))[0].to(dtype)  # with duplicates
    q = torch.randint(-2, 53, (7, 9), generator=g).to(dtype)
    bv, qv = bnd.to("vkml"), q.to("vkml")
    for right in (False, True):
        same(torch.searchsorted(bv, qv, right=right), torch.searchsorted(bnd, q, right=right))
        same(torch.bucketize(qv, bv, right=right), torch.bucketize(q, bnd, right=right))
        side = "right" if right else "left"
        same(torch.searchsorted(bv, qv.t(), side=side), torch.searchsorted(bnd, q.t(), side=side))
        out = torch.empty(0, dtype=torch.int32, device="vkml")
        torch.searchsorted(bv, qv, out_int32=True, right=right, out=out)
        same(out, torch.searchsorted(bnd, q, out_int32=True, right=right))
    same(torch.searchsorted(bv, 17), torch.searchsorted(bnd, 17))
    same(torch.bucketize(5, bv, right=True), torch.bucketize(5, bnd, right=True))
    # N-D boundaries: one sorted line per query row, and an unsorted line read through a sorter.
    b2 = torch.sort(torch.randint(0, 30, (7, 12), generator=g), dim=1)[0].to(dtype)
    same(torch.searchsorted(b2.to("vkml"), qv), torch.searchsorted(b2, q))
    raw = torch.randint(0, 30, (7, 12), generator=g).to(dtype)
    sorter = torch.argsort(raw, dim=1, stable=True)
    same(
        torch.searchsorted(raw.to("vkml"), qv, sorter=sorter.to("vkml"), right=True),
        torch.searchsorted(raw, q, sorter=sorter, right=True),
    )
    same(torch.searchsorted(bv, qv[:, :0]), torch.searchsorted(bnd, q[:, :0]))
    assert torch_vkml.fallback_stats() == {}


def test_searchsorted_errors_and_promotion():
    bnd = torch.tensor([1.0, 2.5, 4.0])
    bv = bnd.to("vkml")
    q = torch.tensor([[0, 3, 5]])
    same(torch.searchsorted(bv, q.to("vkml")), torch.searchsorted(bnd, q))
    cases = [
        lambda b, x: torch.searchsorted(b, x, side="middle"),
        lambda b, x: torch.searchsorted(b, x, side="left", right=True),
        lambda b, x: torch.searchsorted(b.view(1, 3).expand(2, 3), x),
        lambda b, x: torch.bucketize(x, b.view(1, 3)),
    ]
    for case in cases:
        with pytest.raises(Exception) as cpu_err:
            case(bnd, q.half())
        with pytest.raises(cpu_err.type):
            case(bv, q.half().to("vkml"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_mode(dtype):
    # Few distinct values, so counts tie often: the smallest of the most frequent values wins.
    # Its index is any of its occurrences on the CPU (an unstable sort): vkml gives the last.
    g = torch.Generator().manual_seed(31)
    base = torch.randint(-3, 4, (6, 41), generator=g)
    x = base.bool() if dtype == torch.bool else (base.abs() if dtype == torch.uint8 else base)
    x = x.to(dtype)  # no NaN: the CPU's sort breaks runs around NaNs unpredictably
    for xc, dim in [(x, 1), (x, 0), (x.t(), 1), (x[:, 1::2], -1), (x[0], 0)]:
        for keepdim in (False, True):
            ev, ei = torch.mode(xc, dim, keepdim)
            v, i = torch.mode(xc.to("vkml"), dim, keepdim)
            same(v, ev)
            idx = i.cpu() if keepdim else i.cpu().unsqueeze(dim)
            same(xc.gather(dim, idx), ev if keepdim else ev.unsqueeze(dim))
            hits = (xc.flip(dim) == v.cpu().view(idx.shape)).int()
            last = xc.size(dim) - 1 - hits.argmax(dim, True)
            same(idx, last)
    same(torch.mode(x[0, 0].to("vkml"))[0], torch.mode(x[0, 0])[0])
    ov = torch.empty(0, dtype=dtype, device="vkml")
    oi = torch.empty(0, dtype=torch.long, device="vkml")
    torch.mode(x.to("vkml"), 1, out=(ov, oi))
    same(ov, torch.mode(x, 1)[0])
    same(torch.mode(x[:0].to("vkml"), 1)[0], torch.mode(x[:0], 1)[0])


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != torch.bool])
def test_median_and_nanmedian_whole(dtype):
    for shape in [(7, 9), (8, 4), (3001,), (1,)]:
        x = make(shape, dtype, seed=shape[0])
        same(torch.median(x.to("vkml")), torch.median(x))
        same(torch.nanmedian(x.to("vkml")), torch.nanmedian(x))
        if x.dim() == 2:
            same(torch.median(x.t().to("vkml")), torch.median(x.t()))
    if dtype in FLOATS:
        nan = float("nan")
        for vals in ([nan, nan], [nan, 1.0, 2.0], [3.0, nan, 1.0, 2.0]):
            x = torch.tensor(vals, dtype=dtype)
            same(torch.median(x.to("vkml")), torch.median(x))
            same(torch.nanmedian(x.to("vkml")), torch.nanmedian(x))
        same(torch.median(torch.empty(0, dtype=dtype).to("vkml")),
             torch.median(torch.empty(0, dtype=dtype)))


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != torch.bool])
def test_nanmedian_dim(dtype):
    x = make((6, 23), dtype, seed=33)
    if dtype in FLOATS:
        x[1] = float("nan")  # a line of NaNs only
        x[2, :20] = float("nan")
    for xc, dim in [(x, 1), (x, 0), (x.t(), 1), (x[:, ::2], -1)]:
        for keepdim in (False, True):
            ev, ei = torch.nanmedian(xc, dim, keepdim)
            v, i = torch.nanmedian(xc.to("vkml"), dim, keepdim)
            same(v, ev)
            # Equal values may come from another position than the CPU's.
            idx = i.cpu() if keepdim else i.cpu().unsqueeze(dim)
            same(xc.gather(dim, idx), ev if keepdim else ev.unsqueeze(dim))
    with pytest.raises(IndexError):
        torch.nanmedian(x[:, :0].to("vkml"), 1)


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64))
def test_quantile_nanquantile(dtype):
    x = make((6, 29), dtype, seed=35, special=False)
    x[2, ::3] = float("nan")
    q = torch.tensor([0.0, 0.1, 0.5, 0.77, 1.0], dtype=dtype)
    for fn in (torch.quantile, torch.nanquantile):
        for interpolation in ("linear", "lower", "higher", "midpoint", "nearest"):
            for dim, keepdim in [(None, False), (1, False), (0, True), (-1, True)]:
                kw = dict(dim=dim, keepdim=keepdim, interpolation=interpolation)
                e = fn(x, q, **kw)
                torch.testing.assert_close(fn(x.to("vkml"), q.to("vkml"), **kw).cpu(), e,
                                           equal_nan=True)
                torch.testing.assert_close(fn(x.t().to("vkml"), 0.3, **kw).cpu(),
                                           fn(x.t(), 0.3, **kw), equal_nan=True)


# ---- radix sort (long lines; VKML_SORT_RADIX_MIN sets the length from which it is used) -------

RADIX_MIN = 1 << 13


def check_sort_both(x, dim, descending):
    ev, ei = torch.sort(x, dim=dim, descending=descending, stable=True)
    for stable in (True, False):
        v, i = torch.sort(x.to("vkml"), dim=dim, descending=descending, stable=stable)
        same(v, ev)
        same(i, ei)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_around_radix_threshold(dtype, descending, vkml_config):
    # RADIX_MIN - 1 takes the bitonic network, the others the radix sort (several tiles). The
    # device's own threshold (2^10 on CPU devices, 2^15 on GPUs) is set here to one value.
    vkml_config.set("VKML_SORT_RADIX_MIN", str(RADIX_MIN))
    for n in (RADIX_MIN - 1, RADIX_MIN, RADIX_MIN + 3):
        check_sort_both(make((2, n), dtype, seed=n), 1, descending)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("serial", ["0", "1"])
def test_radix_sort_forced_on_short_lines(dtype, serial, vkml_config):
    # Every line length, many rows, middle dims and single elements through the radix sort, in
    # both variants (shared-memory ranking for GPUs, serial counting for CPU devices).
    vkml_config.set("VKML_SORT_RADIX_MIN", "1")
    vkml_config.set("VKML_SORT_RADIX_SERIAL", serial)
    for shape, dim in [((7, 37), 1), ((5, 300), -1), ((3000,), 0), ((9, 6, 5), 1), ((1,), 0)]:
        x = make(shape, dtype, seed=len(shape) + shape[0])
        for descending in (False, True):
            check_sort_both(x, dim, descending)


def test_radix_sort_strided_batched_and_out(vkml_config):
    vkml_config.set("VKML_SORT_RADIX_MIN", str(RADIX_MIN))
    n = RADIX_MIN + 77
    base = make((n, 6), torch.float32, seed=41)
    xv = base.to("vkml")
    # Transposed (lines with stride 6) and sliced (stride 2 along the line) inputs.
    for view_cpu, view_v in [(base.t(), xv.t()), (base[::2, 1:4].t(), xv[::2, 1:4].t())]:
        ev, ei = torch.sort(view_cpu, dim=1, descending=True, stable=True)
        ov = torch.empty(ev.shape[::-1], device="vkml").t()
        oi = torch.empty(ev.shape[::-1], dtype=torch.long, device="vkml").t()
        torch.sort(view_v, dim=1, descending=True, stable=True, out=(ov, oi))
        same(ov, ev)
        same(oi, ei)
    # Many rows at once, one of them constant (its digits are all skipped, the others are not).
    rows = make((24, RADIX_MIN + 5), torch.int64, seed=42)
    rows[3] = 17
    check_sort_both(rows, 1, False)
    expected = torch.argsort(rows, dim=1, stable=True)
    same(torch.argsort(rows.to("vkml"), dim=1, stable=True), expected)
    same(torch.msort(rows.t().to("vkml")), torch.msort(rows.t()))


def test_radix_sort_many_tiles_and_small_ranges(vkml_config):
    vkml_config.set("VKML_SORT_RADIX_MIN", str(RADIX_MIN))
    # 70 tiles of 2048 on a line (the digit scan takes one workgroup per digit); small
    # non-negative int64 skip their constant upper bytes.
    x = make((140000,), torch.float32, seed=43)
    check_sort_both(x, 0, False)
    small = torch.randint(0, 1000, (2, 20000), generator=torch.Generator().manual_seed(44))
    check_sort_both(small, 1, True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64])
def test_radix_selections(dtype, vkml_config):
    # topk, kthvalue and median (NaN first under median) on long lines take the radix sort too.
    vkml_config.set("VKML_SORT_RADIX_MIN", str(RADIX_MIN))
    x = make((3, RADIX_MIN + 100), dtype, seed=45)
    xv = x.to("vkml")
    for largest in (True, False):
        ev, _ = torch.topk(x, 50, dim=1, largest=largest)
        v, i = torch.topk(xv, 50, dim=1, largest=largest)
        same(v, ev)
        same(torch.gather(x, 1, i.cpu()), ev)
    ev, ei = torch.kthvalue(x, 1000, dim=1)
    v, i = torch.kthvalue(xv, 1000, dim=1)
    same(v, ev)
    same(torch.gather(x, 1, i.cpu().view(3, 1)).view(3), ev)
    y = x.clone()
    if dtype.is_floating_point:
        y[1] = torch.where(y[1].isnan(), 0, y[1])  # one line without NaN, the others with
    ev, ei = torch.median(y, dim=1)
    v, i = torch.median(y.to("vkml"), dim=1)
    same(v, ev)
    same(torch.gather(y, 1, i.cpu().view(3, 1)).view(3), ev)  # duplicates: any of their indices
