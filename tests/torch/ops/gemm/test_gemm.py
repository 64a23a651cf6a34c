"""Matrix products on vkml, real and complex, against a float64 / complex128 CPU reference: mm,
addmm, bmm, baddbmm, addbmm, mv, addmv, dot, vdot, addr (functional, in-place, out=) with
transposed, sliced, broadcast, conjugated and negated views, real and complex alpha/beta; matmul
over rank combinations, linear, tensordot, inner, vecdot and @ without a CPU fallback; autograd
without layout copies, and bad-input errors."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import device_dtypes, randn, wide
from torch.utils._python_dispatch import TorchDispatchMode

import torch_vkml
import torch_vkml.profiler

# float64 and complex128 run where the device has fp64 arithmetic.
DTYPES = device_dtypes(torch.float32, torch.float16, torch.bfloat16, torch.float64)
CDTYPES = device_dtypes(torch.complex64, torch.complex128)
TOL = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 1e-2, torch.float64: 1e-10,
       torch.complex64: 1e-4, torch.complex128: 1e-10}


def rand(*shape, dtype=torch.float32, gen=None):
    return randn(shape, dtype, gen)


def crand(*shape, dtype=torch.complex64, gen=None):
    return randn(shape, dtype, gen)


def dev(t):
    return t.to("vkml")


def dev_view(t):
    """The same view (sizes, strides, offset) of a vkml copy of t's base tensor."""
    base = t if t._base is None else t._base
    return dev(base.contiguous()).as_strided(t.shape, t.stride(), t.storage_offset())


def check(got, ref, dtype):
    """got (vkml) vs ref (float64 / complex128 CPU): worst error relative to the result's
    magnitude."""
    assert got.device.type == "vkml"
    assert got.dtype == dtype
    got = wide(got.cpu().resolve_conj().resolve_neg())
    ref = wide(ref.resolve_conj().resolve_neg())
    assert got.shape == ref.shape
    if ref.numel() == 0:
        return
    scale = max(ref.abs().max().item(), 1e-6)
    err = (got - ref).abs().max().item() / scale
    assert err <= TOL[dtype], f"relative error {err}"


@pytest.mark.parametrize("dtype", DTYPES + CDTYPES)
@pytest.mark.parametrize(
    "m,k,n", [(1, 1, 1), (7, 3, 5), (33, 17, 65), (0, 3, 4), (3, 0, 4), (3, 4, 0), (70, 130, 9)]
)
def test_mm_shapes_and_dtypes(dtype, m, k, n, gen):
    a, b = rand(m, k, dtype=dtype, gen=gen), rand(k, n, dtype=dtype, gen=gen)
    check(torch.mm(dev(a), dev(b)), wide(a) @ wide(b), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_mm_noncontiguous_operands(dtype, gen):
    base_a, base_b = rand(40, 30, dtype=dtype, gen=gen), rand(22, 60, dtype=dtype, gen=gen)
    cases = [
        (base_a.t()[:, :22], base_b),  # transposed A
        (base_a[:, :22], base_b.t().t()),
        (base_a[::2, ::2][:, :11], base_b[::2, ::3]),  # neither stride is 1
        (base_a[:, :22], base_b[:, :31].t().contiguous().t()),  # column-major B
        (base_a[:1, :22].expand(5, 22), base_b),  # broadcast rows (stride 0)
    ]
    for a, b in cases:
        da, db = dev_view(a), dev_view(b)
        assert da.stride() == a.stride() and db.stride() == b.stride()
        check(torch.mm(da, db), a.double() @ b.double(), dtype)


def test_mm_out_resize_and_aliasing(gen):
    a, b = rand(6, 6, gen=gen), rand(6, 6, gen=gen)
    da, db = dev(a), dev(b)
    out = torch.empty(0, device="vkml")
    torch.mm(da, db, out=out)
    check(out, a.double() @ b.double(), torch.float32)
    # out is an input: the product must still use the old values.
    torch.mm(da, db, out=da)
    check(da, a.double() @ b.double(), torch.float32)
    # out is a transposed view: written through its strides.
    target = torch.zeros(6, 6, device="vkml").t()
    torch.mm(dev(a), db, out=target)
    check(target, a.double() @ b.double(), torch.float32)
    with pytest.raises(RuntimeError, match="dtype"):
        torch.mm(dev(a), db, out=torch.empty(6, 6, device="vkml", dtype=torch.float16))


@pytest.mark.parametrize("dtype", DTYPES)
def test_addmm_broadcast_alpha_beta_inplace(dtype, gen):
    m1, m2 = rand(9, 13, dtype=dtype, gen=gen), rand(13, 11, dtype=dtype, gen=gen)
    prod = m1.double() @ m2.double()
    for self_shape in [(11,), (9, 11), (1, 11), (9, 1)]:
        s = rand(*self_shape, dtype=dtype, gen=gen)
        got = torch.addmm(dev(s), dev(m1), dev(m2), beta=0.5, alpha=-1.5)
        check(got, 0.5 * s.double() + (-1.5) * prod, dtype)
    # beta == 0 ignores self, NaN included.
    nan_self = torch.full((9, 11), float("nan"), dtype=dtype)
    check(torch.addmm(dev(nan_self), dev(m1), dev(m2), beta=0), prod, dtype)
    s = rand(9, 11, dtype=dtype, gen=gen)
    ds = dev(s)
    ds.addmm_(dev(m1), dev(m2), beta=2.0, alpha=0.25)
    check(ds, 2.0 * s.double() + 0.25 * prod, dtype)
    out = torch.empty(9, 11, device="vkml", dtype=dtype)
    torch.addmm(dev(s[0]), dev(m1), dev(m2), out=out)
    check(out, s[0].double() + prod, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_bmm_baddbmm(dtype, gen):
    b1, b2 = rand(4, 7, 5, dtype=dtype, gen=gen), rand(4, 5, 6, dtype=dtype, gen=gen)
    ref = b1.double() @ b2.double()
    check(torch.bmm(dev(b1), dev(b2)), ref, dtype)
    # transposed batches and a broadcast (stride 0) batch operand
    t1 = dev(b1.transpose(1, 2).contiguous()).transpose(1, 2)
    check(torch.bmm(t1, dev(b2)), ref, dtype)
    shared = rand(1, 5, 6, dtype=dtype, gen=gen)
    check(torch.bmm(dev(b1), dev(shared).expand(4, 5, 6)), b1.double() @ shared.double(), dtype)
    s = rand(7, 6, dtype=dtype, gen=gen)
    check(torch.baddbmm(dev(s), dev(b1), dev(b2), beta=-1, alpha=2), -s.double() + 2 * ref, dtype)
    full = rand(4, 7, 6, dtype=dtype, gen=gen)
    d = dev(full)
    d.baddbmm_(dev(b1), dev(b2))
    check(d, full.double() + ref, dtype)
    out = torch.empty(0, device="vkml", dtype=dtype)
    torch.bmm(dev(b1), dev(b2), out=out)
    check(out, ref, dtype)
    check(torch.bmm(dev(b1[:0]), dev(b2[:0])), ref[:0], dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("m,k,n", [(80, 72, 96), (70, 40, 88)])
def test_epilogue_with_dense_and_offset_inputs(dtype, m, k, n, gen):
    """alpha, beta * C_in and bias on outputs big enough for whole 16x16 blocks, where the tensor-
    core kernel adds them 8 at a time (dense, 16-byte aligned C_in and bias) or one by one (C_in
    one element off alignment, partial blocks of m = 70)."""
    m1, m2 = rand(m, k, dtype=dtype, gen=gen), rand(k, n, dtype=dtype, gen=gen)
    d1, d2 = dev(m1), dev(m2)
    prod = m1.double() @ m2.double()
    s = rand(m, n, dtype=dtype, gen=gen)
    check(torch.addmm(dev(s), d1, d2, beta=0.5, alpha=-1.5), 0.5 * s.double() - 1.5 * prod, dtype)
    row = rand(n, dtype=dtype, gen=gen)
    check(torch.addmm(dev(row), d1, d2), row.double() + prod, dtype)
    off = dev(rand(m * n + 1, dtype=dtype, gen=gen))[1:].view(m, n)  # 2 or 4 bytes off 16
    check(torch.addmm(off, d1, d2, beta=2.0), 2.0 * off.cpu().double() + prod, dtype)
    inplace = dev(s)
    inplace.addmm_(d1, d2, beta=-1.0, alpha=0.25)
    check(inplace, -s.double() + 0.25 * prod, dtype)
    w, bias = rand(n, k, dtype=dtype, gen=gen), rand(n, dtype=dtype, gen=gen)
    check(F.linear(d1, dev(w), dev(bias)), F.linear(m1.double(), w.double(), bias.double()), dtype)
    b1, b2 = rand(3, m, k, dtype=dtype, gen=gen), rand(3, k, n, dtype=dtype, gen=gen)
    full = rand(3, m, n, dtype=dtype, gen=gen)
    check(torch.baddbmm(dev(full), dev(b1), dev(b2), beta=0.75, alpha=2.0),
          0.75 * full.double() + 2.0 * (b1.double() @ b2.double()), dtype)


def simt_shared_bytes(tile, padded=True):
    """Shared memory of a SIMT tile "BMxBNxBK..." (gemm_plan.cc's SimtTile::shared_bytes): two
    stages of BK rows of BM / 4 and BN / 4 16-byte vectors, one more per row where rows are
    padded."""
    bm, bn, bk = (int(v) for v in tile.split("x")[:3])
    return 2 * bk * (bm // 4 + bn // 4 + (2 if padded else 0)) * 16


def simt_planned(tile):
    """Whether the planner can take the SIMT kernel with `tile` (None: its own table, whose
    smallest tile is 64x64x16) on this device's shared memory; else it takes the tiled kernel."""
    limit = torch_vkml.get_device_properties().max_shared_memory
    own = tile is not None and simt_shared_bytes(tile, padded=False) <= limit
    return own or simt_shared_bytes("64x64x16") <= limit


def assert_planned_kernel(ran, tile):
    """The SIMT kernel ran where the device's shared memory fits it (no silent fallback to the
    tiled kernel), else the tiled kernel did."""
    simt_ran = any(name.startswith("gemm_simtn_f32") for name in ran)
    if simt_planned(tile):
        assert simt_ran, ran
    else:
        assert not simt_ran and any(name.startswith("gemm_tiled") for name in ran), ran


@pytest.fixture
def simt(request):
    """The SIMT fp32 kernel (VKML_GEMM_F32_KERNEL=simtn, the GPU default) with the tile and
    operand blocks a test's parameters name (None: the planner's own)."""
    tile, kvec = request.param
    with torch_vkml.config.override(VKML_GEMM_F32_KERNEL="simtn", VKML_GEMM_SIMT_TILE=tile,
                                    VKML_GEMM_SIMT_KVEC=kvec):
        yield tile


@pytest.mark.parametrize(
    "simt",
    [
        (None, None),  # the GPU default: its tile table (128x64x16 with 8x8 thread tiles, ...)
        ("32x32x8x16x16x8x4", None),  # two named blocks of four (the others must store nothing)
        ("32x32x8x16x16x4x4", None),  # one block of four
    ],
    indirect=True,
)
def test_simt_fp32_kernel(simt, gen):
    """The SIMT fp32 kernel through the torch ops above: transposed, strided, broadcast and
    aligned operands, transposed outputs, addmm/baddbmm epilogues, linear with its backward."""
    test_mm_noncontiguous_operands(torch.float32, gen)
    test_mm_out_resize_and_aliasing(gen)
    test_addmm_broadcast_alpha_beta_inplace(torch.float32, gen)
    test_bmm_baddbmm(torch.float32, gen)
    # C_in and bias 4 at a time where dense and aligned, one by one off alignment.
    test_epilogue_with_dense_and_offset_inputs(torch.float32, 70, 40, 88, gen)
    a, b = rand(136, 72, gen=gen), rand(200, 72, gen=gen)  # aligned, B transposed (x @ W^T)
    check(torch.mm(dev(a), dev(b).t()), a.double() @ b.double().t(), torch.float32)
    # A k-contiguous and aligned (4x4 blocks from 16-byte loads where the tile allows): rows not
    # a multiple of 4, K not a multiple of the K tile, a long K (split-K), a batch.
    for (m, k, n) in ((77, 52, 90), (9, 2052, 12)):
        p, q = rand(m, k, gen=gen), rand(k, n, gen=gen)
        check(torch.mm(dev(p), dev(q)), p.double() @ q.double(), torch.float32)
    p, q = rand(3, 37, 44, gen=gen), rand(3, 44, 21, gen=gen)
    check(torch.bmm(dev(p), dev(q)), p.double() @ q.double(), torch.float32)
    c = rand(136, 40, gen=gen)  # A^T @ C: A read along m
    check(torch.mm(dev(a).t(), dev(c)), a.double().t() @ c.double(), torch.float32)
    x = rand(70, 33, gen=gen).requires_grad_()
    w = rand(45, 33, gen=gen).requires_grad_()
    bias = rand(45, gen=gen).requires_grad_()
    dx, dw, db = (t.detach().to("vkml").requires_grad_() for t in (x, w, bias))
    y, dy = F.linear(x.double(), w.double(), bias.double()), F.linear(dx, dw, db)
    check(dy.detach(), y.detach(), torch.float32)
    g = rand(70, 45, gen=gen)
    y.backward(g.double())
    dy.backward(dev(g))
    for got, ref in ((dx, x), (dw, w), (db, bias)):
        check(got.grad, ref.grad.double(), torch.float32)
    # The requested kernel is the one that ran where it fits the device.
    torch_vkml.profiler.enable()
    try:
        torch.mm(dev(a), dev(b).t())
        torch_vkml.synchronize()
        ran = torch_vkml.profiler.kernel_times(reset=True)
    finally:
        torch_vkml.profiler.disable()
    assert_planned_kernel(ran, simt)


def test_mid_sized_products_split_k(gen):
    """Outputs of a few hundred blocks over K >= 1024: GPUs split K there (the SIMT kernel's
    target is 1024 blocks in the NVIDIA class), CPU devices under 8 blocks. A weight gradient (A a
    transposed view), addmm with a bias and beta, and a linear's backward, against float64."""
    g, x = rand(1536, 200, gen=gen), rand(1536, 136, gen=gen)  # [tokens, out], [tokens, in]
    check(torch.mm(dev(g).t(), dev(x)), g.double().t() @ x.double(), torch.float32)
    # Narrow and batched outputs: the reduction pass's workgroups shrink to 32 columns.
    x6 = rand(1536, 6, gen=gen)
    check(torch.mm(dev(g).t(), dev(x6)), g.double().t() @ x6.double(), torch.float32)
    ba, bb = rand(3, 40, 2000, gen=gen), rand(3, 2000, 24, gen=gen)
    check(torch.bmm(dev(ba), dev(bb)), ba.double() @ bb.double(), torch.float32)
    a, b, c = rand(264, 1100, gen=gen), rand(1100, 96, gen=gen), rand(264, 96, gen=gen)
    ref = a.double() @ b.double()
    check(torch.addmm(dev(c), dev(a), dev(b), beta=0.5, alpha=2.0), 0.5 * c.double() + 2.0 * ref,
          torch.float32)
    bias = rand(96, gen=gen)
    check(torch.addmm(dev(bias), dev(a), dev(b)), bias.double() + ref, torch.float32)
    w, xs, gy = rand(96, 1100, gen=gen), rand(1040, 1100, gen=gen), rand(1040, 96, gen=gen)
    w64 = w.double().requires_grad_()
    dw = dev(w).requires_grad_()
    F.linear(xs.double(), w64).backward(gy.double())
    F.linear(dev(xs), dw).backward(dev(gy))
    check(dw.grad, w64.grad, torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_products_split_k(dtype, gen):
    """Few output blocks over a long K: the cooperative-matrix kernel splits K where present and
    stores its partial sums 8 at a time when N is a multiple of 4 (else one by one); ragged
    edge tiles, a transposed operand and a bias beside them, against float64."""
    for m, k, n in [(200, 4096, 136), (130, 3000, 66), (72, 2048, 8)]:
        a, b = rand(k, m, dtype=dtype, gen=gen).t(), rand(k, n, dtype=dtype, gen=gen)
        check(torch.mm(dev_view(a), dev(b)), a.double() @ b.double(), dtype)
        bias = rand(n, dtype=dtype, gen=gen)
        check(torch.addmm(dev(bias), dev(a.contiguous()), dev(b)),
              bias.double() + a.double() @ b.double(), dtype)


def test_f32_split_few_blocks_split_k(gen):
    """The fp32 split's opt-in split-K for few-block products (VKML_GEMM_F32_SPLIT_FEW_BLOCKS):
    a weight gradient over 2,500 tokens, N a multiple of 4 and not, against float64."""
    with torch_vkml.config.override(VKML_GEMM_F32_SPLIT="force",
                                    VKML_GEMM_F32_SPLIT_FEW_BLOCKS=1024):
        for m, n in [(136, 200), (70, 66)]:
            g, x = rand(2500, m, gen=gen), rand(2500, n, gen=gen)
            check(torch.mm(dev(g).t(), dev(x)), g.double().t() @ x.double(), torch.float32)


@pytest.mark.parametrize(
    "simt", [("64x64x32x32x32x8x8", None), ("32x64x32x16x32x4x8", "ab")], indirect=True
)
def test_simt_operand_blocks(simt, gen):
    """k-contiguous aligned operands read in 4x4 blocks of 16-byte loads. A 64x64x32 tile with
    8x8 thread tiles fits 32 KiB of shared memory only with the blocks' shared rows unpadded (A's,
    and for x @ W^T B's too); VKML_GEMM_SIMT_KVEC=ab puts B in blocks wherever a tile gives each
    thread whole blocks (32x64x32 here, rows padded).
    Ragged edges, split-K, batches, and unaligned operands (scalar loads) beside them."""
    torch_vkml.profiler.enable()
    try:
        for m, k, n in ((130, 96, 72), (61, 44, 70), (8, 3000, 12), (70, 33, 40)):
            a, b, w = rand(m, k, gen=gen), rand(k, n, gen=gen), rand(n, k, gen=gen)
            check(torch.mm(dev(a), dev(b)), a.double() @ b.double(), torch.float32)
            check(torch.mm(dev(a), dev(w).t()), a.double() @ w.double().t(), torch.float32)
        a, w = rand(3, 37, 44, gen=gen), rand(3, 29, 44, gen=gen)
        check(torch.bmm(dev(a), dev(w).transpose(1, 2)), a.double() @ w.double().transpose(1, 2),
              torch.float32)
        torch_vkml.synchronize()
        ran = torch_vkml.profiler.kernel_times(reset=True)
    finally:
        torch_vkml.profiler.disable()
    assert_planned_kernel(ran, simt)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_addbmm(dtype, gen):
    b1, b2 = rand(3, 7, 5, dtype=dtype, gen=gen), rand(3, 5, 6, dtype=dtype, gen=gen)
    s = rand(7, 6, dtype=dtype, gen=gen)
    ref = 0.5 * s.double() + 2 * (b1.double() @ b2.double()).sum(0)
    check(torch.addbmm(dev(s), dev(b1), dev(b2), beta=0.5, alpha=2), ref, dtype)
    d = dev(s)
    d.addbmm_(dev(b1), dev(b2), beta=0.5, alpha=2)
    check(d, ref, dtype)
    check(torch.addbmm(dev(s), dev(b1[:0]), dev(b2[:0]), beta=3), 3 * s.double(), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_products(dtype, gen):
    mat, vec = rand(37, 23, dtype=dtype, gen=gen), rand(23, dtype=dtype, gen=gen)
    ref = mat.double() @ vec.double()
    check(torch.mv(dev(mat), dev(vec)), ref, dtype)
    check(torch.mv(dev(mat.t().contiguous()).t(), dev(vec)), ref, dtype)  # column-major
    s = rand(37, dtype=dtype, gen=gen)
    check(torch.addmv(dev(s), dev(mat), dev(vec), beta=2, alpha=-1), 2 * s.double() - ref, dtype)
    check(torch.addmv(dev(s[:1]), dev(mat), dev(vec)), s[:1].double() + ref, dtype)
    d = dev(s)
    d.addmv_(dev(mat), dev(vec))
    check(d, s.double() + ref, dtype)
    out = torch.empty(37, device="vkml", dtype=dtype)
    torch.mv(dev(mat), dev(vec), out=out)
    check(out, ref, dtype)
    x, y = rand(1000, dtype=dtype, gen=gen), rand(2000, dtype=dtype, gen=gen)[::2]  # y strided
    check(torch.dot(dev(x), dev_view(y)), x.double() @ y.double(), dtype)
    check(torch.vdot(dev(x), dev(y.contiguous())), x.double() @ y.double(), dtype)
    o = torch.empty((), device="vkml", dtype=dtype)
    torch.dot(dev(x), dev(y.contiguous()), out=o)
    check(o, x.double() @ y.double(), dtype)
    check(
        torch.dot(dev(x[:0]), dev(y[:0].contiguous())),
        torch.tensor(0.0, dtype=torch.float64),
        dtype,
    )
    v1, v2 = rand(8, dtype=dtype, gen=gen), rand(5, dtype=dtype, gen=gen)
    a = rand(8, 5, dtype=dtype, gen=gen)
    outer = torch.outer(v1.double(), v2.double())
    check(
        torch.addr(dev(a), dev(v1), dev(v2), beta=0.5, alpha=3), 0.5 * a.double() + 3 * outer, dtype
    )
    d = dev(a)
    d.addr_(dev(v1), dev(v2))
    check(d, a.double() + outer, dtype)


def test_strided_vectors(gen):
    mat, vec = rand(20, 30, gen=gen), rand(60, gen=gen)
    got = torch.mv(dev(mat), dev(vec)[::2])
    check(got, mat.double() @ vec[::2].double(), torch.float32)
    x = rand(90, gen=gen)
    check(torch.dot(dev(x)[::3], dev(vec)[:30]), x[::3].double() @ vec[:30].double(), torch.float32)


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((5,), (5,)),
        ((4, 5), (5,)),
        ((5,), (5, 3)),
        ((4, 5), (5, 3)),
        ((2, 4, 5), (5,)),
        ((5,), (2, 5, 3)),
        ((2, 4, 5), (2, 5, 3)),
        ((2, 4, 5), (5, 3)),
        ((4, 5), (2, 5, 3)),
        ((3, 1, 4, 5), (2, 5, 3)),
        ((2, 3, 4, 5), (2, 3, 5, 6)),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
def test_matmul_every_rank_runs_natively(sa, sb, dtype, gen, fallback):
    a, b = rand(*sa, dtype=dtype, gen=gen), rand(*sb, dtype=dtype, gen=gen)
    check(torch.matmul(dev(a), dev(b)), wide(a) @ wide(b), dtype)
    check(dev(b).__rmatmul__(dev(a)), wide(a) @ wide(b), dtype)
    assert torch_vkml.fallback_stats() == {}


def test_linear_runs_natively(gen, fallback):
    w, bias = rand(6, 10, gen=gen), rand(6, gen=gen)
    for shape in [(4, 10), (3, 4, 10), (2, 3, 4, 10)]:
        x = rand(*shape, gen=gen)
        ref = F.linear(x.double(), w.double(), bias.double())
        check(F.linear(dev(x), dev(w), dev(bias)), ref, torch.float32)
        check(F.linear(dev(x), dev(w)), F.linear(x.double(), w.double()), torch.float32)
    assert torch_vkml.fallback_stats() == {}


class OpLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("case", ["mm", "bmm", "matmul3d", "linear"])
def test_autograd_matches_cpu_without_copies(case, gen, fallback):
    shapes = {
        "mm": ((7, 9), (9, 5)),
        "bmm": ((3, 7, 9), (3, 9, 5)),
        "matmul3d": ((3, 7, 9), (9, 5)),
        "linear": ((4, 7, 9), (5, 9)),
    }[case]
    a, b = rand(*shapes[0], gen=gen), rand(*shapes[1], gen=gen)

    def f(x, y):
        if case == "mm":
            return torch.mm(x, y)
        if case == "bmm":
            return torch.bmm(x, y)
        if case == "matmul3d":
            return torch.matmul(x, y)
        return F.linear(x, y)

    ca, cb = a.clone().requires_grad_(), b.clone().requires_grad_()
    va, vb = dev(a).requires_grad_(), dev(b).requires_grad_()
    out_cpu, out_dev = f(ca, cb), f(va, vb)
    g = rand(*out_cpu.shape, gen=gen)
    out_cpu.backward(g)
    log = OpLog()
    with log:
        out_dev.backward(dev(g))
    check(va.grad, ca.grad.double(), torch.float32)
    check(vb.grad, cb.grad.double(), torch.float32)
    copies = [op for op in log.ops if op in ("aten.clone", "aten.contiguous", "aten.copy_")]
    assert copies == [], log.ops
    assert torch_vkml.fallback_stats() == {}


def test_bad_inputs_raise_like_cpu():
    a, b = torch.randn(2, 3), torch.randn(4, 5)
    for x, y in [(a, b), (a, torch.randn(3)), (torch.randn(3), b)]:
        with pytest.raises(RuntimeError):
            torch.mm(x, y)
        with pytest.raises(RuntimeError):
            torch.mm(dev(x), dev(y))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.mm(dev(a), dev(torch.randn(3, 2, dtype=torch.float16)))
    with pytest.raises(RuntimeError):
        torch.bmm(dev(torch.randn(2, 3, 4)), dev(torch.randn(3, 4, 5)))
    with pytest.raises(RuntimeError):
        torch.dot(dev(torch.randn(3)), dev(torch.randn(4)))
    with pytest.raises(RuntimeError):
        torch.mv(dev(a), dev(torch.randn(4)))
    with pytest.raises(RuntimeError):
        torch.addmm(dev(torch.randn(3)), dev(a), dev(torch.randn(3, 4)))
    with pytest.raises(RuntimeError, match="same device"):
        torch.mm(dev(a), torch.randn(3, 2))
    with pytest.raises(NotImplementedError):
        torch.mm(dev(torch.ones(2, 3, dtype=torch.int64)), dev(torch.ones(3, 2, dtype=torch.int64)))


# ---- complex operands: lazy conj/neg bits, complex alpha/beta, composites ----


@pytest.mark.parametrize("dtype", CDTYPES)
def test_mm_views_conj_and_neg_bits(dtype, gen):
    base_a, base_b = crand(40, 30, dtype=dtype, gen=gen), crand(22, 60, dtype=dtype, gen=gen)
    cases = [
        (base_a.t()[:, :22], base_b),  # transposed A
        (base_a[::2, ::2][:, :11], base_b[::2, ::3]),  # neither stride is 1
        (base_a[:1, :22].expand(5, 22), base_b),  # broadcast rows (stride 0)
    ]
    for a, b in cases:
        da, db = dev_view(a), dev_view(b)
        assert da.stride() == a.stride() and db.stride() == b.stride()
        check(torch.mm(da, db), wide(a) @ wide(b), dtype)
        # Lazy conjugation and negation: the bits are read, never materialised by the caller.
        check(torch.mm(da.conj(), db), wide(a).conj() @ wide(b), dtype)
        check(torch.mm(da, db.conj()), wide(a) @ wide(b).conj(), dtype)
        check(torch.mm(torch._neg_view(da), db.conj()), -wide(a) @ wide(b).conj(), dtype)
        check(torch.mm(torch._neg_view(da.conj()), db), -wide(a).conj() @ wide(b), dtype)
    a, b = crand(6, 9, dtype=dtype, gen=gen), crand(6, 4, dtype=dtype, gen=gen)
    check(torch.mm(dev(a).mH, dev(b)), wide(a).mH @ wide(b), dtype)  # mm's backward shape


@pytest.mark.parametrize("dtype", CDTYPES)
def test_mm_out_and_aliasing(dtype, gen):
    a, b = crand(6, 6, dtype=dtype, gen=gen), crand(6, 6, dtype=dtype, gen=gen)
    da, db = dev(a), dev(b)
    out = torch.empty(0, device="vkml", dtype=dtype)
    torch.mm(da, db, out=out)
    check(out, wide(a) @ wide(b), dtype)
    torch.mm(da, db, out=da)  # out is an input: the product still reads the old values
    check(da, wide(a) @ wide(b), dtype)
    o = torch.empty(6, 6, device="vkml", dtype=dtype).t()  # column-major out
    torch.mm(dev(a), db, out=o)
    check(o, wide(a) @ wide(b), dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize(
    "alpha,beta", [(1, 0), (2.5, -0.5), (1 + 2j, 0.5 - 1j), (0.5j, 0), (1, 1j)]
)
def test_addmm_alpha_beta(dtype, alpha, beta, gen):
    s, a, b = (crand(7, 5, dtype=dtype, gen=gen), crand(7, 9, dtype=dtype, gen=gen),
               crand(9, 5, dtype=dtype, gen=gen))
    ref = beta * wide(s) + alpha * (wide(a) @ wide(b))
    check(torch.addmm(dev(s), dev(a), dev(b), beta=beta, alpha=alpha), ref, dtype)
    check(torch.addmm(dev(s).conj(), dev(a), dev(b), beta=beta, alpha=alpha),
          beta * wide(s).conj() + alpha * (wide(a) @ wide(b)), dtype)
    row = s[:1]  # broadcast self
    check(torch.addmm(dev(row), dev(a), dev(b), beta=beta, alpha=alpha),
          beta * wide(row) + alpha * (wide(a) @ wide(b)), dtype)
    d = dev(s)
    d.addmm_(dev(a), dev(b), beta=beta, alpha=alpha)
    check(d, ref, dtype)
    out = torch.empty(0, device="vkml", dtype=dtype)
    torch.addmm(dev(s), dev(a), dev(b), beta=beta, alpha=alpha, out=out)
    check(out, ref, dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_batched_products(dtype, gen):
    b1, b2 = crand(3, 7, 5, dtype=dtype, gen=gen), crand(3, 5, 6, dtype=dtype, gen=gen)
    s = crand(3, 7, 6, dtype=dtype, gen=gen)
    check(torch.bmm(dev(b1), dev(b2)), wide(b1) @ wide(b2), dtype)
    check(torch.bmm(dev(b1).conj(), dev(b2).transpose(1, 2).contiguous().transpose(1, 2)),
          wide(b1).conj() @ wide(b2), dtype)
    check(torch.baddbmm(dev(s), dev(b1), dev(b2), beta=0.5, alpha=2 - 1j),
          0.5 * wide(s) + (2 - 1j) * (wide(b1) @ wide(b2)), dtype)
    d = dev(s)
    d.baddbmm_(dev(b1), dev(b2), beta=-1)
    check(d, -wide(s) + wide(b1) @ wide(b2), dtype)
    s2 = crand(7, 6, dtype=dtype, gen=gen)
    ref = 0.5 * wide(s2) + 2 * (wide(b1) @ wide(b2)).sum(0)
    check(torch.addbmm(dev(s2), dev(b1), dev(b2), beta=0.5, alpha=2), ref, dtype)
    d = dev(s2)
    d.addbmm_(dev(b1), dev(b2), beta=0.5, alpha=2)
    check(d, ref, dtype)
    check(torch.addbmm(dev(s2), dev(b1[:0]), dev(b2[:0]), beta=3j), 3j * wide(s2), dtype)
    check(torch.bmm(dev(b1[:, :0]), dev(b2)), wide(b1[:, :0]) @ wide(b2), dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_vector_products(dtype, gen):
    mat, vec = crand(37, 23, dtype=dtype, gen=gen), crand(23, dtype=dtype, gen=gen)
    ref = wide(mat) @ wide(vec)
    check(torch.mv(dev(mat), dev(vec)), ref, dtype)
    check(torch.mv(dev(mat.t().contiguous()).t(), dev(vec)), ref, dtype)  # column-major
    check(torch.mv(dev(mat).conj(), dev(vec)), wide(mat).conj() @ wide(vec), dtype)
    s = crand(37, dtype=dtype, gen=gen)
    check(torch.addmv(dev(s), dev(mat), dev(vec), beta=2, alpha=-1j), 2 * wide(s) - 1j * ref, dtype)
    check(torch.addmv(dev(s[:1]), dev(mat), dev(vec)), wide(s[:1]) + ref, dtype)
    d = dev(s)
    d.addmv_(dev(mat), dev(vec))
    check(d, wide(s) + ref, dtype)
    x, y = crand(1000, dtype=dtype, gen=gen), crand(2000, dtype=dtype, gen=gen)[::2]  # y strided
    check(torch.dot(dev(x), dev_view(y)), wide(x) @ wide(y), dtype)
    check(torch.vdot(dev(x), dev_view(y)), torch.vdot(wide(x), wide(y)), dtype)
    check(torch.vdot(dev(x).conj(), dev(y)), torch.vdot(wide(x).conj(), wide(y)), dtype)
    check(torch.vdot(dev(x), dev(y).conj()), torch.vdot(wide(x), wide(y).conj()), dtype)
    check(torch.dot(dev(x).conj(), dev(y)), wide(x).conj() @ wide(y), dtype)
    o = torch.empty((), device="vkml", dtype=dtype)
    torch.vdot(dev(x), dev(y), out=o)
    check(o, torch.vdot(wide(x), wide(y)), dtype)
    check(torch.dot(dev(x[:0]), dev(y[:0])), torch.zeros((), dtype=torch.complex128), dtype)
    v1, v2 = crand(8, dtype=dtype, gen=gen), crand(5, dtype=dtype, gen=gen)
    a = crand(8, 5, dtype=dtype, gen=gen)
    outer = torch.outer(wide(v1), wide(v2))
    check(torch.addr(dev(a), dev(v1), dev(v2), beta=0.5, alpha=3j), 0.5 * wide(a) + 3j * outer,
          dtype)
    d = dev(a)
    d.addr_(dev(v1), dev(v2).conj())
    check(d, wide(a) + torch.outer(wide(v1), wide(v2).conj()), dtype)


def test_composite_products_run_natively(gen, fallback):
    w, bias = crand(6, 10, gen=gen), crand(6, gen=gen)
    x = crand(3, 4, 10, gen=gen)
    check(F.linear(dev(x), dev(w), dev(bias)), F.linear(wide(x), wide(w), wide(bias)),
          torch.complex64)
    a, b = crand(3, 4, 5, gen=gen), crand(4, 5, 2, gen=gen)
    check(torch.tensordot(dev(a), dev(b), dims=2), torch.tensordot(wide(a), wide(b), dims=2),
          torch.complex64)
    u, v = crand(3, 7, gen=gen), crand(2, 7, gen=gen)
    check(torch.inner(dev(u), dev(v)), torch.inner(wide(u), wide(v)), torch.complex64)
    check(torch.linalg.vecdot(dev(u), dev(u[:1])), torch.linalg.vecdot(wide(u), wide(u[:1])),
          torch.complex64)
    m = crand(4, 4, gen=gen)
    check(dev(m).__rmatmul__(dev(u[:, :4])), wide(u[:, :4]) @ wide(m), torch.complex64)
    assert torch_vkml.fallback_stats() == {}


def test_complex_autograd_matches_cpu(gen, fallback):
    a, b = crand(7, 9, gen=gen), crand(9, 5, gen=gen)
    ca, cb = wide(a).requires_grad_(), wide(b).requires_grad_()
    va, vb = dev(a).requires_grad_(), dev(b).requires_grad_()
    out_cpu, out_dev = torch.mm(ca, cb), torch.mm(va, vb)
    g = crand(7, 5, gen=gen)
    out_cpu.backward(wide(g))
    out_dev.backward(dev(g))
    check(va.grad, ca.grad, torch.complex64)
    check(vb.grad, cb.grad, torch.complex64)
    assert torch_vkml.fallback_stats() == {}


def test_complex_bad_inputs_raise_like_cpu():
    a = crand(2, 3)
    cases = [
        (torch.mm, (a, torch.randn(3, 2))),  # complex and real
        (torch.mm, (a, crand(4, 2))),  # shapes
        (torch.dot, (crand(3), torch.randn(3))),
        (torch.vdot, (crand(3), crand(4))),
        (torch.mv, (a, torch.randn(3))),
        (torch.bmm, (crand(2, 2, 3), torch.randn(2, 3, 2))),
    ]
    if torch.complex128 in CDTYPES:  # complex64 with complex128
        cases += [
            (torch.mm, (a, crand(3, 2, dtype=torch.complex128))),
            (torch.bmm, (crand(2, 2, 3), crand(2, 3, 2, dtype=torch.complex128))),
        ]
    for fn, args in cases:
        with pytest.raises(RuntimeError) as cpu_err:
            fn(*args)
        with pytest.raises(cpu_err.type):
            fn(*[dev(t) for t in args])


def test_addmm_residual_adds_the_bias(gen):
    """torch.compile's fused residual + bias + mat1 @ mat2, on complex operands."""
    x, w = crand(3, 4, gen=gen), crand(4, 5, gen=gen)
    res, bias = crand(3, 5, gen=gen), crand(5, gen=gen)
    got = torch.ops.vkml_inductor.addmm_residual(dev(res), dev(bias), dev(x), dev(w))
    check(got, wide(res) + wide(bias) + wide(x) @ wide(w), torch.complex64)
