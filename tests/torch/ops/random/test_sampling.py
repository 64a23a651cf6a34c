"""bernoulli_ with a tensor of probabilities and multinomial on vkml: shapes, dtypes, that
impossible outcomes never happen, frequencies close to the probabilities, generator
reproducibility, and the CPU's errors."""

import pytest
import torch

import torch_vkml  # noqa: F401

V = "vkml"


def test_bernoulli_tensor_p():
    p = torch.tensor([0.0, 1.0, 0.25, 0.75]).repeat(4000, 1)
    for dtype in (torch.float32, torch.float16, torch.int64, torch.bool):
        t = torch.empty(4000, 4, dtype=dtype, device=V).bernoulli_(p.to(V))
        assert t.dtype == dtype and t.device.type == V
        out = t.cpu().double()
        assert set(out.unique().tolist()) <= {0.0, 1.0}
        assert out[:, 0].sum() == 0 and out[:, 1].sum() == 4000
        torch.testing.assert_close(out.mean(0)[2:], torch.tensor([0.25, 0.75], dtype=torch.float64),
                                   atol=0.03, rtol=0)
    draw = torch.bernoulli(p.t().to(V))  # functional form, strided p
    assert draw.shape == (4, 4000) and draw.device.type == V
    g1 = torch.Generator(device=V).manual_seed(5)
    g2 = torch.Generator(device=V).manual_seed(5)
    assert torch.equal(torch.bernoulli(p.to(V), generator=g1).cpu(),
                       torch.bernoulli(p.to(V), generator=g2).cpu())


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial(replacement):
    probs = torch.tensor([[0.0, 2.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0, 3.0]])
    n = 3 if not replacement else 4000
    if not replacement:
        probs = torch.tensor([[0.5, 2.0, 1.0, 0.0, 1.0], [1.0, 0.1, 0.0, 2.0, 3.0]])
    out = torch.multinomial(probs.to(V), n, replacement=replacement).cpu()
    assert out.shape == (2, n) and out.dtype == torch.int64
    assert bool((probs.gather(1, out) > 0).all())  # zero-probability categories never drawn
    if replacement:
        freq = torch.stack([torch.bincount(r, minlength=5) for r in out]).double() / n
        torch.testing.assert_close(freq, probs.double() / probs.sum(1, keepdim=True),
                                   atol=0.03, rtol=0)
    else:
        assert all(len(set(r.tolist())) == n for r in out)  # no repeats
    one = torch.multinomial(probs[0].to(V), 1)
    assert one.shape == (1,) and probs[0, one.item()] > 0
    g1 = torch.Generator(device=V).manual_seed(3)
    g2 = torch.Generator(device=V).manual_seed(3)
    a = torch.multinomial(probs.to(V), 2, replacement, generator=g1)
    b = torch.multinomial(probs.to(V), 2, replacement, generator=g2)
    assert torch.equal(a.cpu(), b.cpu())


def test_multinomial_errors():
    cases = [(torch.tensor([0.0, 0.0]), 1, False), (torch.tensor([1.0, -1.0]), 1, True),
             (torch.tensor([1.0, float("nan")]), 1, False), (torch.tensor([1.0, 1.0]), 3, False),
             (torch.tensor([1.0, 1.0]), 0, True), (torch.ones(2, 2, 2), 1, True)]
    for p, n, repl in cases:
        with pytest.raises(RuntimeError):
            torch.multinomial(p, n, repl)
        with pytest.raises(RuntimeError):
            torch.multinomial(p.to(V), n, repl)
