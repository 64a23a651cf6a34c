"""Winograd F(2x2, 3x3) and F(4x4, 3x3) convolutions (VKML_CONV_WINOGRAD=1 forces them wherever
they apply, VKML_CONV_WINOGRAD_TILE picks the tile): forward, input and weight gradients and
transposed convolution against a float64 CPU reference, at output sizes that leave partial tiles,
padding 0-2, channels-last and sliced inputs, with bias, and fp16/bf16 tensors; geometries it
does not cover (stride 2, dilation, groups) keep their kernels."""

import pytest
import torch
import torch.nn.functional as F

import torch_vkml
import torch_vkml.profiler
from nn_helpers import kernels_run
from test_conv import TOL, rel_err, run_case

def check_conv(gen, cin, cout, size, dtype=torch.float32, layout=None, bias=True,
               transposed=False, **kw):
    """test_conv's float64 check (batch 2) of a 3x3 convolution, forward and gradients."""
    run_case(size, cin, cout, (3, 3), kw, dtype, transposed, gen, bias=bias, layout=layout)


@pytest.fixture(params=["2", "4"])
def winograd(request):
    """Forced wherever it applies, with each output tile (VKML_CONV_WINOGRAD_TILE)."""
    tile = request.param
    with torch_vkml.config.override(VKML_CONV_WINOGRAD="1", VKML_CONV_WINOGRAD_TILE=tile):
        yield


def stage_runs(ran, stage, dtype="f32"):
    """Dispatches of one transform stage, whichever tile (conv_wino2_*, conv_wino4_*)."""
    return sum(n for k, n in ran.items()
               if k.startswith("conv_wino") and k.endswith(f"_{stage}_{dtype}"))


@pytest.mark.parametrize("padding", [0, 1, 2, (2, 0)])
@pytest.mark.parametrize("size", [(6, 8), (7, 5), (3, 3), (13, 10)])
def test_forward_and_gradients(size, padding, gen, winograd):
    ran = kernels_run(lambda: check_conv(gen, 5, 6, size, padding=padding))
    # The forward and both gradients through the transforms: the input's tiles thrice.
    assert stage_runs(ran, "input") == 3 and stage_runs(ran, "output") == 2, ran
    assert stage_runs(ran, "dy") == 1 and stage_runs(ran, "wgrad") == 1, ran
    assert torch_vkml.fallback_stats() == {}


@pytest.mark.parametrize("layout", ["channels_last", "sliced"])
def test_strided_inputs_and_no_bias(layout, gen, winograd):
    ran = kernels_run(lambda: check_conv(gen, 4, 7, (9, 6), layout=layout, bias=False,
                                         padding=1))
    assert stage_runs(ran, "input") == 3, ran


@pytest.mark.parametrize("padding", [0, 1, 2])
def test_transposed(padding, gen, winograd):
    """A stride-1 transposed convolution is the input gradient's path, its bias added there."""
    ran = kernels_run(lambda: check_conv(gen, 4, 5, (6, 7), transposed=True, padding=padding))
    assert stage_runs(ran, "input") >= 1, ran


def test_large_values_and_wide_channels(gen, winograd):
    """Magnitudes far from 1 keep fp32 accuracy (the transforms only add and halve)."""
    x = torch.randn(2, 64, 10, 10, generator=gen, dtype=torch.float64) * 1e3
    w = torch.randn(70, 64, 3, 3, generator=gen, dtype=torch.float64) * 1e-3
    ref = F.conv2d(x, w, padding=1)
    got = F.conv2d(x.float().to("vkml"), w.float().to("vkml"), padding=1)
    assert rel_err(got, ref) <= TOL[torch.float32]


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1), dict(dilation=2, padding=2),
                                dict(groups=2, padding=1)])
def test_other_geometries_keep_their_kernels(kw, gen, winograd):
    ran = kernels_run(lambda: check_conv(gen, 4, 6, (7, 7), **kw))
    assert not any(k.startswith("conv_wino") for k in ran), ran


# bfloat16 where the device has it.
HALF = [torch.float16] + ([torch.bfloat16] if torch_vkml.get_device_properties().bf16 else [])


@pytest.mark.parametrize("dtype", HALF)
def test_half(dtype, gen, winograd):
    """fp16/bf16 tensors through fp32 transforms and GEMMs."""
    ran = kernels_run(lambda: check_conv(gen, 4, 6, (7, 6), dtype=dtype, padding=1))
    name = "f16" if dtype == torch.float16 else "bf16"
    assert stage_runs(ran, "input", name) == 3 and stage_runs(ran, "wgrad", name) == 1, ran


def test_off_and_default_on_cpu_devices(gen):
    """0 turns it off; auto, CPU devices keep the implicit GEMM."""
    with torch_vkml.config.override(VKML_CONV_WINOGRAD="0"):
        ran = kernels_run(lambda: check_conv(gen, 4, 6, (6, 6), padding=1))
    assert not any(k.startswith("conv_wino") for k in ran), ran
    if torch_vkml.get_device_properties().type == "CPU":
        ran = kernels_run(lambda: check_conv(gen, 64, 64, (4, 4), padding=1))
        assert not any(k.startswith("conv_wino") for k in ran), ran


@pytest.mark.parametrize("passes", ["forward", "data", "weight", "forward,weight"])
def test_chosen_passes(passes, gen):
    """A list of passes takes exactly those through the transforms."""
    with torch_vkml.config.override(VKML_CONV_WINOGRAD=passes):
        ran = kernels_run(lambda: check_conv(gen, 4, 6, (6, 5), padding=1))
    chosen = passes.split(",")
    expect = dict(output=("forward" in chosen) + ("data" in chosen), wgrad="weight" in chosen,
                  input=len(chosen))
    for stage, count in expect.items():
        assert stage_runs(ran, stage) == count, (stage, ran)


@pytest.mark.parametrize("setting", ["yes", "forward,backward", "data,"])
def test_bad_setting_raises(setting):
    with pytest.raises(ValueError, match="comma-separated list of forward,data,weight"):
        with torch_vkml.config.override(VKML_CONV_WINOGRAD=setting):
            pass


def test_bad_tile_raises():
    with pytest.raises(ValueError, match="one of 2, 4"):
        with torch_vkml.config.override(VKML_CONV_WINOGRAD_TILE="6"):
            pass
