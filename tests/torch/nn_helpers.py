"""Shared helpers of the neural-network op tests: float64 CPU references, per-dtype tolerances and
a check that ops ran natively."""

import contextlib

import torch

import torch_vkml
import torch_vkml.profiler

# float64 where the device has fp64 arithmetic; on other devices a float64 op raises instead
# (tests/torch/integration/test_no_fp64.py checks that).
HAS_FLOAT64 = torch_vkml.has_float64_support()
FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16] + (
    [torch.float64] if HAS_FLOAT64 else [])
# The widest float and complex dtypes the device computes in: tests comparing exactly with the
# CPU use them.
WIDE_FLOAT = torch.float64 if HAS_FLOAT64 else torch.float32
WIDE_COMPLEX = torch.complex128 if HAS_FLOAT64 else torch.complex64


def device_dtypes(*dtypes):
    """The given dtypes the device holds, in order: float64 and complex128 only with fp64."""
    wide = (torch.float64, torch.complex128)
    return [d for d in dtypes if HAS_FLOAT64 or d not in wide]


# Every dtype vkml computes in.
ALL_DTYPES = FLOAT_DTYPES + [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64,
                             torch.bool]

# (rtol, atol) of vkml results against a float64 CPU reference computed from the same inputs.
TOLERANCES = {
    torch.float32: (1e-5, 1e-6),
    torch.float16: (2e-3, 1e-3),
    torch.bfloat16: (2e-2, 1e-2),
    torch.float64: (1e-10, 1e-12),
    torch.complex64: (1e-5, 1e-6),
    torch.complex128: (1e-10, 1e-12),
}


def wide(t):
    """t in the precision the CPU reference computes in: complex128 for complex tensors, float64
    for floating ones; other tensors and Python scalars unchanged."""
    if isinstance(t, torch.Tensor) and t.is_complex():
        return t.to(torch.complex128)
    if isinstance(t, torch.Tensor) and t.is_floating_point():
        return t.double()
    return t


def assert_close_to_ref(
    got: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype | None = None, scale: float = 1.0
) -> None:
    """got (vkml) against ref (CPU float64 or complex128), with the tolerance of dtype (got's by
    default); a complex result never matches a real reference."""
    assert got.device.type == "vkml"
    assert got.is_complex() == ref.is_complex(), (got.dtype, ref.dtype)
    rtol, atol = TOLERANCES[dtype or got.dtype]
    to = torch.complex128 if got.is_complex() else torch.float64
    torch.testing.assert_close(
        got.cpu().resolve_conj().to(to), ref.resolve_conj().to(to), rtol=rtol, atol=atol * scale,
        equal_nan=True,
    )


def randn(shape, dtype, gen, scale=1.0):
    """Random values rounded to dtype (the reference then starts from the same numbers); complex
    dtypes draw complex128 values."""
    drawn = torch.complex128 if dtype.is_complex else torch.float64
    return (torch.randn(shape, generator=gen, dtype=drawn) * scale).to(dtype)


def crandn(shape, dtype, gen, scale=1.0):
    """Random complex values whose real and imaginary parts are each standard normal times
    `scale`, rounded to dtype."""
    real = torch.randn(shape, generator=gen, dtype=torch.float64) * scale
    imag = torch.randn(shape, generator=gen, dtype=torch.float64) * scale
    return torch.complex(real, imag).to(dtype)


def complex_pairs(parts, dtype):
    """Every pair of the floats in `parts` as (real, imaginary) parts: len(parts)**2 values."""
    v = torch.tensor(parts, dtype=torch.float64)
    return torch.complex(v.repeat_interleave(len(parts)), v.repeat(len(parts))).to(dtype)


def rand_any(shape, dtype, gen, scale=4.0, int_range=(-20, 20), uint8_range=(0, 30)):
    """Random values of any dtype: floats normal times `scale`, integers uniform in their range,
    bools half true."""
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen, dtype=torch.float64) * scale).to(dtype)
    lo, hi = uint8_range if dtype == torch.uint8 else int_range
    return torch.randint(lo, hi, shape, generator=gen).to(dtype)


def assert_same(got: torch.Tensor, ref: torch.Tensor) -> None:
    """got (vkml) equals ref (CPU) exactly: dtype, shape and every element."""
    assert got.device.type == "vkml", got.device
    got = got.cpu()
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.shape, ref.shape)
    assert torch.equal(got, ref), (got, ref)


@contextlib.contextmanager
def only_native(*allowed):
    """Fails unless everything inside ran on vkml kernels (ops in `allowed` may fall back);
    use inside a test taking the `fallback` fixture."""
    torch_vkml.reset_fallback_stats()
    yield
    stats = {k: v for k, v in torch_vkml.fallback_stats().items() if k not in allowed}
    assert stats == {}, f"ops fell back to the CPU: {stats}"


def fell_back() -> set[str]:
    return set(torch_vkml.fallback_stats())


def kernels_run(fn):
    """fn's dispatches per kernel name."""
    torch_vkml.profiler.enable()
    try:
        torch_vkml.profiler.kernel_times(reset=True)
        fn()
        ran = torch_vkml.profiler.kernel_times(reset=True)
    finally:
        torch_vkml.profiler.disable()
    return {name: count for name, (count, _) in ran.items()}
