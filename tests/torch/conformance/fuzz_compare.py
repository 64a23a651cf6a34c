"""How the fuzzer compares a value computed on vkml with the CPU's (tests/torch/conformance/fuzz_programs.py):
same dtype and shape, integers and bools exactly, floats within a per-dtype tolerance with NaN and
inf positions equal."""

from __future__ import annotations

import torch

# rtol and atol (atol scaled by the largest magnitude of the reference) per float dtype.
TOLERANCE = {torch.float32: 2e-4, torch.float16: 2e-2, torch.bfloat16: 5e-2}


def compare(ref: torch.Tensor, got: torch.Tensor, tol: float = 0.0) -> str | None:
    """None when got matches ref, else a description of the difference."""
    if got.dtype != ref.dtype:
        return f"dtype {got.dtype} != {ref.dtype}"
    if tuple(got.shape) != tuple(ref.shape):
        return f"shape {tuple(got.shape)} != {tuple(ref.shape)}"
    if ref.dtype not in TOLERANCE:
        if not torch.equal(got, ref):
            bad = (got != ref).nonzero()[:3].tolist()
            return f"integer values differ at {bad}"
        return None
    return float_mismatches(ref, got, tol)[1]


def float_mismatches(
    ref: torch.Tensor, got: torch.Tensor, tol: float
) -> tuple[torch.Tensor, str | None]:
    """The elements where got differs from ref (same shape and float dtype) and a description of
    the first kind of difference found (None when none)."""
    r, g = ref.double(), got.double()
    nan_r, nan_g = r.isnan(), g.isnan()
    inf_r, inf_g = r.isinf(), g.isinf()
    bad_nan = nan_r != nan_g
    bad_sign = inf_r & inf_g & (r != g)
    # Overflow is a threshold: a result within rounding of the largest finite value may land on
    # either side of it. Anything else is a real difference.
    one = (inf_r ^ inf_g) & ~(nan_r | nan_g)
    finite = torch.where(inf_r, g, r)
    overflow = (torch.sign(r) == torch.sign(g)) & (finite.abs() >= torch.finfo(ref.dtype).max / 2)
    bad_inf = one & ~overflow
    fin = ~(nan_r | nan_g | inf_r | inf_g)
    tol = max(tol, TOLERANCE[ref.dtype])
    atol = tol * max(1.0, float(r[fin].abs().max())) if fin.any() else 0.0
    excess = torch.where(fin, (g - r).abs() - (atol + tol * r.abs()), torch.zeros_like(r))
    bad_value = excess > 0
    msg = ""
    if bad_nan.any():
        msg = f"NaN positions differ ({int(nan_r.sum())} on CPU, {int(nan_g.sum())} on vkml)"
    elif bad_sign.any():
        msg = "inf signs differ"
    elif bad_inf.any():
        msg = f"inf positions differ ({int(inf_r.sum())} on CPU, {int(inf_g.sum())} on vkml)"
    elif bad_value.any():
        i = int(excess.flatten().argmax())
        gi, ri = float(g.flatten()[i]), float(r.flatten()[i])
        msg = f"value {gi} != {ri} (tolerance {tol}, scaled atol {atol:.3g})"
    return bad_nan | bad_sign | bad_inf | bad_value, msg or None
