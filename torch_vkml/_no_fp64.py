"""Two places in PyTorch's Python that widen a device tensor to float64, for vkml devices without
fp64 arithmetic (which refuse float64 tensors, as MPS does). PyTorch takes float32 there on MPS
(and, for printing, on XPU devices without fp64); vkml devices without fp64 get the same float32
path. Every other device, and vkml devices with fp64, keep PyTorch's code unchanged.

- Printing (torch._tensor_str.tensor_totype): the formatter's extrema in float32. They are the
  float32 values themselves, so the printed text is the same.
- torch.amp.GradScaler.unscale_: the inverse scale as float32 reciprocal instead of
  scale.double().reciprocal().float(). Both are the correctly rounded reciprocal of the float32
  scale: vkml's float32 division rounds correctly, and a quotient of floats rounded first to double
  and then to float rounds as if rounded once (53 >= 2 * 24 + 2 bits).
"""

from __future__ import annotations

from typing import Any

import torch
import torch._tensor_str
from torch.amp.grad_scaler import GradScaler, OptState

from . import _C


def lacks_fp64(device: torch.device) -> bool:
    """Whether `device` is a vkml device without fp64 arithmetic."""
    return device.type == "vkml" and not bool(_C.device_properties(device.index or 0)["fp64"])


_torch_tensor_totype = torch._tensor_str.tensor_totype


def _tensor_totype(t: torch.Tensor) -> torch.Tensor:
    if lacks_fp64(t.device):
        return t.to(dtype=torch.float)
    return _torch_tensor_totype(t)


_torch_unscale = GradScaler.unscale_


def _unscale_(self: GradScaler, optimizer: torch.optim.Optimizer) -> None:
    if not self._enabled or self._scale is None or not lacks_fp64(self._scale.device):
        _torch_unscale(self, optimizer)
        return
    # PyTorch's unscale_ with its MPS branch for the inverse scale.
    self._check_scale_growth_tracker("unscale_")
    state: dict[str, Any] = self._per_optimizer_states[id(optimizer)]
    if state["stage"] is OptState.UNSCALED:
        raise RuntimeError(
            "unscale_() has already been called on this optimizer since the last update().")
    if state["stage"] is OptState.STEPPED:
        raise RuntimeError("unscale_() is being called after step().")
    inv_scale = self._scale.reciprocal()
    found_inf = torch.full((), 0.0, dtype=torch.float32, device=self._scale.device)
    state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
    state["stage"] = OptState.UNSCALED


def install() -> None:
    torch._tensor_str.tensor_totype = _tensor_totype
    GradScaler.unscale_ = _unscale_
