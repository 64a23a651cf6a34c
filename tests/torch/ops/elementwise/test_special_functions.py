"""torch.special's Bessel, Airy, zeta, incomplete gamma and orthogonal-polynomial functions on
vkml against the CPU: float32 against the float64 CPU result, float64 against the CPU; NaN, inf,
zero, negative and large arguments, strided inputs and outputs, broadcasting, zero-size and
multi-workgroup sizes, integer inputs, and the dtypes the CPU rejects."""

import math

import mpmath
import pytest
import torch
from nn_helpers import device_dtypes

import torch_vkml  # noqa: F401

SPECIALS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 5.0,
            -5.0, 2.0, 8.0, 100.0, -100.0, 1e-6, 3e4]
# vkml against the float64 CPU result: float32 stays within these of the exact value.
TOL = {torch.float32: (2e-5, 2e-6), torch.float64: (1e-12, 1e-13)}


def sample(shape, lo, hi, gen, specials=SPECIALS):
    x = torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo
    flat = x.view(-1)
    n = min(len(specials), flat.numel())
    flat[:n] = torch.tensor(specials[:n], dtype=torch.float64)
    return x


def close_to_reference(got, ref64, dtype, tol=None):
    """got (vkml, dtype) against the float64 CPU result; NaN must match NaN."""
    rtol, atol = tol or TOL[dtype]
    assert got.dtype == dtype and got.shape == ref64.shape
    torch.testing.assert_close(got.cpu().double(), ref64.to(dtype).double(), rtol=rtol, atol=atol,
                               equal_nan=True)


UNARY = {
    "bessel_j0": (torch.special.bessel_j0, -60, 60),
    "bessel_j1": (torch.special.bessel_j1, -60, 60),
    "bessel_y0": (torch.special.bessel_y0, -5, 60),
    "bessel_y1": (torch.special.bessel_y1, -5, 60),
    "modified_bessel_i0": (torch.special.modified_bessel_i0, -30, 30),
    "modified_bessel_i1": (torch.special.modified_bessel_i1, -30, 30),
    "modified_bessel_k0": (torch.special.modified_bessel_k0, -1, 40),
    "modified_bessel_k1": (torch.special.modified_bessel_k1, -1, 40),
    "scaled_modified_bessel_k0": (torch.special.scaled_modified_bessel_k0, -1, 40),
    "scaled_modified_bessel_k1": (torch.special.scaled_modified_bessel_k1, -1, 40),
    "spherical_bessel_j0": (torch.special.spherical_bessel_j0, -40, 40),
    "airy_ai": (torch.special.airy_ai, -30, 30),
}

MPMATH = {"bessel_j0": lambda v: mpmath.besselj(0, v), "bessel_j1": lambda v: mpmath.besselj(1, v),
          "bessel_y0": lambda v: mpmath.bessely(0, v), "bessel_y1": lambda v: mpmath.bessely(1, v),
          "airy_ai": mpmath.airyai}


def relative_scale(name, x64):
    """Error allowance in float32 for the rounding of the argument itself: oscillating functions
    of a rounded x carry |f'(x)| * ulp(x) (the CPU's float32 kernel does too)."""
    if name.startswith("bessel") or name.startswith("spherical") or name == "airy_ai":
        return 2e-7 * x64.abs().clamp(min=1).pow(1.5 if name == "airy_ai" else 0.5)
    return torch.zeros_like(x64)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64))
def test_unary_against_float64(name, dtype):
    fn, lo, hi = UNARY[name]
    gen = torch.Generator().manual_seed(7)
    x64 = sample((37, 41), lo, hi, gen)  # > one workgroup, odd sizes
    x = x64.to(dtype)
    ref = fn(x.double())
    got = fn(x.to("vkml").t()).t()  # strided input
    if dtype == torch.float32:
        # Per-element allowance: the tolerance plus the argument's own rounding effect.
        err = (got.cpu().double() - ref).abs()
        both_nan = got.cpu().isnan() & ref.isnan()
        same_inf = got.cpu() == ref.to(dtype)  # overflow to inf in float32, as on the CPU
        allowed = 2e-5 * ref.abs() + 2e-6 + relative_scale(name, x.double()) * 4
        bad = ~(both_nan | same_inf | (err <= allowed))
        assert not bool(bad.any()), (x[bad][:5], got.cpu()[bad][:5], ref[bad][:5])
    elif name in MPMATH:
        # The CPU's float64 J, Y and Ai are off by up to 3e-7 (J0(5.1)); judge against mpmath.
        flat_x, flat_got = x.flatten()[::5], got.cpu().flatten()[::5]
        exact = torch.tensor([float(MPMATH[name](v)) if math.isfinite(v) and (v > 0 or name in
                              ("bessel_j0", "bessel_j1", "airy_ai")) else float("nan")
                              for v in flat_x.tolist()], dtype=torch.float64)
        known = exact.isfinite()
        torch.testing.assert_close(flat_got[known], exact[known], rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(got.cpu(), fn(x), rtol=1e-5, atol=1e-5, equal_nan=True)
        return
    else:
        close_to_reference(got, ref, dtype, (1e-11, 1e-13))
    # The CPU in the same dtype as well (OpInfo's comparison).
    torch.testing.assert_close(got.cpu(), fn(x), rtol=1e-5 if dtype == torch.float32 else 1e-9,
                               atol=1e-5 if dtype == torch.float32 else 1e-12, equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_out_ints_and_rejected_dtypes(name):
    fn = UNARY[name][0]
    xi = torch.arange(-6, 7, dtype=torch.int32)
    torch.testing.assert_close(fn(xi.to("vkml")).cpu(), fn(xi), rtol=1e-5, atol=1e-6,
                               equal_nan=True)
    xb = torch.tensor([True, False])
    torch.testing.assert_close(fn(xb.to("vkml")).cpu(), fn(xb), rtol=1e-5, atol=1e-6)
    # out= into a strided view of a larger buffer.
    x = torch.linspace(0.1, 12, 24).reshape(4, 6)
    buf = torch.full((6, 8), 7.0, device="vkml")
    out = buf[:, :4].t()
    fn(x.to("vkml"), out=out)
    torch.testing.assert_close(out.cpu(), fn(x), rtol=1e-5, atol=1e-6)
    assert bool((buf[:, 4:].cpu() == 7).all())
    assert fn(torch.empty(0, 3, device="vkml")).shape == (0, 3)
    with pytest.raises(NotImplementedError):
        fn(torch.ones(3, dtype=torch.float16))
    with pytest.raises(NotImplementedError):
        fn(torch.ones(3, dtype=torch.float16, device="vkml"))


POLY = {
    "chebyshev_polynomial_t": torch.special.chebyshev_polynomial_t,
    "chebyshev_polynomial_u": torch.special.chebyshev_polynomial_u,
    "chebyshev_polynomial_v": torch.special.chebyshev_polynomial_v,
    "chebyshev_polynomial_w": torch.special.chebyshev_polynomial_w,
    "shifted_chebyshev_polynomial_t": torch.special.shifted_chebyshev_polynomial_t,
    "shifted_chebyshev_polynomial_u": torch.special.shifted_chebyshev_polynomial_u,
    "shifted_chebyshev_polynomial_v": torch.special.shifted_chebyshev_polynomial_v,
    "shifted_chebyshev_polynomial_w": torch.special.shifted_chebyshev_polynomial_w,
    "hermite_polynomial_h": torch.special.hermite_polynomial_h,
    "hermite_polynomial_he": torch.special.hermite_polynomial_he,
    "laguerre_polynomial_l": torch.special.laguerre_polynomial_l,
    "legendre_polynomial_p": torch.special.legendre_polynomial_p,
}
X_SPECIALS = [float("nan"), float("inf"), float("-inf"), 0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 1e-8]


def poly_inputs(dtype, gen):
    x = sample((33, 1), -1.3, 1.3, gen, X_SPECIALS).to(dtype)
    n = torch.tensor([-3, -0.5, 0, 1, 2, 3, 4.7, 5, 6, 7, 8, 9, 10, 13, 20, 40, 129, 600,
                      float("nan"), float("inf")], dtype=torch.float64).to(dtype)
    return x, n.reshape(1, -1)


@pytest.mark.parametrize("name", sorted(POLY))
@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64))
def test_polynomials(name, dtype):
    fn = POLY[name]
    x, n = poly_inputs(dtype, torch.Generator().manual_seed(3))
    # Broadcast (33, 1) x (1, 20). The CPU runs the same recurrences and closed forms, but a
    # degree-n evaluation amplifies rounding by about n (more near |x| = 1), so float32 is judged
    # against float64: vkml must be within tolerance of it or of the CPU's own worst error.
    got = fn(x.to("vkml"), n.to("vkml")).cpu()
    expected = fn(x, n)
    # At a NaN x the CPU leaves some recurrences' result uninitialised: NaN is the answer there.
    nan_x = x.isnan().expand_as(got) & (n >= 1) & n.isfinite()
    assert bool(got[nan_x].isnan().all())
    if dtype == torch.float32:
        judge_float32_recurrence(got, expected, fn(x.double(), n.double()), n, ~nan_x)
    else:
        torch.testing.assert_close(got[~nan_x], expected[~nan_x], rtol=1e-9, atol=1e-9,
                                   equal_nan=True)
    # Strided operands and a Python-number degree.
    xs = x[1:].expand(32, 4).t()
    for args in ((xs, 5), (0.25, n)):
        dev_args = [a.to("vkml") if isinstance(a, torch.Tensor) else a for a in args]
        got, expected = fn(*dev_args).cpu(), fn(*args)
        if dtype == torch.float32:
            ref = fn(*[a.double() if isinstance(a, torch.Tensor) else a for a in args])
            judge_float32_recurrence(got, expected, ref, torch.as_tensor(args[1]).double(),
                                     torch.ones_like(got, dtype=torch.bool))
        else:
            torch.testing.assert_close(got, expected, rtol=1e-11, atol=1e-11, equal_nan=True)


def judge_float32_recurrence(got, expected, ref, n, mask):
    """float32 polynomials are judged against float64. A degree-n recurrence's float32 rounding
    error grows like n * eps (another device's rounding, e.g. fused multiply-adds, lands elsewhere
    in that band), so vkml passes within 8 * n * eps of float64 relative to |p| + 1, or within twice
    the CPU's own worst error for that degree."""
    cpu_err = (expected.double() - ref).abs().nan_to_num(nan=0, posinf=0)
    worst_cpu_err = cpu_err.amax(dim=0, keepdim=True).expand_as(got)  # per degree (column)
    degree = n.double().abs().nan_to_num(nan=1, posinf=1).clamp(min=1)  # non-finite: no recurrence
    band = 8 * degree.expand_as(got) * 2.0**-23
    g, e, r = got.double()[mask], expected.double()[mask], ref.expand_as(got)[mask]
    ok = (g - r).abs() <= torch.maximum(2 * worst_cpu_err[mask], band[mask] * (r.abs() + 1))
    ok |= (g.isnan() & (r.isnan() | e.isnan())) | (g == e) | (got[mask] == r.float())
    assert bool(ok.all()), (g[~ok][:5].tolist(), e[~ok][:5].tolist(), r[~ok][:5].tolist())


@pytest.mark.parametrize("name", sorted(POLY))
def test_polynomials_ints_out_and_rejected(name):
    fn = POLY[name]
    xi = torch.arange(-3, 4).reshape(7, 1)
    ni = torch.arange(0, 6).reshape(1, 6)
    torch.testing.assert_close(fn(xi.to("vkml"), ni.to("vkml")).cpu(), fn(xi, ni))
    out = torch.zeros(6, 7, device="vkml").t()
    fn(xi.float().to("vkml"), ni.float().to("vkml"), out=out)
    torch.testing.assert_close(out.cpu(), fn(xi.float(), ni.float()))
    assert fn(torch.empty(0, device="vkml"), torch.ones(1, device="vkml")).shape == (0,)
    half = torch.ones(3, dtype=torch.float16)
    with pytest.raises(NotImplementedError):
        fn(half, half)
    with pytest.raises(NotImplementedError):
        fn(half.to("vkml"), half.to("vkml"))


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64))
def test_zeta(dtype):
    gen = torch.Generator().manual_seed(5)
    s = sample((40, 1), 0.5, 6, gen, [1.0, 0.5, 2.0, float("nan"), float("inf")]).to(dtype)
    q = sample((1, 30), -3, 8, gen, [0.0, -1.0, -2.5, 1.0, float("nan"), float("inf")]).to(dtype)
    got = torch.special.zeta(s.to("vkml"), q.to("vkml").t().t())
    ref = torch.special.zeta(s.double(), q.double())
    close_to_reference(got, ref, dtype, (1e-5, 1e-6) if dtype == torch.float32 else (1e-11, 1e-13))
    torch.testing.assert_close(torch.special.zeta(torch.arange(2, 5).to("vkml"), 2).cpu(),
                               torch.special.zeta(torch.arange(2, 5), 2))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64, torch.float16,
                                                 torch.bfloat16))
def test_igamma(upper, dtype):
    fn = torch.igammac if upper else torch.igamma
    gen = torch.Generator().manual_seed(9)
    a = sample((25, 1), 0, 30, gen, [0.0, 0.5, 1.0, 1e-3, 150.0, float("nan"), float("inf"), -1.0])
    x = sample((1, 27), 0, 40, gen, [0.0, 0.5, 1.0, 2.0, 150.0, float("inf"), float("nan"), -2.0])
    a, x = a.to(dtype), x.to(dtype)
    got = fn(a.to("vkml"), x.to("vkml"))
    ref = fn(a.double(), x.double())
    if dtype == torch.float64:
        # The CPU's float64 uses an asymptotic series for 20 < a < 200 that is off by up to
        # 4e-10 (igamma(25, 20)); judge against mpmath where both operands are finite and valid.
        exact = ref.clone()
        for i, ai in enumerate(a.flatten().tolist()):
            for j, xj in enumerate(x.flatten().tolist()):
                if math.isfinite(ai) and math.isfinite(xj) and ai > 0 and xj >= 0:
                    v = mpmath.gammainc(ai, 0, xj, regularized=True)
                    exact[i, j] = float(1 - v if upper else v)
        torch.testing.assert_close(got.cpu(), ref, rtol=1e-8, atol=1e-9, equal_nan=True)
        ref = exact
    tol = {torch.float32: (1e-4, 2e-6), torch.float64: (1e-10, 1e-13),
           torch.float16: (2e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}[dtype]
    close_to_reference(got, ref, dtype, tol)
    # In place and out= on strided views.
    av = a.to("vkml").expand(25, 27).clone()
    getattr(av, ("igammac_" if upper else "igamma_"))(x.to("vkml"))
    close_to_reference(av, ref, dtype, tol)
    out = torch.empty(27, 25, dtype=dtype, device="vkml").t()
    fn(a.to("vkml"), x.to("vkml"), out=out)
    close_to_reference(out, ref, dtype, tol)
    with pytest.raises(NotImplementedError):
        fn(torch.ones(2, dtype=torch.int64, device="vkml"), torch.ones(2, device="vkml").long())
