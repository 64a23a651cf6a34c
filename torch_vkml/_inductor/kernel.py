"""VkmlKernel: one GLSL compute shader per fused Inductor node, and its scheduling class.

Pointwise kernels run one invocation per element in a grid-stride loop. Reduction kernels give
each output row one workgroup: every invocation accumulates a strided part of the row in
registers, then a shared-memory tree combines the partial results (no subgroup operations, so the
subgroup size never matters)."""

from __future__ import annotations

import itertools
import math

import sympy
import torch
from torch._inductor.codegen.common import CSE, DeferredLine, IndentedBuffer
from torch._inductor.codegen.simd import SIMDKernel, SIMDScheduling
from torch._inductor.utils import get_kernel_metadata
from torch._inductor.virtualized import V

from .glsl import (
    PRELUDE,
    GlslExprPrinter,
    VkmlOverrides,
    compute_type,
    load_expr,
    nan_min_max,
    store_stmt,
)

POINTWISE_WORKGROUP = 256
MAX_REDUCTION_WORKGROUP = 256
MIN_REDUCTION_WORKGROUP = 32


def _index_dtype(kernel) -> torch.dtype:
    """The index dtype Inductor chose for a kernel (its attribute's name differs by release)."""
    for attr in ("get_index_dtype_as_torch_dtype",):
        if hasattr(kernel, attr):
            return getattr(kernel, attr)()
    dt = getattr(kernel, "_index_dtype", None)
    if isinstance(dt, torch.dtype):
        return dt
    return torch.int64


class VkmlCSE(CSE):
    """CSE whose new variables are declared with their GLSL type (GLSL has no `auto`)."""

    _last_dtype = None

    @property
    def prefix(self):
        return f"{compute_type(self._last_dtype)} "

    @prefix.setter
    def prefix(self, value):
        pass

    def newvar(self, *args, **kwargs):
        # newvar(bounds, dtype, shape): positional or by keyword, depending on the caller
        self._last_dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
        return super().newvar(*args, **kwargs)


class VkmlKernel(SIMDKernel):
    overrides = VkmlOverrides  # type: ignore[assignment]
    suffix = ";"
    newvar_prefix = ""
    sexpr = GlslExprPrinter().doprint
    kexpr = sexpr
    force_int64_index = False  # tests: 64-bit index arithmetic on small shapes too

    def __init__(self, tiling, **kwargs):
        super().__init__(tiling, **kwargs)
        # 32-bit index arithmetic where Inductor finds every index below 2^31: 64-bit division
        # is many times slower on GPUs.
        small = _index_dtype(self) == torch.int32
        self.idx_t = "int" if small and not self.force_int64_index else "int64_t"
        self.sexpr = self.kexpr = GlslExprPrinter(self.idx_t).doprint
        self.cse = VkmlCSE(self.newvar_prefix, self.suffix)
        self.acc_ids = itertools.count()
        self.shared_decls = IndentedBuffer()
        self.open_loops: list = []
        self.uses_fp64 = False

    @property
    def index_dtype(self) -> str:
        return self.idx_t

    def dtype_to_str(self, dtype: torch.dtype) -> str:
        return compute_type(dtype)

    def is_reduction_kernel(self) -> bool:
        # Pointwise kernels carry a reduction axis of one element: they stay pointwise.
        features = getattr(self, "features", None)
        if features is not None and hasattr(features, "is_reduction"):
            return features.is_reduction()
        return any(t.is_reduction and t.numel != 1 for t in self.range_trees)

    def workgroup_size(self) -> int:
        if not self.is_reduction_kernel():
            return POINTWISE_WORKGROUP
        rnumel = math.prod(t.numel for t in self.range_trees if t.is_reduction)
        if isinstance(rnumel, (int, sympy.Integer)):
            n = max(int(rnumel), 1)
            return max(MIN_REDUCTION_WORKGROUP, min(MAX_REDUCTION_WORKGROUP, 1 << (n - 1).bit_length()))
        return MAX_REDUCTION_WORKGROUP

    def _note_dtype(self, dtype):
        if dtype == torch.float64:
            self.uses_fp64 = True

    # -- memory -----------------------------------------------------------------------------
    def load(self, name: str, index: sympy.Expr):
        var = self.args.input(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        self._note_dtype(dtype)
        line = load_expr(var, self.index_to_str(index), dtype)
        cdtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
        return self.cse.generate(self.loads, line, dtype=cdtype)

    def store(self, name, index, value, mode=None):
        if mode is not None:
            raise NotImplementedError(f"vkml torch.compile: store mode {mode}")
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        self._note_dtype(dtype)
        line = store_stmt(var, self.index_to_str(index), str(value), dtype)
        # Deferred: the line disappears if the buffer turns out to be needed only in here.
        if self.inside_reduction:
            self.compute.writeline(DeferredLine(name, line))
        elif self.is_reduction_kernel():
            self.stores.writeline(DeferredLine(name, f"if (vk_lid == 0u) {line}"))
        else:
            self.stores.writeline(DeferredLine(name, line))

    def store_reduction(self, name, index, value):
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        self._note_dtype(dtype)
        line = store_stmt(var, self.index_to_str(index), str(value), dtype)
        self.stores.writeline(DeferredLine(name, f"if (vk_lid == 0u) {line}"))

    def check_bounds(self, expr, size, lower, upper):
        # Indirect indices are not checked on the device (no device-side assert channel).
        pass

    # -- reductions -------------------------------------------------------------------------
    def _shared(self, ctype: str) -> str:
        name = f"vk_sh{next(self.acc_ids)}"
        self.shared_decls.writeline(f"shared {ctype} {name}[VK_WG];")
        return name

    def _acc(self, ctype: str, init: str) -> str:
        name = f"vk_acc{next(self.acc_ids)}"
        self.indexing_code.writeline(f"{ctype} {name} = {init};")
        return name

    def _tree(self, arrays, combine_lines):
        """Shared-memory tree over VK_WG entries; combine_lines(dst_index, src_index)."""
        s = self.stores
        s.writeline("barrier();")
        s.writeline("for (uint vk_s = VK_WG / 2u; vk_s > 0u; vk_s >>= 1) {")
        with s.indent():
            s.writeline("if (vk_lid < vk_s) {")
            with s.indent():
                s.writelines(combine_lines("vk_lid", "vk_lid + vk_s"))
            s.writeline("}")
            s.writeline("barrier();")
        s.writeline("}")

    def _result(self, dtype, expr):
        var = self.cse.newvar(dtype=dtype)
        self.stores.writeline(f"{compute_type(dtype)} {var} = {expr};")
        return var

    def reduction(self, dtype, src_dtype, reduction_type, value):
        key = (src_dtype, reduction_type, value)
        if key in self.cse.reduction_cache:
            return self.cse.reduction_cache[key]
        result = self._reduction(dtype, src_dtype, reduction_type, value)
        self.cse.reduction_cache[key] = result
        return result

    def _limits(self, ctype):
        if ctype == "float":
            return "uintBitsToFloat(0xff800000u)", "uintBitsToFloat(0x7f800000u)"
        if ctype == "double":
            return "double(uintBitsToFloat(0xff800000u))", "double(uintBitsToFloat(0x7f800000u))"
        if ctype == "int64_t":
            return "(-9223372036854775807l - 1l)", "9223372036854775807l"
        if ctype == "bool":
            return "false", "true"
        return "(-2147483647 - 1)", "2147483647"

    def _reduction(self, dtype, src_dtype, reduction_type, value):
        assert self.inside_reduction
        self._note_dtype(dtype)
        self._note_dtype(src_dtype)
        s = self.stores
        if reduction_type in ("sum", "prod", "xor_sum", "any", "max", "min"):
            acc_dtype = dtype if dtype not in (torch.float16, torch.bfloat16) else torch.float32
            if reduction_type in ("max", "min"):
                acc_dtype = src_dtype if src_dtype not in (torch.float16, torch.bfloat16) else torch.float32
            ct = compute_type(acc_dtype)
            lo, hi = self._limits(ct)
            init, op = {
                "sum": (f"{ct}(0)", "({a} + {b})"),
                "prod": (f"{ct}(1)", "({a} * {b})"),
                "xor_sum": (f"{ct}(0)", "({a} ^ {b})"),
                "any": ("false", "({a} || {b})"),
                "max": (lo, "vk_max({a}, {b})" if ct in ("float", "double") else "max({a}, {b})"),
                "min": (hi, "vk_min({a}, {b})" if ct in ("float", "double") else "min({a}, {b})"),
            }[reduction_type]
            if ct == "bool" and reduction_type in ("max", "sum"):
                op = "({a} || {b})"
            if ct == "bool" and reduction_type == "min":
                op = "({a} && {b})"
            acc = self._acc(ct, init)
            self.compute.writeline(f"{acc} = {op.format(a=acc, b=f'{ct}({value})')};")
            sh = self._shared(ct)
            s.writeline(f"{sh}[vk_lid] = {acc};")
            self._tree([sh], lambda d, r: [f"{sh}[{d}] = {op.format(a=f'{sh}[{d}]', b=f'{sh}[{r}]')};"])
            out = self._result(acc_dtype, f"{sh}[0]")
            s.writeline("barrier();")
            return out
        if reduction_type in ("argmax", "argmin"):
            vt = compute_type(src_dtype)
            lo, hi = self._limits(vt)
            better = ">" if reduction_type == "argmax" else "<"
            fl = vt in ("float", "double")
            acc_v = self._acc(vt, lo if reduction_type == "argmax" else hi)
            acc_i = self._acc("int64_t", "9223372036854775807l")
            rroot = next(t for t in self.range_trees if t.is_reduction).name

            def take(v2, i2, v1, i1):
                nan = f"(isnan({v2}) && !isnan({v1})) || (isnan({v2}) && isnan({v1}) && {i2} < {i1}) || " if fl else ""
                return (f"({nan}(!{'isnan(' + v1 + ') && ' if fl else ''}"
                        f"({v2} {better} {v1} || ({v2} == {v1} && {i2} < {i1}))))")

            cv = f"{vt}({value})"
            ri = f"vk_i64({rroot})" if self.idx_t == "int" else rroot
            self.compute.writeline(
                f"if ({take(cv, ri, acc_v, acc_i)}) {{ {acc_v} = {cv}; {acc_i} = {ri}; }}")
            shv, shi = self._shared(vt), self._shared("int64_t")
            s.writeline(f"{shv}[vk_lid] = {acc_v}; {shi}[vk_lid] = {acc_i};")

            def comb(d, r):
                return [f"if ({take(f'{shv}[{r}]', f'{shi}[{r}]', f'{shv}[{d}]', f'{shi}[{d}]')}) "
                        f"{{ {shv}[{d}] = {shv}[{r}]; {shi}[{d}] = {shi}[{r}]; }}"]

            self._tree([shv, shi], comb)
            out = self._result(torch.int64, f"{shi}[0]")
            s.writeline("barrier();")
            return out
        if reduction_type in ("welford_reduce", "welford_combine"):
            ct = "double" if src_dtype == torch.float64 else "float"
            m = self._acc(ct, f"{ct}(0)")
            m2 = self._acc(ct, f"{ct}(0)")
            w = self._acc(ct, f"{ct}(0)")
            if reduction_type == "welford_reduce":
                vm, vm2, vw = f"{ct}({value})", f"{ct}(0)", f"{ct}(1)"
            else:
                vm, vm2, vw = (f"{ct}({v})" for v in value)
            self.compute.writeline(f"vk_welford_{ct}({m}, {m2}, {w}, {vm}, {vm2}, {vw});")
            sh = [self._shared(ct) for _ in range(3)]
            s.writeline(f"{sh[0]}[vk_lid] = {m}; {sh[1]}[vk_lid] = {m2}; {sh[2]}[vk_lid] = {w};")
            self._tree(sh, lambda d, r: [
                f"{{ {ct} a = {sh[0]}[{d}], b = {sh[1]}[{d}], c = {sh[2]}[{d}]; "
                f"vk_welford_{ct}(a, b, c, {sh[0]}[{r}], {sh[1]}[{r}], {sh[2]}[{r}]); "
                f"{sh[0]}[{d}] = a; {sh[1]}[{d}] = b; {sh[2]}[{d}] = c; }}"])
            dt = torch.float64 if ct == "double" else torch.float32
            outs = tuple(self._result(dt, f"{sh[i]}[0]") for i in range(3))
            s.writeline("barrier();")
            return outs
        raise NotImplementedError(f"vkml torch.compile: reduction {reduction_type}")

    # -- structure --------------------------------------------------------------------------
    def codegen_iteration_ranges_entry(self, entry) -> None:
        expr = self.sexpr(self.rename_indexing(entry.expr))
        if not entry.is_reduction:
            self.indexing_code.writeline(f"{self.idx_t} {entry.name} = {expr};")
            return
        root = entry.root
        if not self.is_reduction_kernel():  # a reduction axis of one element
            self.indexing_code.writeline(f"{self.idx_t} {entry.name} = 0;")
            return
        if not any(r is root for r in self.open_loops):
            self.open_loops.append(root)
            self.body.writeline(
                f"for ({self.idx_t} {root.name} = {self.idx_t}(vk_lid); {root.name} < "
                f"{root.prefix}numel; {root.name} += {self.idx_t}(VK_WG)) {{")
        with self.body.indent():
            if entry.name != root.name:
                self.body.writeline(f"{self.idx_t} {entry.name} = {expr};")

    def codegen_body(self) -> None:
        if self.open_loops:
            with self.body.indent():
                self.body.splice(self.loads)
                self.body.splice(self.compute)
            self.body.writeline("}" * len(self.open_loops))
            keep = set()
            for item in self.cse.reduction_cache.values():
                keep.update(item if isinstance(item, tuple) else (item,))
            self.cse.invalidate(keep)
            roots = list(self.open_loops)
            self.open_loops.clear()
            for node in self.range_tree_nodes.values():
                if any(node.root is r for r in roots):
                    node.cache_clear()
        else:
            self.body.splice(self.loads)
            self.body.splice(self.compute)
        self.body.splice(self.stores)
        self.loads.clear()
        self.compute.clear()
        self.stores.clear()

    def kernel_args(self):
        """(tensor args in launch order: written first, their GLSL names, dtypes), size args,
        number written."""
        _, call_args, precompile_args, _ = self.args.python_argdefs()
        inplace_inner = {b.inner_name for b in self.args.inplace_buffers.values()
                         if hasattr(b, "inner_name")}
        out_inner = set(v for v in self.args.output_buffers.values() if isinstance(v, str))
        written, read, sizes = [], [], []
        for call, pre in zip(call_args, precompile_args, strict=False):
            if hasattr(pre, "buffer"):  # TensorArg
                row = (call, pre.name, pre.dtype)
                (written if pre.name in inplace_inner or pre.name in out_inner else read).append(row)
            else:
                sizes.append((call, pre.name))
        return written + read, sizes, len(written)

    def numel_args(self):
        return [t for t in self.range_trees]

    def codegen_kernel(self, name=None) -> str:
        self.codegen_body()
        tensors, sizes, _ = self.kernel_args()
        trees = self.numel_args()
        code = IndentedBuffer()
        code.writeline("#version 460")
        if self.uses_fp64 or any(d == torch.float64 for _, _, d in tensors):
            code.writeline("#define VK_FP64")
        code.writeline(f"#define VK_WG {self.workgroup_size()}u")
        code.splice(PRELUDE)
        code.splice(WELFORD)
        code.writeline("layout(local_size_x_id = 0) in;")
        n_t, n_i = max(len(tensors), 1), max(len(sizes) + len(trees), 1)
        code.writeline("layout(buffer_reference, scalar, buffer_reference_align = 8) readonly "
                       f"buffer VkArgs {{ uint64_t t[{n_t}]; int64_t i[{n_i}]; }};")
        code.writeline("layout(push_constant) uniform Push { VkArgs a; } pc;")
        code.splice(self.shared_decls)
        code.writeline("void main() {")
        with code.indent():
            for k, (_, inner, _) in enumerate(tensors):
                code.writeline(f"const uint64_t {inner} = pc.a.t[{k}];")
            for k, (_, inner) in enumerate(sizes):
                code.writeline(f"const {self.idx_t} {inner} = {self.idx_t}(pc.a.i[{k}]);")
            for k, t in enumerate(trees):
                code.writeline(f"const {self.idx_t} {t.prefix}numel = "
                               f"{self.idx_t}(pc.a.i[{len(sizes) + k}]);")
            code.writeline("const uint vk_lid = gl_LocalInvocationID.x;")
            outer = [t for t in trees if not t.is_reduction]
            total = " * ".join(f"vk_i64({t.prefix}numel)" if self.idx_t == "int"
                               else f"{t.prefix}numel" for t in outer) or "1l"
            if self.is_reduction_kernel():
                code.writeline(f"for (int64_t vk_lin = int64_t(gl_WorkGroupID.x); vk_lin < {total}; "
                               "vk_lin += int64_t(gl_NumWorkGroups.x)) {")
            else:
                code.writeline(f"for (int64_t vk_lin = int64_t(gl_GlobalInvocationID.x); vk_lin < {total}; "
                               "vk_lin += int64_t(gl_NumWorkGroups.x) * int64_t(VK_WG)) {")
            with code.indent():
                rest = "vk_lin"
                for i, t in enumerate(outer):
                    if i == len(outer) - 1:
                        code.writeline(f"{self.idx_t} {t.name} = {self.idx_t}({rest});")
                    else:
                        code.writeline(f"{self.idx_t} {t.name} = {self.idx_t}({rest} % {t.prefix}numel);")
                        rest = f"({rest} / {t.prefix}numel)"
                code.splice(self.indexing_code)
                code.splice(self.body)
            code.writeline("}")
        code.writeline("}")
        return code.getvalue()

    def call_kernel(self, name: str, node=None, deallocate_ws: bool = True) -> None:
        wrapper = V.graph.wrapper_code
        for v in self.args.sizevars:
            wrapper.ensure_size_computed(v)
        tensors, sizes, _ = self.kernel_args()
        args = [c for c, _, _ in tensors] + [str(c) for c, _ in sizes]
        for t in self.numel_args():
            if isinstance(t.numel, (int, sympy.Integer)):
                args.append(str(int(t.numel)))
            else:
                args.append(str(V.graph.wrapper_code.generate_numel_expr(name, t).inner)
                            if hasattr(V.graph.wrapper_code, "generate_numel_expr")
                            else wrapper.codegen_python_sizevar(t.numel))
        # A plain call of the launcher (generate_kernel_call's non-Triton path knows only the
        # CPU and MPS).
        wrapper.writeline(wrapper.wrap_kernel_call(name, args))


def _welford(t: str) -> str:
    """vk_welford_<t>: merges a partial (mean, m2, weight) into the running one (Chan et al.)."""
    return f"""void vk_welford_{t}(inout {t} m, inout {t} m2, inout {t} w, {t} bm, {t} bm2, {t} bw) {{
  if (bw == 0.0) return;
  {t} nw = w + bw, d = bm - m, f = bw / nw;
  m = m + d * f;
  m2 = m2 + bm2 + d * d * w * f;
  w = nw;
}}
"""


WELFORD = ("\n" + _welford("float") + "#ifdef VK_FP64\n" + _welford("double")
           + nan_min_max("double") + "#endif\n")


class VkmlScheduling(SIMDScheduling):
    kernel_type = VkmlKernel  # type: ignore[assignment]

    def define_kernel(self, src_code: str, node_schedule, kernel) -> str:
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        name = f"vkml_kernel_{wrapper.next_kernel_suffix()}"
        wrapper.src_to_kernel[src_code] = name
        tensors, sizes, written = kernel.kernel_args()
        meta = {
            "tensors": len(tensors),
            "written": written,
            "reduction": kernel.is_reduction_kernel(),
            "workgroup": kernel.workgroup_size(),
            "outer": [i for i, t in enumerate(kernel.numel_args()) if not t.is_reduction],
            "sizes": len(sizes),
        }
        origins, detailed = get_kernel_metadata(node_schedule, wrapper)
        body = IndentedBuffer()
        body.writeline(f"async_compile_vkml({name!r}, r'''")
        body.splice(src_code)
        body.writeline(f"''', {meta!r})")
        wrapper.define_kernel(name, body.getvalue(), f"{origins}\n{detailed}", gpu=False)
        return name
