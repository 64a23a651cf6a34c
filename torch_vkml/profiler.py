"""Per-kernel GPU time on a vkml device, to see where a step goes.

torch.profiler (activities CPU and PrivateUse1) shows each op's device time on the timeline of
the step, beside the CPU ops. This module adds what that cannot: the time of each shader variant
(under VKML_PROFILE=2 with its GEMM or convolution shape), each kernel timed alone.

    with torch_vkml.profiler.profile() as prof:
        train_step()
    print(prof.table(10))

Profiling puts a barrier before every kernel and waits after every submit, so kernels are timed
alone: the sum is a guide to what dominates, not the step's real time. VKML_PROFILE=1 turns it on
for the whole process (read it with kernel_times()).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from . import _C
from ._device import _index


def enable(device: Any = None) -> None:
    _C.set_profiling(_index(device), True)


def disable(device: Any = None) -> None:
    _C.set_profiling(_index(device), False)


def kernel_times(device: Any = None, reset: bool = False) -> dict[str, tuple[int, float]]:
    """{kernel name: (count, total GPU nanoseconds)} since profiling began or the last reset."""
    return dict(_C.kernel_times(_index(device), reset))


class Profile:
    def __init__(self, times: dict[str, tuple[int, float]]) -> None:
        self.times = times

    def table(self, top: int = 15) -> str:
        rows = sorted(self.times.items(), key=lambda kv: -kv[1][1])
        total = sum(ns for _, ns in self.times.values()) or 1.0
        # Names carry their op's shape under VKML_PROFILE=2: the column widens to the longest.
        w = max([48] + [len(name) for name, _ in rows[:top]])
        lines = [f"{'kernel':{w}s} {'calls':>7s} {'total ms':>10s} {'share':>6s}"]
        for name, (count, ns) in rows[:top]:
            lines.append(f"{name:{w}s} {count:7d} {ns / 1e6:10.3f} {100 * ns / total:5.1f}%")
        lines.append(f"{'all kernels':{w}s} {sum(c for c, _ in self.times.values()):7d} "
                     f"{total / 1e6:10.3f}")
        return "\n".join(lines)


@contextlib.contextmanager
def profile(device: Any = None) -> Iterator[Profile]:
    result = Profile({})
    enable(device)
    kernel_times(device, reset=True)
    try:
        yield result
    finally:
        result.times = kernel_times(device, reset=True)
        disable(device)
