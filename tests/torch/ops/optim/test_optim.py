"""Optimizers on vkml against the CPU: the foreach (default) and for-loop paths of SGD, Adam,
AdamW, RMSprop, Adagrad and friends, in float32 and bf16; clip_grad_norm_ / clip_grad_value_;
and the per-tensor kernels the _foreach_* ops reach (clamp_min/max with tensor bounds), plus
prelu, isneginf/isposinf and isnan."""

import pytest
import torch
import torch.nn.functional as F
from torch.optim.optimizer import _default_to_fused_or_foreach

import torch_vkml

TOL = {torch.float32: (2e-5, 2e-6), torch.bfloat16: (2e-2, 2e-2), torch.float16: (2e-3, 2e-3)}


def _params(dtype, gen):
    """Leaf tensors: a matrix, a transposed (non-contiguous) one, a vector and an empty one."""
    base = [torch.randn(5, 3, generator=gen), torch.randn(4, 6, generator=gen),
            torch.randn(7, generator=gen), torch.randn(0, 2)]
    return [t.to(dtype) for t in base]


def _as_leaves(tensors, device):
    out = []
    for i, t in enumerate(tensors):
        t = t.to(device)
        if i == 1:
            t = t.t()  # a non-contiguous parameter
        out.append(t.detach().requires_grad_())
    return out


def _compare_steps(opt_cls, dtype, gen, steps=3, **kw):
    """Runs `steps` steps on vkml and CPU with the same grads; returns the largest error."""
    init = _params(dtype, gen)
    pv, pc = _as_leaves(init, "vkml"), _as_leaves(init, "cpu")
    ov, oc = opt_cls(pv, **kw), opt_cls(pc, **kw)
    for _ in range(steps):
        for v, c in zip(pv, pc, strict=True):
            g = torch.randn(c.shape, generator=gen).to(dtype)
            c.grad = g.clone()
            v.grad = g.to("vkml")
        ov.step()
        oc.step()
    rtol, atol = TOL[dtype]
    for v, c in zip(pv, pc, strict=True):
        assert v.device.type == "vkml" and v.stride() == c.stride()
        torch.testing.assert_close(v.detach().cpu(), c.detach(), rtol=rtol, atol=atol)
    for sv, sc in zip(ov.state.values(), oc.state.values(), strict=True):  # optimizer state too
        for key, value in sc.items():
            if torch.is_tensor(value) and value.numel() > 0:
                torch.testing.assert_close(sv[key].cpu(), value, rtol=rtol, atol=atol)


CONFIGS = [
    (torch.optim.SGD, dict(lr=0.1)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.1, maximize=True)),
    (torch.optim.Adam, dict(lr=0.05)),
    (torch.optim.Adam, dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    (torch.optim.Adam, dict(lr=0.05, maximize=True)),
    (torch.optim.AdamW, dict(lr=0.05, weight_decay=0.1)),
    (torch.optim.AdamW, dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    (torch.optim.RMSprop, dict(lr=0.01)),
    (torch.optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    (torch.optim.Adagrad, dict(lr=0.1)),
    (torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
    (torch.optim.Adamax, dict(lr=0.1)),
    (torch.optim.NAdam, dict(lr=0.05)),
    (torch.optim.RAdam, dict(lr=0.05)),
    (torch.optim.Adadelta, dict(lr=0.5)),
]


def _cfg_id(cfg):
    cls, kw = cfg
    return cls.__name__ + "-" + "-".join(f"{k}{v}" for k, v in kw.items() if k != "lr")


@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "forloop"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=[_cfg_id(c) for c in CONFIGS])
def test_optimizer_matches_cpu_float32(cfg, foreach, gen):
    cls, kw = cfg
    _compare_steps(cls, torch.float32, gen, foreach=foreach, **kw)


BF16 = [c for c in CONFIGS if c[0] in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW)]


@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "forloop"])
@pytest.mark.parametrize("cfg", BF16, ids=[_cfg_id(c) for c in BF16])
def test_optimizer_matches_cpu_bf16(cfg, foreach, gen):
    # bf16 rounds after every op, and CPU and vkml round some intermediates differently (the CPU
    # rounds add's alpha to bf16; vkml's lerp/addcdiv round the inner product): 2 ulps allowed.
    cls, kw = cfg
    _compare_steps(cls, torch.bfloat16, gen, foreach=foreach, **kw)


def test_foreach_is_the_default_and_runs_natively(fallback, gen):
    p = [torch.randn(4, 3, generator=gen).to("vkml").requires_grad_() for _ in range(3)]
    opt = torch.optim.Adam(p, lr=0.1, amsgrad=True)
    for t in p:
        t.grad = torch.ones_like(t)
    opt.step()
    assert opt.defaults["foreach"] is None  # chosen at step time: vkml is a foreach device
    assert _default_to_fused_or_foreach(p, False, False) == (False, True)
    assert torch_vkml.fallback_stats() == {}


@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "forloop"])
@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.AdamW])
def test_capturable_adam_keeps_steps_on_device(cls, foreach, gen):
    """capturable=True keeps `step` on the device and computes bias corrections there (in
    float32, as on CUDA), so it matches the CPU's float64 scalars to float32 rounding only."""
    init = _params(torch.float32, gen)
    pv, pc = _as_leaves(init, "vkml"), _as_leaves(init, "cpu")
    ov = cls(pv, lr=0.05, capturable=True, foreach=foreach, amsgrad=True)
    oc = cls(pc, lr=0.05, foreach=foreach, amsgrad=True)
    for _ in range(3):
        for v, c in zip(pv, pc, strict=True):
            c.grad = torch.randn(c.shape, generator=gen)
            v.grad = c.grad.to("vkml")
        ov.step()
        oc.step()
    assert all(s["step"].device.type == "vkml" for s in ov.state.values())
    for v, c in zip(pv, pc, strict=True):
        torch.testing.assert_close(v.detach().cpu(), c.detach(), rtol=1e-4, atol=1e-5)


# ---- gradient clipping ---------------------------------------------------------------------------
@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "forloop"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
def test_clip_grad_norm_matches_cpu(norm_type, foreach, gen):
    init = _params(torch.float32, gen)[:3]  # no empty grad: the inf norm has no identity
    pv, pc = _as_leaves(init, "vkml"), _as_leaves(init, "cpu")
    for v, c in zip(pv, pc, strict=True):
        c.grad = torch.randn(c.shape, generator=gen) * 3
        v.grad = c.grad.to("vkml")
    nv = torch.nn.utils.clip_grad_norm_(pv, 0.5, norm_type=norm_type, foreach=foreach)
    nc = torch.nn.utils.clip_grad_norm_(pc, 0.5, norm_type=norm_type, foreach=foreach)
    assert nv.device.type == "vkml"
    torch.testing.assert_close(nv.cpu(), nc, rtol=1e-5, atol=1e-6)
    for v, c in zip(pv, pc, strict=True):
        torch.testing.assert_close(v.grad.cpu(), c.grad, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_bf16_grads_and_nonfinite(gen):
    p = [torch.randn(6, 5, generator=gen).bfloat16().to("vkml").requires_grad_()]
    p[0].grad = torch.randn(6, 5, generator=gen).bfloat16().to("vkml") * 4
    ref = p[0].grad.cpu().double()
    n = torch.nn.utils.clip_grad_norm_(p, 1.0)
    torch.testing.assert_close(n.cpu().double(), ref.norm(), rtol=1e-2, atol=1e-2)
    clipped = p[0].grad.cpu().double().norm().item()
    assert clipped == pytest.approx(1.0, rel=2e-2)
    p[0].grad[0, 0] = float("nan")
    with pytest.raises(RuntimeError, match="non-finite"):
        torch.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)


@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "forloop"])
def test_clip_grad_value_matches_cpu(foreach, gen):
    init = _params(torch.float32, gen)
    pv, pc = _as_leaves(init, "vkml"), _as_leaves(init, "cpu")
    for v, c in zip(pv, pc, strict=True):
        c.grad = torch.randn(c.shape, generator=gen)
        v.grad = c.grad.to("vkml")
    torch.nn.utils.clip_grad_value_(pv, 0.4, foreach=foreach)
    torch.nn.utils.clip_grad_value_(pc, 0.4, foreach=foreach)
    for v, c in zip(pv, pc, strict=True):
        torch.testing.assert_close(v.grad.cpu(), c.grad, rtol=0, atol=0)


# ---- the per-tensor ops the _foreach_* kernels loop over ---------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32,
                                   torch.bool])
@pytest.mark.parametrize("fn", [torch.clamp_min, torch.clamp_max])
def test_clamp_with_tensor_bound(fn, dtype, gen):
    a = (torch.randn(5, 7, generator=gen) * 4).to(dtype)
    b = (torch.randn(7, 5, generator=gen) * 4).to(dtype).t()  # strided
    row = (torch.randn(7, generator=gen) * 4).to(dtype)  # broadcast
    if dtype.is_floating_point:
        a[0, 0], b[1, 1] = float("nan"), float("nan")
    av, bv, rv = a.to("vkml"), b.to("vkml").t().t(), row.to("vkml")
    torch.testing.assert_close(fn(av, bv).cpu(), fn(a, b), equal_nan=True)
    torch.testing.assert_close(fn(av, rv).cpu(), fn(a, row), equal_nan=True)
    out = torch.empty(0, dtype=dtype, device="vkml")
    fn(av, bv, out=out)
    torch.testing.assert_close(out.cpu(), fn(a, b), equal_nan=True)
    inplace = getattr(torch.Tensor, fn.__name__ + "_")
    x = av.clone()
    inplace(x, rv)
    torch.testing.assert_close(x.cpu(), fn(a, row), equal_nan=True)


def test_clamp_with_tensor_bound_promotes_and_errors():
    i = torch.tensor([1, 5, -3], device="vkml")
    f = torch.tensor([2.5, 1.0, -4.0], device="vkml")
    assert torch.clamp_min(i, f).dtype == torch.float32
    torch.testing.assert_close(torch.clamp_min(i, f).cpu(), torch.tensor([2.5, 5.0, -3.0]))
    torch.testing.assert_close(torch.clamp_max(f, torch.tensor(0.0)).cpu(),  # CPU scalar bound
                               torch.tensor([0.0, 0.0, -4.0]))
    with pytest.raises(RuntimeError):  # float result into an int tensor, as on the CPU
        i.clamp_min_(f)
    with pytest.raises(RuntimeError):
        torch.clamp_min(f, torch.ones(2, device="vkml"))
    assert torch.clamp_min(torch.empty(0, 3, device="vkml"), torch.ones(3, device="vkml")).shape \
        == (0, 3)


def test_foreach_maximum_minimum_natively(fallback, gen):
    a = [torch.randn(4, 3, generator=gen), torch.randn(5, generator=gen)]
    b = [torch.randn(4, 3, generator=gen), torch.randn(5, generator=gen)]
    av, bv = [t.to("vkml") for t in a], [t.to("vkml") for t in b]
    for fn in [torch._foreach_maximum, torch._foreach_minimum, torch._foreach_clamp_min,
               torch._foreach_clamp_max]:
        for got, want in zip(fn(av, bv), fn(a, b), strict=True):
            torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    torch._foreach_maximum_(av, bv)
    torch._foreach_maximum_(a, b)
    for got, want in zip(av, a, strict=True):
        torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    assert torch_vkml.fallback_stats() == {}


# ---- prelu, isneginf / isposinf, isnan ----------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("channels", [1, 4])
def test_prelu_forward_backward(dtype, channels, gen):
    x = torch.randn(3, 4, 5, generator=gen).to(dtype)
    x[0, 0, 0] = 0.0
    w = (torch.rand(channels, generator=gen) * 0.5).to(dtype)
    xv, wv = x.to("vkml").requires_grad_(), w.to("vkml").requires_grad_()
    xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
    yv, yc = F.prelu(xv, wv), F.prelu(xc, wc)
    g = torch.randn(yc.shape, generator=gen).to(dtype)
    yv.backward(g.to("vkml"))
    yc.backward(g)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(yv.detach().cpu(), yc.detach(), rtol=rtol, atol=atol)
    torch.testing.assert_close(xv.grad.cpu(), xc.grad, rtol=rtol, atol=atol)
    # grad of the weight sums over many elements: low-precision sums round differently.
    torch.testing.assert_close(wv.grad.cpu().float(), wc.grad.float(), rtol=rtol * 4, atol=atol * 8)


def test_prelu_nan_and_transposed_input():
    x = torch.tensor([[1.0, float("nan")], [-2.0, 0.5]]).t()
    w = torch.tensor([0.25, 0.1])
    torch.testing.assert_close(F.prelu(x.to("vkml"), w.to("vkml")).cpu(), F.prelu(x, w),
                               equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64,
                                   torch.bool])
def test_isneginf_isposinf_isnan(dtype):
    vals = [1.0, float("-inf"), float("inf"), float("nan"), -0.0] if dtype.is_floating_point \
        else [1, 0, 1, 0, 1]
    x = torch.tensor(vals).to(dtype)
    for fn in [torch.isneginf, torch.isposinf, torch.isnan]:
        torch.testing.assert_close(fn(x.to("vkml")).cpu(), fn(x))
        torch.testing.assert_close(fn(x.to("vkml")[::2]).cpu(), fn(x[::2]))
        if fn is torch.isnan:
            continue
        out = torch.empty(0, dtype=torch.bool, device="vkml")
        fn(x.to("vkml")[::2], out=out)
        torch.testing.assert_close(out.cpu(), fn(x[::2]))
        with pytest.raises(RuntimeError, match="non-boolean"):
            fn(x.to("vkml"), out=torch.empty(5, device="vkml"))


# ---- fused=True ----------------------------------------------------------------------------------
FUSED = [
    (torch.optim.Adam, dict(lr=0.05)),
    (torch.optim.Adam, dict(lr=0.05, weight_decay=0.1, amsgrad=True, maximize=True)),
    (torch.optim.AdamW, dict(lr=0.05, weight_decay=0.1)),
    (torch.optim.SGD, dict(lr=0.1)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.2, maximize=True)),
    (torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("cfg", FUSED, ids=[_cfg_id(c) for c in FUSED])
def test_fused_optimizer_matches_cpu(cfg, dtype, fallback, gen):
    cls, kw = cfg
    # Against the CPU's for-loop: its fused kernels mis-round bf16 tails (SGD) and pair elements
    # wrongly when a grad's strides differ from its parameter's (as here for the transposed one).
    init = _params(dtype, gen)
    pv, pc = _as_leaves(init, "vkml"), _as_leaves(init, "cpu")
    ov, oc = cls(pv, fused=True, **kw), cls(pc, foreach=False, **kw)
    for _ in range(3):
        for v, c in zip(pv, pc, strict=True):
            c.grad = torch.randn(c.shape, generator=gen).to(dtype)
            v.grad = c.grad.to("vkml")
        ov.step()
        oc.step()
    rtol, atol = TOL[dtype]
    for v, c in zip(pv, pc, strict=True):
        torch.testing.assert_close(v.detach().cpu(), c.detach(), rtol=rtol, atol=atol)
    assert torch_vkml.fallback_stats() == {}


@pytest.mark.parametrize("lr_device", ["cpu", "vkml"])
@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.SGD, torch.optim.Adagrad])
def test_fused_tensor_learning_rate(cls, lr_device, gen):
    init = _params(torch.float32, gen)[:3]
    pv, pc = _as_leaves(init, "vkml"), _as_leaves(init, "cpu")
    kw = dict(momentum=0.5) if cls is torch.optim.SGD else {}
    ov = cls(pv, lr=torch.tensor(0.05, device=lr_device), fused=True, **kw)
    oc = cls(pc, lr=0.05, foreach=False, **kw)
    for _ in range(2):
        for v, c in zip(pv, pc, strict=True):
            c.grad = torch.randn(c.shape, generator=gen)
            v.grad = c.grad.to("vkml")
        ov.step()
        oc.step()
    for v, c in zip(pv, pc, strict=True):
        torch.testing.assert_close(v.detach().cpu(), c.detach(), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.SGD])
def test_fused_with_grad_scaler_skips_and_unscales_on_device(cls):
    """GradScaler hands fused optimizers grad_scale and found_inf instead of unscaling: the
    kernel unscales, or skips the step on inf, without a host sync; same results as the CPU."""
    results = []
    for device in ["cpu", "vkml"]:
        torch.manual_seed(0)
        model = torch.nn.Linear(6, 4).to(device)
        x = torch.randn(9, 6).to(device)
        opt = cls(model.parameters(), lr=0.05, fused=True)
        scaler = torch.amp.GradScaler(device, init_scale=2.0**10, growth_interval=2)
        weights = []
        for step in range(4):
            opt.zero_grad()
            scaler.scale(model(x).pow(2).mean()).backward()
            if step == 1:
                model.weight.grad[0, 0] = float("inf")
            scaler.step(opt)
            scaler.update()
            weights.append((model.weight.detach().cpu().clone(), scaler.get_scale()))
        grads = model.weight.grad.cpu()
        results.append((weights, grads))
    (wc, gc), (wv, gv) = results
    assert [s for _, s in wv] == [s for _, s in wc] == [1024.0, 512.0, 512.0, 1024.0]
    torch.testing.assert_close(wv[1][0], wv[0][0], rtol=0, atol=0)  # the inf step was skipped
    for (a, _), (b, _) in zip(wv, wc, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(gv, gc, rtol=1e-5, atol=1e-6)  # grads left unscaled


def test_fused_sliced_params_and_odd_grad_layouts(gen):
    """Parameters that are not dense, and grads/state with strides unlike their parameter, go
    through temporaries in one layout and are written back."""
    base = torch.randn(6, 8, generator=gen)
    pv = base.to("vkml")[:, ::2].detach().requires_grad_()  # not dense
    pc = base[:, ::2].clone().requires_grad_()
    qv = torch.randn(5, 3, generator=gen).to("vkml").t().detach().requires_grad_()
    qc = qv.detach().cpu().clone().requires_grad_()
    ov = torch.optim.Adam([pv, qv], lr=0.1, fused=True)
    oc = torch.optim.Adam([pc, qc], lr=0.1, foreach=False)
    scaler_v = torch.amp.GradScaler("vkml", init_scale=4.0)
    scaler_c = torch.amp.GradScaler("cpu", init_scale=4.0)
    scaler_v.scale(torch.ones((), device="vkml"))  # creates the scale
    scaler_c.scale(torch.ones(()))
    for _ in range(2):
        for v, c in [(pv, pc), (qv, qc)]:
            c.grad = torch.randn(c.shape, generator=gen) * 4  # contiguous, unlike the params
            v.grad = c.grad.to("vkml")
        scaler_v.step(ov)
        scaler_c.step(oc)
        scaler_v.update()
        scaler_c.update()
    for v, c in [(pv, pc), (qv, qc)]:
        torch.testing.assert_close(v.detach().cpu(), c.detach(), rtol=2e-5, atol=2e-6)
        torch.testing.assert_close(v.grad.cpu(), c.grad, rtol=1e-6, atol=1e-7)  # unscaled
    torch.testing.assert_close(base.to("vkml")[:, 1::2].cpu(), base[:, 1::2])  # untouched


def test_fused_rejects_bad_inputs():
    p = torch.randn(4, 4, device="vkml")
    g, m, v = torch.randn_like(p), torch.zeros_like(p), torch.zeros_like(p)
    step = torch.ones((), device="vkml")
    kw = dict(lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
              maximize=False)
    with pytest.raises(RuntimeError, match="size"):
        torch._fused_adam_([p], [g[:, :2]], [m], [v], [], [step], **kw)
    with pytest.raises(RuntimeError, match="dtype"):
        torch._fused_adam_([p], [g.half()], [m], [v], [], [step], **kw)
    with pytest.raises(RuntimeError, match="state_steps"):
        torch._fused_adam_([p], [g], [m], [v], [], [step.half()], **kw)
    with pytest.raises(RuntimeError, match="2 tensors|must have 1"):
        torch._fused_adam_([p], [g, g], [m], [v], [], [step], **kw)
