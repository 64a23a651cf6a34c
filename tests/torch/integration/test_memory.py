"""Memory statistics, empty_cache and the out-of-memory path."""

import gc

import pytest
import torch

import torch_vkml


def test_stats_rise_and_return_to_baseline():
    gc.collect()
    torch_vkml.synchronize()
    torch_vkml.empty_cache()
    base_alloc = torch_vkml.memory_allocated()
    base_reserved = torch_vkml.memory_reserved()
    torch_vkml.reset_peak_memory_stats()
    tensors = [torch.empty(1 << 20, device="vkml") for _ in range(3)]
    assert torch_vkml.memory_allocated() >= base_alloc + 3 * (4 << 20)
    assert torch_vkml.memory_reserved() >= torch_vkml.memory_allocated()
    peak = torch_vkml.max_memory_allocated()
    assert peak >= torch_vkml.memory_allocated()
    stats = torch_vkml.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch_vkml.memory_allocated()
    del tensors
    assert torch_vkml.memory_allocated() == base_alloc
    assert torch_vkml.max_memory_allocated() == peak
    torch_vkml.empty_cache()
    assert torch_vkml.memory_reserved() == base_reserved
    free, total = torch_vkml.mem_get_info()
    assert 0 < free <= total
    if hasattr(torch, "accelerator") and hasattr(torch.accelerator, "memory_allocated"):
        assert torch.accelerator.memory_allocated() == torch_vkml.memory_allocated()
        torch.accelerator.empty_cache()


def test_out_of_memory_is_typed_and_recoverable():
    torch_vkml.empty_cache()
    reserved = torch_vkml.memory_reserved()
    torch_vkml.set_memory_limit(reserved + (32 << 20))
    try:
        keep = torch.empty(4 << 20, device="vkml")  # 16 MiB fits
        with pytest.raises(torch.OutOfMemoryError, match="tried to allocate 64.00 MiB"):
            torch.empty(16 << 20, device="vkml")
        with pytest.raises(torch.OutOfMemoryError, match="empty_cache"):
            torch.ones(40 << 20, device="vkml")
        del keep
    finally:
        torch_vkml.set_memory_limit(0)
    x = torch.ones(16 << 20, device="vkml")  # works again afterwards
    assert x[5].item() == 1.0
    del x
    # Larger than any buffer the device can create.
    with pytest.raises(torch.OutOfMemoryError):
        torch.empty(1 << 42, dtype=torch.uint8, device="vkml")
    assert torch_vkml.memory_stats()["num_ooms"] >= 3
    y = torch.zeros(1000, device="vkml")
    assert torch.equal(y.cpu(), torch.zeros(1000))
