"""Elementwise ops through the bridge: promotion, broadcasting, CPU scalars, in-place and out=,
activations and their backward, against the CPU."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import HAS_FLOAT64, device_dtypes

import torch_vkml

FLOATS = device_dtypes(torch.float32, torch.float16, torch.bfloat16, torch.float64)
TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-10, 1e-10), torch.float16: (2e-3, 1e-3),
       torch.bfloat16: (1.6e-2, 1e-2)}


def close(got, ref):
    got = got.cpu()
    assert got.dtype == ref.dtype and got.shape == ref.shape
    rtol, atol = TOL.get(ref.dtype, (0, 0))
    torch.testing.assert_close(got, ref, rtol=rtol, atol=atol, equal_nan=True)


def rand(shape, dtype, gen, lo=-3.0, hi=3.0):
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    return torch.randint(int(lo) - 2, int(hi) + 3, shape, generator=gen).to(dtype)


BINARY = [torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum, torch.fmax,
          torch.fmin, torch.atan2, torch.hypot, torch.copysign, torch.eq, torch.ne, torch.lt,
          torch.le, torch.gt, torch.ge, torch.logical_and, torch.logical_or, torch.logical_xor]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_float_broadcast_and_strides(op, dtype, gen):
    a = rand((5, 7), dtype, gen)
    b = rand((7, 1), dtype, gen).t()  # broadcast row, strided
    close(op(a.to("vkml").t(), b.to("vkml").t()), op(a.t(), b.t()))
    close(op(a.to("vkml"), b.to("vkml")), op(a, b))


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64])
def test_integer_ops_exact(dtype, gen):
    a = rand((6, 5), dtype, gen, -50, 50)
    b = rand((6, 5), dtype, gen, 1, 9)
    av, bv = a.to("vkml"), b.to("vkml")
    for op in [torch.add, torch.sub, torch.mul, torch.remainder, torch.fmod, torch.maximum,
               torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor, torch.eq, torch.lt]:
        close(op(av, bv), op(a, b))
    close(torch.div(av, bv, rounding_mode="floor"), torch.div(a, b, rounding_mode="floor"))
    close(torch.div(av, bv, rounding_mode="trunc"), torch.div(a, b, rounding_mode="trunc"))
    close(av / bv, a / b)  # true division promotes to the default float
    close(av.abs(), a.abs())
    close(~av, ~a)


def test_type_promotion_and_scalars(gen):
    f = rand((4, 3), torch.float32, gen)
    h = rand((4, 3), torch.float16, gen)
    i = rand((4, 3), torch.int64, gen)
    fv, hv, iv = f.to("vkml"), h.to("vkml"), i.to("vkml")
    close(fv + hv, f + h)
    close(iv * 2.5, i * 2.5)
    close(hv * 3, h * 3)
    close(iv + 3, i + 3)
    close(2 - fv, 2 - f)
    close(fv ** 2, f ** 2)
    close(2 ** fv, 2 ** f)
    close(fv * torch.tensor(1.5), f * torch.tensor(1.5))  # CPU 0-dim tensor as a scalar
    close(torch.tensor(4.0) / fv, torch.tensor(4.0) / f)
    close(iv > 0, i > 0)
    close(torch.add(fv, hv, alpha=-2), torch.add(f, h, alpha=-2))
    with pytest.raises(RuntimeError, match="can't be cast"):
        iv.add_(fv)
    with pytest.raises(RuntimeError, match="same device"):
        fv + torch.ones(4, 3)


def test_inplace_and_out(gen):
    a = rand((3, 8), torch.float32, gen)
    b = rand((8,), torch.float32, gen)
    av = a.to("vkml")
    view = av[:, ::2]
    view.mul_(b[::2].to("vkml"))
    ref = a.clone()
    ref[:, ::2].mul_(b[::2])
    close(av, ref)
    out = torch.empty(0, device="vkml")
    torch.add(a.to("vkml"), b.to("vkml"), out=out)
    close(out, a + b)
    if HAS_FLOAT64:  # an out= of a wider dtype
        out64 = torch.empty(3, 8, dtype=torch.float64, device="vkml")
        torch.mul(a.to("vkml"), 2, out=out64)
        close(out64, (a * 2).double())
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        b.to("vkml").add_(a.to("vkml"))
    z = torch.empty(0, 5, device="vkml")
    assert (z + z).shape == (0, 5)


@pytest.mark.parametrize("spread", ["0", "1"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_dense_vector_path_with_and_without_spread_grid(spread, dtype, vkml_config, gen):
    """Dense operands of a few hundred 16-byte vectors take the kernels' VEC path. With
    VKML_EW_SPREAD=1 the grid shrinks to a quarter, so each thread loads up to 4 vectors
    (EW_UNROLL) and loops; an odd element count leaves a tail. Unary, binary, scalar and
    three-operand (addcmul) kernels against the CPU."""
    vkml_config.set("VKML_EW_SPREAD", spread)
    n = 100_003
    a, b, c = (rand((n,), dtype, gen) for _ in range(3))
    av, bv, cv = a.to("vkml"), b.to("vkml"), c.to("vkml")
    close(av + bv, a + b)
    close(av * 3, a * 3)
    close(torch.neg(av), torch.neg(a))
    close(torch.maximum(av, bv), torch.maximum(a, b))
    if dtype.is_floating_point:
        close(torch.exp(av), torch.exp(a))
        close(torch.addcmul(av, bv, cv, value=0.5), torch.addcmul(a, b, c, value=0.5))


UNARY = ["neg", "abs", "sign", "reciprocal", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log",
         "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
         "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "floor", "ceil", "round", "trunc",
         "frac", "sigmoid", "relu"]
DOMAIN = {"sqrt": (0.1, 4), "rsqrt": (0.1, 4), "log": (0.1, 4), "log2": (0.1, 4),
          "log10": (0.1, 4), "log1p": (-0.9, 4), "asin": (-0.99, 0.99), "acos": (-0.99, 0.99),
          "acosh": (1.01, 4), "atanh": (-0.99, 0.99), "reciprocal": (0.2, 3)}


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_float(name, dtype, gen):
    lo, hi = DOMAIN.get(name, (-3, 3))
    x = rand((9, 11), dtype, gen, lo, hi)
    op = getattr(torch, name)
    close(op(x.to("vkml").t()), op(x.t()))
    xv = x.to("vkml")
    getattr(xv, name + "_")()
    close(xv, op(x))


@pytest.mark.parametrize("fn", [F.relu, F.gelu, lambda x: F.gelu(x, approximate="tanh"), F.silu,
                                torch.sigmoid, torch.tanh, F.hardsigmoid, F.hardswish, F.mish],
                         ids=["relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh",
                              "hardsigmoid", "hardswish", "mish"])
def test_activation_forward_and_backward(fn, fallback, gen):
    x = rand((6, 9), torch.float32, gen)
    g = rand((6, 9), torch.float32, gen)
    xc = x.clone().requires_grad_()
    xv = x.to("vkml").requires_grad_()
    yc, yv = fn(xc), fn(xv)
    close(yv, yc.detach())
    yc.backward(g)
    yv.backward(g.to("vkml"))
    close(xv.grad, xc.grad)
    assert torch_vkml.fallback_stats() == {}


def test_clamp_lerp_addcmul_addcdiv(gen):
    x = rand((5, 6), torch.float32, gen)
    y = rand((5, 6), torch.float32, gen)
    z = rand((5, 6), torch.float32, gen, 0.5, 2)
    xv, yv, zv = x.to("vkml"), y.to("vkml"), z.to("vkml")
    close(torch.clamp(xv, -1, 0.5), torch.clamp(x, -1, 0.5))
    close(torch.clamp(xv, min=0.2), torch.clamp(x, min=0.2))
    close(torch.clamp(xv, max=yv), torch.clamp(x, max=y))
    close(xv.clamp_min(0), x.clamp_min(0))
    close(torch.lerp(xv, yv, 0.3), torch.lerp(x, y, 0.3))
    close(torch.lerp(xv, yv, 0.8), torch.lerp(x, y, 0.8))
    close(torch.lerp(xv, yv, zv), torch.lerp(x, y, z))
    close(torch.addcmul(xv, yv, zv, value=0.5), torch.addcmul(x, y, z, value=0.5))
    close(torch.addcdiv(xv, yv, zv, value=-2), torch.addcdiv(x, y, z, value=-2))
    w = xv.clone()
    w.addcdiv_(yv, zv, value=0.1)
    close(w, x + 0.1 * y / z)


def test_optimizers_step_natively(fallback, gen):
    torch.manual_seed(0)
    for make in [lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
                 lambda p: torch.optim.Adam(p, lr=0.01), lambda p: torch.optim.AdamW(p, lr=0.01)]:
        wc = torch.randn(4, 3, generator=gen)
        gc = torch.randn(4, 3, generator=gen)
        pc = torch.nn.Parameter(wc.clone())
        pv = torch.nn.Parameter(wc.to("vkml"))
        oc, ov = make([pc]), make([pv])
        for _ in range(3):
            pc.grad, pv.grad = gc.clone(), gc.to("vkml")
            oc.step()
            ov.step()
        close(pv.detach(), pc.detach())
    stats = torch_vkml.fallback_stats()
    assert not stats, stats


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("op", [torch.sigmoid, F.silu], ids=["sigmoid", "silu"])
def test_half_sigmoid_silu_every_value(op, dtype, fallback):
    """Half outputs use the driver's exp2 (ew_exp_for_half): over every finite value of the dtype
    the result is within one ulp of the CPU's, and equal to it but for a few ties."""
    bits = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16)
    x = bits.view(dtype)
    x = x[torch.isfinite(x)]
    got, want = op(x.to("vkml")).cpu(), op(x)
    both_nan = torch.isnan(got) & torch.isnan(want)
    assert not (torch.isnan(got) ^ torch.isnan(want)).any()
    # Adjacent finite values of one sign differ by 1 in their bit patterns; +0 and -0 count as equal.
    g, w = got.view(torch.int16).int(), want.view(torch.int16).int()
    zeros = (got == 0) & (want == 0)
    # fp32 subnormal results (bf16 shares fp32's exponent range) may flush to zero: NVIDIA's
    # Vulkan driver flushes them and cannot be asked not to (vkml-info: "keep subnormals no").
    # One rounds up to the smallest normal bf16 on the CPU: silu(-2.34e-38) = -1.17e-38.
    flushed = (got == 0) & (want.float().abs() <= torch.finfo(torch.float32).tiny)
    ulps = torch.where(both_nan | zeros | flushed, 0, (g - w).abs())
    assert ulps.max().item() <= 1, x[ulps.argmax()]
    assert (ulps > 0).sum().item() <= 16  # 4 of 63,490 for fp16 sigmoid on lavapipe
    assert torch_vkml.fallback_stats() == {}


def _ulp_of(v):
    """The float32 ulp of |v| rounded to float32, in float64."""
    w = v.float().abs()
    return (torch.nextafter(w, torch.tensor(float("inf"))) - w).double()


def _ulps(got, want):
    """|got - want| in ulps of want rounded to float32 (want in float64); 0 where want is not
    a normal float32 (NVIDIA flushes fp32 subnormal results)."""
    err = (got.double() - want).abs() / _ulp_of(want)
    return torch.where(want.abs() >= torch.finfo(torch.float32).tiny, err, torch.zeros_like(err))


def test_erf_family_float32_within_a_few_ulp():
    """erf, erfc, gelu and gelu's gradient (branch-free in the shaders: every lane evaluates
    both pieces of erfc and selects) against float64 references, over both sides of each
    piece's edge (|z| = 1/2 and 2, erfc's cut-off near 10.1) and a spread of random values."""
    s2 = 2.0 ** 0.5
    edges = torch.tensor([0.5, 2.0, 10.1], dtype=torch.float64)
    near = torch.cat([(e + torch.linspace(-1e-3, 1e-3, 401, dtype=torch.float64)) for e in edges])
    g = torch.Generator().manual_seed(7)
    z = torch.cat([near, -near, torch.randn(60000, generator=g, dtype=torch.float64) * 3,
                   torch.linspace(-11, 11, 20001, dtype=torch.float64)])
    z32 = z.float()
    zd = z32.double()
    x32 = (z * s2).float()  # gelu sees x = z sqrt(2): the same edges in z = x / sqrt(2)
    xd = x32.double()
    cdf = 0.5 * torch.special.erfc(-xd / s2)
    pdf = torch.exp(-0.5 * xd * xd) / (2 * torch.pi) ** 0.5
    zv, xv = z32.to("vkml"), x32.to("vkml")
    assert _ulps(torch.erf(zv).cpu(), torch.erf(zd)).max().item() <= 3
    assert _ulps(torch.erfc(zv).cpu(), torch.erfc(zd)).max().item() <= 6
    assert _ulps(F.gelu(xv).cpu(), xd * cdf).max().item() <= 8
    # The gradient cdf + x pdf cancels near x = -0.75: error in ulps of its larger term.
    got = torch.ops.aten.gelu_backward(torch.ones_like(xv), xv).cpu().double()
    scale = torch.maximum(cdf, (xd * pdf).abs()).float()
    err = torch.where(scale > 1e-30, (got - (cdf + xd * pdf)).abs() / _ulp_of(scale), 0)
    assert err.max().item() <= 8
    specials = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 30.0, -30.0,
                             1e30, -1e30, 1e-30])
    for fn in (torch.erf, torch.erfc):
        torch.testing.assert_close(fn(specials.to("vkml")).cpu(), fn(specials), equal_nan=True,
                                   rtol=1e-6, atol=0)
    gelu_sp = F.gelu(specials.to("vkml")).cpu()
    want_sp = torch.tensor([0.0, 0.0, float("inf"), float("nan"), float("nan"), 30.0, 0.0, 1e30,
                            0.0, 5e-31])
    torch.testing.assert_close(gelu_sp, want_sp, equal_nan=True, rtol=1e-6, atol=0)
    assert torch_vkml.fallback_stats() == {}
