"""Where GPU drivers' shortcuts would part from the CPU, checked on random inputs against the CPU
or float64: half-precision rounding at the top of the range (casts, and arithmetic that overflows
to inf) and truncating division near integer quotients, on short tensors and on the 16-byte
vector path."""

import pytest
import torch

V = "vkml"
HALF = [torch.float16, torch.bfloat16]
# Lengths: a short tail only, and enough elements for the vector path plus a tail.
LENGTHS = [7, 1031]
TOL = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (8e-3, 1e-5)}


def uniform(n, lo, hi, gen):
    return torch.rand(n, generator=gen, dtype=torch.float64) * (hi - lo) + lo


def signed(x, gen):
    """x with random signs."""
    return x * (torch.randint(0, 2, x.shape, generator=gen) * 2 - 1)


def overflow_bound(dtype):
    """The magnitude from which round-to-nearest gives inf: max plus half an ulp of max."""
    return {torch.float16: 65520.0, torch.bfloat16: 2.0**128 * (1 - 2.0**-9)}[dtype]


def check_rounded(got, exact, dtype):
    """got (vkml, dtype) against the float64 result rounded to dtype: the same infinities, and the
    finite values within the dtype's tolerance. Results within a relative 1e-4 of the overflow
    bound are left out: float32 intermediates may round them either way."""
    got = got.cpu()
    assert got.dtype == dtype
    bound = overflow_bound(dtype)
    keep = ((exact.abs() - bound).abs() > 1e-4 * bound) | exact.isnan()
    assert keep.sum() > exact.numel() // 2  # the check still covers most points
    ref = exact.to(dtype)
    got, ref = got[keep], ref[keep]
    assert torch.equal(got.isinf(), ref.isinf()), (got[got.isinf() != ref.isinf()],
                                                   ref[got.isinf() != ref.isinf()])
    assert torch.equal(got.isinf() & (got > 0), ref.isinf() & (ref > 0))
    rtol, atol = TOL[dtype]
    fin = ref.isfinite()
    torch.testing.assert_close(got[fin].double(), ref[fin].double(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("n", LENGTHS)
def test_float_to_half_casts_round_at_the_top_of_the_range(n, gen):
    """fp32 -> fp16 rounds 65519 to 65504 and 65520 to inf, as the CPU does, also where a driver
    folds a float -> half -> float round trip; fp32 -> bf16 likewise near 3.4e38."""
    x = signed(uniform(n, 6.0e4, 7.2e4, gen), gen).float()
    x[:6] = torch.tensor([65504.0, 65519.0, 65520.0, -65520.0, 65519.996, float("inf")])
    assert torch.equal(x.to(V).to(torch.float16).cpu(), x.to(torch.float16))
    y = signed(uniform(n, 3.2e38, 3.4028e38, gen), gen).float()
    y[:3] = torch.tensor([3.3895e38, 3.3961775e38, -3.4e38])
    assert torch.equal(y.to(V).to(torch.bfloat16).cpu(), y.to(torch.bfloat16))
    # Small magnitudes round through fp16 subnormals.
    z = signed(uniform(n, 0.0, 1e-4, gen), gen).float()
    assert torch.equal(z.to(V).to(torch.float16).cpu(), z.to(torch.float16))


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("n", LENGTHS)
def test_half_arithmetic_overflows_to_inf_as_float64_rounded(dtype, n, gen):
    big = overflow_bound(dtype)
    # Operands around the square root and the half of the bound: about half the results overflow.
    a = signed(uniform(n, 0.35, 0.65, gen) * big, gen).to(dtype)
    b = (a.double().sign() * uniform(n, 0.35, 0.65, gen) * big).to(dtype)
    check_rounded(torch.add(a.to(V), b.to(V)), a.double() + b.double(), dtype)
    r = big**0.5
    c = signed(uniform(n, 0.7 * r, 1.4 * r, gen), gen).to(dtype)
    d = uniform(n, 0.7 * r, 1.4 * r, gen).to(dtype)
    check_rounded(torch.mul(c.to(V), d.to(V)), c.double() * d.double(), dtype)
    check_rounded(c.to(V) * 2.0 * d.to(V), c.double() * 2.0 * d.double(), dtype)
    # exp crosses the bound at log(bound): 11.09 in fp16, 88.72 in bf16.
    e = uniform(n, 0.9, 1.1, gen) * torch.log(torch.tensor(big, dtype=torch.float64))
    e = e.to(dtype)
    check_rounded(torch.exp(e.to(V)), torch.exp(e.double()), dtype)


@pytest.mark.parametrize("dtype", HALF)
def test_half_sums_and_products_overflow_to_inf_as_float64_rounded(dtype, gen):
    big = overflow_bound(dtype)
    x = (uniform(64 * 8, 0.07, 0.2, gen) * big).reshape(64, 8)
    x = (x * torch.where(torch.arange(64) % 4 == 0, -1.0, 1.0).double()[:, None]).to(dtype)
    check_rounded(x.to(V).sum(1), x.double().sum(1), dtype)
    # Dot products of 16 terms, each up to (bound / 16), from below to above the bound.
    r = (big / 16) ** 0.5
    a = uniform(32 * 16, 0.5 * r, 1.3 * r, gen).reshape(32, 16).to(dtype)
    b = uniform(16 * 24, 0.5 * r, 1.3 * r, gen).reshape(16, 24).to(dtype)
    b[:, ::5] = -b[:, ::5]
    check_rounded(torch.mm(a.to(V), b.to(V)).flatten(), (a.double() @ b.double()).flatten(), dtype)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("n", LENGTHS)
def test_div_trunc_and_floor_near_integer_quotients(dtype, n, gen):
    """The CPU truncates (floors) a / b rounded to the dtype, so a quotient just below an integer
    that rounds up to it truncates to that integer; vkml must round the same way before it
    truncates, on both the scalar and the vector path."""
    b = signed(uniform(n, 0.05, 4.0, gen), gen).to(dtype)
    top = 300 if dtype == torch.float16 else 40  # a = k * b stays within a few ulp of exact
    k = torch.randint(-top, top + 1, (n,), generator=gen).double()
    # a = k * b moved by up to a few ulp of a: quotients just below, at and above integers.
    ulps = torch.randint(-3, 4, (n,), generator=gen).double() * torch.finfo(dtype).eps
    a = (k * b.double() * (1 + ulps)).to(dtype)
    a[:3] = torch.tensor([-8.4765625, 8.375, 2.984375], dtype=dtype)
    b[:3] = torch.tensor([-0.061004638671875, 0.55859375, -0.0610351], dtype=dtype)
    av, bv = a.to(V), b.to(V)
    for mode in ("trunc", "floor"):
        got = torch.div(av, bv, rounding_mode=mode).cpu()
        want = torch.div(a, b, rounding_mode=mode)
        assert torch.equal(got, want), (mode, a[got != want], b[got != want], got[got != want],
                                        want[got != want])
    # The inputs hold quotients whose rounding to the dtype crosses an integer (the cases where
    # truncating the float quotient would differ).
    q = a.double() / b.double()
    assert (q.trunc() != q.to(dtype).double().trunc()).any()
