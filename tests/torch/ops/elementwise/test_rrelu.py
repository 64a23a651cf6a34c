"""rrelu_with_noise (nn.RReLU, F.rrelu): training draws the noise on the device (checked by its
range, its statistics and output = input * noise against a float64 reference), evaluation matches
the CPU, the backward follows the noise, and bad inputs raise the CPU's errors."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, randn

import torch_vkml

LOWER, UPPER = 0.125, 1.0 / 3.0
SHAPES = [(0,), (7,), (3, 5, 17), (64, 33)]
rrelu_with_noise = torch.ops.aten.rrelu_with_noise


def dtypes():
    # float64 only where the device has it.
    return [d for d in FLOAT_DTYPES if d != torch.float64 or torch_vkml.has_float64_support()]


@pytest.mark.parametrize("dtype", dtypes())
@pytest.mark.parametrize("shape", SHAPES)
def test_training_noise_and_output(dtype, shape, gen):
    x = randn(shape, dtype, gen).to("vkml")
    noise = torch.empty_like(x)
    out = rrelu_with_noise(x, noise, LOWER, UPPER, True)
    xc, nc = x.cpu().double(), noise.cpu().double()
    positive = xc > 0
    assert torch.equal(nc[positive], torch.ones_like(nc[positive]))
    drawn = nc[~positive]
    # fp16/bf16 draws round to the dtype: allow one step of rounding past the bounds.
    slack = 0 if dtype in (torch.float32, torch.float64) else 4e-3
    assert bool(((drawn >= LOWER - slack) & (drawn <= UPPER + slack)).all())
    assert_close_to_ref(out, xc * nc)


def test_training_noise_statistics(gen):
    x = -torch.rand(200_000, generator=gen).to("vkml") - 0.1  # every element draws
    noise = torch.empty_like(x)
    rrelu_with_noise(x, noise, LOWER, UPPER, True)
    n = noise.cpu().double()
    width = UPPER - LOWER
    assert abs(n.mean().item() - (LOWER + UPPER) / 2) < 0.01 * width
    assert abs(n.std().item() - width / 12**0.5) < 0.01 * width
    assert n.min().item() >= LOWER and n.max().item() <= UPPER


def test_noise_follows_the_seed(gen):
    x = randn((4, 300), torch.float32, gen).to("vkml")
    draws = []
    for _ in range(2):
        torch.vkml.manual_seed(7)
        noise = torch.empty_like(x)
        rrelu_with_noise(x, noise, LOWER, UPPER, True)
        draws.append(noise.cpu())
    assert torch.equal(draws[0], draws[1])
    noise = torch.empty_like(x)
    rrelu_with_noise(x, noise, LOWER, UPPER, True)
    assert not torch.equal(noise.cpu(), draws[0])


@pytest.mark.parametrize("dtype", dtypes())
def test_evaluation_matches_the_cpu_and_keeps_the_noise(dtype, gen):
    x = randn((5, 9), dtype, gen)
    noise = torch.full((5, 9), 7.0, dtype=dtype)
    got_noise = noise.to("vkml")
    got = rrelu_with_noise(x.to("vkml"), got_noise, LOWER, UPPER, False)
    ref = F.leaky_relu(x.double(), (LOWER + UPPER) / 2)
    assert_close_to_ref(got, ref)
    assert torch.equal(got_noise.cpu(), noise)


def test_strided_out_and_inplace(gen):
    base = randn((6, 10), torch.float32, gen).to("vkml")
    x = base[:, ::2]  # non-contiguous
    noise = torch.empty(6, 5, device="vkml")
    out = torch.full((6, 5), 3.0, device="vkml")
    rrelu_with_noise(x, noise, LOWER, UPPER, True, out=out)
    assert_close_to_ref(out, x.cpu().double() * noise.cpu().double())
    y = x.clone()
    torch.ops.aten.rrelu_with_noise_(y, noise, LOWER, UPPER, True)
    assert_close_to_ref(y, x.cpu().double() * noise.cpu().double())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_backward_follows_the_noise(dtype, gen):
    x = randn((8, 13), dtype, gen).to("vkml").requires_grad_()
    noise = torch.empty_like(x).detach()
    out = rrelu_with_noise(x, noise, LOWER, UPPER, True)
    g = randn((8, 13), dtype, gen)
    out.backward(g.to("vkml"))
    assert_close_to_ref(x.grad, g.double() * noise.cpu().double())


def test_rrelu_module_trains_natively(fallback, gen):
    layer = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.RReLU()).to("vkml")
    x = torch.randn(32, 16, generator=gen).to("vkml")
    layer.train()
    layer(x).square().mean().backward()
    layer.eval()
    ref = F.leaky_relu(layer[0](x).detach().cpu().double(), (LOWER + UPPER) / 2)
    assert_close_to_ref(layer(x).detach(), ref)
    assert torch_vkml.fallback_stats() == {}


def test_bad_inputs_raise_the_cpus_errors():
    x = torch.randn(4, 5)
    for device in ("cpu", "vkml"):
        with pytest.raises(RuntimeError, match="noise tensor shape must match self tensor shape"):
            rrelu_with_noise(x.to(device), torch.empty(3, device=device), LOWER, UPPER, True)
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Half"):
            rrelu_with_noise(x.to(device), torch.empty(4, 5, dtype=torch.float16, device=device),
                             LOWER, UPPER, True)
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            rrelu_with_noise(torch.arange(4, device=device), torch.empty(4, device=device), LOWER,
                             UPPER, True)
