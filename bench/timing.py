"""Shared timing and reporting for the benchmark suite (bench_ops.py, bench_models.py).

Every figure is the median of timed samples after warm-up. A sample runs the workload `inner`
times and then synchronises the device, so the host round trip is spread over several calls.
The reference backend is CUDA when present (same GPU, same process), else the CPU.

torch_vkml is imported only when a vkml workload runs: a reference-only child process
(set_reference_only) must never load it, since CUDA backward passes fail PyTorch's autograd stream
assertion in a process where a PrivateUse1 backend is registered (pytorch/pytorch#161129).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch

_reference_only = False
_warmup_seconds: float | None = None


def set_reference_only(on: bool) -> None:
    """Marks this process as a reference-only child: vkml is neither loaded nor timed."""
    global _reference_only
    _reference_only = on


def set_warmup_seconds(seconds: float | None) -> None:
    """The least warm-up per measurement; None restores the default (see warmup_seconds)."""
    global _warmup_seconds
    _warmup_seconds = seconds


def add_timing_args(ap: argparse.ArgumentParser) -> None:
    """The options every benchmark script shares; apply them with apply_timing_args."""
    ap.add_argument("--warmup-seconds", type=float, default=None, metavar="S",
                    help="least warm-up per measurement, counted after the first call "
                    "(default: 1 on GPUs, 0 on CPU devices)")


def apply_timing_args(args: argparse.Namespace) -> None:
    set_warmup_seconds(args.warmup_seconds)


def _vkml():
    import torch_vkml  # registers the vkml device

    return torch_vkml


def sync_for(device: str) -> Callable[[], None]:
    if device.startswith("vkml"):
        return _vkml().synchronize
    if device.startswith("cuda"):
        return torch.cuda.synchronize
    return lambda: None


def cpu_device() -> bool:
    """True when the vkml device is a CPU implementation (lavapipe): benchmarks shrink."""
    if _reference_only:
        return False
    name = _vkml().device_name().lower()
    return "llvmpipe" in name or "lavapipe" in name or "swiftshader" in name


def reference_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def warmup_seconds() -> float:
    """How long warm-up lasts at least. A GPU that idled, or ran new pipelines, runs its first
    fraction of a second of work slowly while its clocks ramp up, so a few calls are not enough
    there; CPU devices (lavapipe) need none. Measurements: docs/design/submission.md."""
    if _warmup_seconds is not None:
        return _warmup_seconds
    return 0.0 if cpu_device() else 1.0


def warm_up(fn: Callable[[], object], sync: Callable[[], None], calls: int,
            seconds: float | None = None) -> None:
    """At least `calls` calls, and at least `seconds` of them after the first (warmup_seconds()
    unless given)."""
    seconds = warmup_seconds() if seconds is None else seconds
    start = None
    done = 0
    while done < calls or start is None or time.perf_counter() - start < seconds:
        fn()
        sync()
        done += 1
        # The clock starts after the first call: that one may build pipelines for seconds while
        # the GPU idles and its clocks fall, and calls timed right after it run slowly.
        if start is None:
            start = time.perf_counter()


def median_seconds(fn: Callable[[], object], device: str, warmup: int = 3, repeat: int = 10,
                   inner: int = 1, min_seconds: float = 0.3, max_samples: int = 50) -> float:
    """Median seconds per call of fn on device (after warm_up)."""
    sync = sync_for(device)
    warm_up(fn, sync, warmup)
    samples: list[float] = []
    start = time.perf_counter()
    while len(samples) < repeat or (
        time.perf_counter() - start < min_seconds and len(samples) < max_samples
    ):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def diagnose_round(fn: Callable[[], object], calls: int, top: int = 0) -> str:
    """Where a vkml workload's time goes, in one line: per-call wall time (min/median/max, each
    call synchronised), host recording time (before the wait), the time per call of back-to-back
    calls with one wait, the GPU time of one call (kernels timed alone by the profiler), and
    device allocations, submissions and dispatches per call. top > 0 adds the profile's top
    kernels. A slow state with high GPU time points at the GPU; with normal GPU time, at the
    host."""
    from torch_vkml import _C, profiler

    def counters() -> tuple[int, int, int]:
        st = _C.stream_stats(0)
        return torch.vkml.memory_stats()["num_device_alloc"], st["submissions"], st["dispatches"]

    a0, s0, d0 = counters()
    samples, host = [], []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        host.append((time.perf_counter() - t0) * 1e3)  # recording alone, before the wait
        torch.vkml.synchronize()
        samples.append((time.perf_counter() - t0) * 1e3)
    a1, s1, d1 = counters()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.vkml.synchronize()
    batched = (time.perf_counter() - t0) * 1e3 / calls
    with profiler.profile() as prof:
        fn()
        torch.vkml.synchronize()
    gpu = sum(ns for _, ns in prof.times.values()) / 1e6
    line = (f"wall min {min(samples):7.3f} med {statistics.median(samples):7.3f} "
            f"max {max(samples):7.3f} host {statistics.median(host):6.3f} | batched {batched:7.3f} "
            f"| gpu {gpu:7.3f} | allocs {a1 - a0:3d} submits/call {(s1 - s0) / calls:5.1f} "
            f"dispatches/call {(d1 - d0) / calls:5.1f}")
    return line + ("\n" + prof.table(top) if top else "")


@dataclass
class Result:
    """One benchmark row: vkml and the reference backend on the same workload."""

    group: str
    name: str
    unit: str  # what `work` counts per call: "GB" (bytes moved), "TFLOP", or "" (time only)
    work: float
    vkml_ms: float
    ref_ms: float | None
    ref_device: str
    extra: dict = field(default_factory=dict)

    def rate(self, ms: float | None) -> float | None:
        if ms is None or not self.unit or ms <= 0:
            return None
        return self.work / (ms / 1e3)

    @property
    def ratio(self) -> float | None:
        """vkml speed over the reference's (1.0 = as fast; > 1 faster)."""
        if self.ref_ms is None or self.vkml_ms <= 0:
            return None
        return self.ref_ms / self.vkml_ms

    def line(self) -> str:
        def fmt(ms: float | None) -> str:
            if ms is None:
                return f"{'-':>10} {'':>9}"
            r = self.rate(ms)
            rate = f"{r:9.1f}" if r is not None else f"{'':>9}"
            return f"{ms:10.3f} {rate}"

        ratio = f"{self.ratio:8.2f}" if self.ratio is not None else f"{'-':>8}"
        return f"{self.group:>8} {self.name:<34} {fmt(self.vkml_ms)} {fmt(self.ref_ms)} {ratio}"


def header(ref: str) -> str:
    unit = "rate"
    return (f"{'group':>8} {'benchmark':<34} {'vkml ms':>10} {unit:>9} {ref + ' ms':>10} "
            f"{unit:>9} {'vkml/' + ref:>8}   (rate: GB/s, TFLOP/s or tokens/s; ratio > 1 means "
            "vkml faster)")


def reference_only() -> bool:
    """True in a child process that times the reference backend alone (no vkml loaded)."""
    return _reference_only


def compare(group: str, name: str, unit: str, work: float, make: Callable[[str], Callable],
            ref: str | None, inner: int = 1, extra: dict | None = None,
            ref_ms: float | None = None, **kw) -> Result:
    """Builds the workload on vkml and on the reference device and times both. A given ref_ms
    (timed by a child process) replaces the reference run; a reference-only child skips vkml."""
    vk_ms = 0.0 if reference_only() else median_seconds(make("vkml"), "vkml", inner=inner, **kw) * 1e3
    if ref_ms is None and ref:
        ref_ms = median_seconds(make(ref), ref, inner=inner, **kw) * 1e3
    r = Result(group, name, unit, work, vk_ms, ref_ms, ref or "", extra or {})
    print(r.line(), flush=True)
    return r


def environment() -> dict:
    info = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "torch": torch.__version__,
    }
    if not _reference_only:
        info["vkml_device"] = _vkml().device_name()
    if torch.cuda.is_available():
        info["cuda_device"] = torch.cuda.get_device_name()
    return info


def save(path: str, results: list[Result]) -> None:
    with open(path, "w") as f:
        json.dump({"environment": environment(), "results": [asdict(r) for r in results]}, f,
                  indent=1)
