"""Differential fuzzing against the CPU (tests/torch/fuzz_programs.py): a fixed slice of seeds, so
CI is deterministic, plus one regression test per mismatch the fuzzer found. `make fuzz` runs
random seeds for FUZZ_MINUTES."""

import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))
import fuzz_programs  # noqa: E402

V = "vkml"
# About 30 s on lavapipe with a warm pipeline cache.
PROGRAMS = int(os.environ.get("VKML_FUZZ_PROGRAMS", "400"))
CHUNKS = 6


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fixed_seeds_match_cpu(chunk):
    failures = []
    for seed in range(chunk, PROGRAMS, CHUNKS):
        msg = fuzz_programs.check_seed(seed)
        if msg:
            failures.append(f"seed {seed}: {msg}")
    assert not failures, "\n\n".join(failures[:3]) + f"\n({len(failures)} failing seeds)"


def test_generator_is_deterministic_and_varied():
    a, b = fuzz_programs.generate(123), fuzz_programs.generate(123)
    assert a.text() == b.text()
    texts = [fuzz_programs.generate(s).text() for s in range(40)]
    assert len(set(texts)) == 40
    joined = "\n".join(texts)
    for op in ("@", "torch.sort", "gather", "torch.cat", "transpose", ".to(", "torch.where"):
        assert op in joined, op
    assert any(0 in v.ref.shape for s in range(40) for v in fuzz_programs.generate(s).values)


def test_comparison_catches_differences():
    """The comparison itself: NaN positions, inf signs, dtypes, integer values, tolerance."""
    nan, inf = float("nan"), float("inf")
    ref = torch.tensor([1.0, nan, inf, -2.0])
    assert fuzz_programs.compare(ref, ref.clone()) is None
    assert "NaN" in fuzz_programs.compare(ref, torch.tensor([1.0, 0.0, inf, -2.0]))
    assert "inf" in fuzz_programs.compare(ref, torch.tensor([1.0, nan, -inf, -2.0]))
    assert "inf" in fuzz_programs.compare(ref, torch.tensor([1.0, nan, 5.0, -2.0]))
    assert "value" in fuzz_programs.compare(ref, torch.tensor([1.0, nan, inf, -2.01]))
    assert fuzz_programs.compare(ref, torch.tensor([1.0, nan, inf, -2.0001])) is None
    assert "dtype" in fuzz_programs.compare(ref, ref.double())
    assert "integer" in fuzz_programs.compare(torch.tensor([1, 2]), torch.tensor([1, 3]))
    assert "shape" in fuzz_programs.compare(torch.tensor([1, 2]), torch.tensor([[1, 2]]))


# ---- regressions: one per mismatch the fuzzer found --------------------------------------------


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize(
    "row", [[1.0, float("inf"), 2.0], [1.0, -float("inf"), float("inf")], [float("inf")] * 2]
)
def test_variance_with_inf_is_nan(op, row):
    """Welford's combined sum of squares stayed a plain inf when an element was inf; the CPU's
    variance is NaN (inf - inf). Found by the fuzzer (seeds 119, 708, 1622)."""
    x = torch.tensor(row * 3).reshape(3, -1)
    for dim in (None, 1):
        want = getattr(torch, op)(x) if dim is None else getattr(torch, op)(x, dim=dim)
        got = getattr(torch, op)(x.to(V)) if dim is None else getattr(torch, op)(x.to(V), dim=dim)
        assert fuzz_programs.compare(want, got.cpu()) is None
    for dt in (torch.float16, torch.bfloat16):
        got = getattr(torch, op)(x.to(dt).to(V), dim=1).cpu()
        assert torch.isnan(got).all()


@pytest.mark.parametrize(
    "name, error",
    [
        ("abs", NotImplementedError),
        ("ceil", NotImplementedError),
        ("floor", NotImplementedError),
        ("round", NotImplementedError),
        ("trunc", NotImplementedError),
        ("frac", NotImplementedError),
        ("neg", RuntimeError),
        ("relu", RuntimeError),
    ],
)
def test_bool_unary_raises_like_cpu(name, error):
    """vkml computed these on bool tensors; the CPU refuses them. Found by the fuzzer."""
    b = torch.tensor([True, False, True])
    with pytest.raises(error):
        getattr(b, name)()
    with pytest.raises(error):
        getattr(b.to(V), name)()
    if name != "relu":  # relu has no out= form
        with pytest.raises(error):
            getattr(torch, name)(b.to(V), out=torch.empty(3, dtype=torch.bool, device=V))


@pytest.mark.parametrize(
    "fn",
    [
        lambda d: torch.sub(torch.ones(2, 3, device=d), True),
        lambda d: torch.sub(torch.ones(3, dtype=torch.bool, device=d), 2),
        lambda d: torch.ones(3, device=d) - torch.ones(3, dtype=torch.bool, device=d),
        lambda d: (
            torch.ones(3, dtype=torch.bool, device=d) - torch.ones(3, dtype=torch.bool, device=d)
        ),
        lambda d: torch.ones(3, device=d).sub_(torch.ones(3, dtype=torch.bool, device=d)),
    ],
    ids=["float-minus-True", "bool-minus-int", "float-minus-bool", "bool-minus-bool", "inplace"],
)
def test_sub_with_bool_raises_like_cpu(fn):
    """sub with a bool operand: the CPU raises RuntimeError, vkml subtracted (found by fuzzing)."""
    with pytest.raises(RuntimeError, match="Subtraction"):
        fn("cpu")
    with pytest.raises(RuntimeError, match="Subtraction"):
        fn(V)


@pytest.mark.xfail(
    reason="clamp_min/clamp_max of an integer tensor with an out-of-range scalar: the CPU wraps "
    "the scalar into the dtype first (uint8 -3 -> 253); vkml compares in int64. Found by fuzzing "
    "(seed 96); the generator skips this case until it is fixed.",
    strict=True,
)
def test_clamp_uint8_with_negative_scalar():
    x = torch.tensor([10, 200, 3], dtype=torch.uint8)
    assert torch.equal(torch.clamp_min(x.to(V), -3).cpu(), torch.clamp_min(x, -3))


@pytest.mark.xfail(
    reason="the CPU computes pow(x, 0.5) as sqrt(x): pow(-inf, 0.5) is NaN and pow(-0.0, 0.5) is "
    "-0.0 there, inf and 0.0 on vkml (C pow rules). Found by fuzzing (make fuzz); the generator "
    "skips this exponent until it is fixed.",
    strict=True,
)
def test_pow_half_is_sqrt():
    x = torch.tensor([-float("inf"), -0.0, 4.0, -1.0])
    assert fuzz_programs.compare(torch.pow(x, 0.5), torch.pow(x.to(V), 0.5).cpu()) is None
