"""Helpers the examples share: device selection, offline model folders, the fallback report."""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path

# Nothing may download at run time: transformers and huggingface_hub read these at import.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

import torch_vkml  # noqa: E402


def on_gpu() -> bool:
    """True when the first vkml device is a real GPU (not lavapipe): larger default sizes."""
    return torch_vkml.is_available() and torch_vkml.get_device_properties(0).type != "CPU"


def add_device_arg(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--device",
        default="vkml",
        help="vkml device to run on: vkml, vkml:1, ... (the CPU is always the reference)",
    )


def get_device(name: str) -> torch.device:
    if not torch_vkml.is_available():
        raise SystemExit(f"no vkml device: {torch_vkml._C.no_device_reason()}")
    dev = torch.device(name)
    if dev.type != "vkml":
        raise SystemExit(f"--device must be a vkml device, got {name!r}")
    index = dev.index if dev.index is not None else torch_vkml.current_device()
    props = torch_vkml.get_device_properties(index)
    print(f"vkml device {index}: {props.name} ({props.type}, {props.total_memory / 2**30:.1f} GiB)")
    return torch.device("vkml", index)


def staged_data() -> Path | None:
    """The folder scripts/stage_examples.py unpacked on a machine without the examples' pip and apt
    packages (VKML_EXAMPLES_DATA), or None: then the installed packages are used."""
    root = os.environ.get("VKML_EXAMPLES_DATA")
    if not root:
        return None
    if not Path(root).is_dir():
        raise SystemExit(f"VKML_EXAMPLES_DATA={root} is not a folder")
    return Path(root)


def package_dir(module: str, pip_name: str) -> Path:
    """Folder of a package, found without importing it (some import packages this machine lacks):
    the staged copy under $VKML_EXAMPLES_DATA/python when there is one, else the installed
    package."""
    staged = staged_data()
    if staged is not None and (staged / "python" / module).is_dir():
        return staged / "python" / module
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{pip_name} is not installed: run `make examples-setup`")
    return Path(spec.submodule_search_locations[0])


def report_fallbacks() -> dict[str, int]:
    """Prints which ops ran on the CPU instead of the vkml device; returns the counts."""
    stats = dict(torch_vkml.fallback_stats())
    if stats:
        print(f"CPU fallbacks ({sum(stats.values())} calls; these ops have no vkml kernel yet):")
        for op, count in sorted(stats.items(), key=lambda kv: -kv[1]):
            print(f"  {op}: {count}")
    else:
        print("CPU fallbacks: none (every op ran on the vkml device)")
    return stats


def move_by_one_ulp_(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Moves every weight by -1, 0 or +1 ulp at random (the size of one rounding error), in place:
    training from there shows how far two runs of the same precision drift apart."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            step = torch.randint(-1, 2, p.shape, generator=gen)
            toward = torch.where(step > 0, torch.inf, -torch.inf).to(p.dtype)
            p.copy_(torch.where(step == 0, p, torch.nextafter(p, toward)))
    return model


def check(ok: bool, what: str) -> bool:
    print(f"[{'PASS' if ok else 'FAIL'}] {what}")
    return ok
