"""Random numbers on vkml: reproducible for a seed, RNG state round trips, sane distributions."""

import math

import pytest
import torch
from nn_helpers import FLOAT_DTYPES

import torch_vkml


def test_seed_reproduces_and_state_round_trips():
    torch.manual_seed(123)
    a = torch.randn(1000, device="vkml").cpu()
    torch.manual_seed(123)
    b = torch.randn(1000, device="vkml").cpu()
    assert torch.equal(a, b)
    torch_vkml.manual_seed(7)
    assert torch_vkml.initial_seed() == 7
    state = torch_vkml.get_rng_state()
    c = torch.rand(500, device="vkml").cpu()
    d = torch.rand(500, device="vkml").cpu()
    assert not torch.equal(c, d)  # the offset advanced
    torch_vkml.set_rng_state(state)
    assert torch.equal(torch.rand(500, device="vkml").cpu(), c)
    g = torch.Generator(device="vkml").manual_seed(99)
    e = torch.rand(300, device="vkml", generator=g).cpu()
    g.manual_seed(99)
    assert torch.equal(torch.rand(300, device="vkml", generator=g).cpu(), e)


def test_results_do_not_depend_on_layout():
    torch.manual_seed(5)
    flat = torch.rand(6 * 8, device="vkml").cpu()
    torch.manual_seed(5)
    x = torch.empty(8, 6, device="vkml").t()  # element i of the view is drawn from counter i
    x.uniform_()
    assert torch.equal(x.cpu().reshape(-1), flat)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_distributions(dtype):
    torch.manual_seed(0)
    n = 200_000
    u = torch.empty(n, dtype=dtype, device="vkml").uniform_(-2, 3).cpu().double()
    assert u.min() >= -2 and u.max() <= 3
    assert abs(u.mean().item() - 0.5) < 0.03
    z = torch.empty(n, dtype=dtype, device="vkml").normal_(1.5, 2.0).cpu().double()
    assert abs(z.mean().item() - 1.5) < 0.03 and abs(z.std().item() - 2.0) < 0.03
    b = torch.empty(n, dtype=dtype, device="vkml").bernoulli_(0.3).cpu().double()
    assert set(b.unique().tolist()) <= {0.0, 1.0} and abs(b.mean().item() - 0.3) < 0.01
    e = torch.empty(n, dtype=dtype, device="vkml").exponential_(2.0).cpu().double()
    assert e.min() > 0 and abs(e.mean().item() - 0.5) < 0.02


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.int8,
                                   torch.bool, torch.float32])
def test_random_integers(dtype):
    torch.manual_seed(3)
    x = torch.empty(50_000, dtype=dtype, device="vkml").random_(0, 2 if dtype == torch.bool else 7)
    v = x.cpu().long()
    hi = 2 if dtype == torch.bool else 7
    assert v.min() == 0 and v.max() == hi - 1
    counts = torch.bincount(v, minlength=hi).double() / v.numel()
    assert torch.all((counts - 1 / hi).abs() < 0.02)
    r = torch.randint(-5, 5, (10_000,), device="vkml").cpu()
    assert r.min() == -5 and r.max() == 4
    full = torch.empty(10_000, dtype=torch.int32, device="vkml").random_().cpu()
    assert full.min() >= 0 and full.max() > 2**30


def test_randn_shapes_and_perm_free_ops():
    x = torch.randn(3, 4, 5, device="vkml")
    assert x.shape == (3, 4, 5) and x.device.type == "vkml"
    assert math.isfinite(x.cpu().sum().item())
    assert torch.rand(0, device="vkml").numel() == 0
