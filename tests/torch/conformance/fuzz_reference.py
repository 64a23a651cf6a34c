"""The fuzzer's CPU reference put to GPU semantics where PyTorch leaves them open or the CPU is
itself inconsistent (tests/torch/conformance/fuzz_programs.py): each rule names the seed that needs it and,
where known, what CUDA does."""

from __future__ import annotations

from collections.abc import Callable

import torch

# The device name under which a step runs on the CPU with every float in float64: the reference
# against which the CPU's own rounding is measured (second_look).
F64_REF = "cpu-float64"


def zero_dim_as_on_a_gpu(x, y, device):
    """On a GPU a 0-dim tensor is an ordinary operand: CUDA and vkml convert a 0-dim float of
    another dtype to the other operand's f16/bf16 before the op, where the CPU's mul and div read
    it at float precision (its CPU-scalar path). CUDA and vkml agree bit for bit here; the CPU
    reference rounds it the same way. An integer 0-dim operand is converted the same way (seed
    408309560595: an int64 product too large for fp16 is inf on CUDA and vkml, so 0 * it is NaN;
    the CPU's mul reads it at float precision: 0)."""
    if not str(device).startswith("cpu"):
        return x, y

    def rounded(s, t):
        if (
            s.dim() == 0
            and t.dim() > 0
            and t.dtype in (torch.float16, torch.bfloat16)
            and s.dtype != t.dtype
            and (s.is_floating_point() or s.dtype != torch.bool)
        ):
            return s.to(t.dtype)
        return s

    return rounded(x, y), rounded(y, x)


def ieee_signed_zero(name: str, op: Callable, device) -> Callable:
    """The CPU's maximum/minimum of -0 and +0 depends on its vector or scalar path (seed
    749260328855: one tensor, both signs). vkml follows IEEE 754-2019 (max gives +0, min gives -0,
    in any order); the reference is put the same way, since a later atan2 or division turns the
    sign into a jump."""
    if name not in ("maximum", "minimum", "amax", "amin") or not str(device).startswith("cpu"):
        return op

    def canonical(*args, **kwargs):
        out = op(*args, **kwargs)
        if not out.is_floating_point() or not (out == 0).any():
            return out
        x = args[0]
        if name in ("amax", "amin"):  # amax: +0 if any +0 was reduced; amin: -0 if any -0
            sign_wanted = ~x.signbit() if name == "amax" else x.signbit()
            dim = kwargs.get("dim")
            dims = list(range(x.dim())) if dim is None else dim
            keep = kwargs.get("keepdim", False)
            has = (
                ((x == 0) & sign_wanted).to(torch.int32).amax(dims, keepdim=keep) > 0
                if x.numel()
                else torch.zeros_like(out, dtype=torch.bool)
            )
            has = has if name == "amax" else ~has
        else:
            a, b = torch.broadcast_tensors(*(torch.as_tensor(v) for v in args[:2]))
            has = (
                ~(a.signbit() & b.signbit()) if name == "maximum" else ~(a.signbit() | b.signbit())
            )
        return torch.where(out == 0, torch.where(has, 0.0, -0.0).to(out.dtype), out)

    return canonical


def exact_prod(x: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> torch.Tensor:
    """The float64 reference of prod: the product's magnitude summed in logs, so no partial
    product over- or underflows on its way to a representable result (as float32 ones do, in an
    order that differs between devices: fuzz seed 3024235, 300 integers from -50 to 50 with
    zeros, is NaN on the CPU and 0 on vkml)."""
    if dim is None:
        return exact_prod(x.reshape(-1), 0)
    if not x.is_floating_point():
        return torch.prod(x, dim=dim, keepdim=keepdim)
    x = x.double()
    nan = x.isnan().any(dim, keepdim) | (x.isinf().any(dim, keepdim) & (x == 0).any(dim, keepdim))
    magnitude = torch.where(
        (x == 0).any(dim, keepdim), 0.0, x.abs().log().sum(dim, keepdim=keepdim).exp()
    )
    negative = x.signbit().sum(dim, keepdim=keepdim) % 2 == 1
    return torch.where(nan, float("nan"), torch.where(negative, -magnitude, magnitude))


def matmul_ref(x, y, device):
    """x @ y; on the CPU, half types are multiplied in float32 and rounded once (what vkml does):
    the CPU's own bf16 GEMM packs rows in pairs, so a NaN in one row turned its neighbour into
    NaN too (fuzz seed 1024924173079)."""
    if device == "cpu" and x.dtype in (torch.float16, torch.bfloat16):
        return (x.float() @ y.float()).to(x.dtype)
    return x @ y
