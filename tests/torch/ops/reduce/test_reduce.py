"""Reductions and scans on vkml against the CPU (float64 references where the dtype allows):
strided, broadcast, zero-size and odd-sized inputs, every dtype, dtype=/out=/in-place forms,
PyTorch's errors, autograd, and printing."""

import math
import re
import warnings

import pytest
import torch
from nn_helpers import HAS_FLOAT64, device_dtypes

import torch_vkml

VK = "vkml"
FLOATS = device_dtypes(torch.float32, torch.float16, torch.bfloat16, torch.float64)
# Relative tolerance of a result against its float64 reference, by dtype.
RTOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float64: 1e-12}


def rand(*shape, dtype=torch.float32, seed=0, lo=-20, hi=20):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(*shape, generator=g).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    lo = 0 if dtype == torch.uint8 else lo
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def layouts(x):
    """x itself and, on vkml, a transposed view; for float32 (the dtype that every layout path is
    tested with) also a strided slice and a broadcast view. Pairs of (CPU, vkml) tensors."""
    v = x.to(VK)
    out = [(x, v)]
    if x.dim() >= 2:
        out.append((x.transpose(0, -1), v.transpose(0, -1)))
        if x.dtype == torch.float32:
            out.append((x[::2, 1:], v[::2, 1:]))
            out.append((x[:1].expand(3, *x.shape[1:]), v[:1].expand(3, *x.shape[1:])))
    return out


def assert_matches(got, want, rtol=1e-5, scale=None):
    """got (vkml) against want (CPU): same dtype and shape, values within rtol * scale."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_matches(g, w, rtol, scale)
        return
    assert got.device.type == VK
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    g = got.cpu()
    if not want.dtype.is_floating_point:
        assert torch.equal(g, want)
        return
    s = want.double().abs().nan_to_num(0, 0, 0).max().item() if want.numel() else 1.0
    s = max(1.0, s if scale is None else scale)
    torch.testing.assert_close(g.double(), want.double(), rtol=rtol, atol=rtol * s, equal_nan=True)


# ---- sums, means, products -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_sum_mean_prod_float(dtype):
    x = rand(6, 35, 9, dtype=dtype, seed=1)
    for cx, vx in layouts(x):
        ref = cx.double()
        for dims in [None, 0, 1, (0, 2), (-1,), ()]:
            for keepdim in (False, True):
                kw = {} if dims is None else {"dim": dims, "keepdim": keepdim}
                scale = ref.abs().sum(dims if dims not in (None, ()) else None).max().item()
                want = ref.sum(**kw).to(dtype)
                assert_matches(vx.sum(**kw), want, RTOL[dtype], scale)
                n = ref.numel() / max(1, ref.sum(**kw).numel())
                assert_matches(vx.mean(**kw), ref.mean(**kw).to(dtype), RTOL[dtype], scale / n)
        small = cx[:2, :4] if cx.dim() > 1 else cx[:4]
        assert_matches(vx[:2, :4].prod(), small.double().prod().to(dtype), RTOL[dtype])
        assert_matches(vx.prod(1, keepdim=True), ref.prod(1, keepdim=True).to(dtype), 1e-3)


def test_sum_accuracy_of_large_full_reductions():
    # 1e5 elements: the two-pass path, against a float64 reference (relative to sum |x|).
    x = rand(100_003, seed=2)
    ref = x.double()
    got = x.to(VK).sum().item()
    assert abs(got - ref.sum().item()) <= 1e-5 * ref.abs().sum().item()
    y = rand(317, 331, seed=3) + 0.5  # mostly positive: relative error of the sum itself
    assert abs(y.to(VK).sum().item() / y.double().sum().item() - 1) < 1e-5
    assert abs(y.to(VK).mean().item() / y.double().mean().item() - 1) < 1e-5
    col = y.to(VK).sum(0).cpu().double()  # column reduction
    torch.testing.assert_close(col, y.double().sum(0), rtol=1e-5, atol=1e-5 * 331)


@pytest.mark.parametrize(
    "dtype", [torch.int32, torch.uint8, torch.bool, torch.int8, torch.int64, torch.int16]
)
def test_integer_sums_are_exact_int64(dtype):
    x = rand(7, 130, dtype=dtype, seed=4)
    for cx, vx in layouts(x):
        assert_matches(vx.sum(), cx.sum())
        assert_matches(vx.sum(1), cx.sum(1))
        assert_matches(
            vx.sum(0, keepdim=True, dtype=torch.int32), cx.sum(0, True, dtype=torch.int32)
        )
        assert_matches(vx.sum(1, dtype=torch.float32), cx.sum(1, dtype=torch.float32))
        assert_matches(vx[:, :9].prod(1), cx[:, :9].prod(1))
        assert_matches(torch.nansum(vx, 1), torch.nansum(cx, 1))
    big = torch.full((1000,), 2**40, dtype=torch.int64)
    assert big.to(VK).sum().item() == 1000 * 2**40


def test_dtype_argument_casts_before_accumulating():
    x = rand(5, 40, seed=5) * 10
    v = x.to(VK)
    assert_matches(v.sum(1, dtype=torch.int32), x.sum(1, dtype=torch.int32))
    assert_matches(v.sum(1, dtype=torch.float16), x.sum(1, dtype=torch.float16), 2e-3)
    assert_matches(v.half().mean(1), x.half().double().mean(1).half(), 2e-3)
    assert_matches(v.half().sum(0, dtype=torch.float32), x.half().sum(0, dtype=torch.float32), 1e-5)
    if HAS_FLOAT64:
        assert_matches(v.sum(dtype=torch.float64), x.sum(dtype=torch.float64), 1e-6)
        assert_matches(v.mean(0, dtype=torch.float64), x.double().mean(0), 1e-6)
        assert_matches(v.prod(1, dtype=torch.float64), x.prod(1, dtype=torch.float64), 1e-5)


def test_nansum_skips_nans():
    x = rand(4, 50, seed=6)
    x[1, 3] = x[2, 0] = float("nan")
    x[3] = float("nan")
    assert_matches(torch.nansum(x.to(VK), 1), torch.nansum(x, 1))
    assert_matches(torch.nansum(x.to(VK)), torch.nansum(x))
    assert_matches(x.to(VK).sum(1), x.sum(1))  # plain sum propagates NaN


# ---- extremes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype",
    device_dtypes(
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.float64,
        torch.int32,
        torch.uint8,
        torch.bool,
        torch.int64,
    ),
)
def test_max_min_argmax_first_occurrence(dtype):
    x = rand(9, 60, dtype=dtype, seed=7, lo=-3, hi=3)  # small integer range: many ties
    if dtype.is_floating_point:
        x = (x * 2).round()  # ties for floats too
        x[4, 7] = x[4, 30] = float("nan")
    for cx, vx in layouts(x):
        assert_matches(vx.max(), cx.max())
        assert_matches(vx.min(), cx.min())
        for dim in (0, 1, -1):
            assert_matches(tuple(vx.max(dim)), tuple(cx.max(dim)))
            assert_matches(tuple(vx.min(dim, keepdim=True)), tuple(cx.min(dim, keepdim=True)))
            assert_matches(vx.amax(dim), cx.amax(dim))
            if dtype != torch.bool:
                assert_matches(vx.argmax(dim), cx.argmax(dim))
                assert_matches(vx.argmin(dim, keepdim=True), cx.argmin(dim, keepdim=True))
        assert_matches(vx.amin((0, 1)), cx.amin((0, 1)))
        assert_matches(vx.amax((0, 1), keepdim=True), cx.amax((0, 1), keepdim=True))
        if dtype != torch.bool:
            assert_matches(vx.argmax(), cx.argmax())
            assert_matches(vx.argmin(keepdim=True), cx.argmin(keepdim=True))
        assert_matches(tuple(torch.aminmax(vx)), tuple(torch.aminmax(cx)))
        assert_matches(tuple(torch.aminmax(vx, dim=1)), tuple(torch.aminmax(cx, dim=1)))


def test_max_of_scalars_and_size_one_dims():
    s = torch.tensor(3.5)
    assert_matches(tuple(s.to(VK).max(0)), tuple(s.max(0)))
    assert_matches(s.to(VK).argmax(), s.argmax())
    x = rand(4, 1, 3, seed=8)
    assert_matches(x.to(VK).argmax(1), x.argmax(1))
    assert_matches(tuple(x.to(VK).max(1)), tuple(x.max(1)))


# ---- all / any / count_nonzero --------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.float32, torch.int64])
def test_all_any(dtype):
    x = rand(6, 33, dtype=dtype, seed=9, lo=0, hi=2)
    x[0] = 1
    x[1] = 0
    if dtype.is_floating_point:
        x[2, 5] = float("nan")  # NaN is true
    for cx, vx in layouts(x):
        for fn in (torch.all, torch.any):
            assert_matches(fn(vx), fn(cx))
            assert_matches(fn(vx, 1), fn(cx, 1))
            assert_matches(fn(vx, 0, keepdim=True), fn(cx, 0, keepdim=True))
            assert_matches(fn(vx, dim=(0, 1)), fn(cx, dim=(0, 1)))
            assert_matches(fn(vx, dim=()), fn(cx, dim=()))
        assert_matches(torch.count_nonzero(vx), torch.count_nonzero(cx))
        assert_matches(torch.count_nonzero(vx, dim=1), torch.count_nonzero(cx, dim=1))
        assert_matches(torch.count_nonzero(vx, dim=(0, 1)), torch.count_nonzero(cx, dim=(0, 1)))


# ---- std / var / norms / logsumexp ----------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_std_var(dtype):
    x = rand(5, 41, 3, dtype=dtype, seed=10) * 3 + 1
    for cx, vx in layouts(x):
        ref = cx.double()
        for kw in [
            {},
            {"dim": 1},
            {"dim": (0, 2), "keepdim": True},
            {"dim": 1, "correction": 0},
            {"dim": 0, "unbiased": False},
            {"correction": 2.5},
        ]:
            assert_matches(vx.var(**kw), ref.var(**kw).to(dtype), RTOL[dtype] * 3)
            assert_matches(vx.std(**kw), ref.std(**kw).to(dtype), RTOL[dtype] * 3)
            assert_matches(
                torch.var_mean(vx, **kw),
                tuple(t.to(dtype) for t in torch.var_mean(ref, **kw)),
                RTOL[dtype] * 3,
            )
            assert_matches(
                torch.std_mean(vx, **kw),
                tuple(t.to(dtype) for t in torch.std_mean(ref, **kw)),
                RTOL[dtype] * 3,
            )


def test_std_var_degenerate_and_warning():
    x = rand(3, 1, seed=11)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert_matches(x.to(VK).var(1), x.var(1))
    assert_matches(x.to(VK).var(1, correction=0), x.var(1, correction=0))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert_matches(x.to(VK).std(correction=5), x.std(correction=5))


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.bfloat16, torch.float64))
def test_vector_norms(dtype):
    x = rand(8, 21, dtype=dtype, seed=12)
    x[0, 0] = 0
    for cx, vx in layouts(x):
        ref = cx.double()
        for ord in [2, 1, 0, 3, 0.5, -1, math.inf, -math.inf]:
            for kw in [{}, {"dim": 1}, {"dim": (0, 1), "keepdim": True}]:
                want = torch.linalg.vector_norm(ref, ord, **kw).to(dtype)
                assert_matches(torch.linalg.vector_norm(vx, ord, **kw), want, RTOL[dtype] * 4)
        assert_matches(vx.norm(), ref.norm().to(dtype), RTOL[dtype])
        assert_matches(vx.norm(1, dim=1), ref.norm(1, dim=1).to(dtype), RTOL[dtype])
        assert_matches(torch.norm(vx, p="fro"), ref.norm(p="fro").to(dtype), RTOL[dtype])
    if HAS_FLOAT64:
        v = x.to(VK)
        want = torch.linalg.vector_norm(x, 2, dim=1, dtype=torch.float64)
        assert_matches(torch.linalg.vector_norm(v, 2, dim=1, dtype=torch.float64), want, 1e-5)


@pytest.mark.parametrize(
    "dtype", device_dtypes(torch.float32, torch.float16, torch.float64, torch.int32)
)
def test_logsumexp(dtype):
    x = rand(6, 50, dtype=dtype, seed=13) * (4 if dtype.is_floating_point else 1)
    if dtype.is_floating_point:
        x[0, 3] = 60.0  # would overflow exp without the max shift in float16
        x[1] = -math.inf
        x[2, 9] = math.inf
        x[3, 1] = math.nan
    for cx, vx in layouts(x):
        ref = cx.double() if dtype.is_floating_point else cx.float()
        for dim, keepdim in [(1, False), (0, True), ((0, 1), False), (-1, True)]:
            want = torch.logsumexp(ref, dim, keepdim).to(torch.logsumexp(cx, dim).dtype)
            assert_matches(torch.logsumexp(vx, dim, keepdim), want, RTOL.get(dtype, 1e-5) * 2)


# ---- scans ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.bool, torch.uint8])
def test_cumsum_cumprod(dtype):
    x = rand(5, 300, dtype=dtype, seed=14, lo=-2, hi=3)
    for cx, vx in layouts(x):
        for dim in (0, 1, -1):
            want = cx.double().cumsum(dim) if dtype.is_floating_point else cx.cumsum(dim)
            scale = cx.double().abs().sum().item()
            assert_matches(
                vx.cumsum(dim),
                want.to(cx.cumsum(dim).dtype),
                RTOL[dtype] if dtype in RTOL else 0,
                scale,
            )
        assert_matches(vx[:, :12].cumprod(1), cx[:, :12].cumprod(1), RTOL.get(dtype, 0) * 4)
    if HAS_FLOAT64:
        v = x.to(VK)
        assert_matches(v.cumsum(1, dtype=torch.float64), x.cumsum(1, dtype=torch.float64), 1e-5,
                       1e3)


def test_long_scans_and_many_lines():
    x = rand(3, 20_000, seed=15)
    ref = x.double().cumsum(1)
    got = x.to(VK).cumsum(1).cpu().double()
    assert ((got - ref).abs() <= 1e-5 * x.double().abs().cumsum(1)).all()
    y = rand(3000, 7, seed=16)  # many short columns: one thread per line
    assert_matches(y.to(VK).cumsum(0), y.double().cumsum(0).float(), 1e-5, 300)


@pytest.mark.parametrize(
    "dtype", device_dtypes(torch.float32, torch.float16, torch.int16, torch.bool, torch.float64)
)
def test_cummax_cummin_ties_and_nan(dtype):
    x = rand(4, 80, dtype=dtype, seed=17, lo=-3, hi=3)
    if dtype.is_floating_point:
        x = (x * 2).round()
        x[1, 10] = x[1, 40] = math.nan
    for cx, vx in layouts(x):
        for dim in (0, 1):
            assert_matches(tuple(torch.cummax(vx, dim)), tuple(torch.cummax(cx, dim)))
            assert_matches(tuple(torch.cummin(vx, dim)), tuple(torch.cummin(cx, dim)))


def test_logcumsumexp():
    x = rand(4, 700, seed=18) * 5
    x[1, :10] = -math.inf
    x[2, 50] = math.inf
    for cx, vx in layouts(x):
        assert_matches(torch.logcumsumexp(vx, 1), torch.logcumsumexp(cx.double(), 1).float(), 2e-5)
        assert_matches(torch.logcumsumexp(vx, 0), torch.logcumsumexp(cx.double(), 0).float(), 2e-5)
    if HAS_FLOAT64:
        d = rand(3, 40, dtype=torch.float64, seed=19)
        assert_matches(torch.logcumsumexp(d.to(VK), 1), torch.logcumsumexp(d, 1), 1e-12)


def test_logcumsumexp_backward_matches_cpu():
    # The backward subtracts two large exponentials: the forward must round like the CPU's
    # (double accumulation) for the gradients to agree.
    x = rand(5, 5, 5, seed=20) * 4
    g = rand(5, 5, 5, seed=21)
    for dim in (0, 1, 2):
        cx = x.clone().requires_grad_()
        vx = x.to(VK).requires_grad_()
        (want,) = torch.autograd.grad(torch.logcumsumexp(cx, dim), cx, g)
        (got,) = torch.autograd.grad(torch.logcumsumexp(vx, dim), vx, g.to(VK))
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not torch_vkml.has_float64_support(), reason="double accumulation needs fp64")
def test_float32_cumprod_accumulates_in_double_as_the_cpu():
    """The CPU's float32 cumprod carries its running product in double, so a product that
    overflows (or underflows) float32 on the way comes back into range; vkml's ran in float and
    stayed inf or 0. Found by fuzzing (tests/torch/conformance/fuzz_programs.py)."""
    short = torch.tensor([[3e38, 10.0, 1e-10, 2.0], [1e-30, 1e-30, 1e30, 1e30]])
    long = torch.tensor([1e30, 1e30, -1e-30, 1e-30] * 150).reshape(1, 600)  # per-workgroup path
    for x in (short, long, torch.cat([long, -long]).t().contiguous().t()):
        for dim in (0, 1):
            want = x.cumprod(dim)
            assert_matches(x.to(VK).cumprod(dim), want, 1e-6)
            assert torch.equal(x.to(VK).cumprod(dim).cpu().isinf(), want.isinf())


def test_scans_of_scalars_and_empty():
    s = torch.tensor(2.5)
    assert_matches(s.to(VK).cumsum(0), s.cumsum(0))
    assert_matches(tuple(s.to(VK).cummax(0)), tuple(s.cummax(0)))
    e = torch.empty(0, 4)
    assert_matches(e.to(VK).cumsum(1), e.cumsum(1))
    assert_matches(tuple(e.to(VK).cummin(0)), tuple(e.cummin(0)))


# ---- column reductions (reduced dim strided, kept dim contiguous) ----------------------------
# f32/f16/bf16/f64/i16/i32/i64 take the column layout (16 bytes of adjacent outputs per thread,
# one load where aligned, long columns split over workgroups); 1-byte dtypes and strided kept dims
# the plain one.

COLUMN_SHAPES = [(3000, 37), (1025, 130), (5000, 64)]


def column_inputs(shape, dtype, seed):
    """A contiguous tensor, a misaligned one (storage offset 1), a row slice x[1:] and a column
    slice x[:, 1:] (odd extent, rows not all 16-byte aligned). Pairs of (CPU, vkml)."""
    rows, cols = shape
    flat = rand(rows * cols + 1, dtype=dtype, seed=seed)
    x = flat[1:].view(rows, cols)
    v = flat.to(VK)[1:].view(rows, cols)
    return [
        (x, x.to(VK)),
        (x, v),
        (x[1:], x.to(VK)[1:]),
        (x[:, 1:], x.to(VK)[:, 1:]),
    ]


def check_column_ops(cx, vx, dtype, dims):
    ref = cx.double()
    rtol = RTOL[dtype]
    scale = ref.abs().sum(dims).max().item() if ref.numel() else 1.0
    n = ref.numel() // max(1, ref.sum(dims).numel())
    assert_matches(vx.sum(dims), ref.sum(dims).to(dtype), rtol, scale)
    assert_matches(
        vx.mean(dims, keepdim=True), ref.mean(dims, keepdim=True).to(dtype), rtol, scale / n
    )
    assert_matches(vx.amax(dims), cx.amax(dims))
    assert_matches(vx.amin(dims, keepdim=True), cx.amin(dims, keepdim=True))
    assert_matches(vx.var(dims), ref.var(dims).to(dtype), rtol * 3)
    assert_matches(vx.std(dims, correction=0), ref.std(dims, correction=0).to(dtype), rtol * 3)
    assert_matches(vx.norm(dim=dims), ref.norm(dim=dims).to(dtype), rtol * 3)
    assert_matches(
        torch.linalg.vector_norm(vx, 3, dims),
        torch.linalg.vector_norm(ref, 3, dims).to(dtype),
        rtol * 3,
    )
    assert_matches(vx.logsumexp(dims), ref.logsumexp(dims).to(dtype), rtol * 3)
    assert_matches(vx[:6].prod(0), ref[:6].prod(0).to(dtype), rtol * 3)


@pytest.mark.parametrize("dtype", FLOATS)
def test_column_reductions_over_dim0(dtype):
    shapes = COLUMN_SHAPES if dtype == torch.float32 else COLUMN_SHAPES[1:2]
    for i, shape in enumerate(shapes):
        pairs = column_inputs(shape, dtype, seed=40)
        # Every layout once for float32; misaligned and odd-width slices for the rest.
        for cx, vx in pairs if i == 0 and dtype == torch.float32 else pairs[1::2]:
            check_column_ops(cx, vx, dtype, 0)
            # Exact ops against the CPU on the same dtype: argmax/argmin first index on ties.
            q = (cx * 2).round()
            vq = (vx * 2).round()
            assert_matches(vq.argmax(0), q.argmax(0))
            assert_matches(vq.argmin(0, keepdim=True), q.argmin(0, keepdim=True))
            assert_matches(tuple(vq.max(0)), tuple(q.max(0)))
            assert_matches(tuple(torch.aminmax(vq, dim=0)), tuple(torch.aminmax(q, dim=0)))
            assert_matches(torch.count_nonzero(vq, 0), torch.count_nonzero(q, 0))
            assert_matches(vq.bool().any(0), q.bool().any(0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_column_reductions_over_leading_dims_of_3d(dtype):
    x = rand(40, 30, 19, dtype=dtype, seed=41)
    for cx, vx in [(x, x.to(VK)), (x[:, 1:], x.to(VK)[:, 1:])]:
        check_column_ops(cx, vx, dtype, (0, 1))
        assert_matches(vx.amax(0), cx.amax(0))  # two kept dims, the inner one contiguous
        assert_matches(
            vx.sum(0),
            cx.double().sum(0).to(dtype),
            RTOL[dtype],
            cx.double().abs().sum(0).max().item(),
        )


@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64, torch.uint8])
def test_column_reductions_of_integers_are_exact(dtype):
    x = rand(1025, 130, dtype=dtype, seed=42, lo=-3, hi=3)
    for cx, vx in [(x, x.to(VK)), (x[1:, 1:], x.to(VK)[1:, 1:])]:
        assert_matches(vx.sum(0), cx.sum(0))
        assert_matches(vx.amax(0), cx.amax(0))
        assert_matches(vx.amin(0), cx.amin(0))
        assert_matches(vx[:5].prod(0), cx[:5].prod(0))
        assert_matches(vx.all(0), cx.all(0))
        assert_matches(torch.count_nonzero(vx, 0), torch.count_nonzero(cx, 0))
        assert_matches(vx.argmax(0), cx.argmax(0))
        assert_matches(tuple(vx.min(0)), tuple(cx.min(0)))


def test_column_reduction_of_transposed_view():
    # The kept dim is strided and the reduced one contiguous: a row reduction in memory.
    x = rand(130, 1025, seed=43)
    v = x.to(VK)
    assert_matches(v.t().sum(0), x.t().double().sum(0).float(), 1e-5, 200)
    assert_matches(v.t().amax(0), x.t().amax(0))
    assert_matches(v.t().argmin(0), x.t().argmin(0))
    assert_matches(v.t().var(0), x.t().double().var(0).float(), 3e-5)


def test_column_reductions_nan_inf_and_signed_zero():
    x = rand(3000, 37, seed=44)
    x[2000, 5] = float("nan")
    x[100, 7] = float("inf")
    x[:, 9] = float("-inf")
    x[:, 11] = -0.0
    x[17, 12] = float("inf")
    x[18, 12] = float("-inf")
    v = x.to(VK)
    ref = x.double()
    assert_matches(v.sum(0), ref.sum(0).float(), 1e-5, 200)
    assert_matches(v.nansum(0), ref.nansum(0).float(), 1e-5, 200)
    assert_matches(v.amax(0), x.amax(0))
    assert_matches(v.amin(0), x.amin(0))
    assert_matches(v.argmax(0), x.argmax(0))
    assert_matches(v.argmin(0), x.argmin(0))
    assert_matches(v.logsumexp(0), ref.logsumexp(0).float(), 3e-5)
    assert_matches(v.var(0), ref.var(0).float(), 3e-5)
    assert_matches(v.norm(dim=0), ref.norm(dim=0).float(), 3e-5)
    # -0.0 in every row of column 11: amax and amin keep the sign (IEEE maximum/minimum).
    assert torch.signbit(v.amax(0)[11].cpu()) and torch.signbit(v.amin(0)[11].cpu())
    z = torch.zeros(3000, 37)
    z[::2] = -0.0
    assert not torch.signbit(z.to(VK).amax(0).cpu()).any()
    assert torch.signbit(z.to(VK).amin(0).cpu()).all()


def test_column_reductions_out_zero_size_and_determinism():
    x = rand(5000, 64, seed=45)
    v = x.to(VK)
    o = torch.empty(128, device=VK)[::2]  # non-contiguous out=
    torch.sum(v, 0, out=o)
    assert_matches(o, x.double().sum(0).float(), 1e-5, 300)
    o = torch.empty(64, 2, device=VK)[:, 1]
    torch.amax(v, 0, out=o)
    assert_matches(o, x.amax(0))
    values, idx = torch.empty(0, device=VK), torch.empty(0, dtype=torch.long, device=VK)
    torch.max(v, 0, keepdim=True, out=(values, idx))
    assert_matches((values, idx), tuple(x.max(0, keepdim=True)))
    # Float sums may round differently from the CPU but never from one run to the next.
    first = v.sum(0).cpu()
    assert torch.equal(first, v.sum(0).cpu())
    assert torch.equal(v.half().sum(0).cpu(), v.half().sum(0).cpu())
    e = torch.empty(0, 37)
    assert_matches(e.to(VK).sum(0), e.sum(0))
    assert_matches(e.to(VK).mean(0), e.mean(0))
    e = torch.empty(3000, 0)
    assert_matches(e.to(VK).amax(0), e.amax(0))
    assert_matches(e.to(VK).sum(0), e.sum(0))


# ---- out=, in-place, zero-size --------------------------------------------------------------


def test_out_and_in_place_forms():
    x = rand(6, 25, seed=20)
    v = x.to(VK)

    def out(dtype=torch.float32):
        return torch.empty(0, dtype=dtype, device=VK)

    forms = [
        (lambda t, o: torch.sum(t, 1, out=o), lambda t: t.sum(1)),
        (lambda t, o: torch.mean(t, 0, keepdim=True, out=o), lambda t: t.mean(0, keepdim=True)),
        (lambda t, o: torch.prod(t[:, :5], 1, out=o), lambda t: t[:, :5].prod(1)),
        (lambda t, o: torch.amax(t, 1, out=o), lambda t: t.amax(1)),
        (lambda t, o: torch.std(t, 1, out=o), lambda t: t.std(1)),
        (lambda t, o: torch.logsumexp(t, 1, out=o), lambda t: t.logsumexp(1)),
        (
            lambda t, o: torch.linalg.vector_norm(t, 3, 1, out=o),
            lambda t: torch.linalg.vector_norm(t, 3, 1),
        ),
        (lambda t, o: torch.cumsum(t, 1, out=o), lambda t: t.cumsum(1)),
        (lambda t, o: torch.nansum(t, 0, out=o), lambda t: t.nansum(0)),
    ]
    for run, ref in forms:
        o = out()
        assert run(v, o) is o
        assert_matches(o, ref(x))
    values, idx = out(), out(torch.long)
    torch.max(v, 1, out=(values, idx))
    assert_matches((values, idx), tuple(x.max(1)))
    idx = out(torch.long)
    torch.argmin(v, 0, out=idx)
    assert_matches(idx, x.argmin(0))
    values, idx = out(), out(torch.long)
    torch.cummax(v, 0, out=(values, idx))
    assert_matches((values, idx), tuple(x.cummax(0)))
    ob = out(torch.bool)
    torch.any(v.bool(), 1, out=ob)
    assert_matches(ob, x.bool().any(1))
    if HAS_FLOAT64:  # an out= of a wider dtype
        full = out(torch.float64)
        torch.max(v, out=full)
        assert_matches(full, x.max().double())
    same_shape = torch.empty(6, device=VK)  # right shape already: written in place, no resize
    torch.sum(v, 1, out=same_shape)
    assert_matches(same_shape, x.sum(1))
    w = v.clone()
    w.cumsum_(1)
    assert_matches(w, x.cumsum(1))
    w = v.clone().t()  # in-place on a transposed view
    w.cumprod_(0)
    assert_matches(w, x.t().cumprod(0), 1e-4)
    s = v.clone()
    torch.sum(s, 1, keepdim=True, out=s[:, :1])  # out is a view of the input's first column
    assert_matches(s[:, :1], x.sum(1, keepdim=True))


def test_zero_size_follows_pytorch():
    e = torch.empty(3, 0)
    ve = e.to(VK)
    assert_matches(ve.sum(1), e.sum(1))
    assert_matches(ve.sum(), e.sum())
    assert_matches(ve.prod(1), e.prod(1))
    assert_matches(ve.mean(1), e.mean(1))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert_matches(ve.var(1), e.var(1))
    assert_matches(ve.all(1), e.all(1))
    assert_matches(ve.any(1), e.any(1))
    assert_matches(ve.logsumexp(1), e.logsumexp(1))
    assert_matches(ve.norm(dim=1), e.norm(dim=1))
    assert_matches(ve.amax(0), e.amax(0))  # kept dim is empty: fine
    assert_matches(tuple(ve.max(0)), tuple(e.max(0)))
    assert_matches(torch.count_nonzero(ve, 1), torch.count_nonzero(e, 1))


def same_error(fn_vk, fn_cpu):
    with pytest.raises(Exception) as cpu_err:
        fn_cpu()
    with pytest.raises(type(cpu_err.value)):
        fn_vk()


def test_errors_match_cpu():
    x = rand(3, 4, seed=21)
    xi = rand(3, 4, dtype=torch.int32, seed=22)
    e = torch.empty(3, 0)
    v, vi, ve = x.to(VK), xi.to(VK), e.to(VK)
    cases = [
        (lambda t, ti, te: t.sum(2)),
        (lambda t, ti, te: t.sum((0, 0))),
        (lambda t, ti, te: ti.mean()),
        (lambda t, ti, te: ti.std()),
        (lambda t, ti, te: te.max()),
        (lambda t, ti, te: te.max(1)),
        (lambda t, ti, te: te.amax(1)),
        (lambda t, ti, te: te.argmax()),
        (lambda t, ti, te: ti.bool().argmax()),
        (lambda t, ti, te: torch.linalg.vector_norm(te, math.inf)),
        (lambda t, ti, te: torch.linalg.vector_norm(ti)),
        (lambda t, ti, te: t.cumsum(3)),
        (lambda t, ti, te: torch.logcumsumexp(ti, 0)),
        (lambda t, ti, te: t.cumsum_(0, dtype=torch.float64)),
        (lambda t, ti, te: torch.sum(t, 0, dtype=torch.int32, out=torch.empty(0, device=t.device))),
        (lambda t, ti, te: torch.all(t, 0, out=torch.empty(0, device=t.device))),
        (
            lambda t, ti, te: torch.logsumexp(
                t, 0, out=torch.empty(0, dtype=torch.long, device=t.device)
            )
        ),
        (
            lambda t, ti, te: torch.max(
                t, 0, out=(torch.empty(0, device=t.device), torch.empty(0, device=t.device))
            )
        ),
    ]
    for case in cases:
        same_error(lambda c=case: c(v, vi, ve), lambda c=case: c(x, xi, e))


# ---- natively, autograd, printing -----------------------------------------------------------


def test_every_op_runs_natively(fallback):
    x = rand(4, 9, seed=23)
    v = x.to(VK)
    results = [
        v.sum(),
        v.sum(1),
        v.mean(0),
        v.prod(1),
        torch.nansum(v),
        v.amax(1),
        v.amin(0),
        v.max(),
        v.min(),
        *v.max(1),
        *v.min(0),
        v.argmax(),
        v.argmin(1),
        v.bool().all(),
        v.bool().any(1),
        v.std(1),
        v.var(),
        *torch.var_mean(v, 1),
        *torch.std_mean(v),
        v.norm(),
        torch.linalg.vector_norm(v, 1, 1),
        v.logsumexp(1),
        torch.count_nonzero(v),
        v.cumsum(1),
        v.cumprod(0),
        *v.cummax(1),
        *v.cummin(0),
        v.logcumsumexp(1),
        *torch.aminmax(v),
    ]
    torch_vkml.synchronize()
    assert all(r.device.type == VK for r in results)
    assert torch_vkml.fallback_stats() == {}


def grad_of(fn, x):
    x = x.detach().requires_grad_(True)
    fn(x).backward()
    return x.grad


@pytest.mark.parametrize(
    "name", ["sum", "mean", "amax", "max_dim", "std", "var", "norm", "cumsum", "logsumexp"]
)
def test_autograd_matches_cpu(fallback, name):
    # Backward formulas are composite in PyTorch (expand, mul, div, eq, scatter...); those
    # elementwise/index ops may still run through the counted CPU fallback.
    fns = {
        "sum": lambda t: t.sum(1).sum(),
        "mean": lambda t: t.mean((0, 1)),
        "amax": lambda t: t.amax(1).sum(),
        "max_dim": lambda t: t.max(1).values.sum(),
        "std": lambda t: t.std(1).sum(),
        "var": lambda t: t.var(0).sum(),
        "norm": lambda t: t.norm(),
        "cumsum": lambda t: t.cumsum(1).sum(),
        "logsumexp": lambda t: t.logsumexp(1).sum(),
    }
    x = rand(5, 8, seed=24)
    got = grad_of(fns[name], x.to(VK))
    want = grad_of(fns[name], x)
    assert got.device.type == VK
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-6)
    stats = torch_vkml.fallback_stats()
    forward_ops = {
        "aten::sum.IntList_out",
        "aten::sum.dim_IntList",
        "aten::mean.dim",
        "aten::amax",
        "aten::max.dim",
        "aten::std.correction",
        "aten::var.correction",
        "aten::linalg_vector_norm",
        "aten::cumsum",
        "aten::logsumexp",
    }
    assert not (forward_ops & set(stats)), stats
    if name == "sum":
        assert stats == {}  # sum's backward is an expand: fully native


def test_printing_matches_cpu(fallback):
    x = rand(3, 4, seed=25)
    x[0, 0] = math.inf
    wide = [x.double()] if HAS_FLOAT64 else []
    for t in [x, *wide, (x * 100).int(), x > 0, torch.tensor(1.5), torch.empty(0)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = re.sub(r"\s+", "", repr(t.to(VK))).replace(",device='vkml:0'", "")
        assert text == re.sub(r"\s+", "", repr(t))
