"""Mixed precision on vkml: autocast's casting rules (CUDA's op lists), GradScaler's device
kernels against the CPU's, and small models trained under fp16 + GradScaler and bf16 autocast."""

import warnings

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import HAS_FLOAT64, device_dtypes

import torch_vkml

LOW = [torch.float16, torch.bfloat16]
LOW_TOL = {torch.float16: (2e-2, 2e-2), torch.bfloat16: (8e-2, 8e-2)}


def vk(t):
    return t.to("vkml")


# ---- autocast: availability and dtype --------------------------------------------------------
def test_autocast_is_available_with_float16_default():
    assert torch.amp.is_autocast_available("vkml")
    assert torch.get_autocast_dtype("vkml") == torch.float16
    assert torch_vkml.vkml.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert not torch.is_autocast_enabled("vkml")
    with torch.autocast("vkml"):
        assert torch.is_autocast_enabled("vkml")
        assert not torch.is_autocast_enabled("cpu")
        x = torch.randn(3, 4, device="vkml")
        assert (x @ x.t()).dtype == torch.float16
        with torch.autocast("vkml", enabled=False):
            assert (x @ x.t()).dtype == torch.float32
    assert not torch.is_autocast_enabled("vkml")
    torch.set_autocast_dtype("vkml", torch.bfloat16)
    try:
        with torch.autocast("vkml"):
            assert (x @ x.t()).dtype == torch.bfloat16
    finally:
        torch.set_autocast_dtype("vkml", torch.float16)


def test_autocast_unsupported_dtype_warns_and_disables():
    x = torch.randn(3, 3, device="vkml")
    with pytest.warns(UserWarning, match="not supported"):
        with torch.autocast("vkml", dtype=torch.float64):
            assert (x @ x).dtype == torch.float32


def test_autocast_is_per_device():
    xv, xc = torch.randn(4, 4, device="vkml"), torch.randn(4, 4)
    with torch.autocast("vkml", dtype=torch.float16):
        assert (xc @ xc).dtype == torch.float32  # CPU tensors are not vkml autocast's business
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (xv @ xv).dtype == torch.float32
        assert (xc @ xc).dtype == torch.bfloat16


# ---- autocast: the op lists ------------------------------------------------------------------
def _inputs(gen):
    x = torch.randn(4, 6, generator=gen)
    w = torch.randn(6, 6, generator=gen)
    img = torch.randn(2, 3, 7, 7, generator=gen)
    cw = torch.randn(4, 3, 3, 3, generator=gen) * 0.3
    return x, w, img, cw


# Ops of CUDA's lower_precision_fp list: (name, fn(x, w, img, cw)); fp32 inputs.
LOWER = [
    ("mm", lambda x, w, i, c: torch.mm(x, w)),
    ("bmm", lambda x, w, i, c: torch.bmm(x[None], w[None])),
    ("addmm", lambda x, w, i, c: torch.addmm(x, x, w)),
    ("baddbmm", lambda x, w, i, c: torch.baddbmm(x[None], x[None], w[None])),
    ("matmul", lambda x, w, i, c: torch.matmul(x, w.t())),  # transposed operand
    ("linear", lambda x, w, i, c: F.linear(x, w, w[0])),
    ("addmv", lambda x, w, i, c: torch.addmv(x[0], w, x[1])),
    ("addr", lambda x, w, i, c: torch.addr(w, x[0], x[1])),
    ("mv", lambda x, w, i, c: torch.mv(w, x[0])),
    ("einsum", lambda x, w, i, c: torch.einsum("ij,kj->ik", x, w)),
    ("multi_dot", lambda x, w, i, c: torch.linalg.multi_dot([x, w, w])),
    ("conv1d", lambda x, w, i, c: F.conv1d(i[:, :, 0], c[:, :, 0])),
    ("conv2d", lambda x, w, i, c: F.conv2d(i, c, padding=1)),
    ("conv3d", lambda x, w, i, c: F.conv3d(i[:, :, None], c[:, :, None])),
    ("conv_transpose1d",
     lambda x, w, i, c: F.conv_transpose1d(i[:, :, 0], c.transpose(0, 1)[..., 0])),
    ("conv_transpose2d", lambda x, w, i, c: F.conv_transpose2d(i, c.transpose(0, 1), stride=2)),
    ("conv_transpose3d",
     lambda x, w, i, c: F.conv_transpose3d(i[:, :, None], c.transpose(0, 1)[:, :, None])),
    ("prelu", lambda x, w, i, c: F.prelu(x, w[0])),
    ("sdpa", lambda x, w, i, c: F.scaled_dot_product_attention(x[None], w[None, :4], w[None, 2:])),
]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name,fn", LOWER, ids=[n for n, _ in LOWER])
def test_lower_precision_ops_cast_to_autocast_dtype(name, fn, dtype, gen):
    args = _inputs(gen)
    with torch.autocast("vkml", dtype=dtype):
        got = fn(*[vk(a) for a in args])
    assert got.dtype == dtype
    # Same result as the op on inputs cast by hand (no autocast), computed in float64 on the CPU.
    ref = fn(*[a.to(dtype).double() for a in args])
    rtol, atol = LOW_TOL[dtype]
    torch.testing.assert_close(got.cpu().double(), ref, rtol=rtol, atol=atol * ref.abs().max())


# Ops of CUDA's fp32 and fp32_set_opt_dtype lists, fed a half input: they run in float32.
FP32 = [
    ("exp", lambda h, t: torch.exp(h)),
    ("log", lambda h, t: torch.log(h.abs())),
    ("log1p", lambda h, t: torch.log1p(h.abs())),
    ("pow", lambda h, t: torch.pow(h, 2)),
    ("rsqrt", lambda h, t: h.abs().rsqrt()),
    ("reciprocal", lambda h, t: h.abs().reciprocal()),
    ("softmax", lambda h, t: torch.softmax(h, 1)),
    ("log_softmax", lambda h, t: F.log_softmax(h, 1)),
    ("layer_norm", lambda h, t: F.layer_norm(h, (6,))),
    ("group_norm", lambda h, t: F.group_norm(h.reshape(2, 4, 3), 2)),
    ("sum", lambda h, t: h.sum()),
    ("sum_dim", lambda h, t: h.sum(1)),
    ("prod", lambda h, t: h.prod(1)),
    ("cumsum", lambda h, t: h.cumsum(1)),
    ("norm", lambda h, t: h.norm()),
    ("norm_dim", lambda h, t: h.norm(dim=1)),
    ("vector_norm", lambda h, t: torch.linalg.vector_norm(h, 3)),
    ("logsumexp", lambda h, t: h.logsumexp(1)),
    ("mse_loss", lambda h, t: F.mse_loss(h, h.flip(0))),
    ("l1_loss", lambda h, t: F.l1_loss(h, h.flip(0))),
    ("smooth_l1_loss", lambda h, t: F.smooth_l1_loss(h, h.flip(0))),
    ("nll_loss", lambda h, t: F.nll_loss(h, t)),
    ("bce_with_logits", lambda h, t: F.binary_cross_entropy_with_logits(h, h.flip(0).sigmoid())),
    ("cosine_similarity", lambda h, t: F.cosine_similarity(h, h.flip(0))),
    ("kl_div",
     lambda h, t: F.kl_div(h.log_softmax(1), h.flip(0).softmax(1), reduction="batchmean")),
]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name,fn", FP32, ids=[n for n, _ in FP32])
def test_fp32_ops_run_in_float32(name, fn, dtype, gen):
    h = torch.randn(4, 6, generator=gen).to(dtype)
    t = torch.randint(0, 6, (4,), generator=gen)
    with torch.autocast("vkml", dtype=dtype):
        got = fn(vk(h), vk(t))
    assert got.dtype == torch.float32
    ref = fn(h.double(), t)  # the low-precision input widened, then exact math
    torch.testing.assert_close(got.cpu().double(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", LOW)
def test_cross_entropy_follows_cuda(dtype, gen):
    """CUDA has no cross_entropy entry: its log_softmax gets the input's dtype explicitly (so it
    stays low precision) and nll_loss runs in float32."""
    h = torch.randn(4, 6, generator=gen).to(dtype)
    t = torch.randint(0, 6, (4,), generator=gen)
    with torch.autocast("vkml", dtype=dtype):
        got = F.cross_entropy(vk(h), vk(t))
    assert got.dtype == torch.float32
    ref = F.nll_loss(F.log_softmax(h.double(), 1).to(dtype).double(), t)
    rtol, atol = LOW_TOL[dtype]
    torch.testing.assert_close(got.cpu().double(), ref, rtol=rtol, atol=atol)


def test_explicit_dtype_of_set_opt_dtype_ops_is_kept():
    h = torch.randn(4, 6, device="vkml").half()
    with torch.autocast("vkml", dtype=torch.float16):
        assert h.sum(dtype=torch.float16).dtype == torch.float16
        assert torch.softmax(h, 1, dtype=torch.float16).dtype == torch.float16
        if HAS_FLOAT64:
            assert torch.softmax(h, 1, dtype=torch.float64).dtype == torch.float64
        assert h.cumsum(0).dtype == torch.float32


PROMOTE = [
    ("addcmul", lambda f, h: torch.addcmul(f, h, h)),
    ("addcdiv", lambda f, h: torch.addcdiv(f, f, h)),
    ("atan2", lambda f, h: torch.atan2(h, f)),
    ("dot", lambda f, h: torch.dot(h[0], f[0])),
    ("vdot", lambda f, h: torch.vdot(h[1], f[1])),
    ("tensordot", lambda f, h: torch.tensordot(h, f, dims=([1], [1]))),
    ("scatter_add", lambda f, h: f.scatter_add(1, torch.zeros_like(f, dtype=torch.long), h)),
]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name,fn", PROMOTE, ids=[n for n, _ in PROMOTE])
def test_promote_ops_run_in_widest_type(name, fn, dtype, gen):
    f = torch.randn(4, 6, generator=gen)
    h = torch.randn(4, 6, generator=gen).to(dtype)
    with torch.autocast("vkml", dtype=dtype):
        got = fn(vk(f), vk(h))
        assert fn(vk(h), vk(h)).dtype == dtype  # nothing wider: stays low precision
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.cpu(), fn(f, h.float()), rtol=1e-5, atol=1e-5)


def test_unlisted_ops_keep_input_dtypes():
    h = torch.randn(4, 6, device="vkml").half()
    f = torch.randn(4, 6, device="vkml")
    with torch.autocast("vkml", dtype=torch.float16):
        assert F.relu(h).dtype == torch.float16
        assert F.relu(f).dtype == torch.float32
        assert (h + f).dtype == torch.float32  # ordinary type promotion
        assert torch.cat([h, h]).dtype == torch.float16
        assert (f @ f.t()).bfloat16().dtype == torch.bfloat16  # casts by hand are untouched
        if HAS_FLOAT64:
            assert (f @ f.t()).double().dtype == torch.float64
            x64 = torch.randn(3, 3, dtype=torch.float64, device="vkml")
            assert (x64 @ x64).dtype == torch.float64  # float64 is never autocast


@pytest.mark.parametrize("dtype", LOW)
def test_autocast_dtypes_agree_with_cpu_autocast(dtype, gen):
    """Ops on both CPU's and CUDA's lists with the same policy cast the same way on both."""
    x, w, img, cw = _inputs(gen)
    t = torch.randint(0, 6, (4,), generator=gen)
    cases = [
        lambda x, w, img, cw, t: torch.mm(x, w),
        lambda x, w, img, cw, t: torch.bmm(x[None], w[None]),
        lambda x, w, img, cw, t: F.linear(x, w),
        lambda x, w, img, cw, t: F.conv2d(img, cw),
        lambda x, w, img, cw, t: F.mse_loss(x.to(dtype), x.to(dtype)),
        lambda x, w, img, cw, t: F.nll_loss(x.to(dtype), t),
        lambda x, w, img, cw, t: F.binary_cross_entropy_with_logits(x.to(dtype), x.sigmoid()),
        lambda x, w, img, cw, t: torch.prod(x.to(dtype)),
        lambda x, w, img, cw, t: F.relu(x.to(dtype)),
    ]
    for fn in cases:
        with torch.autocast("cpu", dtype=dtype):
            want = fn(x, w, img, cw, t).dtype
        with torch.autocast("vkml", dtype=dtype):
            got = fn(vk(x), vk(w), vk(img), vk(cw), vk(t)).dtype
        assert got == want


def test_binary_cross_entropy_is_banned_like_cuda():
    p = torch.rand(4, device="vkml")
    with torch.autocast("vkml"):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, p)
    assert F.binary_cross_entropy(p, p).dtype == torch.float32  # outside autocast it works


def test_autocast_backward_gives_fp32_grads_of_fp32_leaves(gen):
    w = torch.randn(6, 5, generator=gen)
    x = torch.randn(4, 6, generator=gen)
    wv = vk(w).requires_grad_()
    with torch.autocast("vkml", dtype=torch.float16):
        y = vk(x) @ wv
        loss = y.float().pow(2).sum()
    loss.backward()
    assert y.dtype == torch.float16 and wv.grad.dtype == torch.float32
    wc = w.clone().requires_grad_()
    ((x.half().double() @ wc.half().double()).pow(2).sum()).backward()
    torch.testing.assert_close(wv.grad.cpu(), wc.grad.float(), rtol=2e-2, atol=2e-2)


# ---- GradScaler's kernels ----------------------------------------------------------------------
def _grads(dtype, device, gen):
    """Scaled-up grads: contiguous, transposed, empty and sliced (stride 3), made on `device`."""
    bases = [torch.randn(9, 13, generator=gen), torch.randn(6, 5, generator=gen),
             torch.empty(0, 3), torch.randn(40, generator=gen)]
    a, b, c, d = [(t * 1000).to(dtype).to(device) for t in bases]
    return [a, b.t(), c, d[::3]]


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float16, torch.bfloat16,
                                                 torch.float64))
@pytest.mark.parametrize("bad", [None, float("inf"), float("-inf"), float("nan")])
def test_unscale_matches_cpu(dtype, bad, gen):
    cpu = _grads(dtype, "cpu", gen)
    if bad is not None:
        cpu[1][4, 2] = bad  # deep inside a transposed view
    dev = _grads(dtype, "vkml", torch.Generator().manual_seed(1234))
    for c, v in zip(cpu, dev, strict=True):
        v.copy_(c)
    found_c, found_v = torch.zeros(1), torch.zeros(1, device="vkml")
    inv = torch.full((1,), 1.0 / 3.0)  # rounds: products are checked exactly
    torch._amp_foreach_non_finite_check_and_unscale_(cpu, found_c, inv)
    torch._amp_foreach_non_finite_check_and_unscale_(dev, found_v, vk(inv))
    assert found_v.device.type == "vkml" and found_v.item() == (0.0 if bad is None else 1.0)
    assert found_c.item() == found_v.item()
    for c, v in zip(cpu, dev, strict=True):
        assert v.stride() == c.stride()
        torch.testing.assert_close(v.cpu(), c, rtol=0, atol=0, equal_nan=True)


def test_unscale_mixed_dtypes_and_long_lists(gen):
    """GradScaler groups by dtype, but the op takes any list: 100 tensors of three dtypes."""
    cpu = [(torch.randn(7, generator=gen) * 100).to([torch.float32, torch.float16,
                                                       torch.bfloat16][i % 3]) for i in range(100)]
    cpu[97][3] = float("inf")
    dev = [vk(g) for g in cpu]
    found_v = torch.zeros((), device="vkml")
    torch._amp_foreach_non_finite_check_and_unscale_(dev, found_v, vk(torch.tensor([0.25])))
    assert found_v.item() == 1.0
    for c, v in zip(cpu, dev, strict=True):
        torch.testing.assert_close(v.cpu(), c * 0.25, rtol=0, atol=0)


def test_unscale_functional_form_leaves_inputs(gen):
    g = vk(torch.randn(5, generator=gen))
    before = g.clone()
    outs, found = torch.ops.aten._amp_foreach_non_finite_check_and_unscale(
        [g], torch.zeros(1, device="vkml"), torch.full((1,), 0.5, device="vkml"))
    torch.testing.assert_close(outs[0], before * 0.5, rtol=0, atol=0)
    torch.testing.assert_close(g, before, rtol=0, atol=0)
    assert found.item() == 0.0


def test_unscale_bad_arguments_raise_like_cpu():
    def check(exc, grads_dev, found_dev, inv_dev, grads_cpu, found_cpu, inv_cpu):
        with pytest.raises(exc):
            torch._amp_foreach_non_finite_check_and_unscale_(grads_cpu, found_cpu, inv_cpu)
        with pytest.raises(exc):
            torch._amp_foreach_non_finite_check_and_unscale_(grads_dev, found_dev, inv_dev)

    f, i = torch.zeros(1), torch.ones(1)
    g = [torch.ones(3)]
    fv, iv, gv = vk(f), vk(i), [vk(g[0])]
    check(RuntimeError, gv, vk(torch.zeros(2)), iv, g, torch.zeros(2), i)  # found_inf size
    check(RuntimeError, gv, fv, vk(i.half()), g, f, i.half())  # inv_scale dtype
    check(RuntimeError, gv, fv.half(), iv, g, f.half(), i)  # found_inf dtype
    torch._amp_foreach_non_finite_check_and_unscale_([], fv, iv)  # empty list: nothing to do
    assert fv.item() == 0.0
    check(NotImplementedError, [vk(torch.ones(3, dtype=torch.int32))], fv, iv,
          [torch.ones(3, dtype=torch.int32)], f, i)
    with pytest.raises(RuntimeError):  # grads on another device than found_inf
        torch._amp_foreach_non_finite_check_and_unscale_(g, fv, iv)


def test_update_scale_matches_cpu_over_a_sequence():
    sc, tc = torch.full((1,), 1000.0), torch.zeros(1, dtype=torch.int32)
    sv, tv = vk(sc), vk(tc)
    for inf in [0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0]:
        fc = torch.full((1,), float(inf))
        out_v = torch._amp_update_scale_(sv, tv, vk(fc), 2.0, 0.3, 3)
        torch._amp_update_scale_(sc, tc, fc, 2.0, 0.3, 3)
        assert out_v is sv
        assert sv.item() == sc.item() and tv.item() == tc.item()
    # The functional form returns new tensors and leaves its inputs alone.
    interval = tv.item() + 1  # the next clean step grows
    s2, t2 = torch.ops.aten._amp_update_scale(sv, tv, torch.zeros(1, device="vkml"), 2.0, 0.5,
                                              interval)
    assert s2.item() == 2 * sv.item() and t2.item() == 0 and tv.item() == tc.item()


def test_update_scale_keeps_finite_scale():
    big = torch.finfo(torch.float32).max / 1.5
    s, t = torch.full((1,), big, device="vkml"), torch.zeros(1, dtype=torch.int32, device="vkml")
    torch._amp_update_scale_(s, t, torch.zeros(1, device="vkml"), 2.0, 0.5, 1)
    assert s.item() == pytest.approx(big, rel=1e-7) and t.item() == 0


def test_update_scale_bad_arguments_raise_like_cpu():
    def both(s, t, f):
        with pytest.raises(RuntimeError):
            torch._amp_update_scale_(s, t, f, 2.0, 0.5, 10)
        with pytest.raises(RuntimeError):
            torch._amp_update_scale_(vk(s), vk(t), vk(f), 2.0, 0.5, 10)

    s, t, f = torch.ones(1), torch.zeros(1, dtype=torch.int32), torch.zeros(1)
    both(s, t.float(), f)  # growth_tracker must be int
    both(s.half(), t, f)  # scale must be float
    both(torch.ones(2), t, f)
    both(s, t, torch.zeros(2))
    with pytest.raises(RuntimeError):  # mixed devices
        torch._amp_update_scale_(vk(s), t, vk(f), 2.0, 0.5, 10)


# ---- GradScaler end to end -----------------------------------------------------------------------
def _scaler_run(device, steps=6, inject_at=(2,)):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    model.to(device)
    x = torch.randn(10, 6).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler(device, init_scale=2.0**8, growth_interval=2)
    scales, weights = [], []
    for step in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        if step in inject_at:
            model[0].weight.grad[1, 2] = float("inf")
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        weights.append(model[0].weight.detach().cpu().clone())
    return scales, weights, scaler


def test_grad_scaler_skips_step_and_backs_off_like_cpu():
    scales_v, weights_v, scaler = _scaler_run("vkml")
    scales_c, weights_c, _ = _scaler_run("cpu")
    assert scales_v == scales_c == [256.0, 512.0, 256.0, 256.0, 512.0, 512.0]
    torch.testing.assert_close(weights_v[2], weights_v[1], rtol=0, atol=0)  # step skipped
    assert not torch.equal(weights_v[3], weights_v[2])
    for v, c in zip(weights_v, weights_c, strict=True):
        torch.testing.assert_close(v, c, rtol=1e-5, atol=1e-6)
    assert scaler._scale.device.type == "vkml" and scaler._growth_tracker.device.type == "vkml"


def test_grad_scaler_unscale_then_clip_natively(fallback):
    torch.manual_seed(1)
    results = []
    for device in ["cpu", "vkml"]:
        torch.manual_seed(1)
        model = torch.nn.Linear(5, 4).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler(device, init_scale=1024.0)
        x = torch.randn(7, 5).to(device)
        for _ in range(3):
            opt.zero_grad()
            scaler.scale(model(x).sum()).backward()
            scaler.unscale_(opt)
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            scaler.step(opt)
            scaler.update()
        results.append((norm.cpu(), model.weight.detach().cpu()))
    torch.testing.assert_close(results[1], results[0], rtol=1e-5, atol=1e-6)
    assert torch_vkml.fallback_stats() == {}


# ---- training under autocast -------------------------------------------------------------------
def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.GELU(), torch.nn.LayerNorm(32),
                               torch.nn.Linear(32, 5))


def _cnn():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                               torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                               torch.nn.Linear(8 * 4 * 4, 5))


def _train(make, shape, amp_dtype, steps=5):
    torch.manual_seed(0)
    model = make().to("vkml")
    x = torch.randn(16, *shape).to("vkml")
    y = torch.randint(0, 5, (16,)).to("vkml")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("vkml", init_scale=2.0**12,
                                  enabled=amp_dtype == torch.float16)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with torch.autocast("vkml", dtype=amp_dtype or torch.float16,
                            enabled=amp_dtype is not None):
            out = model(x)
            loss = F.cross_entropy(out, y)
        assert out.dtype == (amp_dtype or torch.float32) and loss.dtype == torch.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert all(p.dtype == torch.float32 and p.grad.dtype == torch.float32
               for p in model.parameters())
    return losses


@pytest.mark.parametrize("make,shape", [(_mlp, (12,)), (_cnn, (3, 8, 8))], ids=["mlp", "cnn"])
def test_training_under_autocast_tracks_fp32(make, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback or autocast warnings either
        ref = _train(make, shape, None)
        fp16 = _train(make, shape, torch.float16)
        bf16 = _train(make, shape, torch.bfloat16)
    assert ref[-1] < ref[0]
    torch.testing.assert_close(torch.tensor(fp16), torch.tensor(ref), rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(torch.tensor(bf16), torch.tensor(ref), rtol=5e-2, atol=5e-2)
