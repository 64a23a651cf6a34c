"""Native multi-tensor _foreach_* ops against the CPU's: every registered overload, in place and
out of place, over lists with odd and zero sizes, one tensor larger than a workgroup, a
non-contiguous tensor and mixed dtypes; the default (foreach) optimizers and clip_grad_norm_
against the CPU and vkml's per-tensor path; and the dispatch count of an AdamW step."""

import math

import pytest
import torch

import torch_vkml
import torch_vkml.profiler

DTYPES = [torch.float32, torch.float16, torch.bfloat16] + (
    [torch.float64] if torch_vkml.has_float64_support() else [])
SHAPES = [(5, 3), "t", (7,), (0, 2), (300,), (1,), (2, 3, 4)]  # "t": a transposed (4, 6) view


def _tensors(dtype, gen, positive=False, away_from_zero=False):
    out = []
    for s in SHAPES:
        t = torch.randn((6, 4) if s == "t" else s, generator=gen, dtype=torch.float64)
        if positive:
            t = t.abs()
        if away_from_zero:
            t = t.sign() * (t.abs() + 0.5)
        t = t.to(dtype)
        out.append(t.t() if s == "t" else t)
    return out


def _dev(ts):
    # .t() of a contiguous vkml copy keeps the transposed layout of the CPU view
    return [t.to("vkml") if t.is_contiguous() else t.t().contiguous().to("vkml").t() for t in ts]


def _check(got, want, exact_dtype=True):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.device.type == "vkml"
        torch.testing.assert_close(g.cpu(), w, equal_nan=True, check_dtype=exact_dtype)


def _run(name, inplace, cpu_args, dev_args, kwargs=None):
    """Calls torch._foreach_<name>(_) on CPU and vkml arguments; returns (vkml, cpu) results."""
    kwargs = kwargs or {}
    fn = getattr(torch, f"_foreach_{name}_" if inplace else f"_foreach_{name}")
    want = fn(*cpu_args, **kwargs)
    got = fn(*dev_args, **kwargs)
    if inplace:
        return dev_args[0], cpu_args[0]
    return got, want


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max"]


BINARY_KINDS = [(n, k) for n in BINARY for k in ("scalar", "scalarlist", "list")] + [
    (n, k) for n in ("add", "mul", "div") for k in ("tensor_cpu", "tensor_vkml")
]


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("name,kind", BINARY_KINDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_binary_overloads(dtype, name, kind, inplace, gen):
    a = _tensors(dtype, gen)
    kwargs = {}
    if kind == "scalar":
        cpu_other = dev_other = 1.5 if name == "div" else -0.75
    elif kind == "scalarlist":
        cpu_other = dev_other = [0.5 + 0.25 * i if i % 2 else -1.25 - i for i in range(len(a))]
    elif kind == "list":
        cpu_other = _tensors(dtype, gen, away_from_zero=name == "div")
        dev_other = _dev(cpu_other)
        if name in ("add", "sub"):
            kwargs = {"alpha": 0.5}
    else:
        cpu_other = torch.tensor(0.3)
        dev_other = cpu_other if kind == "tensor_cpu" else cpu_other.to("vkml")
        if name == "add":
            kwargs = {"alpha": -2.0}
    a_dev = _dev(a)
    got, want = _run(name, inplace, [a, cpu_other], [a_dev, dev_other], kwargs)
    if kind == "tensor_cpu" and dtype in (torch.float16, torch.bfloat16):
        # the per-tensor add (the transposed tensor's path) rounds a CPU 0-dim operand times
        # alpha one ulp off the CPU in half precision; the native groups match exactly
        ulp = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[dtype]
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            tol = 1e-5 if a[i].is_contiguous() else ulp
            torch.testing.assert_close(g.cpu(), w, rtol=tol, atol=tol)
        return
    _check(got, want)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_lerp_sqrt_neg(dtype, inplace, gen):
    a, b = _tensors(dtype, gen), _tensors(dtype, gen)
    for w in (0.25, 0.9):
        a_dev, b_dev = _dev(a), _dev(b)
        _check(*_run("lerp", inplace, [[t.clone() for t in a], b], [a_dev, b_dev], {"weight": w}))
    weights = [0.1 * i - 0.2 for i in range(len(a))]  # both of lerp's formulas, per tensor
    _check(
        *_run("lerp", inplace, [[t.clone() for t in a], b, weights], [_dev(a), _dev(b), weights])
    )
    p = _tensors(dtype, gen, positive=True)
    _check(*_run("sqrt", inplace, [p], [_dev(p)]))
    _check(*_run("neg", inplace, [a], [_dev(a)]))


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("kind", ["scalar", "scalarlist", "tensor"])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_pointwise_overloads(dtype, name, kind, inplace, gen):
    a, t1 = _tensors(dtype, gen), _tensors(dtype, gen)
    t2 = _tensors(dtype, gen, away_from_zero=name == "addcdiv")
    values = [0.5 - 0.3 * i for i in range(len(a))]
    s = {"scalar": -0.7, "scalarlist": values, "tensor": torch.tensor(values)}[kind]
    got, want = _run(name, inplace, [a, t1, t2, s], [_dev(a), _dev(t1), _dev(t2), s])
    _check(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zero_and_copy(dtype, gen):
    a, b = _tensors(dtype, gen), _tensors(dtype, gen)
    a_dev = _dev(a)
    torch._foreach_copy_(a_dev, _dev(b))
    _check(a_dev, b)
    torch._foreach_zero_(a_dev)
    _check(a_dev, [torch.zeros_like(t) for t in b])
    torch._foreach_copy_(a_dev, b)  # from the CPU: the per-tensor path
    _check(a_dev, b)


@pytest.mark.parametrize("ord", [2, 1, math.inf, 3])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_norm(dtype, ord, gen):
    a = _tensors(dtype, gen)
    a.append(torch.randn(9000, generator=gen).to(dtype))  # several partial chunks
    if ord == math.inf:
        a = [t for t in a if t.numel() > 0]  # the CPU raises on empty tensors for inf
    got = torch._foreach_norm(_dev(a), ord)
    want = torch._foreach_norm(a, ord)
    tol = {torch.float32: 1e-5, torch.float64: 1e-12}.get(dtype)
    for g, w in zip(got, want, strict=True):
        assert g.dim() == 0 and g.dtype == w.dtype
        torch.testing.assert_close(g.cpu(), w, rtol=tol, atol=tol)


def test_norm_propagates_nan_and_raises_as_cpu():
    a = [torch.tensor([1.0, float("nan"), 2.0]), torch.ones(300)]
    got = torch._foreach_norm(_dev(a))
    assert math.isnan(got[0].item()) and got[1].item() == pytest.approx(math.sqrt(300))
    with pytest.raises(RuntimeError):
        torch._foreach_norm([torch.empty(0, device="vkml")], math.inf)
    with pytest.raises(RuntimeError):
        torch._foreach_norm([torch.empty(0)], math.inf)


def test_mixed_dtypes_and_promotion(gen):
    # The fourth dtype: float64 where the device has it, else bfloat16.
    fourth = torch.float64 if torch_vkml.has_float64_support() else torch.bfloat16
    a = [
        torch.randn(5, generator=gen),
        torch.randn(4, generator=gen).half(),
        torch.arange(6),
        torch.randn(300, generator=gen).to(fourth),
    ]
    a_dev = [t.to("vkml") for t in a]
    _check(torch._foreach_add(a_dev, 0.5), torch._foreach_add(a, 0.5))  # int64 -> float32
    _check(torch._foreach_mul(a_dev, 2), torch._foreach_mul(a, 2))
    b = [
        torch.randn(5, generator=gen).half(),
        torch.randn(4, generator=gen),
        torch.arange(6) * 2,
        torch.randn(300, generator=gen).to(fourth),
    ]
    _check(torch._foreach_add(a_dev, [t.to("vkml") for t in b]), torch._foreach_add(a, b))
    torch._foreach_add_(a_dev, 3)
    torch._foreach_add_(a, 3)
    _check(a_dev, a)


def test_errors_match_cpu():
    for device in ("cpu", "vkml"):
        with pytest.raises(RuntimeError):
            torch._foreach_add_([torch.arange(3, device=device)], 0.5)  # int in place, float scalar
        with pytest.raises(RuntimeError):
            torch._foreach_add_([], 1.0)
        with pytest.raises(RuntimeError):
            torch._foreach_mul_([torch.ones(2, device=device)], [1.0, 2.0])  # list lengths
        with pytest.raises(RuntimeError):
            torch._foreach_add_([torch.ones(2, device=device)], [torch.ones(3, device=device)])


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.LayerNorm(16), torch.nn.ReLU(), torch.nn.Linear(16, 300)
    )


OPTIMIZERS = [
    (torch.optim.Adam, dict(lr=1e-2)),
    (torch.optim.AdamW, dict(lr=1e-2)),
    (torch.optim.AdamW, dict(lr=1e-2, amsgrad=True)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (torch.optim.RMSprop, dict(lr=1e-2)),
]


@pytest.mark.parametrize("cfg", OPTIMIZERS, ids=lambda c: c[0].__name__ + str(len(c[1])))
def test_default_optimizers_match_cpu_and_per_tensor_path(cfg, gen):
    opt_cls, kw = cfg
    runs = {}
    for device, foreach in (("cpu", None), ("vkml", None), ("vkml", False)):
        model = _model().to(device)
        opt = opt_cls(model.parameters(), foreach=foreach, **kw)
        g = torch.Generator().manual_seed(7)
        for _ in range(5):
            for p in model.parameters():
                p.grad = torch.randn(p.shape, generator=g).to(device)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
        runs[(device, foreach)] = [p.detach().cpu() for p in model.parameters()]
    for want, got, other in zip(
        runs[("cpu", None)], runs[("vkml", None)], runs[("vkml", False)], strict=True
    ):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(got, other, rtol=1e-6, atol=1e-6)


def test_clip_grad_norm_matches_cpu(gen):
    for norm_type in (2.0, 1.0, math.inf):
        sizes = [(5, 3), (300,), (7,)] + ([(0,)] if norm_type != math.inf else [])
        grads = [torch.randn(s, generator=gen) * 3 for s in sizes]
        pc = [torch.zeros_like(g, requires_grad=True) for g in grads]
        pv = [torch.zeros_like(g, device="vkml", requires_grad=True) for g in grads]
        for p, g in zip(pc, grads, strict=True):
            p.grad = g.clone()
        for p, g in zip(pv, grads, strict=True):
            p.grad = g.to("vkml")
        want = torch.nn.utils.clip_grad_norm_(pc, 1.0, norm_type=norm_type, foreach=True)
        got = torch.nn.utils.clip_grad_norm_(pv, 1.0, norm_type=norm_type, foreach=True)
        torch.testing.assert_close(got.cpu(), want, rtol=1e-6, atol=1e-6)
        for v, c in zip(pv, pc, strict=True):
            torch.testing.assert_close(v.grad.cpu(), c.grad, rtol=1e-6, atol=1e-6)


def _adamw_step_kernels(foreach):
    params = [torch.randn(17 + i, device="vkml", requires_grad=True) for i in range(20)]
    opt = torch.optim.AdamW(params, lr=1e-3, foreach=foreach)
    for p in params:
        p.grad = torch.ones_like(p)
    opt.step()  # creates the state
    torch_vkml.synchronize()
    with torch_vkml.profiler.profile() as prof:
        opt.step()
        torch_vkml.synchronize()
    return prof


def test_adamw_step_dispatches_per_op_not_per_tensor():
    prof = _adamw_step_kernels(None)
    calls = sum(c for c, _ in prof.times.values())
    # lerp, mul, addcmul, sqrt, div, add, addcdiv, mul (weight decay): one dispatch each
    assert calls <= 12, prof.table()
    assert prof.times["foreach_f32"][0] == calls, prof.table()
    per_tensor = sum(c for c, _ in _adamw_step_kernels(False).times.values())
    assert per_tensor >= 20 * 6


NATIVE_CALLS = {
    "add_.Scalar": lambda a, b, c: torch._foreach_add_(a, 0.5),
    "add_.List": lambda a, b, c: torch._foreach_add_(a, b, alpha=2),
    "add_.Tensor": lambda a, b, c: torch._foreach_add_(a, torch.tensor(0.5, device="vkml")),
    "add.ScalarList": lambda a, b, c: torch._foreach_add(a, [0.5] * len(a)),
    "sub_.Scalar": lambda a, b, c: torch._foreach_sub_(a, 0.5),
    "mul_.Tensor": lambda a, b, c: torch._foreach_mul_(a, torch.tensor(0.5, device="vkml")),
    "mul.List": lambda a, b, c: torch._foreach_mul(a, b),
    "div_.ScalarList": lambda a, b, c: torch._foreach_div_(a, [2.0] * len(a)),
    "maximum_.List": lambda a, b, c: torch._foreach_maximum_(a, b),
    "clamp_max.Scalar": lambda a, b, c: torch._foreach_clamp_max(a, 0.1),
    "lerp_.Scalar": lambda a, b, c: torch._foreach_lerp_(a, b, 0.1),
    "lerp.ScalarList": lambda a, b, c: torch._foreach_lerp(a, b, [0.1] * len(a)),
    "addcmul_.Scalar": lambda a, b, c: torch._foreach_addcmul_(a, b, c, 0.1),
    "addcdiv_.Tensor": lambda a, b, c: torch._foreach_addcdiv_(a, b, c, torch.ones(len(a))),
    "sqrt": lambda a, b, c: torch._foreach_sqrt(a),  # NaN for negatives: only dispatches count
    "neg_": lambda a, b, c: torch._foreach_neg_(a),
    "zero_": lambda a, b, c: torch._foreach_zero_(a),
    "copy_": lambda a, b, c: torch._foreach_copy_(a, b),
}


@pytest.mark.parametrize("op", NATIVE_CALLS)
def test_registered_ops_run_as_one_dispatch(op, gen):
    a, b, c = ([torch.randn(n, generator=gen).to("vkml") for n in (3, 300, 0, 1)] for _ in range(3))
    with torch_vkml.profiler.profile() as prof:
        NATIVE_CALLS[op](a, b, c)
        torch_vkml.synchronize()
    assert prof.times["foreach_f32"][0] == 1, prof.table()
    assert sum(n for n, _ in prof.times.values()) == 1, prof.table()


def test_group_longer_than_one_dispatch(gen):
    """A tensor past one dispatch's chunks (2048 x 8192 elements) is split into pieces."""
    n = 2**24 + 4101
    a = torch.randn(n, generator=gen).half()
    b = torch.randn(n, generator=gen).half()
    small = [torch.randn(7, generator=gen) for _ in range(2)]
    got = torch._foreach_add(
        [a.to("vkml"), small[0].to("vkml"), b.to("vkml")],
        [b.to("vkml"), small[1].to("vkml"), a.to("vkml")],
        alpha=0.5,
    )
    want = torch._foreach_add([a, small[0], b], [b, small[1], a], alpha=0.5)
    for g, w in zip(got, want, strict=True):
        assert torch.equal(g.cpu(), w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_foreach_maximum_minimum_of_signed_zeros(dtype):
    """As torch.maximum/minimum on vkml (IEEE 754-2019): max(-0, +0) = +0, min(-0, +0) = -0 in
    either operand order, on the multi-tensor path too."""
    a = [torch.tensor([-0.0, 0.0, -0.0, 0.0] * 3, dtype=dtype) for _ in range(3)]
    b = [torch.tensor([0.0, -0.0, -0.0, 0.0] * 3, dtype=dtype) for _ in range(3)]
    for x, y in ((a, b), (b, a)):
        xv, yv = [t.to("vkml") for t in x], [t.to("vkml") for t in y]
        for got, s, t in zip(torch._foreach_maximum(xv, yv), x, y, strict=True):
            assert torch.equal(got.cpu().signbit(), s.signbit() & t.signbit())
        for got, s, t in zip(torch._foreach_minimum(xv, yv), x, y, strict=True):
            assert torch.equal(got.cpu().signbit(), s.signbit() | t.signbit())
