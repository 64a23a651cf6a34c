"""layer_norm, rms_norm, group_norm, batch_norm (train with running statistics, eval) and
instance_norm on vkml against float64 CPU: dtypes, strides, autograd, out= and errors."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, fell_back, only_native, randn


def grads_of(fn, tensors, grad_out):
    """Gradients of fn(*tensors) against grad_out, for tensors that require them."""
    out = fn(*tensors)
    need = [t for t in tensors if t is not None and t.requires_grad]
    return out, torch.autograd.grad(out, need, grad_out)


def twins(gen, dtype, *shapes, scale=1.0, requires_grad=True):
    """Random (vkml leaf, float64 CPU leaf) pairs with the same values."""
    pairs = []
    for shape in shapes:
        x = randn(shape, dtype, gen, scale)
        pairs.append(
            (x.to("vkml").requires_grad_(requires_grad), x.double().requires_grad_(requires_grad))
        )
    return pairs


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_layer_norm_forward_backward(dtype, gen, fallback):
    for shape, norm in [((4, 7, 9), (9,)), ((3, 5, 6), (5, 6)), ((2, 300), (300,))]:
        (x, xr), (w, wr), (b, br) = twins(gen, dtype, shape, norm, norm, scale=2)
        g = randn(shape, dtype, gen)
        with only_native():
            out, grads = grads_of(
                lambda a, c, d, norm=norm: F.layer_norm(a, norm, c, d, 1e-5),
                (x, w, b),
                g.to("vkml"),
            )
        ref, rgrads = grads_of(
            lambda a, c, d, norm=norm: F.layer_norm(a, norm, c, d, 1e-5), (xr, wr, br), g.double()
        )
        assert out.dtype == dtype
        assert_close_to_ref(out, ref, scale=4)
        n = x.numel() // w.numel()
        for got, want, s in zip(grads, rgrads, (8, 2 * n, n), strict=True):
            assert_close_to_ref(got, want, scale=s)


def test_layer_norm_stats_strides_and_no_affine(gen, fallback):
    base = randn((9, 12), torch.float32, gen, scale=3)
    x = base.to("vkml").t()  # normalize over a strided dim
    with only_native():
        out, mean, rstd = torch.native_layer_norm(x, [9], None, None, 1e-5)
    ref, rmean, rrstd = torch.native_layer_norm(base.double().t(), [9], None, None, 1e-5)
    assert mean.shape == (12, 1) and rstd.shape == (12, 1)
    for got, want in [(out, ref), (mean, rmean), (rstd, rrstd)]:
        assert_close_to_ref(got, want, scale=4)
    h = torch.native_layer_norm(base.half().to("vkml"), [12], None, None, 1e-5)
    assert h[0].dtype == torch.float16 and h[1].dtype == torch.float16  # as on the CPU
    assert torch.native_layer_norm(torch.empty(0, 5, device="vkml"), [5], None, None, 1e-5)[
        0
    ].shape == (0, 5)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_rms_norm(dtype, gen, fallback):
    for shape, norm, eps in [((5, 16), (16,), None), ((2, 3, 40), (3, 40), 1e-6)]:
        (x, xr), (w, wr) = twins(gen, dtype, shape, norm, scale=2)
        g = randn(shape, dtype, gen)
        with only_native():
            out, grads = grads_of(
                lambda a, c, norm=norm, eps=eps: F.rms_norm(a, norm, c, eps), (x, w), g.to("vkml")
            )
            plain = F.rms_norm(x.detach(), norm, None, eps)
        ref, rgrads = grads_of(
            lambda a, c, norm=norm, eps=eps: F.rms_norm(a, norm, c, eps), (xr, wr), g.double()
        )
        if dtype != torch.float64:
            # PyTorch's default eps is that of the computation type (float for all but double)
            ref, rgrads = grads_of(
                lambda a, c, norm=norm, eps=eps: F.rms_norm(
                    a, norm, c, eps or torch.finfo(torch.float32).eps
                ),
                (xr, wr),
                g.double(),
            )
        assert_close_to_ref(out, ref, scale=4)
        assert_close_to_ref(grads[0], rgrads[0], scale=8)
        assert_close_to_ref(grads[1], rgrads[1], scale=x.numel() // w.numel())
        assert plain.dtype == dtype


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_group_norm(dtype, gen, fallback):
    for shape, groups in [((3, 6, 5, 4), 3), ((2, 4), 2), ((2, 8, 7), 8)]:
        c = shape[1]
        (x, xr), (w, wr), (b, br) = twins(gen, dtype, shape, (c,), (c,), scale=2)
        g = randn(shape, dtype, gen)
        with only_native():
            out, grads = grads_of(
                lambda a, d, e, groups=groups: F.group_norm(a, groups, d, e),
                (x, w, b),
                g.to("vkml"),
            )
        ref, rgrads = grads_of(
            lambda a, d, e, groups=groups: F.group_norm(a, groups, d, e), (xr, wr, br), g.double()
        )
        assert_close_to_ref(out, ref, scale=4)
        per = x.numel() // c
        for got, want, s in zip(grads, rgrads, (8, 2 * per, per), strict=True):
            assert_close_to_ref(got, want, scale=s)


def test_group_norm_channels_last(gen, fallback):
    x = randn((2, 6, 5, 3), torch.float32, gen).to(memory_format=torch.channels_last)
    with only_native():
        out = F.group_norm(x.to("vkml"), 2)
    assert out.is_contiguous(memory_format=torch.channels_last)
    assert_close_to_ref(out, F.group_norm(x.double(), 2), scale=4)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_batch_norm_training_updates_running_stats(dtype, gen, fallback):
    shape = (6, 4, 5, 3)
    x = randn(shape, dtype, gen, scale=2) + 0.5
    w, b = randn((4,), dtype, gen), randn((4,), dtype, gen)
    rm = randn((4,), dtype, gen)
    rv = randn((4,), dtype, gen).abs() + 0.5
    rm_v, rv_v = rm.to("vkml"), rv.to("vkml")
    with only_native():
        out, mean, invstd = torch.native_batch_norm(
            x.to("vkml"), w.to("vkml"), b.to("vkml"), rm_v, rv_v, True, 0.1, 1e-5
        )
    rm_r, rv_r = rm.double(), rv.double()
    ref, rmean, rinvstd = torch.native_batch_norm(
        x.double(), w.double(), b.double(), rm_r, rv_r, True, 0.1, 1e-5
    )
    assert_close_to_ref(out, ref, scale=4)
    assert mean.dtype == dtype and invstd.dtype == dtype  # the CPU's choice (CUDA: float32)
    assert_close_to_ref(mean, rmean)
    assert_close_to_ref(invstd, rinvstd)
    # running statistics: exact-ish in float32 (1e-6)
    rt = {torch.float32: 1e-6, torch.float64: 1e-12}.get(dtype)
    if rt:
        torch.testing.assert_close(rm_v.cpu().double(), rm_r, rtol=rt, atol=rt)
        torch.testing.assert_close(rv_v.cpu().double(), rv_r, rtol=rt, atol=rt)
    else:
        assert_close_to_ref(rm_v, rm_r)
        assert_close_to_ref(rv_v, rv_r)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_autograd(dtype, training, gen, fallback):
    shape = (5, 3, 4)
    (x, xr), (w, wr), (b, br) = twins(gen, dtype, shape, (3,), (3,), scale=2)
    rm, rv = randn((3,), torch.float32, gen), randn((3,), torch.float32, gen).abs() + 0.5
    g = randn(shape, dtype, gen)
    with only_native():
        out, grads = grads_of(
            lambda a, c, d: F.batch_norm(a, rm.to("vkml"), rv.to("vkml"), c, d, training),
            (x, w, b),
            g.to("vkml"),
        )
    ref, rgrads = grads_of(
        lambda a, c, d: F.batch_norm(a, rm.double(), rv.double(), c, d, training),
        (xr, wr, br),
        g.double(),
    )
    assert_close_to_ref(out, ref, scale=4)
    for got, want, s in zip(grads, rgrads, (8, 40, 20), strict=True):
        assert_close_to_ref(got, want, scale=s)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_long_rows(training, gen, fallback):
    # 3 channels of 8 * 30 * 20 elements: few long rows take the split (multi-workgroup) path
    shape = (8, 3, 30, 20)
    (x, xr), (w, wr), (b, br) = twins(gen, torch.float32, shape, (3,), (3,), scale=2)
    rm, rv = randn((3,), torch.float32, gen), randn((3,), torch.float32, gen).abs() + 0.5
    rm_v, rv_v, rm_r, rv_r = rm.to("vkml"), rv.to("vkml"), rm.double(), rv.double()
    g = randn(shape, torch.float32, gen)
    with only_native():
        out, grads = grads_of(
            lambda a, c, d: F.batch_norm(a, rm_v, rv_v, c, d, training), (x, w, b), g.to("vkml")
        )
    ref, rgrads = grads_of(
        lambda a, c, d: F.batch_norm(a, rm_r, rv_r, c, d, training), (xr, wr, br), g.double()
    )
    assert_close_to_ref(out, ref, scale=4)
    for got, want, s in zip(grads, rgrads, (8, 400, 400), strict=True):
        assert_close_to_ref(got, want, scale=s)
    torch.testing.assert_close(rm_v.cpu().double(), rm_r, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(rv_v.cpu().double(), rv_r, rtol=1e-6, atol=1e-6)


def test_batch_norm_eval_channels_last_and_modules(gen, fallback):
    m = torch.nn.BatchNorm2d(5)
    with torch.no_grad():
        m.running_mean.copy_(torch.randn(5, generator=gen))
        m.running_var.copy_(torch.rand(5, generator=gen) + 0.5)
        m.weight.copy_(torch.randn(5, generator=gen))
    x = torch.randn(2, 5, 4, 3, generator=gen).to(memory_format=torch.channels_last)
    mv = torch.nn.BatchNorm2d(5).to("vkml")
    mv.load_state_dict(m.state_dict())
    mv.eval()
    m.eval()
    with only_native():
        out = mv(x.to("vkml"))
    assert out.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(out.cpu(), m(x), rtol=1e-5, atol=1e-5)
    # training mode runs the module's num_batches_tracked += 1 (elementwise add)
    mv.train()
    m.train()
    torch.testing.assert_close(mv(x.to("vkml")).cpu(), m(x), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(mv.running_var.cpu(), m.running_var, rtol=1e-6, atol=1e-6)
    assert fell_back() <= {"aten::add.out", "aten::add_.Tensor", "aten::add.Tensor"}


def test_legit_variants_and_out(gen, fallback):
    x = randn((4, 3, 2), torch.float32, gen)
    xv = x.to("vkml")
    with only_native():
        o1, m1, s1 = torch.ops.aten._native_batch_norm_legit.no_stats(
            xv, None, None, True, 0.1, 1e-5
        )
        rm, rv = torch.zeros(3, device="vkml"), torch.ones(3, device="vkml")
        o2 = torch.ops.aten._native_batch_norm_legit(xv, None, None, rm, rv, False, 0.1, 1e-5)[0]
        outs = [torch.empty(0, device="vkml") for _ in range(3)]
        torch.ops.aten.native_batch_norm.out(
            xv,
            None,
            None,
            None,
            None,
            True,
            0.1,
            1e-5,
            out=outs[0],
            save_mean=outs[1],
            save_invstd=outs[2],
        )
    ref = torch.native_batch_norm(x.double(), None, None, None, None, True, 0.1, 1e-5)
    for got, want in zip((o1, m1, s1), ref, strict=True):
        assert_close_to_ref(got, want, scale=4)
    for got, want in zip(outs, ref, strict=True):
        assert_close_to_ref(got, want, scale=4)
    assert_close_to_ref(o2, x.double() / (1 + 1e-5) ** 0.5)
    eval_stats = torch.native_batch_norm(xv, None, None, rm, rv, False, 0.1, 1e-5)
    assert eval_stats[1].shape == (0,) and eval_stats[2].shape == (0,)  # as on the CPU


def test_instance_norm(gen, fallback):
    x = randn((3, 4, 6, 5), torch.float32, gen, scale=2)
    with only_native():
        out = F.instance_norm(x.to("vkml"))
    assert_close_to_ref(out, F.instance_norm(x.double()), scale=4)
    # affine instance norm repeats the weight per sample: `repeat` uses the unfold view
    w, b = randn((4,), torch.float32, gen), randn((4,), torch.float32, gen)
    out = F.instance_norm(x.to("vkml"), weight=w.to("vkml"), bias=b.to("vkml"))
    assert_close_to_ref(
        out, F.instance_norm(x.double(), weight=w.double(), bias=b.double()), scale=4
    )
    assert fell_back() <= {"aten::unfold"}


def test_errors_match_cpu(gen):
    x = torch.randn(4, 6, 5)
    for dev in ("cpu", "vkml"):
        xd = x.to(dev)
        with pytest.raises(RuntimeError, match="normalized_shape"):
            F.layer_norm(xd, (4,))
        with pytest.raises(RuntimeError, match="weight"):
            F.layer_norm(xd, (5,), torch.ones(4).to(dev))
        with pytest.raises(RuntimeError, match="divisible by num_groups"):
            F.group_norm(xd, 4)
        with pytest.raises(NotImplementedError):
            torch.native_layer_norm(
                torch.ones(3, 4, dtype=torch.long).to(dev), [4], None, None, 1e-5
            )
        with pytest.raises(NotImplementedError):
            torch.native_batch_norm(
                torch.ones(3, 4, dtype=torch.long).to(dev), None, None, None, None, True, 0.1, 1e-5
            )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_mixed_precision_parameters(dtype, gen, fallback):
    """Half/bfloat16 activations with float32 parameters and running statistics (autocast's
    batch_norm, or a model kept in fp32 with low-precision inputs)."""
    x = randn((6, 4, 5, 3), dtype, gen, scale=2)
    w, b = randn((4,), torch.float32, gen), randn((4,), torch.float32, gen)
    rm, rv = randn((4,), torch.float32, gen), randn((4,), torch.float32, gen).abs() + 0.5
    rm_v, rv_v, rm_r, rv_r = rm.to("vkml"), rv.to("vkml"), rm.double(), rv.double()
    with only_native():
        out = F.batch_norm(x.to("vkml"), rm_v, rv_v, w.to("vkml"), b.to("vkml"), True)
        ln = F.layer_norm(x.to("vkml"), (3,), w[:3].to("vkml"), b[:3].to("vkml"))
    ref = F.batch_norm(x.double(), rm_r, rv_r, w.double(), b.double(), True)
    assert out.dtype == dtype and rm_v.dtype == torch.float32
    assert_close_to_ref(out, ref, scale=4)
    torch.testing.assert_close(rm_v.cpu().double(), rm_r, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(rv_v.cpu().double(), rv_r, rtol=1e-5, atol=1e-5)
    assert ln.dtype == dtype
    assert_close_to_ref(ln, F.layer_norm(x.double(), (3,), w[:3].double(), b[:3].double()), scale=4)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_layer_norm_single_element_rows_have_zero_input_gradient(dtype, gen, fallback):
    # x - mean over one element is exactly 0, so is its gradient (an fma would leave rstd * ulp)
    (x, _), (w, _), (b, _) = twins(gen, dtype, (5, 1), (1,), (1,), scale=3)
    g = randn((5, 1), dtype, gen, scale=3)
    with only_native():
        _, (gx, gw, gb) = grads_of(
            lambda a, c, d: F.layer_norm(a, (1,), c, d), (x, w, b), g.to("vkml")
        )
    assert bool((gx.cpu() == 0).all())
    assert bool((gw.cpu() == 0).all())
    assert_close_to_ref(gb, g.double().sum(0), scale=4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_instance_norm_half_precision_beats_cpu_rounding(dtype, gen, fallback):
    # Statistics accumulate in float32: vkml is within the dtype's tolerance of float64 and no
    # further from it than PyTorch's CPU kernel (which rounds intermediates to the dtype).
    x = randn((2, 3, 7, 5), dtype, gen, scale=3) + 1.5
    w, b = randn((3,), dtype, gen), randn((3,), dtype, gen)
    with only_native("aten::unfold"):
        got = F.instance_norm(x.to("vkml"), weight=w.to("vkml"), bias=b.to("vkml")).cpu()
    ref = F.instance_norm(x.double(), weight=w.double(), bias=b.double())
    cpu = F.instance_norm(x, weight=w, bias=b)
    torch.testing.assert_close(got.double(), ref, rtol=2e-2, atol=3e-2)
    assert (got.double() - ref).abs().max() <= (cpu.double() - ref).abs().max() + 1e-6
