"""vkml's settings (the ``VKML_*`` variables), read once from the environment.

    torch_vkml.config.get("VKML_CONV")                 # current value, as text
    with torch_vkml.config.override(VKML_CONV="im2col"):
        ...                                            # the old value and source come back after

A bad value raises ``ValueError`` naming the setting and the values it takes. ``entries()`` lists
every setting with its value, default, tier and where the value came from (default, environment
or override); docs/configuration.md is generated from the same registry.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from . import _C


def entries() -> list[dict]:
    """Every setting: name, value, default, kind, allowed, tier, source, help."""
    return list(_C.config_entries())


def get(name: str) -> str:
    """The current value of setting ``name`` as text."""
    for e in _C.config_entries():
        if e["name"] == name:
            return e["value"]
    raise ValueError(f"vkml: unknown setting '{name}'")


def source(name: str) -> str:
    """Where the value of ``name`` came from: "default", "environment" or "override"."""
    for e in _C.config_entries():
        if e["name"] == name:
            return e["source"]
    raise ValueError(f"vkml: unknown setting '{name}'")


def set(name: str, value: str | int | bool | None) -> None:  # noqa: A001  (module-level setter)
    """Sets ``name`` for the rest of the process (``None`` restores its default)."""
    _C.config_set(name, _text(value))


@contextlib.contextmanager
def override(**values: str | int | bool | None) -> Iterator[None]:
    """Sets each ``VKML_NAME=value`` for the ``with`` block, then restores value and source."""
    saved = {e["name"]: e for e in _C.config_entries()}
    applied = []
    try:
        for name, value in values.items():
            if name not in saved:
                raise ValueError(f"vkml: unknown setting '{name}'")
            _C.config_set(name, _text(value))
            applied.append(name)
        yield
    finally:
        for name in reversed(applied):
            _C.config_restore(name, saved[name]["value"], saved[name]["source"])


def markdown() -> str:
    """The registry as the Markdown page docs/configuration.md holds."""
    return _C.config_markdown()


def _text(value: str | int | bool | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)
