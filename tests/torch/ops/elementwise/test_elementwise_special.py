"""Parametrised, three-operand and special elementwise ops on vkml against the CPU: every dtype
the CPU supports, NaN/inf/zero/negative inputs, strided inputs and outputs, broadcasting,
zero-size and multi-workgroup sizes, in-place and out=, and the backward kernels."""

import math

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import WIDE_FLOAT, device_dtypes

import torch_vkml

FLOATS = device_dtypes(torch.float32, torch.float16, torch.bfloat16, torch.float64)
INTS = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
# Against the CPU in the same dtype (same formula, so only the last bits may differ).
TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12), torch.float16: (1e-3, 1e-3),
       torch.bfloat16: (8e-3, 8e-3)}
SPECIALS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5]


def close(got, ref, tol=None):
    got = got.cpu()
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, ref.dtype, got.shape)
    rtol, atol = tol or TOL.get(ref.dtype, (0, 0))
    torch.testing.assert_close(got, ref, rtol=rtol, atol=atol, equal_nan=True)


def rand(shape, dtype, gen, lo=-3.0, hi=3.0, specials=True):
    """Random values in [lo, hi) with the special values spliced in at the front."""
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if not dtype.is_floating_point:
        return torch.randint(int(lo), int(hi) + 1, shape, generator=gen).to(dtype)
    x = torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo
    if specials:
        flat = x.view(-1)
        n = min(len(SPECIALS), flat.numel())
        flat[:n] = torch.tensor(SPECIALS[:n], dtype=torch.float64)
    return x.to(dtype)


def check_unary(fn, x, tol=None):
    """fn on a transposed (strided) input, into a strided out= view where fn takes out=."""
    xv = x.to("vkml")
    close(fn(xv.t()), fn(x.t()), tol)
    close(fn(xv), fn(x), tol)


# ---- unary ops with parameters ---------------------------------------------------------------

PARAM_UNARY = {
    "logit": lambda x: torch.logit(x),
    "logit_eps": lambda x: torch.logit(x, eps=0.2),
    "nan_to_num": lambda x: torch.nan_to_num(x),
    "nan_to_num_args": lambda x: torch.nan_to_num(x, nan=1.5, posinf=7.0, neginf=-3.0),
    "round_3": lambda x: torch.round(x, decimals=3),
    "round_0": lambda x: torch.round(x, decimals=0),
    "round_neg2": lambda x: torch.round(x * 1000, decimals=-2),
    "hardshrink": lambda x: F.hardshrink(x, 0.7),
    "softshrink": lambda x: F.softshrink(x, 0.7),
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 1.25),
    "relu6": lambda x: F.relu6(x * 4),
    "threshold": lambda x: F.threshold(x, 0.25, -2.0),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "elu": lambda x: F.elu(x, 1.3),
    "celu": lambda x: F.celu(x, 0.7),
    "selu": lambda x: F.selu(x),
    "softplus": lambda x: F.softplus(x, beta=2.0, threshold=3.0),
    "softsign": lambda x: F.softsign(x),
    "logsigmoid": lambda x: F.logsigmoid(x),
    "sgn": torch.sgn,
    "signbit": torch.signbit,
    "isnan": torch.isnan,
    "isneginf": torch.isneginf,
    "isposinf": torch.isposinf,
    "sinc": torch.sinc,
    "entr": torch.special.entr,
}
DOMAIN = {"logit": (-0.2, 1.2), "logit_eps": (-0.2, 1.2), "entr": (-0.5, 3.0)}


@pytest.mark.parametrize("name", sorted(PARAM_UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_param_unary_float(name, dtype, gen):
    lo, hi = DOMAIN.get(name, (-3.0, 3.0))
    x = rand((37, 41), dtype, gen, lo, hi)  # 1517 elements: several workgroups
    check_unary(PARAM_UNARY[name], x)


INT_OK = ["nan_to_num", "nan_to_num_args", "hardtanh", "relu6", "threshold", "sgn", "signbit",
          "isnan", "isneginf", "isposinf"]


@pytest.mark.parametrize("name", INT_OK)
@pytest.mark.parametrize("dtype", INTS)
def test_param_unary_int_exact(name, dtype, gen):
    x = rand((9, 13), dtype, gen, -20 if dtype != torch.uint8 else 0, 20)
    refusals = {"threshold": "cannot be converted to type uint8_t"}  # value -2 for uint8
    if dtype == torch.uint8 and name in refusals:  # the CPU refuses these too
        for t in (x, x.to("vkml")):
            with pytest.raises(RuntimeError, match=refusals[name]):
                PARAM_UNARY[name](t)
        return
    check_unary(PARAM_UNARY[name], x)


@pytest.mark.parametrize("name", ["sgn", "signbit", "isnan", "isneginf", "isposinf", "nan_to_num",
                                  "sinc", "logit", "entr"])
def test_unary_bool_input(name, gen):
    x = rand((5, 7), torch.bool, gen)
    check_unary(PARAM_UNARY[name], x)


def test_integer_inputs_promote_to_float(gen):
    x = rand((6, 5), torch.int32, gen, -5, 5)
    for fn in [torch.sinc, torch.special.entr, torch.special.erfcx, torch.logit]:
        check_unary(fn, x)


def test_param_unary_inplace_and_out(gen):
    x = rand((8, 12), torch.float32, gen)
    xv = x.to("vkml")
    view = xv[:, ::3]
    F.hardtanh_(view, -0.5, 0.5)
    F.leaky_relu_(xv[::2], 0.3)
    ref = x.clone()
    F.hardtanh_(ref[:, ::3], -0.5, 0.5)
    F.leaky_relu_(ref[::2], 0.3)
    close(xv, ref)
    out = torch.full((12, 8), 5.0, device="vkml").t()  # strided destination
    torch.nan_to_num(x.to("vkml"), nan=2.0, out=out)
    close(out, torch.nan_to_num(x, nan=2.0))
    out = torch.empty(0, device="vkml")
    torch.logit(x.to("vkml"), eps=0.1, out=out)
    close(out, torch.logit(x, eps=0.1))
    out = torch.empty(8, 12, dtype=torch.float16, device="vkml")
    with pytest.raises(RuntimeError, match="should be same as input"):
        torch.nan_to_num(x.to("vkml"), out=out)
    z = torch.empty(0, 3, device="vkml")
    assert F.elu(z).shape == (0, 3) and torch.round(z, decimals=2).shape == (0, 3)
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        F.softshrink(x.to("vkml"), -1.0)
    with pytest.raises(NotImplementedError):
        F.leaky_relu(torch.ones(3, dtype=torch.int32, device="vkml"))


def test_round_decimals_matches_cpu_formula(gen):
    # Values near rounding ties in decimal: the CPU's x * 10^d, nearbyint, / 10^d bit for bit.
    x = (torch.arange(-500, 500, dtype=torch.float64) * 0.0125 + 0.0005).float()
    for d in [-3, -1, 0, 1, 2, 3, 5]:
        for dtype in device_dtypes(torch.float32, torch.float64, torch.bfloat16, torch.float16):
            xd = (x * 10 if d < 0 else x).to(dtype)
            torch.testing.assert_close(torch.round(xd.to("vkml"), decimals=d).cpu(),
                                       torch.round(xd, decimals=d), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64))
def test_denormal_inputs(dtype):
    """GLSL leaves frexp of a denormal undefined and lavapipe reads its exponent field as a normal
    number's, so log, log2, pow, lgamma and frexp of denormals need inputs scaled up first
    (unscaled, pow(3e-39, 1) gives 7.4e-39). Devices that flush denormals cannot match the CPU."""
    tiny = torch.finfo(dtype).tiny
    x = torch.tensor([0.3, 1e-2, 3e-5, 0.9], dtype=torch.float64) * tiny
    least = 2.0**-149 if dtype == torch.float32 else 2.0**-1074  # the least denormal
    x = torch.cat([x, -x, torch.tensor([tiny, least], dtype=torch.float64)]).to(dtype)
    v = x.to("vkml")
    if not bool((v * 1).cpu().ne(0).all()):
        pytest.skip("the device flushes denormals")
    for name in ["log", "log2", "log10", "lgamma", "sqrt"]:
        close(getattr(torch, name)(v), getattr(torch, name)(x))
    for e in [1.0, 2.0, -1.0, 0.3, True]:
        close(torch.pow(v.abs(), e), torch.pow(x.abs(), e))
    close(torch.pow(v, 1), x, (0, 0))
    m, e = torch.frexp(v)
    mc, ec = torch.frexp(x)
    close(m, mc, (0, 0))
    close(e, ec)
    y = torch.tensor([-1.0, 3.0, 1e-3], dtype=dtype) * tiny
    close(torch.fmod(v[:, None], y.to("vkml")), torch.fmod(x[:, None], y), (0, 0))


@pytest.mark.parametrize("dtype", FLOATS)
def test_frexp(dtype, gen):
    x = rand((13, 17), dtype, gen, -1e3, 1e3)
    m, e = torch.frexp(x.to("vkml").t())
    mc, ec = torch.frexp(x.t())
    assert e.dtype == torch.int32
    close(m, mc, (0, 0))
    close(e, ec)
    mo = torch.empty(17, 13, dtype=dtype, device="vkml").t()
    eo = torch.empty(0, dtype=torch.int32, device="vkml")
    torch.frexp(x.to("vkml"), out=(mo, eo))
    close(mo, mc.t(), (0, 0))
    close(eo, ec.t())
    with pytest.raises(RuntimeError, match="only supports floating-point"):
        torch.frexp(torch.ones(2, dtype=torch.int32, device="vkml"))
    with pytest.raises(RuntimeError, match="expects exponent to have int dtype"):
        torch.frexp(x.to("vkml"), out=(mo, torch.empty(0, device="vkml")))


def test_div_trunc_rounds_the_quotient_to_the_dtype_first():
    # The CPU truncates a / b rounded to f16/bf16: 138.95 rounds to 139 in f16 before trunc.
    for dtype, a, b in [(torch.float16, -8.4765625, -0.061004638671875),
                        (torch.bfloat16, 8.375, 0.55859375), (torch.bfloat16, 2.984375, -0.0610351)]:
        ta, tb = torch.tensor([a, 7.0], dtype=dtype), torch.tensor([b, 2.0], dtype=dtype)
        close(torch.div(ta.to("vkml"), tb.to("vkml"), rounding_mode="trunc"),
              torch.div(ta, tb, rounding_mode="trunc"), (0, 0))


def test_nan_to_num_default_limits():
    for dtype in FLOATS:
        x = torch.tensor([float("nan"), float("inf"), float("-inf"), 1.5], dtype=dtype)
        got = torch.nan_to_num(x.to("vkml")).cpu()
        torch.testing.assert_close(got, torch.nan_to_num(x), rtol=0, atol=0)


# ---- binary -------------------------------------------------------------------------------------

BINARY_FLOAT = {
    "logaddexp": torch.logaddexp,
    "logaddexp2": torch.logaddexp2,
    "heaviside": torch.heaviside,
    "nextafter": torch.nextafter,
    "xlog1py": torch.special.xlog1py,
    "rsub": lambda a, b: torch.rsub(a, b, alpha=1.5),
    "floor_divide": torch.floor_divide,
}


@pytest.mark.parametrize("name", sorted(BINARY_FLOAT))
@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_float(name, dtype, gen):
    fn = BINARY_FLOAT[name]
    a = rand((23, 29), dtype, gen)
    b = rand((29, 1), dtype, gen, specials=False).t()  # broadcast row of a strided view
    b[0, :10] = torch.tensor(SPECIALS, dtype=torch.float64).to(dtype)
    av, bv = a.to("vkml"), b.to("vkml")
    close(fn(av, bv), fn(a, b))
    close(fn(av.t(), a.t().contiguous().to("vkml")), fn(a.t(), a.t()))
    # every special value against every other one
    s = torch.tensor(SPECIALS, dtype=torch.float64).to(dtype)
    sa, sb = s.view(-1, 1).expand(10, 10), s.view(1, -1).expand(10, 10)
    close(fn(sa.to("vkml"), sb.to("vkml")), fn(sa, sb))


@pytest.mark.parametrize("dtype", INTS)
def test_binary_int_exact(dtype, gen):
    lo = 0 if dtype == torch.uint8 else -40
    a = rand((15, 17), dtype, gen, lo, 40)
    b = rand((15, 17), dtype, gen, lo, 40)
    av, bv = a.to("vkml"), b.to("vkml")
    for fn in [torch.gcd, torch.lcm, torch.heaviside, lambda x, y: torch.rsub(x, y, alpha=2)]:
        close(fn(av, bv), fn(a, b))
    nz = torch.where(b == 0, torch.ones_like(b), b)
    close(torch.floor_divide(av, nz.to("vkml")), torch.floor_divide(a, nz))
    close(torch.floor_divide(av, 3), torch.floor_divide(a, 3))
    out = torch.empty(17, 15, dtype=dtype, device="vkml").t()
    torch.gcd(av, bv, out=out)
    close(out, torch.gcd(a, b))
    g = av.clone()
    g.lcm_(bv)
    close(g, torch.lcm(a, b))


def test_binary_dtype_errors():
    f = torch.ones(3, device="vkml")
    i = torch.ones(3, dtype=torch.int32, device="vkml")
    with pytest.raises(RuntimeError, match="different dtypes"):
        torch.heaviside(f, f.half())
    with pytest.raises(NotImplementedError):
        torch.gcd(f, f)
    with pytest.raises(NotImplementedError):
        torch.logaddexp(i, i)
    with pytest.raises(RuntimeError, match="bool tensor"):
        torch.rsub(f, f.bool())
    with pytest.raises(RuntimeError, match="unsigned type with negative limits"):
        F.hardtanh(torch.ones(3, dtype=torch.uint8, device="vkml"), -1.0, 1.0)


# ---- three operands: addcmul, addcdiv, lerp ----------------------------------------------------

# One rounding from fp32 for f16/bf16, so the CPU's result up to its fused multiply-add: the
# CPU's compiled kernels fuse (value * t1) * t2 + self and lerp's w * d + s; devices that do not
# fuse (lavapipe) differ by an ulp of the result, or of the product where terms cancel.
ONE_ULP = {torch.float32: (2.4e-7, 2e-6), torch.float64: (4.5e-16, 4e-15),
           torch.float16: (1e-3, 1e-3), torch.bfloat16: (7.9e-3, 1e-3)}


@pytest.mark.parametrize("dtype", FLOATS)
def test_ternary_round_once(dtype, gen):
    x = rand((31, 33), dtype, gen, specials=False)
    y = rand((33, 31), dtype, gen, specials=False).t()
    z = rand((33,), dtype, gen, 0.5, 2.0, specials=False)
    w = rand((31, 33), dtype, gen, -0.5, 1.5, specials=False)
    xv, yv, zv, wv = (t.to("vkml") for t in (x, y, z, w))
    exact = ONE_ULP[dtype]
    close(torch.addcmul(xv, yv, zv, value=0.7), torch.addcmul(x, y, z, value=0.7), exact)
    close(torch.addcdiv(xv, yv, zv, value=-1.3), torch.addcdiv(x, y, z, value=-1.3), exact)
    close(torch.lerp(xv, yv, wv), torch.lerp(x, y, w), exact)
    for wt in [0.3, 0.8, 1.0]:
        close(torch.lerp(xv, yv, wt), torch.lerp(x, y, wt), exact)
    o = torch.empty(33, 31, dtype=dtype, device="vkml").t()
    torch.addcmul(xv, yv, zv, value=2, out=o)
    close(o, torch.addcmul(x, y, z, value=2), exact)
    xi = xv.clone()
    xi.addcdiv_(yv, zv, value=0.5)
    close(xi, torch.addcdiv(x, y, z, value=0.5), exact)
    xi = xv.clone()
    xi.lerp_(yv, torch.tensor(0.25, dtype=dtype))  # 0-dim CPU weight
    close(xi, torch.lerp(x, y, torch.tensor(0.25, dtype=dtype)), exact)


def test_ternary_ints_and_errors(gen):
    a, b, c = (rand((7, 9), torch.int64, gen, -9, 9) for _ in range(3))
    close(torch.addcmul(a.to("vkml"), b.to("vkml"), c.to("vkml"), value=3),
          torch.addcmul(a, b, c, value=3))
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        torch.addcdiv(a.to("vkml"), b.to("vkml"), c.to("vkml"))
    z = torch.empty(0, 4, device="vkml")
    assert torch.addcmul(z, z, z).shape == (0, 4) and torch.lerp(z, z, z).shape == (0, 4)


# ---- backward ---------------------------------------------------------------------------------

BACKWARD = {
    "hardshrink": lambda x: F.hardshrink(x, 0.6),
    "softshrink": lambda x: F.softshrink(x, 0.6),
    "hardtanh": lambda x: F.hardtanh(x, -0.8, 1.1),
    "relu6": lambda x: F.relu6(x * 3),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
    "elu": F.elu,
    "elu_inplace": lambda x: F.elu(x * 1, inplace=True),
    "celu": lambda x: F.celu(x, 0.5),
    "selu": F.selu,
    "softplus": lambda x: F.softplus(x, beta=1.5, threshold=2.0),
    "softsign": F.softsign,
    "logsigmoid": F.logsigmoid,
    "logit": lambda x: torch.logit(x.sigmoid(), eps=0.05),
    "abs": torch.abs,
    "sgn": lambda x: torch.sgn(x) * x,
    "threshold": lambda x: F.threshold(x, 0.2, 0.0),
}


@pytest.mark.parametrize("name", sorted(BACKWARD))
@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64, torch.bfloat16))
def test_backward(name, dtype, fallback, gen):
    fn = BACKWARD[name]
    x = rand((19, 23), dtype, gen, specials=False)
    g = rand((19, 23), dtype, gen, specials=False)
    xc = x.clone().requires_grad_()
    xv = x.to("vkml").requires_grad_()
    yc, yv = fn(xc), fn(xv)
    close(yv, yc.detach())
    yc.backward(g)
    yv.backward(g.to("vkml"))
    # the CPU's bf16 logit_backward rounds each intermediate to bf16; vkml rounds once
    close(xv.grad, xc.grad, (2e-2, 2e-2) if dtype == torch.bfloat16 and name == "logit" else None)
    assert torch_vkml.fallback_stats() == {}


# ---- special functions against float64 --------------------------------------------------------

def test_erfcx_against_float64(gen):
    x = torch.cat([rand((400,), torch.float64, gen, -8, 8), torch.tensor(
        [-9.0, -30.0, 0.3, 0.5, 9.9, 10.2, 26.0, 27.5, 50.0, 1e3, 1e10, 0.0] + SPECIALS,
        dtype=torch.float64)])
    ref = torch.special.erfcx(x)
    for dtype, rtol in [(torch.float32, 2e-6), (torch.float64, 1e-14)]:
        if not device_dtypes(dtype):
            continue
        got = torch.special.erfcx(x.to(dtype).to("vkml")).cpu().double()
        want = torch.special.erfcx(x.to(dtype).double())  # the rounded input, exactly
        torch.testing.assert_close(got, want, rtol=rtol, atol=0, equal_nan=True)


def test_sinc_logaddexp_against_float64(gen):
    x = rand((500,), torch.float64, gen, -20, 20)
    y = rand((500,), torch.float64, gen, -20, 20, specials=False)
    for dtype, tol in [(torch.float32, (3e-6, 1e-6)), (torch.float64, (1e-14, 1e-15))]:
        if not device_dtypes(dtype):
            continue
        xd, yd = x.to(dtype), y.to(dtype)
        close(torch.sinc(xd.to("vkml")).cpu().double(), torch.sinc(xd.double()), tol)
        close(torch.logaddexp(xd.to("vkml"), yd.to("vkml")).cpu().double(),
              torch.logaddexp(xd.double(), yd.double()), tol)
        close(torch.logaddexp2(xd.to("vkml"), yd.to("vkml")).cpu().double(),
              torch.logaddexp2(xd.double(), yd.double()), tol)


def test_nextafter_steps_one_ulp_of_the_storage_dtype():
    for dtype in FLOATS:
        x = torch.tensor([1.0, -1.0, 0.0, -0.0, 3.0, float("inf"), 65504.0], dtype=dtype)
        for toward in [math.inf, -math.inf, 0.0]:
            t = torch.full_like(x, toward)
            got = torch.nextafter(x.to("vkml"), t.to("vkml")).cpu()
            torch.testing.assert_close(got, torch.nextafter(x, t), rtol=0, atol=0)


# ---- gamma family, Bessel, normal quantiles: against float64 with stated tolerances ----------

def domain(name, gen):
    """Random points plus the function's hard cases (poles, tails, large arguments)."""
    r = lambda lo, hi, n=300: rand((n,), torch.float64, gen, lo, hi, specials=False)  # noqa: E731
    extra = {
        "lgamma": [0.5, 1.0, 2.0, 1e-30, 1e-5, 1 + 1e-6, 2 - 1e-6, -0.5, -2.5, -2.457, -1e-6,
                   -10.3, 8.0, 12.0, 7.999, 11.99, 100.5, 1e5, 1e30, -3.0, -0.0],
        "digamma": [0.0, -0.0, -1.0, -2.0, 1.4616321449683623, 1e-7, 10.0, 1e6, 1e20, -0.5, -3.3],
        "erfinv": [0.0, -0.0, 0.5, -0.5, 0.499, 0.9, 0.999999, -0.9999, 1.0, -1.0, 1e-20, 1.5],
        "bessel": [0.0, -0.0, 8.0, -8.0, 7.99, 8.01, 50.0, -80.0, 700.0, 1e-20, 89.0, 100.0],
        "ndtri": [0.0, 1.0, 0.5, 1e-30, 1e-10, 0.999, 1 - 1e-12, 0.025, 0.975, -0.1, 1.1],
        "log_ndtr": [-40.0, -20.0, -5.0, -1.0, -0.999, 0.0, 3.0, 8.0, 30.0],
    }[name]
    body = {"lgamma": r(-12, 30), "digamma": r(-12, 30), "erfinv": r(-1, 1),
            "bessel": r(-30, 30), "ndtri": r(0, 1), "log_ndtr": r(-12, 8)}[name]
    s = torch.tensor(extra + [float("nan"), float("inf"), float("-inf")], dtype=torch.float64)
    return torch.cat([body, s])


SPECIAL_FNS = {
    "lgamma": ("lgamma", torch.lgamma),
    "digamma": ("digamma", torch.digamma),
    "polygamma1": ("digamma", lambda x: torch.polygamma(1, x)),
    "polygamma2": ("bessel", lambda x: torch.polygamma(2, x.abs() + 0.1)),
    "polygamma3": ("bessel", lambda x: torch.polygamma(3, x.abs() + 0.1)),
    "polygamma4": ("bessel", lambda x: torch.polygamma(4, x.abs() + 0.1)),
    "mvlgamma3": ("bessel", lambda x: torch.mvlgamma(x.abs() + 1.1, 3)),
    "erfinv": ("erfinv", torch.erfinv),
    "i0": ("bessel", torch.i0),
    "i0e": ("bessel", torch.special.i0e),
    "i1": ("bessel", torch.special.i1),
    "i1e": ("bessel", torch.special.i1e),
    "ndtri": ("ndtri", torch.special.ndtri),
    "log_ndtr": ("log_ndtr", torch.special.log_ndtr),
}
# (rtol, atol) of float32 and float64 against the float64 value at the rounded input.
SPECIAL_TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12)}


@pytest.mark.parametrize("name", sorted(SPECIAL_FNS))
@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64))
def test_special_against_float64(name, dtype, gen):
    dom, fn = SPECIAL_FNS[name]
    x = domain(dom, gen)
    if name == "mvlgamma3":
        x = x[x.isfinite()]  # mvlgamma refuses NaN (it checks the domain first)
    xd = x.to(dtype)
    want = fn(xd.double())
    got = fn(xd.to("vkml")).cpu()
    assert got.dtype == dtype
    if name == "polygamma1":
        # Below 1/2 trigamma uses the CPU's reflection with pi * x rounded in the dtype, which
        # loses accuracy next to the poles (on the CPU alike): there, parity with the CPU.
        neg = xd < 0
        close(got[neg], fn(xd[neg]), TOL[dtype])
        xd, got, want = xd[~neg], got[~neg], want[~neg]
    over = want.abs() >= torch.finfo(dtype).max  # beyond the dtype's range: the same infinity
    rtol, atol = SPECIAL_TOL[dtype]
    torch.testing.assert_close(got.double()[~over], want[~over], rtol=rtol, atol=atol,
                               equal_nan=True)
    assert torch.equal(got[over], want[over].to(dtype))


@pytest.mark.parametrize("name", sorted(SPECIAL_FNS))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_special_half_against_cpu(name, dtype, gen):
    dom, fn = SPECIAL_FNS[name]
    if name in ("ndtri", "log_ndtr"):
        with pytest.raises(NotImplementedError):
            fn(torch.ones(2, dtype=dtype, device="vkml"))
        return
    x = domain(dom, gen).to(dtype)
    if name == "mvlgamma3":
        x = x[x.isfinite()]
    want = fn(x.double())
    if name == "polygamma1":  # the reflection's pi * x: see above
        want = torch.where(x < 0, fn(x.float()).double(), want)
    # computed in fp32, rounded once: the float64 value at the same input, rounded
    close(fn(x.to("vkml")), want.to(dtype), (2e-2, 2e-2) if dtype == torch.bfloat16 else (4e-3, 4e-3))


def test_special_ints_strided_and_out(gen):
    x = rand((11, 13), torch.int64, gen, -5, 20)
    for fn in [torch.lgamma, torch.digamma, torch.i0, torch.special.i1e, torch.special.ndtri]:
        close(fn(x.to("vkml").t()), fn(x.t()), (1e-5, 1e-5))
    xf = rand((11, 13), torch.float32, gen, 0.1, 5, specials=False)
    out = torch.empty(13, 11, device="vkml").t()
    torch.polygamma(2, xf.to("vkml"), out=out)
    close(out, torch.polygamma(2, xf), (1e-5, 1e-5))
    y = xf.to("vkml")
    y.lgamma_()
    close(y, torch.lgamma(xf))
    with pytest.raises(RuntimeError, match="negative n"):
        torch.polygamma(-1, xf.to("vkml"))


@pytest.mark.parametrize("fn", [torch.lgamma, torch.digamma, torch.i0, torch.erfinv,
                                torch.special.i0e, torch.special.i1, torch.special.log_ndtr],
                         ids=["lgamma", "digamma", "i0", "erfinv", "i0e", "i1", "log_ndtr"])
def test_special_backward(fn, fallback, gen):
    # In the widest float the device has, against the CPU's float64 gradient at the same inputs.
    x = rand((7, 9), WIDE_FLOAT, gen, 0.05, 0.95, specials=False)
    g = rand((7, 9), WIDE_FLOAT, gen, specials=False)
    xc = x.double().detach().clone().requires_grad_()
    xv = x.detach().to("vkml").requires_grad_()
    fn(xc).backward(g.double())
    fn(xv).backward(g.to("vkml"))
    tol = (1e-10, 1e-10) if WIDE_FLOAT == torch.float64 else (2e-5, 1e-5)
    close(xv.grad.cpu().double(), xc.grad, tol)
    assert torch_vkml.fallback_stats() == {}
