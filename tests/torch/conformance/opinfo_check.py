"""Runs one PyTorch OpInfo entry on vkml against the CPU, for one dtype.

Shared by the full sweep (scripts/opinfo_sweep.py, `make opinfo`) and the CI regression subset
(tests/torch/conformance/test_opinfo.py). Statuses:
  pass        every sample matched the CPU (forward; gradients for float32 where the op has them);
              elements off by more than the tolerance pass only where vkml is within twice the
              CPU's own largest error against the same sample computed in float64 (the CPU's
              rounding, summation order); float64 J/Y/Airy, where the CPU's kernels are less
              accurate than the tolerance, are judged against mpmath (noted in the reason)
  fails       a mismatch or an unexpected error, with the first reason
  not_native  the op (or one it decomposes into) has no vkml kernel (VKML_FALLBACK=error raised),
              or its vkml kernel has no complex path (PyTorch's "not implemented for" error
              where the CPU computes the sample)
  skipped     PyTorch itself marks this case unsupported, or the op is random / uninitialised
"""

from __future__ import annotations

import os

import torch
from torch.utils._pytree import tree_flatten, tree_map

import torch_vkml  # noqa: F401

# Verdicts need a missing kernel to raise, whatever the environment says.
torch_vkml.config.set("VKML_FALLBACK", "error")

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.uint8,
          torch.int16, torch.int32, torch.int64, torch.bool, torch.complex64]
DTYPE_NAMES = {d: str(d).replace("torch.", "") for d in DTYPES}

# Tolerances against the CPU computing in the same dtype. Slightly looser than assert_close's
# defaults for floats, since GPU transcendental functions differ from the CPU's by a few ulp.
TOLERANCES = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-7, 1e-7),
              torch.float16: (2e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2),
              torch.complex64: (1e-5, 1e-5), torch.complex128: (1e-7, 1e-7)}

# Ops whose values are random or uninitialised: only shapes could be compared.
NONDETERMINISTIC = ("empty", "new_empty", "empty_like", "empty_strided", "new_empty_strided",
                    "normal", "bernoulli", "rand", "randn", "randint", "uniform", "multinomial",
                    "dropout", "randperm", "exponential", "geometric", "cauchy", "log_normal",
                    "nn.functional.dropout", "nn.functional.rrelu", "nn.functional.alpha_dropout",
                    "nn.functional.feature_alpha_dropout", "rand_like", "randn_like",
                    "randint_like", "bernoulli", "normal.in_place", "hash_tensor",
                    "nn.functional.dropout2d", "nn.functional.dropout3d",
                    "svd_lowrank")  # svd_lowrank: random projections drawn on the device

# Samples that draw random numbers (dropout while training): vkml's generator is not the CPU's.
RANDOM_SAMPLES = {
    "nn.functional.multi_head_attention_forward":
        lambda s: bool(s.kwargs.get("training", True)) and s.args[9] > 0,
    "nn.functional.scaled_dot_product_attention": lambda s: s.kwargs.get("dropout_p", 0.0) > 0,
}

# Cases whose meaning depends on storage outside the view, which moving a sample cannot keep.
STORAGE_DEPENDENT = ("as_strided.partial_views", "as_strided_scatter")

# Ops whose index arguments must stay on the CPU (PyTorch requires it).
CPU_INDEX_ARGS = ("tensor_split",)

MAX_SAMPLES = int(os.environ.get("VKML_OPINFO_SAMPLES", "12"))


def op_key(op) -> str:
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def _to_vkml(x):
    if isinstance(x, torch.Tensor):
        y = x.detach().to("vkml")
        return y.requires_grad_(x.requires_grad)
    return x


def _to_cpu(x):
    return x.detach().cpu() if isinstance(x, torch.Tensor) else x


def _is_fallback_error(e: BaseException) -> bool:
    """No vkml kernel, or a dtype vkml does not support (complex, uint16/32/64)."""
    msg = str(e)
    return isinstance(e, NotImplementedError) and (
        "has no vkml kernel" in msg or "is not supported on vkml devices" in msg
        or msg.startswith("vkml:") or "Sparse" in msg)


def _is_missing_complex_kernel(e: BaseException) -> bool:
    """A vkml kernel without a complex path raising, as PyTorch's dtype dispatch does, where the
    CPU computes the same sample: no vkml kernel for that dtype, not a wrong result."""
    return isinstance(e, NotImplementedError) and "not implemented for 'Complex" in str(e)


def _fallback_reason(e: BaseException) -> str:
    msg = str(e)
    if "is not supported on vkml devices" in msg:
        return msg.split("vkml: ")[-1].split(" is not supported")[0] + " unsupported"
    if "has no vkml kernel" in msg:
        return " ".join(msg.split("'")[1:2]) or "fallback"
    if "Sparse" in msg:
        return "sparse tensors are not supported"
    if "not implemented for 'Complex" in msg:
        return " ".join(msg.split('"')[1:2]) + " has no complex kernel"
    return " ".join(msg.split())[:120]


# Ops whose indices among equal values are unspecified (the CPU's default sort, topk, kthvalue
# and mode are not stable): (position of dim in the args, whether the op takes keepdim).
TIE_INDEX_OPS = {"sort": (0, False), "argsort": (0, False), "topk": (1, False),
                 "kthvalue": (1, True), "mode": (0, True)}


def _values_at_indices(op, sample, actual, expected):
    """For TIE_INDEX_OPS: index outputs replaced by the input values they select, so an index
    is right when it points at a value equal to the CPU's choice (values still match exactly)."""
    pos, has_keepdim = TIE_INDEX_OPS[op.name]
    args, kwargs = sample.args, sample.kwargs
    dim = kwargs.get("dim", args[pos] if len(args) > pos else -1)
    keepdim = has_keepdim and kwargs.get("keepdim", args[pos + 1] if len(args) > pos + 1 else False)
    inp = sample.input.detach()

    def pick(idx):
        if inp.dim() == 0:
            return inp.reshape(idx.shape)
        i = idx if keepdim or not has_keepdim else idx.unsqueeze(dim)
        return inp.gather(dim, i).reshape(idx.shape)

    def convert(out):
        if op.name == "argsort":  # indices only
            return [pick(out)]
        values, indices = out
        return [values, pick(indices)]

    return convert(tree_map(_to_cpu, actual)), convert(expected)


def _compare(actual, expected, dtype) -> str | None:
    a_flat, _ = tree_flatten(tree_map(_to_cpu, actual))
    e_flat, _ = tree_flatten(expected)
    if len(a_flat) != len(e_flat):
        return f"output structure differs ({len(a_flat)} vs {len(e_flat)} leaves)"
    for a, e in zip(a_flat, e_flat):
        if isinstance(e, torch.Tensor):
            # Tolerance follows the result's dtype (exp of an int tensor is a float result).
            rtol, atol = TOLERANCES.get(e.dtype, (0, 0))
            if not isinstance(a, torch.Tensor):
                return f"expected a tensor, got {type(a).__name__}"
            if a.dtype != e.dtype or a.shape != e.shape:
                return f"dtype/shape {a.dtype}{tuple(a.shape)} != {e.dtype}{tuple(e.shape)}"
            try:
                torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True,
                                           check_stride=False)
            except AssertionError as err:
                return " ".join(str(err).split())[:300]
        elif isinstance(e, float):
            rtol, atol = TOLERANCES.get(dtype, TOLERANCES[torch.float32])
            if not (a == e or (a != a and e != e) or abs(a - e) <= atol + rtol * abs(e)):
                return f"scalar {a} != {e}"
        elif isinstance(e, (int, bool)) and a != e:
            return f"scalar {a} != {e}"
    return None


def _as_float64(sample):
    """The sample with its floating tensors in float64 (leaves keep requires_grad)."""
    def cast(t):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            return t.detach().double().requires_grad_(t.requires_grad)
        if isinstance(t, torch.Tensor) and t.is_complex():
            return t.detach().to(torch.complex128).requires_grad_(t.requires_grad)
        return t
    return sample.transform(cast)


# How far beyond the CPU's own largest deviation from float64 vkml may be: two float32 sums of the
# same terms in different orders (GEMM tiles, convolution gradients) each carry an error of the
# same size, so one may exceed the other's largest error at some element; twice it bounds that.
ROUNDING_SLACK = 2.0


def _only_cpu_rounding(actual, expected, reference) -> bool:
    """True when, at every element where vkml and the CPU disagree, vkml is no further from the
    float64 computation of the same sample than ROUNDING_SLACK times the CPU's largest deviation
    from it: the mismatch is within the CPU's own rounding (of intermediates in half precision,
    float32 cancellation or summation order), so the tolerance asked more than the CPU itself
    achieves."""
    a_flat, _ = tree_flatten(tree_map(_to_cpu, actual))
    e_flat, _ = tree_flatten(expected)
    r_flat, _ = tree_flatten(tree_map(_to_cpu, reference))
    if not len(a_flat) == len(e_flat) == len(r_flat):
        return False
    for a, e, r in zip(a_flat, e_flat, r_flat, strict=True):
        if isinstance(e, torch.Tensor) and e.is_complex() and isinstance(a, torch.Tensor) \
                and isinstance(r, torch.Tensor) and a.is_complex() and r.is_complex():
            # Complex results: their real and imaginary parts, each judged as a float.
            a, e, r = (torch.view_as_real(t.resolve_conj()) for t in (a, e, r))
        if not isinstance(e, torch.Tensor) or not e.is_floating_point():
            if _compare(a, e, torch.float32):
                return False
            continue
        if not isinstance(a, torch.Tensor) or not isinstance(r, torch.Tensor):
            return False
        if a.dtype != e.dtype or a.shape != e.shape or r.shape != e.shape:
            return False
        rtol, atol = TOLERANCES.get(e.dtype, (0, 0))
        a64, e64, r64 = a.double(), e.double(), r.double()
        bad = ~torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
        if not bool(bad.any()):
            continue
        # Where the CPU's half-precision kernel returns NaN or inf but float64 is finite
        # (matrix_exp's intermediates overflow: torch 2.11's CPU and CUDA give NaN and inf on
        # OpInfo's fp16 samples), vkml must match float64 rounded to the dtype.
        cpu_nonfinite = ~torch.isfinite(e64) & torch.isfinite(r64)
        if bool((bad & cpu_nonfinite).any()):
            r_rounded = r64.to(e.dtype).double()  # past the dtype's range float64 rounds to inf
            near = torch.isclose(a64, r_rounded, rtol=rtol, atol=atol)
            if not bool(near[bad & cpu_nonfinite].all()):
                return False
            bad = bad & ~cpu_nonfinite
            if not bool(bad.any()):
                continue
        cpu_err = (e64 - r64).abs()
        if not bool(torch.isfinite(cpu_err[bad]).all()):
            return False
        finite_err = cpu_err[torch.isfinite(cpu_err)]
        if not bool(((a64 - r64).abs()[bad] <= ROUNDING_SLACK * finite_err.max()).all()):
            return False
    return True


def _mpmath_functions():
    import mpmath

    return {"special.bessel_j0": lambda v: mpmath.besselj(0, v),
            "special.bessel_j1": lambda v: mpmath.besselj(1, v),
            "special.bessel_y0": lambda v: mpmath.bessely(0, v) if v > 0 else None,
            "special.bessel_y1": lambda v: mpmath.bessely(1, v) if v > 0 else None,
            "special.airy_ai": mpmath.airyai}


# Unary float64 kernels of PyTorch's CPU that are less accurate than the OpInfo tolerance
# (J0(5.1) is off by 3e-7): there vkml is judged against mpmath instead.
INACCURATE_CPU_FLOAT64 = ("special.bessel_j0", "special.bessel_j1", "special.bessel_y0",
                          "special.bessel_y1", "special.airy_ai")


def _matches_mpmath(op, sample, actual) -> bool:
    """For INACCURATE_CPU_FLOAT64 ops: vkml's float64 result within tolerance of mpmath's value at
    every finite argument (NaN/inf handling is still compared with the CPU by the caller)."""
    fn = _mpmath_functions()[op_key(op)]
    rtol, atol = TOLERANCES[torch.float64]
    x = sample.input.detach().double().flatten().tolist()
    got = _to_cpu(actual).double().flatten().tolist()
    for v, g in zip(x, got, strict=True):
        if v != v or v in (float("inf"), float("-inf")):
            continue
        exact = fn(v)
        if exact is None:
            continue
        exact = float(exact)
        if not abs(g - exact) <= atol + rtol * abs(exact):
            return False
    return True


def _float64_grads(op, sample, grads):
    s64 = _as_float64(sample)
    leaves, _ = tree_flatten((s64.input, s64.args, s64.kwargs))
    ins = [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]
    out = s64.output_process_fn_grad(op(s64.input, *s64.args, **s64.kwargs))
    outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    return torch.autograd.grad(outs, ins, [g.double() for g in grads], allow_unused=True)


def _perturbed(sample, seed: int):
    """The sample with each floating input moved by at most one ulp (a random sign per element)."""
    gen = torch.Generator().manual_seed(seed)

    def nudge(t):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            step = torch.randint(-1, 2, t.shape, generator=gen).to(t.dtype)
            moved = t.detach() * (1 + step * torch.finfo(t.dtype).eps)
            return moved.requires_grad_(t.requires_grad)
        return t
    return sample.transform(nudge)


def _cpu_input_sensitivity(op, sample, grads, cpu_g) -> list[float]:
    """Per gradient tensor, the largest change of the CPU's own float32 gradient when the inputs
    move by one ulp: how much any float32 computation of this (ill-conditioned) sample must be
    allowed to differ, whatever its rounding order."""
    spread = [0.0] * len(cpu_g)
    for seed in range(3):
        s = _perturbed(sample, seed)
        leaves, _ = tree_flatten((s.input, s.args, s.kwargs))
        ins = [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]
        out = s.output_process_fn_grad(op(s.input, *s.args, **s.kwargs))
        outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
        moved = torch.autograd.grad(outs, ins, grads, allow_unused=True)
        for i, (m, c) in enumerate(zip(moved, cpu_g, strict=True)):
            if m is not None and c is not None:
                spread[i] = max(spread[i], (m.double() - c.double()).abs().max().item())
    return spread


def _within_input_sensitivity(op, sample, grads, vk_g, cpu_g, ref) -> bool:
    """vkml's float32 gradient within ROUNDING_SLACK times the CPU's one-ulp input sensitivity
    of the float64 gradient `ref`, tensor by tensor."""
    spread = _cpu_input_sensitivity(op, sample, grads, cpu_g)
    for a, r, band in zip(vk_g, ref, spread, strict=True):
        if a is None or r is None:
            continue
        if not (band > 0 and (a.cpu().double() - r.double()).abs().max().item() <= ROUNDING_SLACK * band):
            return False
    return True


def _grad_check(op, sample, vk_sample) -> tuple[str | None, int]:
    """Gradients of sum(out * g) w.r.t. every float input, vkml against CPU (float32 only).
    Returns (why they differ or None, 1 if they matched only within the CPU's rounding)."""
    def inputs(s):
        leaves, _ = tree_flatten((s.input, s.args, s.kwargs))
        return [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]

    cpu_in, vk_in = inputs(sample), inputs(vk_sample)
    if not cpu_in:
        return None, 0
    # As PyTorch's own device tests: outputs pass through the sample's output_process_fn_grad
    # (e.g. abs() of eigen/singular vectors, whose signs are arbitrary).
    cpu_out = sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))
    vk_out = vk_sample.output_process_fn_grad(op(vk_sample.input, *vk_sample.args, **vk_sample.kwargs))
    cpu_outs = [t for t in tree_flatten(cpu_out)[0]
                if isinstance(t, torch.Tensor) and t.requires_grad]
    vk_outs = [t for t in tree_flatten(vk_out)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    if not cpu_outs or len(cpu_outs) != len(vk_outs):
        return None, 0
    gen = torch.Generator().manual_seed(0)
    grads = [torch.randn(t.shape, dtype=t.dtype, generator=gen) for t in cpu_outs]
    cpu_g = torch.autograd.grad(cpu_outs, cpu_in, grads, allow_unused=True)
    vk_grads = [g.to(t.device) for g, t in zip(grads, vk_outs)]
    vk_g = torch.autograd.grad(vk_outs, vk_in, vk_grads, allow_unused=True)
    for a, e in zip(vk_g, cpu_g):
        if (a is None) != (e is None):
            return "gradient defined on one device only", 0
    why = _compare([a for a in vk_g if a is not None], [e for e in cpu_g if e is not None],
                   torch.float32)
    if why:
        try:
            ref_all = _float64_grads(op, sample, grads)
            ref = [r for r in ref_all if r is not None]
            if _only_cpu_rounding([a for a in vk_g if a is not None],
                                  [e for e in cpu_g if e is not None], ref):
                return None, 1
            if _within_input_sensitivity(op, sample, grads, vk_g, cpu_g, ref_all):
                return None, 1
        except Exception:  # noqa: BLE001 - no float64 version: the mismatch stands
            pass
        return "gradient: " + why, 0
    return None, 0


def check(op, dtype, max_samples: int = MAX_SAMPLES, grads: bool = True) -> tuple[str, str]:
    """Returns (status, reason) for one OpInfo entry and dtype."""
    if op.name in NONDETERMINISTIC or op.name.startswith("_refs") or op.name.startswith("empty"):
        return "skipped", "random or uninitialised values"
    if op_key(op) in STORAGE_DEPENDENT:
        return "skipped", "depends on storage outside the view"
    if dtype not in op.dtypes:
        return "skipped", "dtype not supported by the op on CPU"
    want_grad = grads and dtype == torch.float32 and op.supports_autograd
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=want_grad))[:max_samples]
    except Exception as e:  # noqa: BLE001 - a broken sample generator is PyTorch's, not ours
        return "skipped", f"sample generation failed: {type(e).__name__}"
    if not samples:
        return "skipped", "no samples"
    checked = rounded = exact = 0
    for sample in samples:
        if op.name in RANDOM_SAMPLES and RANDOM_SAMPLES[op.name](sample):
            continue
        try:
            expected = sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))
            expected = tree_map(_to_cpu, expected)
        except Exception as e:  # noqa: BLE001 - the CPU rejects it: vkml must too
            cpu_error = type(e)
        else:
            cpu_error = None
        if op.name in CPU_INDEX_ARGS:
            vk_sample = sample.transform(lambda t: _to_vkml(t) if t is sample.input else t)
        else:
            vk_sample = sample.transform(_to_vkml)
        try:
            actual = vk_sample.output_process_fn_grad(
                op(vk_sample.input, *vk_sample.args, **vk_sample.kwargs))
        except Exception as e:  # noqa: BLE001
            if _is_fallback_error(e) or (cpu_error is None and _is_missing_complex_kernel(e)):
                return "not_native", _fallback_reason(e)
            if cpu_error is not None:
                if not isinstance(e, cpu_error):
                    return "fails", f"raised {type(e).__name__}, CPU raised {cpu_error.__name__}"
                continue
            return "fails", f"{type(e).__name__}: {' '.join(str(e).split())[:250]}"
        if cpu_error is not None:
            return "fails", f"accepted an input the CPU rejects ({cpu_error.__name__})"
        # A non_blocking copy to the CPU (`to("cpu", non_blocking=True)`) lands in pinned memory
        # asynchronously, as on CUDA: its result is read after a synchronize.
        torch.vkml.synchronize()
        why = _compare(actual, expected, dtype)
        if why and op.name in TIE_INDEX_OPS:
            why = _compare(*_values_at_indices(op, sample, actual, expected), dtype)
        if why and (dtype.is_floating_point or dtype.is_complex):
            try:
                s64 = _as_float64(sample)
                ref64 = s64.output_process_fn_grad(op(s64.input, *s64.args, **s64.kwargs))
                if _only_cpu_rounding(actual, expected, ref64):
                    why, rounded = None, rounded + 1
            except Exception:  # noqa: BLE001 - no float64 version: the mismatch stands
                pass
        if why and dtype == torch.float64 and op_key(op) in INACCURATE_CPU_FLOAT64:
            try:
                if _matches_mpmath(op, sample, actual):
                    why, exact = None, exact + 1
            except ImportError:
                pass
        if why:
            return "fails", why
        if want_grad:
            try:
                why, grad_rounded = _grad_check(op, sample, vk_sample)
                rounded += grad_rounded
            except Exception as e:  # noqa: BLE001
                if _is_fallback_error(e):
                    return "not_native", "backward: " + _fallback_reason(e)
                why = f"backward raised {type(e).__name__}: {' '.join(str(e).split())[:200]}"
            if why:
                return "fails", why
        checked += 1
    notes = ""
    if rounded:
        notes += (f"; {rounded} within twice the CPU's own error against float64 (or at float64"
                  " where the CPU's half kernel gives NaN, or for gradients within twice the change"
                  " of the CPU's own result when the inputs move by one ulp)")
    if exact:
        notes += f"; {exact} match mpmath where the CPU's float64 kernel is off"
    return "pass", f"{checked} samples{notes}"
