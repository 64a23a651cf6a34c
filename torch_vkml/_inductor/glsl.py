"""GLSL pieces of the vkml Inductor backend: types, the index-expression printer, the prelude of
helper functions every generated kernel starts with, and the pointwise op overrides."""

from __future__ import annotations

import itertools
import math

import sympy
import torch
from torch._inductor.codegen.common import IndentedBuffer, OpOverrides
from torch._inductor.utils import get_bounds_index_expr
from torch._inductor.virtualized import V, ops
from torch.utils._sympy.printers import CppPrinter

# Type of a value in registers: 8/16-bit integers compute in int, fp16/bf16 in float (as CUDA's
# Inductor does).
COMPUTE_TYPE = {
    torch.bool: "bool",
    torch.int8: "int",
    torch.uint8: "int",
    torch.int16: "int",
    torch.int32: "int",
    torch.int64: "int64_t",
    torch.float16: "float",
    torch.bfloat16: "float",
    torch.float32: "float",
    torch.float64: "double",
}

# Pointer type and element size of each dtype in memory (vkml_common.glsl's names).
MEMORY_TYPE = {
    torch.bool: ("PU8", 1),
    torch.int8: ("PI8", 1),
    torch.uint8: ("PU8", 1),
    torch.int16: ("PI16", 2),
    torch.int32: ("PI32", 4),
    torch.int64: ("PI64", 8),
    torch.float16: ("PU16", 2),
    torch.bfloat16: ("PU16", 2),
    torch.float32: ("PF32", 4),
    torch.float64: ("PF64", 8),
}

FLOAT_TYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def compute_type(dtype: torch.dtype | None) -> str:
    if dtype is None:
        return "float"
    if dtype not in COMPUTE_TYPE:
        raise NotImplementedError(f"vkml torch.compile: dtype {dtype} is not supported")
    return COMPUTE_TYPE[dtype]


def load_expr(ptr: str, index: str, dtype: torch.dtype) -> str:
    """A load of element `index` of the tensor at address `ptr`, as its compute type."""
    ptype, size = MEMORY_TYPE[dtype]
    addr = f"{ptr} + uint64_t({index}) * {size}ul" if size > 1 else f"{ptr} + uint64_t({index})"
    raw = f"{ptype}({addr}).v"
    if dtype == torch.bool:
        return f"({raw} != uint8_t(0))"
    if dtype == torch.float16:
        return f"vk_f16_to_float({raw})"
    if dtype == torch.bfloat16:
        return f"vk_bf16_to_float({raw})"
    return f"{compute_type(dtype)}({raw})"


def store_stmt(ptr: str, index: str, value: str, dtype: torch.dtype) -> str:
    """A store of `value` into element `index`, rounded or truncated to the memory type."""
    ptype, size = MEMORY_TYPE[dtype]
    addr = f"{ptr} + uint64_t({index}) * {size}ul" if size > 1 else f"{ptr} + uint64_t({index})"
    if dtype == torch.bool:
        v = f"uint8_t(bool({value}) ? 1 : 0)"
    elif dtype == torch.float16:
        v = f"vk_float_to_f16(float({value}))"
    elif dtype == torch.bfloat16:
        v = f"vk_float_to_bf16(float({value}))"
    elif dtype in (torch.uint8, torch.int8, torch.int16):
        v = f"{ {torch.uint8: 'uint8_t', torch.int8: 'int8_t', torch.int16: 'int16_t'}[dtype] }(int({value}))"
    else:
        v = f"{compute_type(dtype)}({value})"
    return f"{ptype}({addr}).v = {v};"


def float_literal(value: float, dtype: torch.dtype) -> str:
    double = dtype == torch.float64
    t = "double" if double else "float"
    if math.isnan(value):
        return f"{t}(uintBitsToFloat(0x7fc00000u))"
    if math.isinf(value):
        return f"{t}(uintBitsToFloat({'0xff800000u' if value < 0 else '0x7f800000u'}))"
    text = repr(float(value))
    if "e" not in text and "." not in text:
        text += ".0"
    return f"{text}lf" if double else f"float({text})"


def constant_literal(value, dtype: torch.dtype) -> str:
    if dtype == torch.bool:
        return "true" if value else "false"
    if dtype in FLOAT_TYPES:
        return float_literal(float(value), dtype)
    if isinstance(value, float) and not value.is_integer():
        return float_literal(value, torch.float32)
    v = int(value)
    if dtype == torch.int64 or not (-(2**31) <= v < 2**31):
        return f"{v}l" if v != -(2**63) else "(-9223372036854775807l - 1l)"
    return str(v)


class GlslExprPrinter(CppPrinter):
    """Index expressions (sympy) as GLSL integer arithmetic in `index_type` (int or int64_t)."""

    def __init__(self, index_type: str = "int64_t"):
        super().__init__()
        self.t = index_type

    def _print_Integer(self, expr):
        v = int(expr)
        if self.t == "int" and -(2**31) <= v < 2**31:
            return str(v)
        return constant_literal(v, torch.int64)

    def _print_Symbol(self, expr):
        return str(expr)

    def _print_FloorDiv(self, expr):
        x, div = expr.args
        return f"vk_floordiv({self.t}({self.doprint(x)}), {self.t}({self.doprint(div)}))"

    def _print_ModularIndexing(self, expr):
        x, div, mod = expr.args
        x = f"{self.t}({self.doprint(x)})"
        if div != 1:
            x = f"vk_floordiv({x}, {self.t}({self.doprint(div)}))"
        return f"vk_pymod({x}, {self.t}({self.doprint(mod)}))"

    def _print_PythonMod(self, expr):
        x, div = expr.args
        return f"vk_pymod({self.t}({self.doprint(x)}), {self.t}({self.doprint(div)}))"

    def _print_Mod(self, expr):
        return self._print_PythonMod(expr)

    def _print_CleanDiv(self, expr):
        return self._print_FloorDiv(expr)

    def _print_Where(self, expr):
        c, p, q = (self.doprint(a) for a in expr.args)
        return f"(({c}) ? ({p}) : ({q}))"

    def _print_min_max(self, expr, name):
        args = [f"{self.t}({self.doprint(a)})" for a in expr.args]
        out = args[0]
        for a in args[1:]:
            out = f"{name}({out}, {a})"
        return out

    def _print_Min(self, expr):
        return self._print_min_max(expr, "min")

    def _print_Max(self, expr):
        return self._print_min_max(expr, "max")

    def _print_Abs(self, expr):
        return f"abs({self.t}({self.doprint(expr.args[0])}))"

    def _print_Pow(self, expr):
        base, exp = expr.args
        if exp.is_integer and int(exp) >= 0:
            return "(" + " * ".join([f"({self.doprint(base)})"] * int(exp) or ["1"]) + ")"
        return f"pow(double({self.doprint(base)}), double({self.doprint(exp)}))"

    def _print_PowByNatural(self, expr):
        return self._print_Pow(expr)

    def _print_ToFloat(self, expr):
        return f"double({self.doprint(expr.args[0])})"

    def _print_Float(self, expr):
        return float_literal(float(expr), torch.float64)

    def _print_IntTrueDiv(self, expr):
        a, b = expr.args
        return f"(double({self.doprint(a)}) / double({self.doprint(b)}))"

    def _print_FloatTrueDiv(self, expr):
        return self._print_IntTrueDiv(expr)

    def _print_floor(self, expr):
        r = f"floor(double({self.doprint(expr.args[0])}))"
        return f"{self.t}({r})" if expr.is_integer else r

    _print_FloorToInt = _print_floor

    def _print_ceiling(self, expr):
        r = f"ceil(double({self.doprint(expr.args[0])}))"
        return f"{self.t}({r})" if expr.is_integer else r

    _print_CeilToInt = _print_ceiling

    def _print_TruncToInt(self, expr):
        return f"{self.t}(trunc(double({self.doprint(expr.args[0])})))"

    def _print_Rational(self, expr):
        if expr.q == 1:
            return self._print_Integer(sympy.Integer(expr.p))
        return f"(double({expr.p}) / double({expr.q}))"

    def _print_Not(self, expr):
        return f"(!({self.doprint(expr.args[0])}))"

    def _print_And(self, expr):
        return "(" + " && ".join(f"({self.doprint(a)})" for a in expr.args) + ")"

    def _print_Or(self, expr):
        return "(" + " || ".join(f"({self.doprint(a)})" for a in expr.args) + ")"


# Helpers every kernel includes. IEEE cases are explicit: drivers may lower compare-selects to
# min/max, which drop NaN.
def nan_min_max(t: str) -> str:
    """vk_max / vk_min on GLSL type t: NaN wins, as torch.maximum and torch.minimum."""
    return "".join(
        f"{t} vk_{name}({t} a, {t} b) {{ return (isnan(a) || a {cmp} b) ? a : "
        f"(isnan(b) ? b : {name}(a, b)); }}\n"
        for name, cmp in (("max", ">"), ("min", "<")))


PRELUDE = r"""
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_scalar_block_layout : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(buffer_reference, scalar, buffer_reference_align = 1) buffer PU8 { uint8_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 1) buffer PI8 { int8_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 2) buffer PU16 { uint16_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 2) buffer PI16 { int16_t v; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer PI32 { int v; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer PF32 { float v; };
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PI64 { int64_t v; };
#ifdef VK_FP64
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer PF64 { double v; };
#endif
float vk_f16_to_float(uint16_t h) { return unpackHalf2x16(uint(h)).x; }
float vk_bf16_to_float(uint16_t b) { return uintBitsToFloat(uint(b) << 16); }
uint16_t vk_float_to_bf16(float f) {
  uint u = floatBitsToUint(f);
  if (isnan(f)) return uint16_t((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
// Rounds to the nearest fp16 (ties to even) in integer arithmetic, then packs the exact value.
uint16_t vk_float_to_f16(float x) {
  uint u = floatBitsToUint(x), sign = u & 0x80000000u, mag = u & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return uint16_t((sign >> 16) | 0x7E00u);
  if (mag >= 0x477FF000u) return uint16_t((sign >> 16) | 0x7C00u);
  if (mag < 0x38800000u) {
    uint q = uint(roundEven(uintBitsToFloat(mag) * 16777216.0));
    return uint16_t((sign >> 16) | q);
  }
  mag = (mag + 0xFFFu + ((mag >> 13) & 1u)) & ~0x1FFFu;
  return uint16_t((sign >> 16) | (((mag >> 23) - 112u) << 10) | ((mag >> 13) & 0x3FFu));
}
float vk_round_f16(float x) { return vk_f16_to_float(vk_float_to_f16(x)); }
float vk_round_bf16(float x) { return vk_bf16_to_float(vk_float_to_bf16(x)); }
// int to int64_t without a sign-extension instruction: LLVM 15 (lavapipe) folds a signed compare
// of a sign-extended value with a constant wrongly.
int64_t vk_i64(int v) { return int64_t(uint64_t(uint(v))) | (v < 0 ? int64_t(0xFFFFFFFF00000000ul) : 0l); }
int64_t vk_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int vk_floordiv(int a, int b) {
  int q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t vk_pymod(int64_t a, int64_t b) { int64_t r = a - (a / b) * b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
int vk_pymod(int a, int b) { int r = a - (a / b) * b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
int64_t vk_cmod(int64_t a, int64_t b) { return a - (a / b) * b; }
int vk_cmod(int a, int b) { return a - (a / b) * b; }
float vk_fpymod(float a, float b) { float r = a - b * trunc(a / b); return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r; }
""" + nan_min_max("float") + r"""// atan2 with C's results for a zero y, where GLSL's atan(y, x) is undefined (x zero too) or may
// drop the zero's sign: +-0 or +-pi by the signs of y and x.
float vk_atan2(float y, float x) {
  if (y != 0.0 || isnan(x)) return atan(y, x);
  float r = (x < 0.0 || (x == 0.0 && (floatBitsToUint(x) >> 31) != 0u)) ? 3.14159265 : 0.0;
  return (floatBitsToUint(y) >> 31) != 0u ? -r : r;
}
float vk_tanh(float x) {
  float a = abs(x);
  if (a < 0.3) { float s = x * x; return x + x * s * (-0.33333333 + s * (0.13333333 + s * (-0.053968254 + s * (0.021869488 - s * 0.0088632355)))); }
  if (a > 9.0) return sign(x);
  return sign(x) * (1.0 - 2.0 / (exp(2.0 * a) + 1.0));
}
// erf to within 1.5e-7 (Abramowitz and Stegun 7.1.26), with an odd series near zero.
float vk_erf(float x) {
  float a = abs(x);
  if (a < 0.5) { float s = x * x; return x * (1.1283792 + s * (-0.37612638 + s * (0.11283792 + s * (-0.026866170 + s * 0.0052239775)))); }
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float y = 1.0 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * exp(-a * a);
  return x < 0.0 ? -y : y;
}
float vk_expm1(float x) { if (abs(x) < 1e-5) return x + 0.5 * x * x; float u = exp(x); if (u == 1.0) return x; float um1 = u - 1.0; if (isinf(u)) return u; return um1 * x / log(u); }
float vk_log1p(float x) { float u = 1.0 + x; if (u == 1.0) return x; return log(u) * x / (u - 1.0); }
float vk_pow(float a, float b) {
  if (b == 0.0) return 1.0;
  if (b == 1.0) return a;
  if (b == 2.0) return a * a;
  if (b == 0.5) return sqrt(a);
  if (a < 0.0 && b == trunc(b)) { float p = pow(-a, b); return (mod(b, 2.0) == 1.0) ? -p : p; }
  return pow(a, b);
}
"""


def _dtype(x) -> torch.dtype | None:
    return getattr(x, "dtype", None)


def _is_float(x) -> bool:
    return _dtype(x) in FLOAT_TYPES


_SMALL_INT_WRAP = {torch.uint8: "({} & 255)", torch.int8: "int(int8_t({}))",
                   torch.int16: "int(int16_t({}))"}


def _wrap_small_int(expr: str, *args) -> str:
    """8- and 16-bit integers compute in int: an arithmetic result wraps to its type, as the
    CPU's does, before a comparison or a maximum can see the unwrapped value."""
    dtypes = {_dtype(a) for a in args} - {None}
    fmt = _SMALL_INT_WRAP.get(dtypes.pop()) if len(dtypes) == 1 else None
    return fmt.format(expr) if fmt else expr


class VkmlOverrides(OpOverrides):
    """Pointwise ops as GLSL expressions. Values are in their compute type (COMPUTE_TYPE)."""

    @staticmethod
    def to_dtype(x, dtype, src_dtype=None, use_compute_types=True):
        if dtype == torch.float16:
            return f"vk_round_f16(float({x}))"
        if dtype == torch.bfloat16:
            return f"vk_round_bf16(float({x}))"
        if dtype == torch.bool:
            return f"bool({x})"
        if dtype == torch.uint8:
            return f"int(uint8_t(int({x})))" if _is_float(x) else f"({x} & 255)"
        if dtype == torch.int8:
            return f"int(int8_t(int({x})))"
        if dtype == torch.int16:
            return f"int(int16_t(int({x})))"
        if dtype == torch.int64 and _dtype(x) in (torch.int8, torch.uint8, torch.int16, torch.int32):
            return f"vk_i64(int({x}))"
        return f"{compute_type(dtype)}({x})"

    @staticmethod
    def to_dtype_bitcast(x, dtype, src_dtype):
        pairs = {
            (torch.float32, torch.int32): "floatBitsToInt",
            (torch.int32, torch.float32): "intBitsToFloat",
        }
        fn = pairs.get((src_dtype, dtype))
        if fn is None:
            raise NotImplementedError(f"vkml torch.compile: bitcast {src_dtype} -> {dtype}")
        return f"{fn}({x})"

    @staticmethod
    def constant(value, dtype):
        return constant_literal(value, dtype)

    @staticmethod
    def index_expr(expr, dtype):
        idx = V.kernel.index_to_str(V.kernel.prepare_indexing(expr))
        if getattr(V.kernel, "idx_t", "int64_t") == "int":
            idx = f"vk_i64({idx})"
        var = V.kernel.cse.generate(V.kernel.compute, idx, bounds=get_bounds_index_expr(expr),
                                    dtype=torch.int64)
        return ops.to_dtype(var, dtype)

    @staticmethod
    def value_expr(expr, dtype):
        return VkmlOverrides.index_expr(expr, dtype)

    @staticmethod
    def masked(mask, body, other):
        scoped = IndentedBuffer()
        with V.kernel.swap_buffers(scoped), scoped.indent():
            V.kernel.cse.iter_buffer_ids = itertools.count()
            V.kernel.cse.name_prefix += "_m"
            rc = body()
        dtype = _dtype(rc) or torch.float32
        if isinstance(other, float) or isinstance(other, int) or isinstance(other, bool):
            other_str = constant_literal(other, dtype)
        else:
            other_str = str(other)
        key = f"{mask}:{scoped.getvalue()}:{other_str}"
        var = V.kernel.cse.try_get(key)
        if not var:
            var = V.kernel.cse.newvar(dtype=dtype)
            V.kernel.cse.put(key, var)
            t = compute_type(dtype)
            V.kernel.compute.writelines([f"{t} {var};", f"if ({mask}) {{"])
            with V.kernel.compute.indent():
                V.kernel.compute.splice(scoped)
                V.kernel.compute.writeline(f"{var} = {t}({rc});")
            V.kernel.compute.writeline(f"}} else {var} = {t}({other_str});")
        return var

    @staticmethod
    def where(a, b, c):
        return f"(({a}) ? ({b}) : ({c}))"

    @staticmethod
    def floordiv(a, b):
        return f"vk_floordiv({a}, {b})"

    @staticmethod
    def truncdiv(a, b):
        return f"({a} / {b})"

    @staticmethod
    def mod(a, b):
        return f"vk_cmod({a}, {b})" if not _is_float(a) else f"({a} - {b} * trunc({a} / {b}))"

    @staticmethod
    def remainder(a, b):
        return f"vk_fpymod({a}, {b})" if _is_float(a) or _is_float(b) else f"vk_pymod({a}, {b})"

    @staticmethod
    def fmod(a, b):
        return f"({a} - {b} * trunc({a} / {b}))"

    @staticmethod
    def pow(a, b):
        if _is_float(a) or _is_float(b):
            return f"vk_pow(float({a}), float({b}))"
        return f"int64_t(round(pow(double({a}), double({b}))))"

    @staticmethod
    def _extremum(name, bool_op, a, b):
        if _is_float(a) or _is_float(b):
            return f"vk_{name}({a}, {b})"
        if _dtype(a) == torch.bool:
            return f"({a} {bool_op} {b})"
        return f"{name}({a}, {b})"

    @staticmethod
    def maximum(a, b):
        return VkmlOverrides._extremum("max", "||", a, b)

    @staticmethod
    def minimum(a, b):
        return VkmlOverrides._extremum("min", "&&", a, b)

    @staticmethod
    def logical_not(a):
        return f"(!bool({a}))"

    @staticmethod
    def logical_and(a, b):
        return f"(bool({a}) && bool({b}))"

    @staticmethod
    def logical_or(a, b):
        return f"(bool({a}) || bool({b}))"

    @staticmethod
    def logical_xor(a, b):
        return f"(bool({a}) != bool({b}))"

    @staticmethod
    def and_(a, b):
        return f"({a} && {b})" if _dtype(a) == torch.bool else f"({a} & {b})"

    @staticmethod
    def or_(a, b):
        return f"({a} || {b})" if _dtype(a) == torch.bool else f"({a} | {b})"

    @staticmethod
    def xor(a, b):
        return f"({a} != {b})" if _dtype(a) == torch.bool else f"({a} ^ {b})"

    @staticmethod
    def bitwise_and(a, b):
        return VkmlOverrides.and_(a, b)

    @staticmethod
    def bitwise_or(a, b):
        return VkmlOverrides.or_(a, b)

    @staticmethod
    def bitwise_xor(a, b):
        return VkmlOverrides.xor(a, b)

    @staticmethod
    def bitwise_not(a):
        return f"(!{a})" if _dtype(a) == torch.bool else f"(~{a})"

    @staticmethod
    def lt(a, b):
        return VkmlOverrides._compare(a, b, "<")

    @staticmethod
    def gt(a, b):
        return VkmlOverrides._compare(a, b, ">")

    @staticmethod
    def le(a, b):
        return VkmlOverrides._compare(a, b, "<=")

    @staticmethod
    def ge(a, b):
        return VkmlOverrides._compare(a, b, ">=")

    @staticmethod
    def _compare(a, b, op):
        if _dtype(a) == torch.bool or _dtype(b) == torch.bool:
            return f"(int({a}) {op} int({b}))"
        return f"({a} {op} {b})"

    @staticmethod
    def add(a, b):
        return _wrap_small_int(f"({a} + {b})", a, b)

    @staticmethod
    def sub(a, b):
        return _wrap_small_int(f"({a} - {b})", a, b)

    @staticmethod
    def mul(a, b):
        return _wrap_small_int(f"({a} * {b})", a, b)

    @staticmethod
    def neg(a):
        return _wrap_small_int(f"(-{a})", a)

    @staticmethod
    def abs(a):
        return f"abs({a})"

    @staticmethod
    def sign(a):
        return f"sign({a})"

    @staticmethod
    def signbit(a):
        return f"((floatBitsToUint(float({a})) >> 31) != 0u)"

    @staticmethod
    def isnan(a):
        return f"isnan({a})" if _is_float(a) else "false"

    @staticmethod
    def isinf(a):
        return f"isinf({a})" if _is_float(a) else "false"

    @staticmethod
    def exp(a):
        return f"exp({a})"

    @staticmethod
    def exp2(a):
        return f"exp2({a})"

    @staticmethod
    def expm1(a):
        return f"vk_expm1(float({a}))"

    @staticmethod
    def log(a):
        return f"log({a})"

    @staticmethod
    def log2(a):
        return f"log2({a})"

    @staticmethod
    def log1p(a):
        return f"vk_log1p(float({a}))"

    @staticmethod
    def sqrt(a):
        return f"sqrt({a})"

    @staticmethod
    def rsqrt(a):
        return f"(1.0 / sqrt({a}))"

    @staticmethod
    def sigmoid(a):
        return f"(1.0 / (1.0 + exp(-({a}))))"

    @staticmethod
    def tanh(a):
        return f"vk_tanh(float({a}))"

    @staticmethod
    def erf(a):
        return f"vk_erf(float({a}))"

    @staticmethod
    def floor(a):
        return f"floor({a})" if _is_float(a) else str(a)

    @staticmethod
    def ceil(a):
        return f"ceil({a})" if _is_float(a) else str(a)

    @staticmethod
    def trunc(a):
        return f"trunc({a})" if _is_float(a) else str(a)

    @staticmethod
    def round(a):
        return f"roundEven({a})" if _is_float(a) else str(a)

    @staticmethod
    def atan2(a, b):
        return f"vk_atan2({a}, {b})"

    @staticmethod
    def hypot(a, b):
        return f"length(vec2({a}, {b}))"

    @staticmethod
    def copysign(a, b):
        return f"(abs({a}) * ((floatBitsToUint(float({b})) >> 31) != 0u ? -1.0 : 1.0))"


for _name in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
              "atanh"):
    setattr(VkmlOverrides, _name, staticmethod(lambda a, _f=_name: f"{_f}({a})"))
