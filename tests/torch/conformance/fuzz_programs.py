"""Differential fuzzer: random short programs (3-8 ops) run on the CPU and on vkml, compared op
by op.

A program starts from random inputs (any shape, zero-size and size-1 dims included, contiguous or
transposed or sliced, sometimes with NaN/inf/-0.0) and appends ops drawn from OPS, each reading
earlier values. It is generated and run on the CPU in one pass (so every op's reference is known);
then it is replayed on vkml and every value compared: same dtype and shape, integers and bools
exactly, floats within a per-dtype tolerance with NaN and inf positions equal. If the CPU raises,
vkml must raise the same exception type at the same op. A float output that differs gets a second
look (second_look): the op alone, run by the CPU on vkml's own inputs where they are rounded, and a
float64 run of it, so rounding that a later op magnifies (remainder, sin of a large value,
cancellation) or the CPU's own float32 error (an overflowing partial product) is not a mismatch.

Ops whose output jumps on tiny input changes (comparisons, rounding, float->int casts, argmax) are
only applied to values both devices compute bit for bit ("exact": inputs, views, copies, add, mul,
max, ...), so float rounding differences never count as mismatches.

tests/torch/conformance/test_fuzz.py runs fixed seeds; `make fuzz` runs `python fuzz_programs.py --minutes N`
with random seeds and prints each failing seed; `--seed S` replays one program and prints it.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from fuzz_compare import TOLERANCE, compare, float_mismatches  # re-exported for the tests
from fuzz_reference import (  # the CPU reference's GPU rules
    F64_REF,
    exact_prod,
    ieee_signed_zero,
    matmul_ref,
    zero_dim_as_on_a_gpu,
)

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
I32, I64, U8, BOOL = torch.int32, torch.int64, torch.uint8, torch.bool
FLOATS = (F32, F16, BF16)
INTS = (I32, I64, U8)
DTYPES = FLOATS + INTS + (BOOL,)


def torch_device(device: str) -> str:
    return "cpu" if device == F64_REF else device


@dataclass
class Value:
    """What generation knows of a value: its CPU result and whether vkml matches it bit for bit."""

    ref: torch.Tensor
    exact: bool
    tol: float = 0.0  # the loosest of its dtype's and its inputs' tolerances (rounding carries)


@dataclass
class Step:
    text: str  # Python-like line for the report
    fn: Callable  # (args: list[Tensor], device: str) -> Tensor or tuple of Tensors
    args: list[int]  # indices of the values it reads
    outs: list[int] = field(default_factory=list)


@dataclass
class Program:
    seed: int
    steps: list[Step]
    values: list[Value]  # CPU results, in order of creation
    cpu_error: type | None = None  # exception type the last step raised on the CPU

    def text(self) -> str:
        lines = [f"# fuzz program, seed {self.seed}"]
        lines += [s.text for s in self.steps]
        if self.cpu_error:
            lines.append(f"# last line raises {self.cpu_error.__name__} on the CPU")
        return "\n".join(lines)


# ---- inputs -----------------------------------------------------------------------------------


def random_shape(rng: random.Random) -> tuple[int, ...]:
    ndim = rng.choice([0, 1, 1, 2, 2, 3, 3, 4])
    sizes = [
        rng.choice([0, 1, 1, 2, 3, 4, 5, 7])
        if rng.random() < 0.15
        else rng.choice([1, 2, 3, 5, 6, 7])
        for _ in range(ndim)
    ]
    if ndim and rng.random() < 0.15:  # larger than one workgroup along one dim
        sizes[rng.randrange(ndim)] = rng.choice([257, 300, 600])
    return tuple(sizes)


def make_input(shape, dtype, seed: int, layout: str, specials: bool, device: str) -> torch.Tensor:
    """A random tensor built on the CPU (so both devices get the same values), then moved."""
    g = torch.Generator().manual_seed(seed)
    n = len(shape)
    base_shape = list(shape)
    if layout == "transposed" and n >= 2:
        base_shape[-1], base_shape[-2] = base_shape[-2], base_shape[-1]
    elif layout == "sliced" and n >= 1:
        base_shape[-1] = base_shape[-1] * 2
    if dtype in FLOATS:
        t = (torch.randn(base_shape, generator=g) * 3).to(dtype)
        if specials and t.numel():
            flat = t.view(-1)
            picks = torch.randint(0, flat.numel(), (3,), generator=g)
            for p, v in zip(picks.tolist(), [float("nan"), float("inf"), -0.0], strict=True):
                flat[p] = v
    elif dtype == BOOL:
        t = torch.rand(base_shape, generator=g) < 0.5
    elif dtype == U8:
        t = torch.randint(0, 256, base_shape, generator=g, dtype=U8)
    else:
        t = torch.randint(-50, 51, base_shape, generator=g, dtype=dtype)
    if device == F64_REF and dtype in FLOATS:
        t = t.double()
    t = t.to(torch_device(device))
    if layout == "transposed" and n >= 2:
        t = t.transpose(-1, -2)
    elif layout == "sliced" and n >= 1:
        t = t[..., ::2]
    return t


def input_step(rng: random.Random, shape=None, dtype=None) -> tuple[str, Callable]:
    shape = random_shape(rng) if shape is None else tuple(shape)
    dtype = rng.choice(DTYPES) if dtype is None else dtype
    seed = rng.randrange(1 << 30)
    layout = rng.choice(["contiguous", "contiguous", "transposed", "sliced"])
    specials = dtype in FLOATS and rng.random() < 0.25
    text = f"input({shape}, {dtype}, seed={seed}, layout={layout}, specials={specials})"
    return text, lambda args, dev: make_input(shape, dtype, seed, layout, specials, dev)


def broadcastable_shape(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape broadcasting against `shape`: some dims set to 1, leading dims dropped or added."""
    s = [1 if rng.random() < 0.3 else d for d in shape]
    r = rng.random()
    if r < 0.2 and s:
        s = s[rng.randrange(len(s) + 1) :]
    elif r < 0.3 and len(s) < 4:
        s = [rng.choice([1, 2])] + s
    return tuple(s)


# ---- the op table -----------------------------------------------------------------------------
# Each generator gets (rng, program builder) and returns (text, fn, args, exact) or None when it
# does not apply to the values at hand. `fn(args, dev)` must build anything new (indices, second
# operands) from fixed seeds, so the CPU and vkml see the same program.

SMOOTH_UNARY = [
    "exp",
    "tanh",
    "sigmoid",
    "sin",
    "cos",
    "sqrt",
    "log",
    "rsqrt",
    "reciprocal",
    "erf",
    "atan",
    "log1p",
]
EDGE_UNARY = ("sqrt", "log", "rsqrt", "reciprocal", "log1p")
EXACT_UNARY = ["neg", "abs", "relu", "clone", "contiguous"]
JUMP_UNARY = ["floor", "ceil", "round", "trunc", "sign", "isnan", "isinf", "signbit", "logical_not"]
INT_UNARY = ["bitwise_not"]
EXACT_BINARY = ["add", "sub", "mul", "maximum", "minimum"]
SMOOTH_BINARY = ["div", "atan2"]
JUMP_BINARY = ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"]
INT_BINARY = ["bitwise_and", "bitwise_or", "bitwise_xor"]


class Builder:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.values: list[Value] = []

    def pick(self, pred=lambda v: True) -> int | None:
        ids = [i for i, v in enumerate(self.values) if pred(v)]
        return self.rng.choice(ids) if ids else None

    def partner(self, a: int, pred=lambda v: True):
        """A value broadcastable with values[a] (an existing one, or a new input); returns its id
        or a (text, fn) pair for a new input."""
        shape = tuple(self.values[a].ref.shape)
        ok = [
            i
            for i, v in enumerate(self.values)
            if i != a
            and pred(v)
            and broadcasts(shape, tuple(v.ref.shape))
            and broadcast_numel(shape, tuple(v.ref.shape)) <= MAX_BROADCAST_NUMEL
        ]
        if ok and self.rng.random() < 0.6:
            return self.rng.choice(ok)
        dtype = self.values[a].ref.dtype if self.rng.random() < 0.7 else self.rng.choice(DTYPES)
        return input_step(self.rng, broadcastable_shape(self.rng, shape), dtype)


# Two existing values may broadcast to a huge result ((600, 5, 5, 1) with (15000,): 225M elements,
# seed 193143123701, 21 GB with the float64 reference): such pairs are not picked.
MAX_BROADCAST_NUMEL = 1 << 20


def broadcast_numel(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = 1
    for d in torch.broadcast_shapes(a, b):
        n *= d
    return n


def broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    for x, y in zip(reversed(a), reversed(b), strict=False):  # the shorter shape decides
        if x != y and x != 1 and y != 1:
            return False
    return True


def is_float(v: Value) -> bool:
    return v.ref.dtype in FLOATS


def gen_unary(rng, b: Builder):
    a = b.pick()
    if a is None:
        return None
    v = b.values[a]
    r = rng.random()
    if r < 0.35 and is_float(v):
        name, exact = rng.choice(SMOOTH_UNARY), False
        if name in EDGE_UNARY and not v.exact:
            return None  # NaN or the sign of inf flips with the sign of a rounded zero
    elif r < 0.6:
        name, exact = rng.choice(EXACT_UNARY), v.exact
    elif r < 0.85 and v.exact:
        name, exact = rng.choice(JUMP_UNARY), True
    elif v.ref.dtype in INTS + (BOOL,):
        name, exact = rng.choice(INT_UNARY), v.exact
    else:
        return None
    if name == "signbit" and is_float(v):
        # IEEE 754 leaves the sign of a NaN uninterpreted, and PyTorch's CPU has no one rule: its
        # scalar bf16 path returns +NaN for NaN.neg(), its vectorised exp -NaN for NaN (fuzz seeds
        # 3001412, 3013098). Only the signs of numbers are compared.
        text = f"v{a}.signbit() & ~v{a}.isnan()"
        return text, lambda t, d: t[0].signbit() & ~t[0].isnan(), [a], exact
    return f"v{a}.{name}()", lambda t, d: getattr(t[0], name)(), [a], exact


def gen_binary(rng, b: Builder):
    a = b.pick()
    if a is None:
        return None
    va = b.values[a]
    r = rng.random()
    if r < 0.5:
        name, need_exact = rng.choice(EXACT_BINARY), False
    elif r < 0.7:
        # Not smooth at a zero divisor (inf sign, 0/0) or atan2's branch cut: exact inputs only.
        name, need_exact = rng.choice(SMOOTH_BINARY), True
    elif r < 0.9:
        name, need_exact = rng.choice(JUMP_BINARY), True
    elif va.ref.dtype in INTS + (BOOL,):
        name, need_exact = rng.choice(INT_BINARY), True
    else:
        return None
    if need_exact and not va.exact:
        return None
    other = b.partner(a, (lambda v: v.exact) if need_exact else (lambda v: True))
    if isinstance(other, int):
        exact = va.exact and b.values[other].exact and name not in SMOOTH_BINARY
        op = getattr(torch, name)
        return (
            f"torch.{name}(v{a}, v{other})",
            lambda t, d: ieee_signed_zero(name, op, d)(*zero_dim_as_on_a_gpu(t[0], t[1], d)),
            [a, other],
            exact,
        )
    text, make = other
    op = getattr(torch, name)
    return (
        f"torch.{name}(v{a}, {text})",
        lambda t, d: ieee_signed_zero(name, op, d)(t[0], make(t, d)),
        [a],
        va.exact and name not in SMOOTH_BINARY,
    )


def gen_scalar_binary(rng, b: Builder):
    a = b.pick()
    if a is None:
        return None
    scalar = rng.choice([2, -3, 0.5, 2.5, -1.25, True])
    name = rng.choice(["add", "sub", "mul", "div", "pow", "remainder", "clamp_min"])
    dtype = b.values[a].ref.dtype
    if name in ("div", "pow", "remainder") and dtype not in FLOATS:
        return None  # keep integer programs integer
    if name == "clamp_min" and (dtype == BOOL or (dtype == U8 and scalar < 0)):
        return None  # known: test_fuzz.py::test_clamp_uint8_with_negative_scalar (xfail)
    exact = (
        b.values[a].exact
        and name in ("add", "sub", "mul", "clamp_min")
        and not isinstance(scalar, float)
    )
    op = getattr(torch, name)
    return f"torch.{name}(v{a}, {scalar!r})", lambda t, d: op(t[0], scalar), [a], exact


def gen_out_variant(rng, b: Builder):
    """torch.add(a, b, out=a transposed/strided buffer): a non-contiguous output."""
    a = b.pick(lambda v: v.ref.dim() >= 2 and v.ref.dtype != BOOL)
    if a is None:
        return None
    name = rng.choice(["add", "mul", "maximum"])

    def fn(t, d):
        x = t[0]
        out = torch.empty(
            x.shape[:-2] + (x.shape[-1], x.shape[-2]), dtype=x.dtype, device=torch_device(d)
        ).transpose(-1, -2)
        ref = ieee_signed_zero(name, getattr(torch, name), d)(x, x.flip(-1))
        getattr(torch, name)(x, x.flip(-1), out=out)
        return out.copy_(ref) if str(d).startswith("cpu") else out

    return f"torch.{name}(v{a}, v{a}.flip(-1), out=<transposed buffer>)", fn, [a], b.values[a].exact


INPLACE = {
    "mul_(2)": lambda v: v.mul_(2),
    "add_(1)": lambda v: v.add_(1),
    "neg_()": lambda v: v.neg_(),
    "zero_()": lambda v: v.zero_(),
    "fill_(3)": lambda v: v.fill_(3),
}


def gen_inplace(rng, b: Builder):
    """An in-place op on a strided view of a clone: writes through a non-contiguous view."""
    a = b.pick(lambda v: v.ref.dim() >= 1 and v.ref.dtype != BOOL)
    if a is None:
        return None
    op = rng.choice(sorted(INPLACE))

    def fn(t, d):
        c = t[0].clone()
        INPLACE[op](c.transpose(0, -1)[::2])
        return c

    return f"c = v{a}.clone(); c.transpose(0, -1)[::2].{op}", fn, [a], b.values[a].exact


def pick_dims(rng, ndim: int):
    if ndim == 0 or rng.random() < 0.2:
        return None
    k = rng.choice([1, 1, 2]) if ndim > 1 else 1
    return sorted(rng.sample(range(ndim), k))


def gen_reduction(rng, b: Builder):
    a = b.pick()
    if a is None:
        return None
    v = b.values[a]
    dims = pick_dims(rng, v.ref.dim())
    keep = rng.random() < 0.5
    fl = is_float(v)
    names = (
        ["sum", "amax", "amin"]
        + (["any", "all"] if v.exact else [])
        + (["mean", "std", "var", "logsumexp"] if fl else [])
        + (["prod"] if v.exact else [])  # overflow to inf (and 0 * inf) moves with rounding
    )
    if v.exact:
        names += ["argmax", "argmin"]
    name = rng.choice(names)
    if name in ("argmax", "argmin"):  # one dim or all
        dim = None if dims is None else dims[0]
        text = f"torch.{name}(v{a}, dim={dim}, keepdim={keep})"
        return text, lambda t, d: getattr(torch, name)(t[0], dim=dim, keepdim=keep), [a], True
    if name == "logsumexp" and dims is None:
        dims = list(range(v.ref.dim()))
    # Integer sums and products wrap identically; float ones depend on the summation order.
    exact = v.exact and (
        name in ("amax", "amin", "any", "all") or (not fl and name in ("sum", "prod"))
    )
    if name == "prod" and dims is not None:
        dims = dims[0]  # prod takes one dim
    if dims is None:
        return f"torch.{name}(v{a})", lambda t, d: reduction(name, d)(t[0]), [a], exact
    text = f"torch.{name}(v{a}, dim={dims}, keepdim={keep})"
    return text, lambda t, d: reduction(name, d)(t[0], dim=dims, keepdim=keep), [a], exact


def reduction(name: str, device: str) -> Callable:
    if name == "prod" and device == F64_REF:
        return exact_prod
    return ieee_signed_zero(name, getattr(torch, name), device)


def gen_view(rng, b: Builder):
    a = b.pick()
    if a is None:
        return None
    x, ex = b.values[a].ref, b.values[a].exact
    n = x.dim()
    choices = ["unsqueeze", "reshape"]
    if n >= 1:
        choices += ["slice", "slice", "squeeze", "flip", "select", "expand"]
    if n >= 2:
        choices += ["transpose", "permute", "mT"]
    kind = rng.choice(choices)
    if kind == "transpose":
        d0, d1 = rng.sample(range(n), 2)
        return f"v{a}.transpose({d0}, {d1})", lambda t, d: t[0].transpose(d0, d1), [a], ex
    if kind == "permute":
        perm = list(range(n))
        rng.shuffle(perm)
        return f"v{a}.permute({perm})", lambda t, d: t[0].permute(perm), [a], ex
    if kind == "mT":
        return f"v{a}.mT", lambda t, d: t[0].mT, [a], ex
    if kind == "unsqueeze":
        dim = rng.randint(-n - 1, n)
        return f"v{a}.unsqueeze({dim})", lambda t, d: t[0].unsqueeze(dim), [a], ex
    if kind == "reshape":
        return f"v{a}.reshape(-1)", lambda t, d: t[0].reshape(-1), [a], ex
    dim = rng.randrange(n)
    size = x.shape[dim]
    if kind == "slice":
        start = rng.randint(0, size)
        stop = rng.randint(start, size)
        step = rng.choice([1, 2, 3])
        sl = (slice(None),) * dim + (slice(start, stop, step),)
        return f"v{a}[{':, ' * dim}{start}:{stop}:{step}]", lambda t, d: t[0][sl], [a], ex
    if kind == "squeeze":
        return f"v{a}.squeeze({dim})", lambda t, d: t[0].squeeze(dim), [a], ex
    if kind == "flip":
        return f"v{a}.flip({dim})", lambda t, d: t[0].flip(dim), [a], ex
    if kind == "select":
        if size == 0:
            return None
        i = rng.randrange(-size, size)
        return f"v{a}.select({dim}, {i})", lambda t, d: t[0].select(dim, i), [a], ex
    # expand: size-1 dims grow, one new leading dim
    shape = [rng.choice([1, 3]) if s == 1 else s for s in x.shape]
    shape = [2] + shape
    return f"v{a}.expand({shape})", lambda t, d: t[0].expand(shape), [a], ex


def index_tensor(shape, high: int, seed: int, device: str) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, max(high, 1), shape, generator=g).to(torch_device(device))


def gen_indexing(rng, b: Builder):
    a = b.pick(lambda v: v.ref.dim() >= 1)
    if a is None:
        return None
    x = b.values[a].ref
    exact = b.values[a].exact
    dim = rng.randrange(x.dim())
    size = x.shape[dim]
    seed = rng.randrange(1 << 30)
    kind = rng.choice(["gather", "index_select", "masked_fill", "take_mask", "advanced"])
    if kind in ("gather", "index_select", "advanced") and size == 0:
        return None
    if kind == "gather":
        ishape = list(x.shape)
        ishape[dim] = rng.randint(0, 4)
        ishape = [
            rng.randint(0, s) if i != dim and rng.random() < 0.3 else s
            for i, s in enumerate(ishape)
        ]
        text = f"v{a}.gather({dim}, randint(0, {size}, {ishape}, seed={seed}))"
        return text, lambda t, d: t[0].gather(dim, index_tensor(ishape, size, seed, d)), [a], exact
    if kind == "index_select":
        k = rng.randint(0, 6)
        text = f"v{a}.index_select({dim}, randint(0, {size}, ({k},), seed={seed}))"
        return (
            text,
            lambda t, d: t[0].index_select(dim, index_tensor((k,), size, seed, d)),
            [a],
            exact,
        )
    if kind == "advanced":
        k = rng.randint(0, 5)
        text = f"v{a}[randint(0, {x.shape[0]}, ({k},), seed={seed})]"
        return text, lambda t, d: t[0][index_tensor((k,), t[0].shape[0], seed, d)], [a], exact
    mshape = broadcastable_shape(rng, tuple(x.shape))
    mask_text, mask = input_step(rng, mshape, BOOL)
    if kind == "masked_fill":
        value = rng.choice([0, -1, 2.5, True]) if x.dtype in FLOATS else rng.choice([0, 7, True])
        text = f"v{a}.masked_fill({mask_text}, {value!r})"
        return text, lambda t, d: t[0].masked_fill(mask(t, d), value), [a], exact
    mask_text, mask = input_step(rng, tuple(x.shape), BOOL)  # boolean indexing needs the full shape
    return f"v{a}[{mask_text}]", lambda t, d: t[0][mask(t, d)], [a], exact


def gen_join(rng, b: Builder):
    a = b.pick(lambda v: v.ref.dim() >= 1)
    if a is None:
        return None
    x = b.values[a].ref
    exact = b.values[a].exact
    dim = rng.randrange(x.dim())
    same = [
        i
        for i, v in enumerate(b.values)
        if v.ref.dim() == x.dim()
        and all(
            s == t for k, (s, t) in enumerate(zip(v.ref.shape, x.shape, strict=True)) if k != dim
        )
    ]
    o = rng.choice(same)
    if rng.random() < 0.5:
        text = f"torch.cat([v{a}, v{o}], dim={dim})"
        return (
            text,
            lambda t, d: torch.cat([t[0], t[1]], dim=dim),
            [a, o],
            exact and b.values[o].exact,
        )
    sdim = rng.randint(0, x.dim())
    text = f"torch.stack([v{a}, v{a}.flip({dim})], dim={sdim})"
    return text, lambda t, d: torch.stack([t[0], t[0].flip(dim)], dim=sdim), [a], exact


def gen_matmul(rng, b: Builder):
    a = b.pick(lambda v: v.ref.dim() >= 1 and is_float(v))
    if a is None:
        return None
    x = b.values[a].ref
    if rng.random() < 0.3 and x.dim() >= 2:
        return f"v{a} @ v{a}.mT", lambda t, d: matmul_ref(t[0], t[0].mT, d), [a], False
    k = rng.choice([1, 3, 5, 17])
    shape = (x.shape[-1],) if rng.random() < 0.2 else (x.shape[-1], k)
    if x.dim() >= 3 and rng.random() < 0.4:
        shape = (rng.choice([1, x.shape[-3]]),) + shape  # batched, broadcast over the batch
    text, make = input_step(rng, shape, x.dtype)
    return f"v{a} @ {text}", lambda t, d: matmul_ref(t[0], make(t, d), d), [a], False


def gen_softmax_scan(rng, b: Builder):
    a = b.pick(lambda v: v.ref.dim() >= 1)
    if a is None:
        return None
    v = b.values[a]
    dim = rng.randrange(v.ref.dim())
    kind = rng.choice(["softmax", "log_softmax", "cumsum", "cumsum", "cumprod"])
    if kind in ("softmax", "log_softmax") and not is_float(v):
        return None
    if kind == "cumprod" and (not is_float(v) or v.ref.shape[dim] > 16):
        return None  # long products overflow at points that rounding moves
    exact = v.exact and kind == "cumsum" and not is_float(v)
    return f"torch.{kind}(v{a}, {dim})", lambda t, d: getattr(torch, kind)(t[0], dim), [a], exact


def gen_sort(rng, b: Builder):
    a = b.pick(lambda v: v.ref.dim() >= 1 and v.ref.dtype != BOOL)
    if a is None:
        return None
    v = b.values[a]
    dim = rng.randrange(v.ref.dim())
    desc = rng.random() < 0.5
    if v.exact and rng.random() < 0.5:
        # Exact keys: stable sort gives the same indices on both devices.
        text = f"torch.sort(v{a}, dim={dim}, descending={desc}, stable=True)"
        return (
            text,
            lambda t, d: tuple(torch.sort(t[0], dim=dim, descending=desc, stable=True)),
            [a],
            True,
        )
    if rng.random() < 0.5 and v.ref.shape[dim] > 0:
        k = rng.randint(0, v.ref.shape[dim])
        text = f"torch.topk(v{a}, {k}, dim={dim}, largest={desc}).values"
        return text, lambda t, d: torch.topk(t[0], k, dim=dim, largest=desc).values, [a], v.exact
    text = f"torch.sort(v{a}, dim={dim}, descending={desc}).values"
    return text, lambda t, d: torch.sort(t[0], dim=dim, descending=desc).values, [a], v.exact


def gen_where(rng, b: Builder):
    c = b.pick(lambda v: v.ref.dtype == BOOL and v.exact)
    x = b.pick()
    if c is None or x is None:
        return None
    other = b.partner(x)
    if isinstance(other, int):
        ex = b.values[x].exact and b.values[other].exact
        return (
            f"torch.where(v{c}, v{x}, v{other})",
            lambda t, d: torch.where(t[0], t[1], t[2]),
            [c, x, other],
            ex,
        )
    text, make = other
    return (
        f"torch.where(v{c}, v{x}, {text})",
        lambda t, d: torch.where(t[0], t[1], make(t, d)),
        [c, x],
        b.values[x].exact,
    )


def gen_cast(rng, b: Builder):
    a = b.pick()
    if a is None:
        return None
    v = b.values[a]
    to = rng.choice(DTYPES)
    if is_float(v) and to not in FLOATS:
        if not v.exact:
            return None
        # Out-of-range and NaN float->int casts are undefined in C++: clamp into range first.
        lo, hi = (0, 255) if to == U8 else (-1000, 1000)
        text = f"v{a}.nan_to_num(0, 0, 0).clamp({lo}, {hi}).to({to})"
        return text, lambda t, d: t[0].nan_to_num(0, 0, 0).clamp(lo, hi).to(to), [a], True
    return f"v{a}.to({to})", lambda t, d: t[0].to(to), [a], v.exact


# (generator, weight)
OPS = [
    (gen_unary, 4),
    (gen_binary, 5),
    (gen_scalar_binary, 2),
    (gen_out_variant, 1),
    (gen_inplace, 1),
    (gen_reduction, 3),
    (gen_view, 4),
    (gen_indexing, 3),
    (gen_join, 2),
    (gen_matmul, 2),
    (gen_softmax_scan, 2),
    (gen_sort, 2),
    (gen_where, 2),
    (gen_cast, 2),
]


# ---- generation, execution, comparison ---------------------------------------------------------


def as_tuple(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)


def generate(seed: int) -> Program:
    """Builds a program and its CPU results. A step that raises on the CPU ends the program."""
    rng = random.Random(seed)
    b = Builder(rng)
    steps: list[Step] = []
    for _ in range(rng.randint(1, 3)):
        text, make = input_step(rng)
        steps.append(Step(f"v{len(b.values)} = {text}", make, [], [len(b.values)]))
        v = make([], "cpu")
        b.values.append(Value(v, True, TOLERANCE.get(v.dtype, 0.0)))
    n_ops = rng.randint(3, 8)
    gens, weights = zip(*OPS, strict=True)
    attempts = 0
    n_inputs = len(steps)
    while len(steps) - n_inputs < n_ops and attempts < 200:
        attempts += 1
        got = rng.choices(gens, weights)[0](rng, b)
        if got is None:
            continue
        text, fn, args, exact = got
        try:
            out = as_tuple(fn([b.values[i].ref for i in args], "cpu"))
        except Exception as e:  # noqa: BLE001 (the type is what vkml must reproduce)
            if rng.random() < 0.8:
                continue  # mostly keep programs going; sometimes keep the error as the last step
            steps.append(Step(text, fn, args))
            return Program(seed, steps, b.values, type(e))
        ids = list(range(len(b.values), len(b.values) + len(out)))
        name = ", ".join(f"v{i}" for i in ids)
        steps.append(Step(f"{name} = {text}", fn, args, ids))
        tol = max([TOLERANCE.get(o.dtype, 0.0) for o in out] + [b.values[i].tol for i in args])
        b.values += [Value(o.detach().clone(), exact, tol) for o in out]
    return Program(seed, steps, b.values)


# How far beyond the CPU's own largest deviation from float64 vkml may be (as in opinfo_check.py):
# two float32 sums of the same terms in different orders each carry an error of the same size.
ROUNDING_SLACK = 2.0


def second_look(prog: Program, step: Step, inputs: list[torch.Tensor], j: int, got: torch.Tensor):
    """Second look at an output that differs from the program's CPU run. Each input passed its own
    comparison, but a later op can magnify the rounding an input carries beyond any fixed tolerance
    (a remainder jumps by its divisor, sin of a large argument, a difference that cancels, the sign
    of a rounded zero under pow(x, -3)): where an input is not bit-exact, the step is judged alone,
    run by the CPU on vkml's own inputs. Where vkml still differs, it passes only where it is at the
    float64 result (rounded to the dtype) or within ROUNDING_SLACK times the CPU's own largest error
    against it (summation order; a float32 partial product that overflows: seed 3024235). Exact
    inputs are the CPU's own, so the zero and NaN signs they carry stay as the CPU has them.
    Returns None when vkml passes, else why not."""
    if all(prog.values[i].exact for i in step.args):
        own = [prog.values[i].ref for i in step.args]
        cpu = prog.values[step.outs[j]].ref
    else:
        own = [x.cpu() for x in inputs]
        try:
            cpu = as_tuple(step.fn(own, "cpu"))[j]
        except Exception as e:  # noqa: BLE001
            return f"on vkml's inputs the CPU raised {type(e).__name__}"
        msg = compare(cpu, got)
        if msg is None:
            return None
    if cpu.dtype not in FLOATS or got.dtype != cpu.dtype or got.shape != cpu.shape:
        return "not a rounding difference"
    wide = [x.double() if x.is_floating_point() else x for x in own]
    r64 = as_tuple(step.fn(wide, F64_REF))[j].double()
    bad, _ = float_mismatches(cpu, got, 0.0)
    off_f64, _ = float_mismatches(r64.to(cpu.dtype), got, 0.0)  # past the range: inf, as CPUs do
    cpu_err = (cpu.double() - r64).abs()
    cpu_err = cpu_err[cpu_err.isfinite()]
    slack = ROUNDING_SLACK * float(cpu_err.max()) if cpu_err.numel() else 0.0
    near = (got.double() - r64).abs() <= slack
    if bool((bad & off_f64 & ~near).any()):
        return "vkml is further from float64 than the CPU's rounding"
    return None


def run_on_device(prog: Program, device: str = "vkml") -> str | None:
    """Replays the program on `device`; None when every value matches the CPU's (or the step's
    CPU result on the device's own inputs, see second_look), else the first mismatch."""
    vals: list[torch.Tensor] = []
    for k, step in enumerate(prog.steps):
        last = k == len(prog.steps) - 1
        inputs = [vals[i] for i in step.args]
        try:
            out = as_tuple(step.fn(inputs, device))
        except Exception as e:  # noqa: BLE001
            if last and prog.cpu_error is not None and isinstance(e, prog.cpu_error):
                return None
            want = prog.cpu_error.__name__ if last and prog.cpu_error else "no error"
            return f"step {k} `{step.text}`: vkml raised {type(e).__name__}: {e} (CPU: {want})"
        if last and prog.cpu_error is not None:
            return f"step {k} `{step.text}`: CPU raised {prog.cpu_error.__name__}, vkml did not"
        for j, (i, o) in enumerate(zip(step.outs, out, strict=True)):
            got = o.cpu()
            msg = compare(prog.values[i].ref, got, prog.values[i].tol)
            if msg and step.args:
                why = second_look(prog, step, inputs, j, got)
                msg = None if why is None else f"{msg} ({why})"
            if msg:
                return f"step {k} `{step.text}` v{i}: {msg}"
        vals += list(out)
    return None


def check_seed(seed: int) -> str | None:
    prog = generate(seed)
    msg = run_on_device(prog)
    return None if msg is None else f"{msg}\n{prog.text()}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--minutes", type=float, default=30.0, help="how long to fuzz (random seeds)")
    ap.add_argument(
        "--seed", type=int, action="append", help="replay these seeds only (prints the program)"
    )
    ap.add_argument(
        "--first-seed", type=int, default=None, help="start of the seed range (default: random)"
    )
    ap.add_argument(
        "--progress-file",
        default=None,
        help="write each seed here before running it (finds a program that was killed)",
    )
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", category=UserWarning)  # std/var dof notes, on both devices
    import torch_vkml  # noqa: F401  (registers the device)

    if args.seed:
        bad = 0
        for s in args.seed:
            print(generate(s).text())
            msg = run_on_device(generate(s))
            print("OK" if msg is None else f"MISMATCH: {msg}")
            bad += msg is not None
        return 1 if bad else 0
    seed = (
        args.first_seed if args.first_seed is not None else random.SystemRandom().randrange(1 << 40)
    )
    deadline = time.monotonic() + args.minutes * 60
    count, failures = 0, []
    print(f"fuzz: seeds from {seed} (rerun a range with --first-seed {seed})", flush=True)
    while time.monotonic() < deadline:
        if args.progress_file:
            with open(args.progress_file, "w") as f:
                f.write(f"{seed}\n")
        msg = check_seed(seed)
        count += 1
        if msg:
            failures.append(seed)
            print(
                f"FAIL seed {seed} (replay: tests/torch/conformance/fuzz_programs.py --seed {seed})\n{msg}\n",
                flush=True,
            )
        seed += 1
        if count % 500 == 0:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            print(
                f"{count} programs, {len(failures)} failing (seed {seed}, peak RSS {rss} MiB)",
                flush=True,
            )
    print(
        f"fuzz: {count} programs in {args.minutes:g} min, {len(failures)} failing seeds: {failures}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
