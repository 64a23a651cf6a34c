"""The `torch.vkml` device module: devices, synchronisation, RNG state, memory, capabilities."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from . import _C

_initial_seeds: dict[int, int] = {}


def _index(device: Any = None) -> int:
    """Normalises None, an int, a string or a torch.device to a vkml device index."""
    if device is None:
        return _C.current_device()
    if isinstance(device, int):
        index = device
    else:
        device = torch.device(device)
        if device.type != "vkml":
            raise ValueError(f"expected a vkml device, got {device}")
        index = device.index if device.index is not None else _C.current_device()
    count = _C.device_count()
    if not 0 <= index < count:
        raise IndexError(f"vkml: invalid device index {index}; {count} vkml device(s) available")
    return index


# ---- devices -------------------------------------------------------------------------------------
def is_available() -> bool:
    return _C.device_count() > 0


def device_count() -> int:
    return _C.device_count()


def current_device() -> int:
    return _C.current_device()


def set_device(device: Any) -> None:
    _C.set_device(_index(device))


def device(device_id: int | None = None) -> torch.device:
    """The torch.device for vkml device `device_id` (torch-directml's `device()`)."""
    return torch.device("vkml", _index(device_id))


def default_device() -> int:
    """Index of the default device: the first in vkml's order (discrete GPUs first)."""
    if not is_available():
        raise RuntimeError(f"vkml: no Vulkan device: {_C.no_device_reason()}")
    return 0


def device_name(device_id: int | None = None) -> str:
    return _C.device_properties(_index(device_id))["name"]


def synchronize(device: Any = None) -> None:
    _C.synchronize(_index(device))


def is_initialized() -> bool:
    return True


def init() -> None:
    pass


def _is_in_bad_fork() -> bool:
    return False


# ---- streams and events -------------------------------------------------------------------------
# Every stream of a vkml device is the device's one ordered queue (guard.cpp): these are torch's
# generic Stream and Event bound to vkml, for code written against torch.cuda's API (FSDP).
class Stream(torch.Stream):
    def __new__(cls, device: Any = None, priority: int = 0, **kwargs: Any) -> Stream:
        return super().__new__(cls, device=torch.device("vkml", _index(device)), priority=priority)


class Event(torch.Event):
    def __new__(cls, enable_timing: bool = False, blocking: bool = False,
                interprocess: bool = False) -> Event:
        return super().__new__(cls, device=torch.device("vkml", current_device()),
                               enable_timing=enable_timing, blocking=blocking,
                               interprocess=interprocess)


def current_stream(device: Any = None) -> torch.Stream:
    return torch.accelerator.current_stream(torch.device("vkml", _index(device)))


def default_stream(device: Any = None) -> torch.Stream:
    return current_stream(device)


@contextlib.contextmanager
def stream(s: torch.Stream | None) -> Iterator[None]:
    """Makes `s` current inside the block (a no-op for None, as torch.cuda.stream)."""
    if s is None:
        yield
        return
    with s:
        yield


def set_stream(s: torch.Stream) -> None:
    torch.accelerator.set_stream(s)


# record_stream tells a caching allocator that another stream uses a block; vkml's streams of one
# device are one queue, so there is nothing to record.
_stream_lib = torch.library.Library("aten", "IMPL")
_stream_lib.impl("record_stream", lambda self, s: None, "PrivateUse1")


# ---- capabilities --------------------------------------------------------------------------------
class DeviceProperties:
    """What torch.vkml.get_device_properties returns: name, total_memory, vendor, driver, caps."""

    def __init__(self, props: dict) -> None:
        self.__dict__.update(props)

    def __repr__(self) -> str:
        return (f"_VkmlDeviceProperties(name='{self.name}', type='{self.type}', "
                f"total_memory={self.total_memory // 2**20}MB, driver='{self.driver_name} "
                f"{self.driver_version}', fp16={self.fp16}, bf16={self.bf16}, fp64={self.fp64}, "
                f"cooperative_matrix={self.cooperative_matrix})")


def get_device_properties(device: Any = None) -> DeviceProperties:
    return DeviceProperties(_C.device_properties(_index(device)))


def has_float64_support(device_id: int | None = None) -> bool:
    return bool(_C.device_properties(_index(device_id))["fp64"])


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bf16 tensors work everywhere (stored as bf16, computed in fp32); native bf16 math when
    including_emulation is False."""
    if not is_available():
        return False
    return including_emulation or bool(_C.device_properties(current_device())["bf16"])


def gpu_memory(device_id: int | None = None, mb_per_tile: int = 1) -> list[float]:
    """torch-directml compatible: memory in use on the device, in units of `mb_per_tile` MB."""
    used = _C.memory_stats(_index(device_id))["reserved_bytes.all.current"]
    return [used / (mb_per_tile * 2**20)]


def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16]


# ---- random numbers ------------------------------------------------------------------------------
def _generator(device: Any = None) -> torch.Generator:
    return _C.default_generator(_index(device))


def manual_seed(seed: int) -> None:
    seed = int(seed)
    if not is_available():
        return
    _generator().manual_seed(seed)
    _initial_seeds[current_device()] = seed


def manual_seed_all(seed: int) -> None:
    seed = int(seed)
    for i in range(device_count()):
        _generator(i).manual_seed(seed)
        _initial_seeds[i] = seed


def seed() -> int:
    s = _generator().seed()
    _initial_seeds[current_device()] = s
    return s


def seed_all() -> None:
    for i in range(device_count()):
        _initial_seeds[i] = _generator(i).seed()


def initial_seed() -> int:
    return _generator().initial_seed()


def get_rng_state(device: Any = "vkml") -> torch.Tensor:
    return _generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: Any = "vkml") -> None:
    _generator(device).set_state(new_state.cpu())


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states: list[torch.Tensor]) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---- memory --------------------------------------------------------------------------------------
def memory_stats(device: Any = None) -> dict[str, int]:
    return dict(_C.memory_stats(_index(device)))


def memory_allocated(device: Any = None) -> int:
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: Any = None) -> int:
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: Any = None) -> int:
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: Any = None) -> int:
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: Any = None) -> None:
    _C.reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    for i in range(device_count()):
        _C.empty_cache(i)


def host_memory_stats(device: Any = None) -> dict[str, int]:
    """Pinned host memory of the device (tensor.pin_memory(), torch.empty(pin_memory=True)):
    live and cached bytes, blocks, and the copies recorded to or from it."""
    return dict(_C.host_memory_stats(_index(device)))


def empty_host_cache() -> None:
    """Waits for each device's stream, then frees its cached pinned host blocks."""
    for i in range(device_count()):
        _C.empty_host_cache(i)


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of device memory, from the driver's budget where it reports one."""
    return tuple(_C.mem_get_info(_index(device)))


def set_memory_limit(limit_bytes: int, device: Any = None) -> None:
    """Caps memory vkml may reserve on the device (0 removes the cap); like CUDA's memory fraction."""
    _C.set_memory_limit(_index(device), int(limit_bytes))


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    total = get_device_properties(device).total_memory
    set_memory_limit(int(total * fraction), device)


# ---- fallback accounting -------------------------------------------------------------------------
def fallback_stats() -> dict[str, int]:
    """Op name -> number of calls that ran on the CPU because vkml lacks a kernel."""
    return dict(_C.fallback_stats())


def reset_fallback_stats() -> None:
    _C.reset_fallback_stats()
