"""The torch release the extension was built against, checked before `_C` loads: under another
release, `_C` would fail with an undefined-symbol error that names neither version."""

from __future__ import annotations

import torch


def _release(version: str) -> str:
    # "2.13.0+cpu" and "2.13.0+cu128" share the C++ API; the local part names the wheel's flavour.
    return version.split("+", 1)[0]


def check_torch_version() -> None:
    try:
        from ._build_info import TORCH_VERSION as built
    except ImportError:  # a tree whose build wrote no _build_info.py: nothing to compare
        return
    running = torch.__version__
    if _release(built) != _release(running):
        raise ImportError(
            f"torch_vkml was built against torch {built}, but torch {running} is installed. "
            f"Install torch {_release(built)}, or rebuild torch_vkml against this torch "
            f"(pip install --no-build-isolation . in its source tree, or `make build`).")
