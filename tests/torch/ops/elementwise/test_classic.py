"""The classic first test of a GPU backend (torch-directml's tutorial): multiply two 40-million-element
float32 tensors on the device; the result must equal the CPU's exactly."""

import time

import torch

import torch_vkml


def test_forty_million_element_multiply(capsys):
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(40_000_000, 1, generator=gen)
    b = torch.randn(40_000_000, 1, generator=gen)
    t0 = time.time()
    c = a * b
    cpu_s = time.time() - t0
    dml = torch_vkml.device(0)
    av = a.to(dtype=torch.float32, device=dml)
    bv = b.to(dtype=torch.float32, device=dml)
    torch_vkml.synchronize()
    t0 = time.time()
    d = av * bv
    torch_vkml.synchronize()
    vkml_s = time.time() - t0
    assert d.device.type == "vkml"
    assert torch.equal(d.cpu(), c)
    with capsys.disabled():
        print(f"\n40M-element multiply: CPU {cpu_s * 1e3:.1f} ms, vkml ({torch_vkml.device_name(0)}) "
              f"{vkml_s * 1e3:.1f} ms")
