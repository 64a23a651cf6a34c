"""Shared fixtures: torch_vkml is imported before PyTorch's test machinery, and every test fails
if the Vulkan validation layer reported anything while it ran."""

import pytest
import torch

import torch_vkml  # noqa: F401  (registers the device before anything else looks)

# A missing kernel fails the test unless the environment asked for another policy.
if torch_vkml.config.source("VKML_FALLBACK") == "default":
    torch_vkml.config.set("VKML_FALLBACK", "error")


@pytest.fixture(autouse=True)
def _no_validation_messages():
    before = torch_vkml._C.validation_message_count()
    yield
    if torch_vkml.is_available():
        torch_vkml.synchronize()
    after = torch_vkml._C.validation_message_count()
    assert after == before, f"{after - before} Vulkan validation message(s); see stderr"


class ConfigSetter:
    """Sets vkml settings for one test; the fixture restores them afterwards."""

    def __init__(self):
        self._stack = []

    def set(self, name, value):
        """Sets ``name`` (a VKML_* setting) to ``value``; None restores its default."""
        cm = torch_vkml.config.override(**{name: value})
        cm.__enter__()
        self._stack.append(cm)

    def undo(self):
        while self._stack:
            self._stack.pop().__exit__(None, None, None)


@pytest.fixture
def vkml_config():
    """`vkml_config.set("VKML_CONV", "im2col")`: a setting for this test only."""
    setter = ConfigSetter()
    yield setter
    setter.undo()


@pytest.fixture
def fallback(vkml_config):
    """Runs a test under VKML_FALLBACK=warn with fresh counters."""
    vkml_config.set("VKML_FALLBACK", "warn")
    torch_vkml.reset_fallback_stats()
    yield
    torch_vkml.reset_fallback_stats()


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(1234)
