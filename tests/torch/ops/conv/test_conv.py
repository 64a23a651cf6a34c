"""Convolutions on vkml against a float64 CPU reference: forward and the input, weight and bias
gradients over 1-D/2-D/3-D geometries with stride, padding ('same' too), dilation, groups,
depthwise, 1x1 kernels, transposed forms with output_padding, strided inputs, every float dtype."""

import pytest
import torch
import torch.nn.functional as F

import torch_vkml
import torch_vkml.profiler

TOL = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 1e-2, torch.float64: 1e-10}
CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}

# (spatial input size, in channels, out channels, kernel, keyword arguments)
CASES = [
    ((11,), 3, 4, (3,), dict(stride=2, padding=1)),
    ((12,), 4, 6, (4,), dict(dilation=2, padding=3, groups=2)),
    ((9, 7), 3, 5, (3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    ((8, 6), 4, 6, (3, 3), dict(groups=2, padding=1)),
    ((7, 7), 3, 6, (3, 3), dict(groups=3, stride=2, padding=1)),  # depthwise, multiplier 2
    ((6, 5), 5, 7, (1, 1), {}),  # pointwise
    ((7, 6), 4, 6, (1, 1), dict(stride=2)),  # a ResNet downsample: 3 of 4 phases get no tap
    ((7, 6), 3, 4, (3, 3), dict(padding="same", dilation=2)),
    ((5, 4, 6), 2, 3, (2, 3, 2), dict(stride=(1, 2, 1), padding=(1, 0, 1))),
    ((4, 5, 4), 3, 3, (3, 3, 3), dict(groups=3, padding=1)),  # depthwise 3-D
    ((24, 23), 3, 40, (3, 3), dict(padding=1)),  # implicit: M <= 64 over many positions
]

# (spatial input size, in channels, out channels, kernel, keyword arguments) of transposed convs
CASES_T = [
    ((7,), 3, 4, (3,), dict(stride=2, padding=1, output_padding=1)),
    ((5, 6), 4, 6, (3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2)),
    ((5, 5), 3, 2, (3, 3), dict(dilation=2, padding=2)),
    ((6,), 2, 3, (3,), dict(dilation=3, output_padding=2)),  # output_padding >= stride
    ((4, 4), 4, 4, (3, 3), dict(groups=4, stride=2, padding=1)),  # depthwise transposed
    ((3, 4, 3), 2, 3, (2, 3, 2), dict(stride=2, output_padding=(1, 0, 1))),
]


def rel_err(got, ref):
    got = got.cpu().double()
    assert got.shape == ref.shape
    return (got - ref).abs().max().item() / max(ref.abs().max().item(), 1e-6)


def run_case(size, cin, cout, kernel, kw, dtype, transposed, gen, bias=True, layout=None):
    spatial = len(size)
    groups = kw.get("groups", 1)
    fn = (CONV_T if transposed else CONV)[spatial]
    x = torch.randn(2, cin, *size, generator=gen, dtype=torch.float64).to(dtype)
    w_shape = (cin, cout // groups, *kernel) if transposed else (cout, cin // groups, *kernel)
    w = torch.randn(*w_shape, generator=gen, dtype=torch.float64).to(dtype)
    b = torch.randn(cout, generator=gen, dtype=torch.float64).to(dtype) if bias else None

    ref_args = [t.double().clone().requires_grad_() if t is not None else None for t in (x, w, b)]
    ref = fn(*ref_args, **kw)
    g = torch.randn(ref.shape, generator=gen, dtype=torch.float64).to(dtype)
    ref.backward(g.double())

    xv = x.to("vkml")
    if layout == "channels_last":
        xv = xv.contiguous(memory_format=torch.channels_last)
    elif layout == "sliced":  # every other element of a wider tensor
        wide = torch.zeros(*x.shape[:-1], 2 * x.shape[-1], dtype=dtype)
        wide[..., ::2] = x
        xv = wide.to("vkml")[..., ::2]
    dev_args = [
        t.detach().to("vkml").requires_grad_() if t is not None else None for t in (xv, w, b)
    ]
    out = fn(*dev_args, **kw)
    out.backward(g.to("vkml"))

    tol = TOL[dtype]
    assert out.dtype == dtype and out.device.type == "vkml"
    assert rel_err(out, ref) <= tol, "forward"
    for name, got, want in zip(("input", "weight", "bias"), dev_args, ref_args, strict=True):
        if want is None:
            continue
        assert got.grad is not None, name
        assert rel_err(got.grad, want.grad) <= tol, f"grad {name}"


@pytest.fixture(params=["im2col", "implicit"])
def conv_mode(request):
    """Both algorithms, whatever the device's default (VKML_CONV)."""
    with torch_vkml.config.override(VKML_CONV=request.param):
        yield request.param


def run_profiled(case, transposed, gen):
    """run_case in fp32; returns {kernel name: dispatches}."""
    torch_vkml.profiler.enable()
    try:
        torch_vkml.profiler.kernel_times(reset=True)
        run_case(*case, torch.float32, transposed, gen)
        ran = torch_vkml.profiler.kernel_times(reset=True)
    finally:
        torch_vkml.profiler.disable()
    return {name: count for name, (count, _) in ran.items()}


def igemm_count(ran, kind):
    """Dispatches of an implicit-GEMM kernel: the SIMT one (conv_igemm_*) or, on devices with
    cooperative matrices, its twin (conv_igemmc_*)."""
    return ran.get(f"conv_igemm_{kind}", 0) + ran.get(f"conv_igemmc_{kind}", 0)


# Shared memory of conv_igemm.cc's smallest SIMT tile (64x64x16: two stages of 16 k-rows of
# 64 / 4 + 1 and 64 / 4 16-byte vectors). A device with less takes im2col even when the implicit
# algorithm is asked for.
IGEMM_MIN_SHARED = 2 * 16 * ((64 // 4 + 1) + 64 // 4) * 16


def planned_mode(mode):
    """The algorithm the planner takes for `mode` given the device's shared memory."""
    shared = torch_vkml.get_device_properties().max_shared_memory
    if mode == "implicit" and shared < IGEMM_MIN_SHARED:
        return "im2col"
    return mode


def check_algorithm(ran, case, transposed, mode):
    """implicit: no im2col/col2im at all, the weight gradient one implicit GEMM (one per stride
    phase for the input gradient). im2col: no implicit GEMM. Depthwise convolutions have their
    own kernels. `mode` is the one asked for; the check is of the one the device can take."""
    mode = planned_mode(mode)
    size, cin, cout, kernel, kw = case
    groups = kw.get("groups", 1)
    igemm = {k: n for k, n in ran.items() if k.startswith("conv_igemm")}
    columns = {k: n for k, n in ran.items() if k.startswith(("conv_im2col", "conv_col2im"))}
    if groups > 1 and groups == (cout if transposed else cin):
        assert not igemm and not columns, ran
    elif mode == "implicit":
        assert not columns and igemm_count(ran, "wgrad_f32") == 1, ran
        assert igemm_count(ran, "f32") >= (0 if all(k == 1 for k in kernel) else 2), ran
    else:
        assert not igemm, ran


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0])}d-{c[4]}")
def test_conv_forward_and_gradients(case, gen, fallback, conv_mode):
    check_algorithm(run_profiled(case, False, gen), case, False, conv_mode)
    assert torch_vkml.fallback_stats() == {}


@pytest.mark.parametrize("case", CASES_T, ids=lambda c: f"{len(c[0])}d-{c[4]}")
def test_conv_transpose_forward_and_gradients(case, gen, fallback, conv_mode):
    check_algorithm(run_profiled(case, True, gen), case, True, conv_mode)
    assert torch_vkml.fallback_stats() == {}


@pytest.mark.parametrize(
    "dtype",
    [torch.float16, torch.bfloat16] + ([torch.float64] if torch_vkml.has_float64_support() else []),
)
def test_half_and_double(dtype, gen, conv_mode):
    run_case(*CASES[2], dtype, False, gen)
    run_case(*CASES[4], dtype, False, gen)
    run_case(*CASES_T[1], dtype, True, gen)


@pytest.mark.parametrize("layout", ["channels_last", "sliced"])
def test_strided_inputs_and_no_bias(layout, gen, fallback, conv_mode):
    run_case(*CASES[2], torch.float32, False, gen, bias=False, layout=layout)
    run_case(*CASES_T[1], torch.float32, True, gen, bias=False, layout=layout)
    assert torch_vkml.fallback_stats() == {}


@pytest.mark.parametrize("fold", ["1", "0"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("layout", [None, "channels_last", "sliced"])
def test_folded_pointwise(fold, dtype, layout, gen, fallback):
    """1x1 kernels, strided ones too, as one GEMM over the batch's positions (the default), and
    with VKML_CONV_FOLD=0 one GEMM per sample."""
    with torch_vkml.config.override(VKML_CONV_FOLD=fold):
        run_case(*CASES[5], dtype, False, gen, layout=layout)
        run_case(*CASES[6], dtype, False, gen, layout=layout)
    assert torch_vkml.fallback_stats() == {}


@pytest.mark.parametrize("name,value", [("VKML_CONV", "implict"), ("VKML_CONV_COOPMAT_B", "nk"),
                                        ("VKML_CONV_COOPMAT", "2")])
def test_unknown_setting_raises(name, value):
    with pytest.raises(ValueError, match=name):
        with torch_vkml.config.override(**{name: value}):
            pass
    assert torch_vkml.config.get(name) != value


def test_module(gen, fallback):
    conv = torch.nn.Conv2d(3, 4, 3, padding=1)
    x = torch.randn(2, 3, 6, 5, generator=gen)
    ref = conv(x)
    got = conv.to("vkml")(x.to("vkml"))
    assert rel_err(got, ref.detach().double()) <= 1e-4
    assert torch_vkml.fallback_stats() == {}


def test_zero_batch(fallback):
    # PyTorch sends empty batches to its own "Empty" path (elementwise mul/add), not to us.
    conv = torch.nn.Conv2d(3, 4, 3, padding=1).to("vkml")
    assert conv(torch.empty(0, 3, 6, 5, device="vkml")).shape == (0, 4, 6, 5)


def test_bad_inputs_raise_like_cpu():
    x, w = torch.randn(1, 3, 5, 5), torch.randn(4, 2, 3, 3)
    for dev in ("cpu", "vkml"):
        with pytest.raises(RuntimeError):
            F.conv2d(x.to(dev), w.to(dev))  # channel mismatch
        with pytest.raises(RuntimeError):
            F.conv2d(x.to(dev), torch.randn(4, 3, 3, 3, dtype=torch.float16).to(dev))
        with pytest.raises(RuntimeError):
            F.conv2d(x.to(dev), torch.randn(4, 3, 7, 7).to(dev))  # kernel larger than input
    with pytest.raises(RuntimeError):  # NotImplementedError is a RuntimeError, as on CPU
        F.conv2d(
            torch.ones(1, 3, 5, 5, dtype=torch.int64, device="vkml"),
            torch.ones(4, 3, 3, 3, dtype=torch.int64, device="vkml"),
        )
