"""GEMM epilogue fusion in compiled graphs: a linear layer's bias and a following residual add
run in the GEMM's epilogue (one vkml_inductor.addmm_residual call, no generated kernel)."""

import re

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import TOLERANCES
from torch._inductor.utils import run_and_get_code

import torch_vkml  # noqa: F401

DEV = "vkml"


def rnd(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def to_dev(t, dtype):
    """t on vkml in dtype with t's strides and storage offset."""
    base = torch.as_strided(t, (t.untyped_storage().nbytes() // t.element_size(),), (1,), 0)
    return torch.as_strided(base.to(DEV, dtype), t.shape, t.stride(), t.storage_offset())


def run_compiled(fn, *dev_inputs):
    """fn compiled, with counts from its output code: (result, generated kernels, fused GEMM
    calls, other GEMM calls)."""
    out, codes = run_and_get_code(torch.compile(fn), *dev_inputs)
    code = "\n".join(codes)
    fused = len(re.findall(r"= torch\.ops\.vkml_inductor\.addmm_residual\.default\(", code))
    gemms = len(re.findall(r"extern_kernels\.(?:mm|addmm|bmm|baddbmm)\(", code))
    return out, code.count("async_compile_vkml("), fused, gemms


def check_close(got, eager, ref, dtype, scale=4.0):
    rtol, atol = TOLERANCES[dtype]
    assert got.device.type == DEV and got.dtype == dtype and got.shape == ref.shape
    torch.testing.assert_close(got.cpu().double(), ref, rtol=scale * rtol, atol=scale * atol)
    torch.testing.assert_close(got.cpu().double(), eager.cpu().double(), rtol=scale * rtol,
                               atol=scale * atol)


def residual_linear(x, w, b, r):
    return r + F.linear(x, w, b)


def linear_residual(x, w, b, r):
    return F.linear(x, w, b) + r


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("fn", [residual_linear, linear_residual])
@pytest.mark.parametrize("lead", [(13,), (2, 7)])
def test_linear_and_residual_run_as_one_gemm(fn, dtype, lead):
    k, n = 24, 40
    x, w, b, r = rnd(*lead, k, seed=1), rnd(n, k, seed=2), rnd(n, seed=3), rnd(*lead, n, seed=4)
    dev = [t.to(DEV, dtype) for t in (x, w, b, r)]
    got, kernels, fused, gemms = run_compiled(fn, *dev)
    assert (kernels, fused, gemms) == (0, 1, 0)
    ref = fn(*(t.to(dtype).double() for t in (x, w, b, r)))
    scale = 4.0 if dtype == torch.float32 else 8.0
    check_close(got, fn(*dev), ref, dtype, scale)


def test_strided_operands():
    """A transposed input, a sliced weight and a broadcast bias, read in place."""
    x = rnd(24, 9, seed=1).t()            # (9, 24), column-major
    w = rnd(40, 48, seed=2)[:, ::2]       # (40, 24), column stride 2
    b = rnd(1, seed=3).expand(40)         # one value, stride 0
    r = rnd(9, 40, seed=4)
    dev = [to_dev(t, torch.float32) for t in (x, w, b, r)]
    assert [d.stride() for d in dev] == [t.stride() for t in (x, w, b, r)]
    got, kernels, fused, gemms = run_compiled(residual_linear, *dev)
    assert (kernels, fused, gemms) == (0, 1, 0)
    check_close(got, residual_linear(*dev), residual_linear(x, w, b, r), torch.float32)


def test_transformer_mlp_block():
    """x + fc2(gelu(fc1(layer_norm(x)))): fc2's bias and the residual ride in its GEMM; the
    activation stays one generated kernel."""
    d, h = 32, 64
    p = {"x": rnd(2, 5, d, seed=1), "w1": rnd(h, d, seed=2), "b1": rnd(h, seed=3),
         "w2": rnd(d, h, seed=4), "b2": rnd(d, seed=5)}

    def block(x, w1, b1, w2, b2):
        return x + F.linear(F.gelu(F.linear(F.layer_norm(x, (d,)), w1, b1)), w2, b2)

    dev = {k: v.to(DEV, torch.float32) for k, v in p.items()}
    got, kernels, fused, gemms = run_compiled(block, *dev.values())
    # fc1 is addmm; fc2 with its bias and the residual is the fused call.
    assert (fused, gemms) == (1, 1)
    # Layer norm and gelu before fc2 round differently compiled and eager.
    check_close(got, block(*dev.values()), block(*p.values()), torch.float32, scale=50.0)


def test_not_fused_where_the_epilogue_does_not_apply():
    """A broadcast residual, a transposed residual, a residual of another dtype and a second use
    of the product keep Inductor's own lowering, with the same results."""
    x, w, b = rnd(6, 8, seed=1), rnd(10, 8, seed=2), rnd(10, seed=3)
    cases = [
        (residual_linear, (x, w, b, rnd(10, seed=4)), torch.float32),
        (residual_linear, (x, w, b, rnd(10, 6, seed=4).t()), torch.float32),
        (lambda x, w, b, r: F.linear(x, w, b) + r.float(), (x, w, b, rnd(6, 10, seed=4)),
         torch.float16),
        (lambda x, w, b, r: (lambda y: (y + r, y * 2))(F.linear(x, w, b)),
         (x, w, b, rnd(6, 10, seed=4)), torch.float32),
    ]
    for fn, inputs, dtype in cases:
        torch._dynamo.reset()
        dev = [to_dev(t, dtype) for t in inputs]
        got, _, fused, gemms = run_compiled(fn, *dev)
        assert (fused, gemms) == (0, 1)
        eager = fn(*dev)
        ref = fn(*(t.to(dtype).double() for t in inputs))
        for g, e, r in zip(*(o if isinstance(o, tuple) else (o,) for o in (got, eager, ref)),
                           strict=True):
            rtol, atol = TOLERANCES[dtype]
            assert g.device.type == DEV and g.dtype == e.dtype and g.shape == e.shape
            torch.testing.assert_close(g.cpu().double(), r.to(g.dtype).double(), rtol=8 * rtol,
                                       atol=8 * atol)
            torch.testing.assert_close(g.cpu(), e.cpu(), rtol=8 * rtol, atol=8 * atol)


def test_training_step_matches_eager():
    d = 16
    x, w, b = rnd(4, d, seed=1), rnd(d, d, seed=2), rnd(d, seed=3)

    def step(x, w, b):
        return (x + F.linear(x, w, b)).square().sum()

    grads = []
    for fn, dev, dtype in ((torch.compile(step), DEV, torch.float32),
                           (step, "cpu", torch.float64)):
        leaves = [t.to(dev, dtype).requires_grad_() for t in (x, w, b)]
        fn(*leaves).backward()
        grads.append([t.grad.cpu().double() for t in leaves])
    for got, ref in zip(*grads, strict=True):
        torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-4)


def test_eager_op_checks_its_inputs():
    x, w = torch.randn(3, 4, device=DEV), torch.randn(4, 5, device=DEV)
    op = torch.ops.vkml_inductor.addmm_residual
    got = op(torch.ones(3, 5, device=DEV), torch.arange(5.0, device=DEV), x, w)
    ref = 1 + torch.arange(5.0) + x.cpu().double() @ w.cpu().double()
    torch.testing.assert_close(got.cpu().double(), ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="one dtype"):
        op(torch.ones(3, 5, device=DEV, dtype=torch.float16), torch.zeros(5, device=DEV), x, w)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        op(torch.ones(3, 5, device=DEV), torch.zeros(5, device=DEV), x, x)
