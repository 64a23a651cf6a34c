"""Differential fuzzing against the CPU (tests/torch/conformance/fuzz_programs.py): a fixed slice of seeds, so
CI is deterministic, plus one regression test per mismatch the fuzzer found. `make fuzz` runs
random seeds for FUZZ_MINUTES."""

import os
import sys

import pytest
import torch

import torch_vkml

sys.path.insert(0, os.path.dirname(__file__))
import fuzz_programs  # noqa: E402

V = "vkml"
# Programs per run, sized to stay quick on lavapipe with a warm pipeline cache.
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


# Regression seeds from `make fuzz`, replayed, each with what it checks: 20844, 22376 (pow(x, 0.5)
# of -inf and -0.0): the kernel; 3010210, 3036028 (remainder of a rounded value), 3030422 (pow(x,
# -3) of a rounded zero), 3024235 (a float32 product overflowing on the CPU), 3001412 (signbit of
# a NaN): the comparison; 749260328855 (minimum of -0.0 and False, then atan2): signed zeros of
# maximum/minimum; 408309560595 (fp16 times an int64 0-dim product beyond fp16): the GPU 0-dim
# rule, for integers; 706165691506 (an index into an empty dimension, empty result): the kernel.
FOUND_SEEDS = [
    20844, 22376, 3010210, 3036028, 3030422, 3024235, 3001412, 749260328855, 408309560595,
    706165691506,
]


def test_found_seeds_match_cpu():
    failures = [f"seed {s}: {m}" for s in FOUND_SEEDS if (m := fuzz_programs.check_seed(s))]
    assert not failures, "\n\n".join(failures)


def _program(inputs, fn, exact):
    """A one-step program: `inputs` (CPU values, exact or not) and v_n = fn(inputs)."""
    values = [
        fuzz_programs.Value(x, exact, fuzz_programs.TOLERANCE.get(x.dtype, 0.0)) for x in inputs
    ]
    n = len(values)
    step = fuzz_programs.Step(f"v{n} = op", fn, list(range(n)), [n])
    ref = fn(list(inputs), "cpu")
    values.append(fuzz_programs.Value(ref, exact, fuzz_programs.TOLERANCE[ref.dtype]))
    return fuzz_programs.Program(0, [step], values), step, ref


def test_second_look_judges_a_jump_on_vkml_inputs():
    """remainder of a rounded value jumps by its divisor where the value crosses a multiple of it
    (seed 3010210: log_softmax gave 0.0 on the CPU and -2.76e-4 on vkml, so remainder(., 2) gave 0
    and 2): judged on vkml's own input the op passes; a wrong result on it still fails."""

    def rem(t, d):
        return torch.remainder(t[0], 2)

    prog, step, ref = _program([torch.tensor([-8.1953, 0.0], dtype=torch.float16)], rem, False)
    vk_input = torch.tensor([-8.1953, -2.7632e-4], dtype=torch.float16)
    got = rem([vk_input], "cpu")
    assert fuzz_programs.compare(ref, got) is not None
    assert fuzz_programs.second_look(prog, step, [vk_input], 0, got) is None
    wrong = got.clone()
    wrong[1] = 1.0
    assert fuzz_programs.second_look(prog, step, [vk_input], 0, wrong) is not None


def test_second_look_judges_exact_inputs_on_the_cpus_values():
    """An exact input is the CPU's own: a zero whose sign vkml lost is not excused by computing
    1/x on vkml's copy of it; where the CPU's float32 product overflows and vkml's does not
    (seed 3024235), the float64 product decides."""

    def recip(t, d):
        return torch.reciprocal(t[0])

    prog, step, ref = _program([torch.tensor([-0.0, 2.0])], recip, True)
    got = torch.tensor([float("inf"), 0.5])  # vkml computed 1/+0.0
    assert fuzz_programs.second_look(prog, step, [torch.tensor([0.0, 2.0])], 0, got) is not None

    def prod(t, d):
        return fuzz_programs.reduction("prod", d)(t[0], dim=0, keepdim=False)

    x = torch.randint(-50, 51, (300, 3), generator=torch.Generator().manual_seed(1)).float()
    x[150, :] = 0.0
    prog, step, ref = _program([x], prod, True)
    assert ref.isnan().all()  # the CPU's float32 partial products overflow before the zero
    assert fuzz_programs.second_look(prog, step, [x], 0, torch.zeros(3)) is None
    assert fuzz_programs.second_look(prog, step, [x], 0, torch.ones(3)) is not None


# ---- regressions: one per fuzzer mismatch --------------------------------------------------------


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize(
    "row", [[1.0, float("inf"), 2.0], [1.0, -float("inf"), float("inf")], [float("inf")] * 2]
)
def test_variance_with_inf_is_nan(op, row):
    """A row holding inf has variance NaN (inf - inf), as on the CPU, where Welford's combined sum
    of squares alone would stay a plain inf. Fuzzer seeds 119, 708, 1622."""
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
    """vkml refuses these on bool tensors, as the CPU does (a fuzzer regression)."""
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
    """sub with a bool operand raises RuntimeError on vkml as on the CPU (a fuzzer regression)."""
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


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_pow_half_is_a_root_as_on_the_cpu(dtype):
    """The CPU computes pow(x, 0.5) as sqrt(x) and pow(x, -0.5) as rsqrt(x) for float32, float64
    and bfloat16 (half keeps C's pow): pow(-inf, 0.5) is NaN and pow(-0.0, 0.5) is -0.0 there and
    on vkml, not inf and 0.0 (a fuzzer regression)."""
    x = torch.tensor([-float("inf"), -0.0, 0.0, 4.0, -1.0, float("inf"), float("nan")]).to(dtype)
    for e in (0.5, -0.5):
        want = torch.pow(x, e)
        got = torch.pow(x.to(V), e).cpu()
        assert fuzz_programs.compare(want, got) is None
        assert torch.equal(got.signbit() | got.isnan(), want.signbit() | want.isnan())
        out = torch.empty(7, dtype=dtype, device=V)
        torch.pow(x.to(V), e, out=out)
        assert torch.equal(out.cpu().nan_to_num(), want.nan_to_num())
        inplace = x.to(V)
        inplace.pow_(e)
        assert torch.equal(inplace.cpu().nan_to_num(), want.nan_to_num())


def test_reduced_float_with_wider_0dim_tensor_follows_cuda():
    """Seed 1078552560051: a bf16 tensor with a 0-dim f16 tensor. CUDA and vkml give the same bits
    in all cases: a device 0-dim operand is rounded to bf16 first; a CPU 0-dim tensor or a Python
    float is used at float precision. The CPU differs for its own 0-dim operands (mul/div at float
    precision, add/sub rounded first), so the fuzzer's CPU reference rounds a 0-dim operand as a
    GPU does."""
    a = torch.tensor([-5.15625, -0.197265625, 1.953125], dtype=torch.bfloat16)
    s = torch.tensor(-0.91845703125, dtype=torch.float16)
    for op in (torch.mul, torch.div, torch.add, torch.sub):
        on_device = op(a.to(V), s.to(V)).cpu()
        assert torch.equal(on_device.view(torch.int16), op(a, s.to(a.dtype)).view(torch.int16)), op
        wide = op(a.float(), float(s)).to(a.dtype)
        for other in (s, float(s)):
            got = op(a.to(V), other).cpu()
            assert torch.equal(got.view(torch.int16), wide.view(torch.int16)), (op, other)


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float16, torch.bfloat16]
    + ([torch.float64] if torch_vkml.has_float64_support() else []),
)
def test_max_min_of_signed_zeros_follow_ieee(dtype):
    """Seed 749260328855: minimum(-0.0, False) gives -0.0 and +0.0 in one CPU tensor (its vector and
    scalar paths differ), and atan2 turns the sign into a jump of pi. vkml follows IEEE 754-2019 in
    any operand order and any reduction order: maximum gives +0 and minimum -0."""
    a = torch.tensor([-0.0, 0.0, -0.0, 0.0] * 5, dtype=dtype)
    b = torch.tensor([0.0, -0.0, -0.0, 0.0] * 5, dtype=dtype)
    both_neg = a.signbit() & b.signbit()
    either_neg = a.signbit() | b.signbit()
    for x, y in ((a, b), (b, a)):
        xv, yv = x.to(V), y.to(V)
        assert torch.equal(torch.maximum(xv, yv).cpu().signbit(), both_neg)
        assert torch.equal(torch.minimum(xv, yv).cpu().signbit(), either_neg)
        assert torch.equal(torch.fmax(xv, yv).cpu().signbit(), both_neg)
        assert torch.equal(torch.fmin(xv, yv).cpu().signbit(), either_neg)
    false = torch.zeros((), dtype=torch.bool, device=V)
    assert torch.minimum(torch.full((7,), -0.0, dtype=dtype, device=V), false).cpu().signbit().all()
    mixed = torch.tensor([-0.0, 0.0, -0.0], dtype=dtype)
    for order in (mixed, mixed.flip(0)):
        ov = order.to(V)
        assert not ov.amax().cpu().signbit() and ov.amin().cpu().signbit()
        lo, hi = torch.aminmax(ov)
        assert lo.cpu().signbit() and not hi.cpu().signbit()
    assert torch.full((3,), -0.0, dtype=dtype, device=V).amax().cpu().signbit()
