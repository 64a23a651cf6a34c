"""Shared fixtures: torch_vkml is imported before PyTorch's test machinery, and every test fails
if the Vulkan validation layer reported anything while it ran."""

import os

import pytest
import torch

import torch_vkml  # noqa: F401  (registers the device before anything else looks)

os.environ.setdefault("VKML_FALLBACK", "error")


@pytest.fixture(autouse=True)
def _no_validation_messages():
    before = torch_vkml._C.validation_message_count()
    yield
    if torch_vkml.is_available():
        torch_vkml.synchronize()
    after = torch_vkml._C.validation_message_count()
    assert after == before, f"{after - before} Vulkan validation message(s); see stderr"


@pytest.fixture
def fallback(monkeypatch):
    """Runs a test under VKML_FALLBACK=warn with fresh counters."""
    monkeypatch.setenv("VKML_FALLBACK", "warn")
    torch_vkml.reset_fallback_stats()
    yield
    torch_vkml.reset_fallback_stats()


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(1234)
