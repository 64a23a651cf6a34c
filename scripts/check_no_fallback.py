"""Runs a representative set of everyday tensor programs on vkml under VKML_FALLBACK=silent and
prints torch_vkml.fallback_stats(): data preprocessing with indexing and masks, sorting and
selection, random sampling, unique/bincount/histc, one-hot, scans, gather/scatter, advanced
indexing, where, cat/stack/pad. Exits 1 if any op ran on the CPU instead of vkml.

Usage: PYTHONPATH=. python scripts/check_no_fallback.py
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F

import torch_vkml

DEV = "vkml"


def preprocessing():
    """Normalise features, mask outliers, drop rows with NaN, shuffle and batch."""
    g = torch.Generator(device=DEV).manual_seed(0)
    x = torch.randn(256, 12, device=DEV, generator=g)
    x[x.abs() > 2.5] = float("nan")
    keep = ~torch.isnan(x).any(dim=1)
    x = x[keep]
    x = (x - x.mean(0)) / x.std(0).clamp_min(1e-6)
    x = torch.where(x > 3, torch.full_like(x, 3.0), x)
    x = x.masked_fill(x < -3, -3.0)
    perm = torch.randperm(x.shape[0], device=DEV, generator=g)
    batches = list(torch.split(x[perm], 32))
    rows = torch.nonzero(x[:, 0] > 0).squeeze(1)
    _ = x.index_select(0, rows), torch.masked_select(x, x > 1), x[x[:, 1] > 0, 2:5]
    return batches


def sorting_and_selection():
    x = torch.randn(64, 100, device=DEV)
    vals, idx = torch.sort(x, dim=1, descending=True)
    _ = torch.argsort(x, dim=0), torch.msort(x)
    top_v, top_i = torch.topk(x, 5, dim=1)
    _ = torch.kthvalue(x, 3, dim=1), torch.median(x, dim=0), torch.median(x)
    _ = torch.quantile(x[:4], torch.tensor([0.1, 0.5, 0.9], device=DEV), dim=1)
    _ = torch.nanmedian(x), torch.mode(x.round(), dim=1)
    bounds = torch.linspace(-2, 2, 9, device=DEV)
    _ = torch.bucketize(x, bounds), torch.searchsorted(bounds, x[:, :5].contiguous())
    _ = x.max(), x.min(), x.argmax(dim=1), x.amax(dim=0), x.aminmax()
    return vals.gather(1, idx.argsort(dim=1)), top_v.sum() + top_i.sum()


def random_sampling():
    g = torch.Generator(device=DEV).manual_seed(1)
    probs = torch.rand(8, 10, device=DEV, generator=g)
    _ = torch.rand(5, device=DEV), torch.randn(5, device=DEV), torch.randint(0, 9, (5,), device=DEV)
    _ = torch.bernoulli(probs), torch.randperm(20, device=DEV), torch.multinomial(probs, 3)
    _ = torch.empty(10, device=DEV).uniform_(-1, 1), torch.empty(10, device=DEV).normal_()
    return F.dropout(probs, 0.5, training=True)


def counting():
    labels = torch.randint(0, 10, (500,), device=DEV)
    values, inverse, counts = torch.unique(labels, return_inverse=True, return_counts=True)
    _ = torch.unique_consecutive(labels.sort().values, return_counts=True)
    _ = torch.unique(labels.view(50, 10) % 3, dim=0)
    _ = torch.bincount(labels), torch.bincount(labels, weights=torch.rand(500, device=DEV))
    _ = torch.histc(torch.randn(500, device=DEV), bins=20, min=-3, max=3)
    _ = torch.isin(labels, torch.tensor([1, 3, 5], device=DEV)), torch.count_nonzero(labels)
    one_hot = F.one_hot(labels, num_classes=10)
    return one_hot.sum(0) - counts.sum()


def scans_and_reductions():
    x = torch.randn(32, 50, device=DEV)
    _ = torch.cumsum(x, 1), torch.cumprod(x[:, :5], 1), torch.cummax(x, 0), torch.logcumsumexp(x, 1)
    _ = x.sum(), x.mean(1), x.var(0), x.std(), x.prod(1), x.norm(), torch.logsumexp(x, 1)
    _ = torch.nansum(x), torch.nanmean(x), torch.trace(x[:, :32]), x.all(), (x > 0).any(1)
    return torch.diff(x, dim=1)


def gather_scatter_indexing():
    x = torch.randn(16, 20, device=DEV)
    idx = torch.randint(0, 20, (16, 4), device=DEV)
    g = torch.gather(x, 1, idx)
    s = torch.zeros(16, 20, device=DEV).scatter_(1, idx, g)
    s = s.scatter_add(1, idx, g).scatter_reduce(1, idx, g, "amax")
    acc = torch.zeros(20, device=DEV).index_add_(0, idx[:, 0], x[:, 0])
    x[torch.arange(16, device=DEV), idx[:, 0]] = 0.0
    x.index_put_((idx[:, 1] % 16, idx[:, 2]), torch.ones(16, device=DEV), accumulate=True)
    rows, cols = torch.tensor([0, 3, 5], device=DEV), torch.tensor([1, 1, 7], device=DEV)
    _ = x[rows, cols], x[rows][:, cols], x[..., cols], x[rows[:, None], cols]
    _ = torch.take(x, torch.tensor([0, 17, 300], device=DEV)), x.index_fill(1, cols, -1.0)
    return s, acc


def joining_and_padding():
    a, b = torch.randn(4, 5, device=DEV), torch.randn(4, 5, device=DEV)
    c = torch.cat([a, b], 0)
    st = torch.stack([a, b], 2)
    p = F.pad(a, (1, 2, 0, 1), value=0.5)
    _ = torch.where(a > b, a, b), torch.where(a > 0), torch.tril(a), torch.flip(a, [1])
    _ = torch.roll(a, 2, 1), a.repeat(2, 1), a.expand(3, 4, 5).contiguous(), c.chunk(2)
    return c, st, p


PROGRAMS = [preprocessing, sorting_and_selection, random_sampling, counting,
            scans_and_reductions, gather_scatter_indexing, joining_and_padding]


def main() -> int:
    if torch_vkml.device_count() == 0:
        print("no vkml device: nothing checked", file=sys.stderr)
        return 1
    torch_vkml.config.set("VKML_FALLBACK", "silent")  # count every fallback, raise none
    torch_vkml.reset_fallback_stats()
    per_program = {}
    for program in PROGRAMS:
        before = dict(torch_vkml.fallback_stats())
        program()
        torch.vkml.synchronize()
        after = torch_vkml.fallback_stats()
        new = {op: n - before.get(op, 0) for op, n in after.items() if n != before.get(op, 0)}
        per_program[program.__name__] = new
        print(f"{program.__name__:28s} {'ok' if not new else new}")
    stats = torch_vkml.fallback_stats()
    print("fallback_stats():", stats)
    return 1 if stats else 0


if __name__ == "__main__":
    sys.exit(main())
