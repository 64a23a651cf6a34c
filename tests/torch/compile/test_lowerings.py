"""torch.compile on vkml: each kind of generated kernel against eager vkml and the CPU."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import HAS_FLOAT64, TOLERANCES, device_dtypes

import torch_vkml  # noqa: F401

DEV = "vkml"


def check(fn, *inputs, dtype=None, dynamic=False, tol_scale=1.0):
    """fn compiled on vkml against fn eager on vkml and fn on the CPU in float64."""
    dev_inputs = [x.to(DEV) if isinstance(x, torch.Tensor) else x for x in inputs]
    compiled = torch.compile(fn, dynamic=dynamic)(*dev_inputs)
    eager = fn(*dev_inputs)
    ref = fn(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
               for x in inputs])
    outs = compiled if isinstance(compiled, (tuple, list)) else (compiled,)
    eags = eager if isinstance(eager, (tuple, list)) else (eager,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    for got, e, r in zip(outs, eags, refs, strict=True):
        assert got.device.type == DEV and got.dtype == e.dtype and got.shape == e.shape
        if got.is_floating_point():
            rtol, atol = TOLERANCES[dtype or got.dtype]
            torch.testing.assert_close(got.cpu().double(), r.double(), rtol=rtol * tol_scale,
                                       atol=atol * tol_scale, equal_nan=True)
            torch.testing.assert_close(got.cpu().double(), e.cpu().double(),
                                       rtol=2 * rtol * tol_scale, atol=2 * atol * tol_scale,
                                       equal_nan=True)
        else:
            assert torch.equal(got.cpu(), r.to(got.dtype)), (got, r)
    return compiled


def rnd(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_fused_pointwise_chain(dtype):
    def f(x, y):
        return F.gelu(x * 1.5 + y) - torch.tanh(y) * torch.sigmoid(x) + F.silu(x)

    check(f, rnd(37, 65, dtype=dtype), rnd(37, 65, dtype=dtype, seed=1), tol_scale=4.0)


def test_broadcast_strided_channels_last_and_odd_sizes():
    def f(a, b, c):
        return (a * b).exp() + c.relu()

    a = rnd(3, 5, 1, 7)
    b = rnd(5, 11, 1)
    c = rnd(3, 5, 11, 7).to(memory_format=torch.channels_last)
    check(f, a, b, c)
    t = rnd(9, 13)
    check(lambda x: (x.t() * 2).abs().sqrt(), t)
    check(lambda x: x[::2, 1::3] + 1, t)


def test_float64_and_integers():
    if HAS_FLOAT64:
        check(lambda x, y: x * y - x / (y.abs() + 1), rnd(17, 5, dtype=torch.float64),
              rnd(17, 5, dtype=torch.float64, seed=2))
    a = torch.randint(-50, 50, (23, 9))
    b = torch.randint(1, 9, (23, 9))
    check(lambda x, y: (x // y) * 3 + x % y - torch.maximum(x, y), a, b)
    check(lambda x, y: (x > y) & (x != 0) | (y == 3), a, b)
    check(lambda x: (x.to(torch.int8) * 3).to(torch.uint8).to(torch.int64), a)


def test_zero_size():
    check(lambda x: x * 2 + 1, rnd(0, 5))
    check(lambda x: x.sum(1), rnd(0, 5))
    check(lambda x: x.sum(0), rnd(0, 5))


def test_masked_loads_and_index_expressions():
    x = rnd(6, 10)
    check(lambda t: F.pad(t, (2, 3, 1, 0), value=0.5) * 2, x)
    check(lambda t, u: torch.cat([t, u * 2], dim=1).cos(), x, rnd(6, 4))
    check(lambda t: torch.flip(t, [1]) + t.roll(3, 0), x)
    idx = torch.tensor([3, 0, 5, 5, 1])
    check(lambda t, i: t[i] * 3, x, idx)
    check(lambda t: torch.arange(t.shape[1], device=t.device) * t, x)


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float16, torch.float64))
def test_reductions(dtype):
    x = rnd(7, 300, dtype=dtype)
    scale = 8.0 if dtype == torch.float16 else 1.0
    check(lambda t: (t.sum(1), t.amax(1), t.amin(0), t.mean(0)), x, tol_scale=scale)
    check(lambda t: (t.argmax(1), t.argmin(0)), x)
    check(lambda t: torch.var_mean(t, dim=1), x, tol_scale=scale)
    check(lambda t: t.sum(), x, tol_scale=scale)


def test_several_reductions_in_one_kernel():
    x = rnd(5, 1000)
    check(lambda t: torch.softmax(t, dim=-1), x)
    check(lambda t: F.layer_norm(t, (1000,)), x, tol_scale=4.0)
    check(lambda t: (t - t.mean(1, keepdim=True)).pow(2).sum(1) / t.abs().amax(1), x)


def test_argmax_ties_and_nan():
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0], [float("nan"), 1.0, float("nan"), 5.0],
                      [0.0, 0.0, 0.0, 0.0]])
    check(lambda t: (t.argmax(1), t.argmin(1), t.amax(1)), x)


def test_extern_kernels():
    a, b = rnd(4, 16, 32), rnd(4, 32, 8)
    check(lambda x, y: torch.relu(torch.bmm(x, y) + 1), a, b)
    check(lambda x, w, bias: F.gelu(F.linear(x, w, bias)), rnd(6, 32), rnd(24, 32), rnd(24))
    check(lambda x, w: F.conv2d(x, w, padding=1).sigmoid(), rnd(2, 3, 9, 9), rnd(4, 3, 3, 3),
          tol_scale=2.0)
    # q, k, v as attention layers make them: (B, L, H, E) memory seen as (B, H, L, E).
    q, k, v = rnd(2, 8, 4, 16), rnd(2, 8, 4, 16, seed=1), rnd(2, 8, 4, 16, seed=2)

    def attn(q, k, v):
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2) * 2

    check(attn, q, k, v, tol_scale=4.0)


def test_dropout_matches_eager_for_a_seed():
    x = rnd(64, 64).to(DEV)

    def f(t):
        return F.dropout(t * 2, p=0.3, training=True)

    torch.vkml.manual_seed(7)
    eager = f(x)
    torch.vkml.manual_seed(7)
    compiled = torch.compile(f)(x)
    torch.testing.assert_close(compiled.cpu(), eager.cpu())


def test_64_bit_index_arithmetic(monkeypatch):
    """Kernels whose indices may pass 2^31 compute them in int64_t; forced here on small shapes."""
    from torch_vkml._inductor.kernel import VkmlKernel

    monkeypatch.setattr(VkmlKernel, "force_int64_index", True)
    x = rnd(6, 10)
    check(lambda t: (F.pad(t, (2, 3, 1, 0)) * 2).sum(1), x)
    check(lambda t: (t.t() + 1).softmax(0), x)
    check(lambda t, i: t[i].argmax(1), x, torch.tensor([3, 0, 5]))


def test_small_integer_arithmetic_wraps_before_comparisons():
    """8- and 16-bit results wrap to their type before a maximum or a comparison reads them."""
    g = torch.Generator().manual_seed(3)
    a = torch.randint(0, 256, (1,), generator=g, dtype=torch.uint8)
    b = torch.randint(0, 256, (8390,), generator=g, dtype=torch.uint8)
    check(lambda x, y: torch.maximum(y, torch.neg(x)), a, b)
    check(lambda x, y: ((x + y) > 100, (y - x).amax(), x * y), a.expand(8390), b)
    c = torch.randint(-128, 128, (257,), generator=g, dtype=torch.int8)
    check(lambda x: (x * 3 < 0, -x, torch.minimum(x + 100, x)), c)
    d = torch.randint(-32768, 32768, (129,), generator=g, dtype=torch.int16)
    check(lambda x: ((x * 7).abs(), x - 30000 > 0), d)


def test_atan2_and_angle_at_zero():
    z = torch.tensor([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.0, 2.5])
    w = torch.tensor([0.0, 0.0, -0.0, -0.0, 0.0, -0.0, -3.0, 1.5])
    check(lambda y, x: torch.atan2(y, x), z, w)
    check(lambda re, im: torch.angle(torch.complex(re, im)),
          torch.tensor([0.0, -1.0, 2.0, -0.0, -1.0]), torch.tensor([0.0, -0.0, -0.0, 0.0, 0.0]))
    res = torch.compile(torch.atan2)(z.to(DEV), w.to(DEV)).cpu()
    assert torch.equal(torch.signbit(res), torch.signbit(torch.atan2(z, w)))


@pytest.mark.parametrize("stable", [False, True])
def test_sort_of_a_transposed_input(stable):
    """sort is an extern call, read by the meta function's strides: the input's layout."""
    x = rnd(128, 10).t()
    if stable:
        x[:, 10:20] = 1.0  # ties: only a stable sort fixes the order of their indices
    check(lambda t: torch.sort(t, stable=stable, descending=True), x)
    check(lambda t: torch.sort(t * 2, dim=0, stable=stable), x)
    values, indices = torch.sort(x.to(DEV), stable=stable)
    assert values.stride() == x.stride() and indices.stride() == x.stride()
