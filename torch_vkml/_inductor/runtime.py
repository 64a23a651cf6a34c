"""Run-time side of generated kernels: background compilation and launch.

`async_compile_vkml(name, source, meta)` runs at import of Inductor's output module. It hands the
GLSL to a worker thread (glslang, or the SPIR-V disk cache, then the pipeline build) and returns
a launcher at once; the launcher waits for its compile on the first call."""

from __future__ import annotations

import concurrent.futures
import hashlib
import os

import torch

_pool: concurrent.futures.ThreadPoolExecutor | None = None


class VkmlCompileError(RuntimeError):
    """A generated kernel did not compile; the message holds glslang's log and the source."""


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, min(4, (os.cpu_count() or 2) - 1)),
            thread_name_prefix="vkml-compile")
    return _pool


def _compile(shader: str, source: str, workgroup: int, device: int) -> int:
    try:
        return torch.ops.vkml_inductor.compile(shader, source, device, workgroup)
    except RuntimeError as e:
        raise VkmlCompileError(str(e)) from None


def compile_stats() -> dict[str, int]:
    """glslang runs and SPIR-V disk-cache hits in this process."""
    compiles, hits, available = torch.ops.vkml_inductor.stats()
    return {"compiles": compiles, "disk_hits": hits, "available": available}


class VkmlKernelLauncher:
    """Calls one generated kernel: kernel(tensors..., sizes..., numels...)."""

    created = 0  # launchers made in this process (tests check that kernels were generated)

    def __init__(self, name: str, source: str, meta: dict):
        VkmlKernelLauncher.created += 1
        self.name = name
        self.source = source
        self.n_tensors = meta["tensors"]
        self.written = meta["written"]
        self.reduction = meta["reduction"]
        self.workgroup = meta["workgroup"]
        self.outer = meta["outer"]
        self.n_sizes = meta["sizes"]
        # The shader's name carries its source hash: one pipeline per distinct source.
        self.shader = "inductor_" + hashlib.sha1(source.encode()).hexdigest()[:20]
        device = torch.vkml.current_device() if torch.vkml.device_count() else -1
        self._future = _executor().submit(_compile, self.shader, source, self.workgroup, device)
        self._ready = False

    def wait(self) -> None:
        if not self._ready:
            self._future.result()  # raises VkmlCompileError with the source
            self._ready = True

    def __call__(self, *args):
        if not self._ready:
            self.wait()
        tensors = args[: self.n_tensors]
        ints = [int(a) for a in args[self.n_tensors:]]
        numels = ints[self.n_sizes:]
        rows = 1
        for i in self.outer:
            rows *= numels[i]
        if rows == 0:
            return
        groups = rows if self.reduction else -(-rows // self.workgroup)
        torch.ops.vkml_inductor.launch(self.shader, list(tensors), self.written, ints,
                                       groups, self.workgroup)


def async_compile_vkml(name: str, source: str, meta: dict) -> VkmlKernelLauncher:
    return VkmlKernelLauncher(name, source, meta)


class device_guard:
    """`with device_guard(i):` makes vkml device i current for the block (the wrapper's guard)."""

    def __init__(self, index: int):
        self.index = index

    def __enter__(self):
        self.prev = torch.vkml.current_device()
        if self.prev != self.index:
            torch.vkml.set_device(self.index)

    def __exit__(self, *exc):
        if self.prev != self.index:
            torch.vkml.set_device(self.prev)
        return False
