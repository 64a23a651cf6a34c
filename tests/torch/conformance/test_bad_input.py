"""Bad input is rejected on vkml as on the CPU: the same exception type, before any GPU work can
read out of bounds. Each case is a function of the device; the CPU's exception is the reference."""

import threading

import pytest
import torch
import torch.nn.functional as F

V = "vkml"


def t(*shape, device, dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    return torch.randn(*shape, generator=g).to(dtype).to(device)


def idx(values, device):
    return torch.tensor(values, dtype=torch.long).to(device)


CASES = {
    "add shape mismatch": lambda d: t(2, 3, device=d) + t(4, device=d),
    "mm inner mismatch": lambda d: t(2, 3, device=d) @ t(4, 5, device=d),
    "bmm batch mismatch": lambda d: torch.bmm(t(2, 3, 4, device=d), t(3, 4, 5, device=d)),
    "index_select out of range": lambda d: t(4, 3, device=d).index_select(0, idx([0, 4], d)),
    "index_select negative": lambda d: t(4, 3, device=d).index_select(0, idx([-5], d)),
    "gather out of range": lambda d: t(3, 3, device=d).gather(1, idx([[0, 3, 1]] * 3, d)),
    "scatter out of range": lambda d: t(3, 3, device=d).scatter(0, idx([[5, 0, 0]], d),
                                                                 t(1, 3, device=d)),
    "advanced index out of range": lambda d: t(5, device=d)[idx([1, 7], d)],
    # Fuzz seed 706165691506: the result is empty, so no kernel runs to see the bad index.
    "advanced index into an empty dim": lambda d: t(0, 0, 5, device=d)[idx([0, 0], d)],
    "advanced index into an empty inner dim": lambda d: t(3, 0, device=d)[:, idx([0], d)],
    "embedding out of range": lambda d: F.embedding(idx([0, 9], d), t(4, 3, device=d)),
    "empty negative size": lambda d: torch.empty(-1, device=d),
    "view invalid shape": lambda d: t(2, 3, device=d).view(4, 2),
    "reshape invalid": lambda d: t(2, 3, device=d).reshape(-1, 4),
    "cat dim mismatch": lambda d: torch.cat([t(2, 3, device=d), t(2, 4, device=d)], 0),
    "stack shape mismatch": lambda d: torch.stack([t(2, 3, device=d), t(3, 2, device=d)]),
    "conv2d channel mismatch": lambda d: F.conv2d(t(1, 3, 8, 8, device=d),
                                                  t(4, 2, 3, 3, device=d)),
    "bitwise on float": lambda d: torch.bitwise_and(t(3, device=d), t(3, device=d)),
    "masked_fill float mask": lambda d: t(3, device=d).masked_fill(t(3, device=d), 0.0),
    "topk k too large": lambda d: torch.topk(t(4, device=d), 5),
    "narrow out of range": lambda d: t(4, 3, device=d).narrow(0, 3, 2),
    "sum dim out of range": lambda d: t(2, 3, device=d).sum(dim=2),
    "softmax dim out of range": lambda d: F.softmax(t(2, 3, device=d), dim=3),
    "transpose dim out of range": lambda d: t(2, 3, device=d).transpose(0, 2),
    "permute wrong dims": lambda d: t(2, 3, device=d).permute(0, 0),
    "expand invalid": lambda d: t(2, 3, device=d).expand(3, 3),
    "arange zero step": lambda d: torch.arange(0, 5, 0, device=d),
    "linspace negative steps": lambda d: torch.linspace(0, 1, -1, device=d),
    "float index tensor": lambda d: t(5, device=d)[t(2, device=d)],
    "where shape mismatch": lambda d: torch.where(t(2, 3, device=d) > 0, t(2, 3, device=d),
                                                  t(4, device=d)),
    "repeat fewer dims": lambda d: t(2, 3, device=d).repeat(2),
    "one_hot negative classes": lambda d: F.one_hot(idx([0, 1], d), -2),
    "cross_entropy batch mismatch": lambda d: F.cross_entropy(t(3, 5, device=d), idx([0, 1], d)),
    "layer_norm shape mismatch": lambda d: F.layer_norm(t(2, 5, device=d), (4,)),
    "out= wrong dtype": lambda d: torch.add(t(3, device=d), t(3, device=d),
                                            out=torch.empty(3, dtype=torch.long, device=d)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejected_like_cpu(name):
    case = CASES[name]
    with pytest.raises(Exception) as cpu_err:
        case("cpu")
    with pytest.raises(Exception) as vk_err:
        case(V)
        torch.vkml.synchronize()
    assert type(vk_err.value) is type(cpu_err.value), (
        f"CPU raised {type(cpu_err.value).__name__}: {cpu_err.value}; "
        f"vkml raised {type(vk_err.value).__name__}: {vk_err.value}"
    )
    # The device is still usable afterwards.
    x = t(8, device=V)
    assert torch.equal((x * 2).cpu(), x.cpu() * 2)


def test_out_of_range_class_target_gives_nan_not_garbage():
    """The CPU raises IndexError; checking on the device would need a host sync per loss, so vkml
    (like CUDA, which asserts on the device) flags the bad target in the result: NaN."""
    x = t(3, 5, device=V).log_softmax(1)
    assert torch.isnan(F.nll_loss(x, idx([0, 1, 7], V)).cpu())
    assert torch.isnan(F.nll_loss(x, idx([0, -3, 1], V), reduction="none").cpu()[1])


def test_mixing_devices_is_an_error():
    with pytest.raises(RuntimeError, match="device"):
        t(3, device=V) + t(3, device="cpu").expand(2, 3)


def test_threads_issue_work_concurrently():
    """Several Python threads record work on one device at once; each result matches the CPU."""
    errors: list[str] = []

    def worker(seed: int) -> None:
        try:
            g = torch.Generator().manual_seed(seed)
            a, b = torch.randn(64, 48, generator=g), torch.randn(48, 32, generator=g)
            for _ in range(20):
                got = (torch.relu(a.to(V) @ b.to(V)) * 0.5 + 1.0).sum(1).cpu()
                want = (torch.relu(a @ b) * 0.5 + 1.0).sum(1)
                if not torch.allclose(got, want, rtol=1e-4, atol=1e-4):
                    errors.append(f"thread {seed}: max diff {(got - want).abs().max()}")
                    return
        except Exception as e:  # reported below, not swallowed
            errors.append(f"thread {seed}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
