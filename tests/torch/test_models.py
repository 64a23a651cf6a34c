"""End-to-end training on vkml against the CPU: ResNet-18, ViT, GPT-2, BERT, Whisper, LSTM/GRU/RNN
and the recurrent cells, each from the same initial weights and batches on both devices, for
several optimizer steps, with every op native (VKML_FALLBACK=error and an empty fallback_stats()).

float32: the loss within 1e-3 relative of the CPU at every step and every parameter's gradient
within 1e-3 relative, norm-wise (||g_vkml - g_cpu|| <= 1e-3 ||g_cpu|| + 1e-6 ||all of g_cpu||).

Autocast (vkml float16 / bfloat16) is compared with the CPU in float32, the exact answer autocast
approximates, with tolerances set from the formats: float16 keeps 11 significant bits (unit
roundoff 4.9e-4), bfloat16 8 (3.9e-3). A loss is a mean over many rounded terms whose errors
partly cancel, so 1e-2 (float16) and 3e-2 (bfloat16) relative leave a few roundoffs of room.
Gradients pass through every layer backwards, each matmul and softmax rounding its output, so
their relative error is several times larger: 5e-2 (float16) and 2e-1 (bfloat16), plus an
absolute part of 1e-3 (float16) / 1e-2 (bfloat16) of the whole gradient's norm for parameters
whose gradient is small next to the rest. These bounds held with a margin of 2-3x on lavapipe;
CPU autocast(bfloat16) lands at similar distances from float32 (see test_cpu_bfloat16_...)."""

import math

import pytest
import torch

import torch_vkml

from model_zoo import CASES, cpu_and_copy, grad_mismatches, train

STEPS = 3
FP32_TOL = dict(loss=1e-3, grad=1e-3, grad_abs=1e-6)
AMP_TOL = {
    torch.float16: dict(loss=1e-2, grad=5e-2, grad_abs=1e-3),
    torch.bfloat16: dict(loss=3e-2, grad=2e-1, grad_abs=1e-2),
}
MODELS = ["resnet18", "vit", "gpt2", "bert", "whisper", "lstm", "gru", "rnn", "cells"]

# Models that need an op another helper owns: strict xfail, so the test turns green (and the
# marker must go) once the op lands.
NEEDS = {}


def _param(name, *extra):
    marks = [pytest.mark.xfail(strict=True, reason=NEEDS[name])] if name in NEEDS else []
    return pytest.param(name, *extra, marks=marks, id="-".join([name, *map(_dtype_id, extra)]))


def _dtype_id(x):
    return str(x).replace("torch.", "")


_cpu_traces: dict = {}


def cpu_reference(name):
    """The float32 CPU run of a model (computed once per session, shared by the tests)."""
    if name not in _cpu_traces:
        model, _ = cpu_and_copy(CASES[name])
        _cpu_traces[name] = train(CASES[name], model, "cpu", STEPS)
    return _cpu_traces[name]


def run_on_vkml(name, amp_dtype=None):
    case = CASES[name]
    _, model = cpu_and_copy(case)
    torch_vkml.reset_fallback_stats()
    trace = train(case, model, "vkml", STEPS, amp_dtype=amp_dtype)
    assert torch_vkml.fallback_stats() == {}, "ops ran on the CPU"
    return trace


def assert_traces_close(got, ref, tol):
    for step, (loss, loss_ref) in enumerate(zip(got.losses, ref.losses)):
        assert math.isfinite(loss), f"step {step}: loss {loss}"
        assert abs(loss - loss_ref) <= tol["loss"] * abs(loss_ref), (
            f"step {step}: loss {loss} vs CPU {loss_ref}")
    for step, (grads, grads_ref) in enumerate(zip(got.grads, ref.grads)):
        bad = grad_mismatches(grads, grads_ref, tol["grad"], tol["grad_abs"])
        assert not bad, f"step {step}: " + "; ".join(bad)


@pytest.mark.parametrize("name", [_param(n) for n in MODELS])
def test_trains_like_cpu_float32(name):
    got = run_on_vkml(name)
    assert len(got.losses) == STEPS
    assert_traces_close(got, cpu_reference(name), FP32_TOL)


@pytest.mark.parametrize(
    "name,dtype", [_param(n, d) for d in (torch.float16, torch.bfloat16) for n in MODELS])
def test_trains_under_autocast(name, dtype):
    got = run_on_vkml(name, amp_dtype=dtype)
    assert_traces_close(got, cpu_reference(name), AMP_TOL[dtype])


@pytest.mark.parametrize("name", ["vit", "gpt2"])
def test_cpu_bfloat16_autocast_is_as_far_from_float32(name):
    """Calibrates AMP_TOL: the CPU's own autocast(bfloat16) must meet the bfloat16 bound too,
    else the bound says more about the model than about vkml."""
    case = CASES[name]
    model, _ = cpu_and_copy(case)
    got = train(case, model, "cpu", STEPS, amp_dtype=torch.bfloat16)
    assert_traces_close(got, cpu_reference(name), AMP_TOL[torch.bfloat16])


@pytest.mark.parametrize("batch_size", [64, 256])
def test_vit_trains_at_large_batch(batch_size):
    """A ViT (16x16 images, patch 4, dim 32) at batch 64 and 256: the first step matches the CPU
    and a few steps train without error."""
    case = CASES["vit"]
    model, copy_ = cpu_and_copy(case)
    ref = train(case, model, "cpu", 1, batch_size=batch_size)
    torch_vkml.reset_fallback_stats()
    got = train(case, copy_, "vkml", 2, batch_size=batch_size)
    assert torch_vkml.fallback_stats() == {}
    assert all(math.isfinite(v) for v in got.losses)
    assert abs(got.losses[0] - ref.losses[0]) <= 1e-3 * ref.losses[0]
    assert not grad_mismatches(got.grads[0], ref.grads[0], 1e-3, 1e-6)
