"""Dynamo's view of the vkml device: count, current device, synchronize, streams and events."""

from __future__ import annotations

import os
from collections import namedtuple
from typing import Any

import torch

_Props = namedtuple("VkmlProperties", ["name", "multi_processor_count", "total_memory"])


def _index(device: Any) -> int:
    if device is None:
        return torch.vkml.current_device()
    if isinstance(device, int):
        return device
    d = torch.device(device)
    return d.index if d.index is not None else torch.vkml.current_device()


def _properties(device: Any = None) -> _Props:
    p = torch.vkml.get_device_properties(_index(device))
    get = p.get if isinstance(p, dict) else (lambda k, default=None: getattr(p, k, default))
    # Vulkan reports no compute-unit count. Inductor splits a long reduction over few rows
    # until about this many workgroups run at once.
    units = (os.cpu_count() or 2) if str(get("type", "")).lower() == "cpu" else 128
    return _Props(get("name", "vkml"), units, get("total_memory", 0))


def make_interface(base: type) -> type:
    """The DeviceInterface subclass for vkml. Built from the base class that the caller passes,
    so that this module never imports torch._dynamo (it runs while Dynamo is importing)."""

    class VkmlInterface(base):
        device = torch.device  # type: ignore[assignment]
        Event = torch.Event  # type: ignore[assignment]
        Stream = torch.Stream  # type: ignore[assignment]

        class Worker:
            @staticmethod
            def set_device(device: int) -> None:
                torch.vkml.set_device(device)

            @staticmethod
            def current_device() -> int:
                return torch.vkml.current_device()

            @staticmethod
            def get_device_properties(device: Any = None) -> Any:
                return _properties(device)

        @staticmethod
        def current_device() -> int:
            return torch.vkml.current_device()

        @staticmethod
        def set_device(device: Any) -> None:
            torch.vkml.set_device(_index(device))

        @staticmethod
        def maybe_exchange_device(device: int) -> int:
            prev = torch.vkml.current_device()
            if device != prev:
                torch.vkml.set_device(device)
            return prev

        @staticmethod
        def exchange_device(device: int) -> int:
            return VkmlInterface.maybe_exchange_device(device)

        @staticmethod
        def device_count() -> int:
            return torch.vkml.device_count()

        @staticmethod
        def is_available() -> bool:
            return torch.vkml.is_available()

        @staticmethod
        def stream(stream: torch.Stream) -> Any:
            return torch.vkml.stream(stream)

        @staticmethod
        def current_stream() -> torch.Stream:
            return torch.vkml.current_stream()

        @staticmethod
        def set_stream(stream: torch.Stream) -> None:
            torch.vkml.set_stream(stream)

        @staticmethod
        def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
            pass  # one ordered queue per device: every stream is that queue

        @staticmethod
        def get_raw_stream(device_idx: int) -> int:
            return 0

        @staticmethod
        def synchronize(device: Any = None) -> None:
            torch.vkml.synchronize(device)

        @classmethod
        def get_device_properties(cls, device: Any = None) -> Any:
            return _properties(device)

        @staticmethod
        def get_compute_capability(device: Any = None) -> str:
            return ""

        @staticmethod
        def is_bf16_supported(including_emulation: bool = False) -> bool:
            return True

        @classmethod
        def is_dtype_supported(cls, dtype: torch.dtype, including_emulation: bool = False) -> bool:
            return dtype not in (torch.complex32, torch.complex64, torch.complex128)

        @staticmethod
        def memory_allocated(device: Any = None) -> int:
            return torch.vkml.memory_allocated(device)

        @staticmethod
        def is_triton_capable(device: Any = None) -> bool:
            return False

    return VkmlInterface
