"""VKML_CAPS_MASK and the limit settings make vkml treat a device as a weaker GPU: masked features
read as absent (device properties, dtype support) and kernels take the paths that remain, with
results that match the CPU. Devices are probed once per process, so each case is a subprocess."""

import os
import subprocess
import sys

SCRIPT = r"""
import torch
import torch.nn.functional as F
import torch_vkml

p = torch_vkml.get_device_properties(0)
print("PROPS", p.fp16, p.fp64, p.int8, p.max_shared_memory)
g = torch.Generator().manual_seed(0)
for dtype in (torch.float32, torch.float16):
    a = torch.randn(67, 129, generator=g).to(dtype)
    b = torch.randn(129, 33, generator=g).to(dtype)
    x = torch.randn(8, 300, generator=g).to(dtype)
    got = [(a.to("vkml") @ b.to("vkml")).cpu(), F.softmax(x.to("vkml"), 1).cpu(),
           x.to("vkml").sum(1).cpu(), F.layer_norm(x.to("vkml"), (300,)).cpu()]
    want = [(a.double() @ b.double()), F.softmax(x.double(), 1), x.double().sum(1),
            F.layer_norm(x.double(), (300,))]
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    for i, (u, v) in enumerate(zip(got, want)):
        torch.testing.assert_close(u.double(), v, rtol=tol, atol=tol * 10, msg=f"{dtype} op {i}")
print("VALIDATION", torch_vkml._C.validation_message_count())
"""


def run(**settings):
    env = dict(os.environ, **settings)
    env.setdefault("PYTHONPATH", os.getcwd())
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=600, env=env)


def test_masked_features_read_as_absent_and_ops_still_match_the_cpu():
    r = run(VKML_CAPS_MASK="no-coopmat,no-fp16,no-fp64,no-subgroup-arithmetic,"
                           "no-subgroup-size-control",
            VKML_CAPS_SHARED_MEMORY="16K", VKML_CAPS_WORKGROUP_COUNT="65535")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PROPS False False True 16384" in r.stdout, r.stdout
    assert "VALIDATION 0" in r.stdout, r.stdout + r.stderr


def test_a_bad_mask_word_is_rejected_with_the_allowed_ones():
    r = run(VKML_CAPS_MASK="no-coopmat,no-gpu")
    assert r.returncode != 0
    assert "VKML_CAPS_MASK='no-coopmat,no-gpu' is not valid" in r.stderr, r.stderr
    assert "no-subgroup-arithmetic" in r.stderr, r.stderr


def test_a_device_without_int16_arithmetic_is_not_usable_and_says_why():
    env = dict(os.environ, VKML_CAPS_MASK="no-int16")
    env.setdefault("PYTHONPATH", os.getcwd())
    code = "import torch_vkml; print(torch_vkml.device_count(), torch_vkml._C.no_device_reason())"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("0 no Vulkan device is usable by vkml: "), r.stdout
    assert "missing shaderInt16" in r.stdout, r.stdout
