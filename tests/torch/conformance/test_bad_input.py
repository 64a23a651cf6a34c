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

# Every op that takes indices or class labels: out of range and negative, each against the CPU.
INDEX_CASES = {
    "gather negative": lambda d: t(3, 3, device=d).gather(0, idx([[0, -1, 1]], d)),
    "scatter_add out of range": lambda d: t(3, 3, device=d).scatter_add(
        1, idx([[0, 3, 1]], d), t(1, 3, device=d)),
    "scatter_reduce out of range": lambda d: t(3, 3, device=d).scatter_reduce(
        0, idx([[0, 7, 1]], d), t(1, 3, device=d), "amax"),
    "scatter value out of range": lambda d: t(3, 3, device=d).scatter(0, idx([[0, 9, 1]], d), 2.0),
    "index_add out of range": lambda d: t(4, 3, device=d).index_add(0, idx([1, 4], d),
                                                                      t(2, 3, device=d)),
    "index_copy out of range": lambda d: t(4, 3, device=d).index_copy(0, idx([1, 6], d),
                                                                        t(2, 3, device=d)),
    "index_fill out of range": lambda d: t(4, 3, device=d).index_fill(1, idx([0, 3], d), 1.0),
    "index_reduce out of range": lambda d: t(4, 3, device=d).index_reduce(
        0, idx([0, 5], d), t(2, 3, device=d), "prod"),
    "index_put out of range": lambda d: t(5, device=d).index_put((idx([0, 5], d),),
                                                                 t(2, device=d)),
    "index_put accumulate out of range": lambda d: t(5, device=d).index_put(
        (idx([0, -6], d),), t(2, device=d), accumulate=True),
    "advanced index negative out of range": lambda d: t(5, 2, device=d)[idx([-6], d)],
    "advanced index second dim": lambda d: t(3, 4, device=d)[idx([0, 1], d), idx([0, 4], d)],
    "take out of range": lambda d: torch.take(t(2, 3, device=d), idx([0, 6], d)),
    "put out of range": lambda d: t(2, 3, device=d).put(idx([7], d), t(1, device=d)),
    "embedding negative": lambda d: F.embedding(idx([0, -1], d), t(4, 3, device=d)),
    "embedding_bag out of range": lambda d: F.embedding_bag(idx([0, 2, 5], d), t(4, 3, device=d),
                                                            idx([0, 1], d)),
    "one_hot class out of range": lambda d: F.one_hot(idx([0, 3], d), 3),
    "max_unpool2d index out of range": lambda d: F.max_unpool2d(
        t(1, 1, 2, 2, device=d), idx([[[[0, 1], [2, 99]]]], d), 2),
    "nll_loss out of range": lambda d: F.nll_loss(t(4, 10, device=d), idx([1, 2, 10, 3], d)),
    "nll_loss negative": lambda d: F.nll_loss(t(4, 10, device=d), idx([1, -1, 2, 3], d)),
    "nll_loss one sample": lambda d: F.nll_loss(t(10, device=d), idx(12, d)),
    "nll_loss byte target": lambda d: F.nll_loss(
        t(3, 5, device=d), torch.tensor([1, 2, 200], dtype=torch.uint8).to(d)),
    "nll_loss int32 target": lambda d: F.nll_loss(
        t(3, 5, device=d), torch.tensor([1, 2, 3], dtype=torch.int32).to(d)),
    "nll_loss2d out of range": lambda d: F.nll_loss(t(2, 5, 3, 3, device=d),
                                                    idx([[[0, 1, 5]] * 3] * 2, d)),
    "nll_loss 3d spatial negative": lambda d: F.nll_loss(t(2, 5, 3, 2, 2, device=d),
                                                         idx([[[[0, -4]] * 2] * 3] * 2, d)),
    "nll_loss_backward out of range": lambda d: torch.ops.aten.nll_loss_backward(
        torch.tensor(1.0).to(d), t(3, 4, device=d), idx([0, 4, 1], d), None, 1, -100,
        torch.tensor(3.0).to(d)),
    "nll_loss2d_backward out of range": lambda d: torch.ops.aten.nll_loss2d_backward(
        torch.tensor(1.0).to(d), t(1, 4, 2, 2, device=d), idx([[[0, 1], [7, 1]]], d), None, 2,
        -100, torch.tensor(4.0).to(d)),
    "cross_entropy out of range": lambda d: F.cross_entropy(t(4, 10, device=d),
                                                            idx([1, 2, 10, 3], d)),
    "cross_entropy negative, no reduction": lambda d: F.cross_entropy(
        t(4, 10, device=d), idx([1, -1, 2, 3], d), reduction="none"),
    "cross_entropy weighted out of range": lambda d: F.cross_entropy(
        t(4, 10, device=d), idx([1, 2, 10, 3], d), weight=t(10, device=d).abs()),
    "cross_entropy label smoothing out of range": lambda d: F.cross_entropy(
        t(4, 10, device=d), idx([1, 2, 10, 3], d), label_smoothing=0.1),
    "cross_entropy label smoothing negative": lambda d: F.cross_entropy(
        t(4, 10, device=d), idx([1, -5, 2, 3], d), label_smoothing=0.2,
        weight=t(10, device=d).abs()),
    "cross_entropy spatial out of range": lambda d: F.cross_entropy(
        t(2, 5, 3, 3, device=d), idx([[[0, 1, 6]] * 3] * 2, d)),
    "cross_entropy float target wrong shape": lambda d: F.cross_entropy(
        t(4, 10, device=d), t(4, 9, device=d).softmax(1)),
    "cross_entropy float target of samples": lambda d: F.cross_entropy(t(4, 10, device=d),
                                                                       t(4, device=d)),
    "multi_margin_loss out of range": lambda d: F.multi_margin_loss(t(4, 10, device=d),
                                                                    idx([1, 2, 10, 3], d)),
    "multi_margin_loss negative": lambda d: F.multi_margin_loss(t(4, 10, device=d),
                                                                idx([1, -1, 2, 3], d)),
    "multilabel_margin_loss out of range": lambda d: F.multilabel_margin_loss(
        t(2, 4, device=d), idx([[1, 4, -1, 0]] * 2, d)),
    "multilabel_margin_loss below -1": lambda d: F.multilabel_margin_loss(
        t(2, 4, device=d), idx([[1, -3, 0, 0]] * 2, d)),
    "ctc_loss blank out of range": lambda d: F.ctc_loss(
        t(6, 2, 4, device=d).log_softmax(2), idx([[1, 2], [1, 3]], d), idx([6, 6], "cpu"),
        idx([2, 2], "cpu"), blank=4),
    "ctc_loss target length past targets": lambda d: F.ctc_loss(
        t(6, 2, 4, device=d).log_softmax(2), idx([[1, 2], [1, 3]], d), idx([6, 6], "cpu"),
        idx([2, 3], "cpu")),
}
# Class-label checks whose CPU message vkml repeats word for word.
SAME_MESSAGE = {n for n in INDEX_CASES if n.split()[0] in
                ("nll_loss", "nll_loss2d", "cross_entropy", "multi_margin_loss",
                 "multilabel_margin_loss")}
CASES.update(INDEX_CASES)


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
    if name in SAME_MESSAGE:
        assert str(vk_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]
    # The device is still usable afterwards.
    x = t(8, device=V)
    assert torch.equal((x * 2).cpu(), x.cpu() * 2)


def test_the_reported_cross_entropy_case():
    """A target equal to the class count raises the CPU's IndexError, not a NaN loss."""
    x = t(4, 10, device=V)
    with pytest.raises(IndexError, match="Target 10 is out of bounds"):
        F.cross_entropy(x, torch.tensor([1, 2, 10, 3]).to(V))


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_ignored_targets_outside_the_classes_are_not_errors(label_smoothing):
    """ignore_index may lie outside [0, C): those samples are skipped, as on the CPU."""
    for ignore in (-100, 10):
        target = [1, ignore, 2, ignore]
        want = F.cross_entropy(t(4, 10, device="cpu"), idx(target, "cpu"), ignore_index=ignore,
                               label_smoothing=label_smoothing)
        got = F.cross_entropy(t(4, 10, device=V), idx(target, V), ignore_index=ignore,
                              label_smoothing=label_smoothing)
        torch.testing.assert_close(got.cpu(), want)


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
