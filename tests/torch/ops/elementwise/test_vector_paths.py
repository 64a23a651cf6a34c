"""The contiguous fast paths (16-byte vector accesses) next to the general strided ones:
elementwise ops on dense aligned tensors of at least 4096 elements take the vector path, views one
element in (x[1:]) the scalar one. Both are checked against the CPU (float64 reference for floats),
and against each other bit for bit; reductions over whole tensors, rows and columns likewise."""

import pytest
import torch
from nn_helpers import device_dtypes

import torch_vkml  # noqa: F401

N = 3 * 4096 + 5  # above the vector threshold, not a multiple of any vector width
# float64 goes through the in-place/out= test here (tests/ops/test_elementwise_vec.cc checks every
# dtype's vector path against its scalar path bit for bit).
HALF_AND_SINGLE = [torch.float32, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-10, 1e-10), torch.float16: (2e-3, 1e-3),
       torch.bfloat16: (1.6e-2, 1e-2)}


def rand(n, dtype, gen):  # uniform in [-4, 4), with negatives
    if dtype == torch.bool:
        return torch.rand(n, generator=gen) > 0.5
    if dtype.is_floating_point:
        return (torch.rand(n, generator=gen, dtype=torch.float64) * 8 - 4).to(dtype)
    lo, hi = (0, 200) if dtype == torch.uint8 else (-100, 100)
    return torch.randint(lo, hi, (n,), generator=gen).to(dtype)


def close(got, ref):
    got = got.cpu()
    assert got.shape == ref.shape
    if ref.dtype.is_floating_point:
        rtol, atol = TOL[got.dtype]
        torch.testing.assert_close(got.double(), ref.double(), rtol=rtol, atol=atol, equal_nan=True)
    else:
        assert got.dtype == ref.dtype
        assert torch.equal(got, ref)


def bits(t):
    """The raw bytes of a CPU tensor, so NaNs and signed zeros compare exactly."""
    return t.reshape(-1).contiguous().view(torch.uint8)


def on_device(x, offset):
    """x on vkml at `offset` elements into a larger allocation (offset 1: not 16-byte aligned)."""
    base = torch.zeros(x.numel() + offset, dtype=x.dtype, device="vkml")
    base[offset:].copy_(x.to("vkml"))
    return base[offset:]


BINARY = {
    "add_alpha": lambda a, b: torch.add(a, b, alpha=-1.5),
    "mul": torch.mul,
    "div": torch.div,
    "mul_scalar": lambda a, b: a * 2.25,
    "lt": torch.lt,
}
UNARY = {"neg": torch.neg, "exp": torch.exp, "sigmoid": torch.sigmoid, "isnan": torch.isnan}


def ref_float(fn, *xs):
    """fn over float64 copies, rounded to the inputs' dtype (bool results stay bool)."""
    r = fn(*[x.double() for x in xs])
    return r if r.dtype == torch.bool else r.to(xs[0].dtype)


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("dtype", HALF_AND_SINGLE)
def test_binary_float_vector_and_scalar_paths(name, dtype, gen):
    fn = BINARY[name]
    a, b = rand(N, dtype, gen), rand(N, dtype, gen)
    a[7], b[N - 2] = float("nan"), float("inf")  # NaN and inf through vector and tail lanes
    want = ref_float(fn, a, b)
    fast = fn(on_device(a, 0), on_device(b, 0)).cpu()
    close(fast, want)
    # The same inputs one element in go through the scalar path: identical bits.
    slow = fn(on_device(a, 1), on_device(b, 1)).cpu()
    assert torch.equal(bits(fast), bits(slow))


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("dtype", HALF_AND_SINGLE)
def test_unary_float_vector_and_scalar_paths(name, dtype, gen):
    fn = UNARY[name]
    a = rand(N, dtype, gen)
    a[N - 1] = float("nan")
    fast = fn(on_device(a, 0)).cpu()
    close(fast, ref_float(fn, a))
    assert torch.equal(bits(fast), bits(fn(on_device(a, 1)).cpu()))


@pytest.mark.parametrize("dtype", INTS + [torch.bool])
def test_integer_vector_path_exact(dtype, gen):
    a, b = rand(N, dtype, gen), rand(N, dtype, gen)
    av, bv = on_device(a, 0), on_device(b, 0)
    ops = [torch.eq, torch.logical_xor] if dtype == torch.bool else [
        torch.lt, torch.add, lambda x, y: x * 3]  # bool out, two tensors, a scalar
    for op in ops:
        got = op(av, bv)
        close(got, op(a, b))
        assert torch.equal(got.cpu(), op(on_device(a, 1), on_device(b, 1)).cpu())


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float16, torch.bfloat16,
                                                 torch.float64, torch.int8))
def test_inplace_out_views_and_sizes(dtype, gen):
    # In place and out= on the vector path, 2-D contiguous tensors, sizes around the threshold
    # and the vector widths, aligned views (offset a multiple of 16 bytes), zero-size.
    for n in (4096, 4096 + 1, 4096 + 15, 2 * 4096 + 7):
        a, b = rand(n, dtype, gen), rand(n, dtype, gen)
        av = on_device(a, 0)
        av.add_(on_device(b, 0))
        close(av, a + b if not dtype.is_floating_point else ref_float(torch.add, a, b))
        out = torch.empty(n, dtype=dtype, device="vkml")
        torch.mul(on_device(a, 0), on_device(b, 0), out=out)
        close(out, a * b if not dtype.is_floating_point else ref_float(torch.mul, a, b))
    aligned = 16 // torch.empty(0, dtype=dtype).element_size()
    a, b = rand(N, dtype, gen), rand(N, dtype, gen)
    got = torch.sub(on_device(a, aligned), on_device(b, 3 * aligned))
    close(got, a - b if not dtype.is_floating_point else ref_float(torch.sub, a, b))
    a2, b2 = a[: 70 * 90].reshape(70, 90), b[: 70 * 90].reshape(70, 90)
    close(a2.to("vkml") + b2.to("vkml"),
          a2 + b2 if not dtype.is_floating_point else ref_float(torch.add, a2, b2))
    # Transposed operands stay on the strided path and still agree.
    close(a2.to("vkml").t() + b2.to("vkml").t(),
          (a2 + b2 if not dtype.is_floating_point else ref_float(torch.add, a2, b2)).t())
    z = torch.empty(0, dtype=dtype, device="vkml")
    assert (z + z).shape == (0,)


def test_half_subnormals_and_rounding_ties():
    # f16 subnormals survive the vector loads and stores; bf16 sums exactly halfway between two
    # bf16 numbers round to even, as on the CPU.
    h = torch.tensor([6e-8, -6e-8, 3e-5, 65504.0, -0.0], dtype=torch.float16).repeat(N // 5 + 1)
    got = torch.mul(on_device(h, 0), 1.0).cpu()
    assert torch.equal(bits(got), bits(h))
    a = torch.tensor([1.0, 1.0078125, -1.0, 3.0], dtype=torch.bfloat16).repeat(N // 4 + 1)
    b = torch.full_like(a, 2**-8)
    got = (on_device(a, 0) + on_device(b, 0)).cpu()
    assert torch.equal(bits(got), bits(a + b))


# ---- reductions -------------------------------------------------------------------------------
# Relative tolerance of a reduction against its float64 reference, scaled by sqrt(n) * max |x|
# for sums (the order of additions differs from the CPU's).
RED_RTOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
REDUCTIONS = {
    "sum": lambda x, d: x.sum(d),
    "mean": lambda x, d: x.mean(d),
    "amax": lambda x, d: x.amax(d),
    "argmax": lambda x, d: x.argmax(d),
    "var": lambda x, d: x.var(d),
    "logsumexp": lambda x, d: x.logsumexp(d),
    "count_nonzero": lambda x, d: torch.count_nonzero(x, d),
}


def red_check(fn, x_cpu, x_dev, dim):
    got = fn(x_dev, dim)
    want = fn(x_cpu.double(), dim)
    if not want.dtype.is_floating_point:  # argmax, count_nonzero: exact
        assert torch.equal(got.cpu(), want)
        return got
    n = x_cpu.numel() if dim == () else x_cpu.shape[dim]
    scale = max(1.0, x_cpu.double().abs().max().item()) * max(1.0, n ** 0.5 / 8)
    rtol = RED_RTOL[x_cpu.dtype]
    torch.testing.assert_close(got.cpu().double(), want.to(got.dtype).double(), rtol=rtol,
                               atol=rtol * scale, equal_nan=True)
    return got


@pytest.mark.parametrize("name", list(REDUCTIONS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_reductions_whole_and_rows(name, dtype, gen):
    fn = REDUCTIONS[name]
    # Rows of 8 * 129 elements start 16-byte aligned (vector loads); rows of 1027 do not.
    for rows, cols in ((5, 8 * 129), (3, 1027), (1, 20000)):
        x = rand(rows * cols, dtype, gen).reshape(rows, cols)
        x[0, 3] = 0.0  # count_nonzero sees a zero
        for offset in (0, 1):
            xd = on_device(x.flatten(), offset).reshape(rows, cols)
            red_check(fn, x, xd, 1)
            red_check(fn, x.flatten(), xd.flatten(), 0)
    x = rand(0, dtype, gen).reshape(0, 64)
    if name in ("sum", "count_nonzero"):
        assert fn(x.to("vkml"), 1).shape == (0,)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_reduction_nan_first_index_and_determinism(dtype, gen):
    x = rand(4 * 2048, dtype, gen).reshape(4, 2048)
    x[1, 77] = float("nan")
    x[1, 1500] = float("nan")
    x[2, 100] = x[2, 1900] = 50.0  # ties: the first index wins
    xd = on_device(x.flatten(), 0).reshape(4, 2048)
    assert torch.equal(xd.argmax(1).cpu(), x.argmax(1))
    # NaN payloads are not specified (a GPU's NaN may have other bits): NaN rows compare as NaN.
    got, ref = xd.amax(1).cpu(), x.amax(1)
    assert torch.equal(got.isnan(), ref.isnan())
    assert torch.equal(bits(got[~ref.isnan()]), bits(ref[~ref.isnan()]))
    # A long whole-tensor sum takes several partial passes; the result repeats bit for bit.
    big = on_device(rand(200003, dtype, gen), 0)
    first = big.sum().cpu()
    assert torch.equal(bits(first), bits(big.sum().cpu()))
    assert not torch.isnan(first)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_column_reductions(dtype, gen):
    # Reduction over the outer dim: neighbouring outputs are neighbouring columns.
    x = rand(300 * 130, dtype, gen).reshape(300, 130)
    for name in ("sum", "amax", "argmax", "mean"):
        red_check(REDUCTIONS[name], x, on_device(x.flatten(), 0).reshape(300, 130), 0)
